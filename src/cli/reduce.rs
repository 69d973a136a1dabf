//! `mfppr reduce` command line: turns flags into `ReduceOptions` and prints the summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::ArgAction;

use crate::cli::common::{is_stdin, stdin_to_file, CompilerFlags, ReductionArgs};
use crate::error::{coded, ExitKind};
use crate::reduce::{reduce, ReduceOptions};

const AFTER_HELP: &str = "\
Examples (the compiler's flags after --, as MF++'s generator takes them):
  mfppr reduce t_bigint_452.cpp --check interestingness/check-failure.py -j 8 \\
      -- -std=c++17 -I$SPEC -I$SPEC/SMT_QF_NIA -I$SPEC/SMT_QF_NIA/z3
    writes t_bigint_452.reduced.cpp beside the input (rewritten after every accepted candidate),
    and t_bigint_452.reduced.cpp.mfppr-origin (which input it comes from, for --resume).
    The -I, -iquote and -isystem directories after -- are searched for the spec headers (like
    -I DIR); every flag after -- reaches the check script in MFPPR_CXXFLAGS (the bundled scripts
    compile with them). A quoted include that is not found is reported before reducing, with the
    directories searched (an error with --strict-spec).

  mfppr reduce - -o small.cpp --check check.sh -- -I spec < t.cpp
    reads the test from standard input (as stdin.cpp, or --name NAME).

  mfppr reduce t.cpp --check builtin:failure -- -I spec
    runs interestingness/check-failure.py, built into mfppr (`mfppr checks list` names the
    others, `mfppr checks write DIR` writes them out to read or adapt).

The check script runs once per candidate in a fresh temporary directory (its working directory)
holding the candidate under the input's file name. It gets the candidate's absolute path as $1
and in MFPPR_CANDIDATE, the input's path in MFPPR_ORIGINAL, its directory in MFPPR_ORIGINAL_DIR,
and a private TMPDIR. A .py script is run with python3. Exit 0 means interesting (or, with
--interesting-exit auto, the same exit status as the original).
";

/// Arguments of `mfppr reduce`.
#[derive(Debug, clap::Args)]
#[command(after_help = format!("{AFTER_HELP}\n\n{}", crate::error::exit_codes_help()))]
pub struct ReduceArgs {
    /// The MF++ test to reduce (never modified); `-` reads it from standard input (needs -o).
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// The compiler's flags, as MF++'s generator takes them: -I/-iquote/-isystem DIR find the
    /// spec headers; all reach the check script in MFPPR_CXXFLAGS.
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,

    /// Interestingness script: an executable, a .py file run with python3, or builtin:NAME (a
    /// check built into mfppr: `mfppr checks list`).
    #[arg(long, value_name = "SCRIPT", help_heading = "Interestingness")]
    check: PathBuf,

    #[command(flatten)]
    reduction: ReductionArgs,

    /// Check scripts run at once [default: number of cores].
    #[arg(
        short = 'j',
        visible_short_alias = 'n',
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Interestingness"
    )]
    jobs: Option<u32>,

    /// Stop (exit 1) before any check run when a quoted include of the test or its spec is not
    /// found, instead of warning.
    #[arg(long, help_heading = "Reduction")]
    strict_spec: bool,

    #[command(flatten)]
    out: OutputArgs,
}

/// Where the result, the statistics and the report go, and what is printed.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Output")]
struct OutputArgs {
    /// Output file [default: STEM.reduced.cpp beside FILE; required when FILE is -].
    #[arg(short = 'o', long, value_name = "OUT", required_if_eq("file", "-"))]
    output: Option<PathBuf>,

    /// File name the test read from standard input gets (its checks see it under this name).
    #[arg(long, value_name = "NAME", default_value = "stdin.cpp")]
    name: String,

    /// Write search statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,

    /// Continue from an existing output file if it is still interesting.
    #[arg(long)]
    resume: bool,

    /// Also write a bug report with blame into this directory (see `mfppr report`).
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,

    /// With --report: shell command printing the library's version.
    #[arg(long, value_name = "CMD")]
    library_version: Option<String>,

    /// With --report: write into a non-empty directory.
    #[arg(long)]
    force: bool,

    /// No progress lines on stderr.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,

    /// -v: the diff size of each accepted candidate; -vv: also each candidate tried.
    #[arg(short, long, action = ArgAction::Count)]
    verbose: u8,

    /// Print a unified diff of the result against the input on stdout (the summary goes to
    /// stderr).
    #[arg(long)]
    print_diff: bool,

    /// Keep the check directories of interesting and timed-out candidates in DIR/1, DIR/2 …
    /// (DIR must be new or empty).
    #[arg(long, value_name = "DIR")]
    save_temps: Option<PathBuf>,
}

impl ReduceArgs {
    /// The library options these flags stand for, with the compiler flags after `--`.
    pub fn options(&self, flags: &CompilerFlags) -> ReduceOptions {
        let mut opts = ReduceOptions::new(&self.file, &self.check);
        self.reduction.apply(&mut opts);
        opts.output = self.out.output.clone();
        flags.apply(&self.reduction.include, &mut opts);
        if let Some(jobs) = self.jobs {
            opts.jobs = jobs as usize;
        }
        opts.stats = self.out.stats.clone();
        opts.resume = self.out.resume;
        opts.quiet = self.out.quiet;
        opts.strict_spec = self.strict_spec;
        opts.verbose = self.out.verbose;
        opts.save_temps = self.out.save_temps.clone();
        opts
    }

    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        crate::messages::set_quiet(self.out.quiet);
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        // A built-in check's scripts live as long as this value.
        let check = crate::checks::resolve(&self.check)?;
        let mut opts = self.options(&flags);
        opts.check = check.script().to_path_buf();
        // Standard input lives in a temp dir for the whole reduction.
        let _stdin_dir = if is_stdin(&self.file) {
            let (dir, path) = stdin_to_file(&self.out.name)?;
            opts.input = path;
            Some(dir)
        } else {
            None
        };
        if let Some(dir) = &self.out.save_temps {
            prepare_save_temps(dir)?;
        }
        let report_dir = match &self.out.report {
            Some(dir) => Some(crate::bug_report::prepare(
                dir,
                self.out.force,
                &opts.input,
            )?),
            None => None,
        };
        let outcome = reduce(&opts)?;
        if self.out.print_diff {
            print!(
                "{}",
                unified_diff(&opts.input, &outcome.output, &self.file)?
            );
            eprintln!("{}", outcome.summary());
        } else {
            println!("{}", outcome.summary());
        }
        if let Some(dir) = report_dir {
            let report_opts = crate::bug_report::BugReportOptions {
                file: outcome.output.clone(),
                check: opts.check.clone(),
                include_dirs: opts.include_dirs.clone(),
                specs: self.reduction.spec.clone(),
                library_version: self.out.library_version.clone(),
                stats: Some(outcome.summary()),
                env: opts.extra_env.clone(),
                rule: crate::judge::CheckRule {
                    timeout: Some(outcome.timeout),
                    expected: Some(outcome.expected),
                    same_status: opts.interesting_exit_auto,
                },
            };
            let report = crate::bug_report::write(&report_opts, &dir)?;
            println!("{}", super::report::summary(&report, &dir));
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Create the `--save-temps` directory, which must be new or empty.
fn prepare_save_temps(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("cannot create --save-temps {}: {e}", dir.display()),
        )
    })?;
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read --save-temps {}", dir.display()))?;
    if entries.next().is_some() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "--save-temps {} is not empty; give a new or empty directory",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// The unified diff of the result at `output` against the input at `input` (`shown`: the input's
/// name as given on the command line).
fn unified_diff(input: &Path, output: &Path, shown: &Path) -> anyhow::Result<String> {
    let read = |p: &Path| {
        std::fs::read(p)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .with_context(|| format!("cannot read {} for --print-diff", p.display()))
    };
    let (before, after) = (read(input)?, read(output)?);
    Ok(similar::TextDiff::from_lines(&before, &after)
        .unified_diff()
        .header(&shown.display().to_string(), &output.display().to_string())
        .to_string())
}
