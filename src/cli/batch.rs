//! `mfppr batch` command line: a campaign of reductions, its scale-out task file, the per-test
//! step those tasks run (`--one`), and `--collect`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::batch::{self, triage, BatchOptions, Test};
use crate::cli::common::{CompilerFlags, ReductionArgs};
use crate::engine::Inputs;
use crate::error::{coded, ExitKind};
use crate::reduce::ReduceOptions;

const AFTER_HELP: &str = "\
Examples:
  mfppr batch failing/ --check interestingness/check-failure.py -I spec/ -o campaign -j 8
    reduces every test of failing/ (smallest first) into campaign/<stem>/, journals each
    finished test in campaign/results.jsonl and groups the results in campaign/summary.json.
  mfppr batch failing/ --check … -o campaign --resume
    skips the finished tests and continues the others from their best result.
  mfppr batch failing/ --check … -o campaign --emit-tasks tasks.txt
  scripts/batch-parallel tasks.txt        (or: sbatch --array=1-N scripts/batch-slurm.sbatch tasks.txt)
  mfppr batch --collect campaign
  mfppr batch --triage-only campaign --group-by mrs
    groups the finished results again (here by suspect MR families instead of the library
    operations of their standalone exports), reducing nothing.

A test whose original is not interesting, or whose check cannot run, is recorded and skipped.
Task files are bash: one line per test, file names with newlines or quotes included.
--collect counts the tasks of the last task file emitted for OUTDIR (OUTDIR/tasks.json) that left
no result as `missing`, and then exits 1. Two runs on one OUTDIR at once are refused (the lock
OUTDIR/.mfppr.lock; each task locks OUTDIR/<stem>/.mfppr.lock).
Exit codes: 0 done (whatever the tests' outcomes), 1 bad input or output directory, an OUTDIR in
use, or tasks missing at --collect, 2 usage error, 130 interrupted (every finished test is in the
journal; continue with --resume).";

/// Arguments of `mfppr batch`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct BatchArgs {
    /// MF++ tests, or directories searched for `*.cpp` tests.
    #[arg(value_name = "INPUT", required_unless_present_any = ["collect", "triage_only", "explain"])]
    inputs: Vec<PathBuf>,

    /// Interestingness script: an executable, a .py file run with python3, or builtin:NAME (a
    /// check built into mfppr: `mfppr checks list`; task files keep the name).
    #[arg(
        long,
        value_name = "SCRIPT",
        required_unless_present_any = ["collect", "triage_only", "explain"],
        help_heading = "Interestingness"
    )]
    check: Option<PathBuf>,

    #[command(flatten)]
    reduction: ReductionArgs,

    /// The compiler's flags, as MF++'s generator takes them: -I/-iquote/-isystem DIR find the
    /// spec headers; all reach the check script in MFPPR_CXXFLAGS (and the task lines).
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,

    #[command(flatten)]
    run: RunArgs,

    /// The campaign's output directory (created if missing).
    #[arg(
        short = 'o',
        long,
        value_name = "OUTDIR",
        required_unless_present_any = ["collect", "triage_only", "explain"],
        help_heading = "Output"
    )]
    output: Option<PathBuf>,

    /// Skip tests finished with the same input, continue the others from their best result.
    #[arg(long, help_heading = "Output")]
    resume: bool,

    /// No progress lines on stderr.
    #[arg(short, long, help_heading = "Output")]
    quiet: bool,

    /// Write one self-contained command per test to FILE instead of running them.
    #[arg(long, value_name = "FILE", help_heading = "Scale-out")]
    emit_tasks: Option<PathBuf>,

    /// Merge the per-test results under OUTDIR into its journal, summary and table.
    #[arg(
        long,
        value_name = "OUTDIR",
        conflicts_with_all = ["inputs", "check", "output", "emit_tasks", "one"],
        help_heading = "Scale-out"
    )]
    collect: Option<PathBuf>,

    /// Group the finished results under OUTDIR again (by --group-by), reducing nothing.
    #[arg(
        long,
        value_name = "OUTDIR",
        conflicts_with_all = ["inputs", "check", "output", "emit_tasks", "one", "collect"],
        help_heading = "Triage"
    )]
    triage_only: Option<PathBuf>,

    /// Print why the members of group N of the campaign in -o OUTDIR were grouped: what they
    /// share (trigger MR, needed families or library operations), each member's own, and the
    /// representative's standalone export.
    #[arg(
        long,
        value_name = "N",
        requires = "output",
        conflicts_with_all = ["inputs", "check", "emit_tasks", "one", "collect", "triage_only"],
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Triage"
    )]
    explain: Option<u32>,

    /// What groups the results: `library`, the relation that triggers each failure (blame's
    /// innermost suspect), else the MR families its calls need, else the library operations of
    /// its standalone export; or `mrs`, the suspect MR families (blame); both with the failure.
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "BY",
        help_heading = "Triage"
    )]
    group_by: triage::GroupBy,

    /// Keep a result the slip check flags (its original still fails with the result's trigger
    /// folded away) instead of reducing that folded original again.
    #[arg(long, help_heading = "Triage")]
    keep_slips: bool,

    /// Reduce the single INPUT as the campaign's test STEM (the command of a task file).
    #[arg(long, value_name = "STEM", hide = true, conflicts_with = "emit_tasks")]
    one: Option<String>,
}

/// How the campaign's check runs are shared out, and their environment.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Interestingness")]
struct RunArgs {
    /// Check scripts run at once, shared by the tests in flight [default: number of cores].
    #[arg(
        short = 'j',
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    jobs: Option<u32>,

    /// Tests reduced at once, each with N / K check runs at once [default: N, at most the number
    /// of tests].
    #[arg(
        long,
        value_name = "K",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    tests_at_once: Option<u32>,

    /// Environment variable for the check script, NAME=VALUE (repeatable; kept in task files).
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
}

/// Parse `NAME=VALUE`.
fn parse_env(s: &str) -> Result<(String, String), String> {
    super::common::parse_env(s, "NAME=VALUE")
}

impl BatchArgs {
    /// The campaign options these flags stand for.
    fn options(&self, flags: &CompilerFlags, check: PathBuf, out_dir: PathBuf) -> BatchOptions {
        let mut ro = ReduceOptions::new(PathBuf::new(), check);
        // A campaign meets several bugs: each test keeps its own (see `Inputs::Last`).
        ro.inputs = Inputs::Last;
        self.reduction.apply(&mut ro);
        ro.extra_env = self.run.env.clone();
        flags.apply(&self.reduction.include, &mut ro);
        let jobs = self.run.jobs.map_or(ro.jobs, |j| j as usize).max(1);
        let tests_at_once = match (self.one.is_some(), self.run.tests_at_once) {
            (true, _) => 1,
            (false, Some(k)) => (k as usize).min(jobs),
            (false, None) => jobs,
        };
        BatchOptions {
            reduce: ro,
            out_dir,
            jobs,
            tests_at_once,
            resume: self.resume,
            quiet: self.quiet,
            group_by: self.group_by,
            repair_slips: !self.keep_slips,
        }
    }

    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        crate::messages::set_quiet(self.quiet);
        if let Some(dir) = &self.collect {
            let collected = batch::collect(dir, self.group_by)?;
            print!("{}", triage::render(&collected.summary));
            if let Some(first) = collected.missing.first() {
                return Err(coded(
                    ExitKind::Input,
                    format!(
                        "{} emitted tasks have no result (the first: {first:?}); run the task \
                         file again (finished tasks skip themselves), then collect again",
                        collected.missing.len()
                    ),
                ));
            }
            return Ok(ExitCode::SUCCESS);
        }
        if let (Some(group), Some(dir)) = (self.explain, &self.output) {
            let ro = self.rereading_options()?;
            print!("{}", batch::explain::explain(dir, group as usize, &ro)?);
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(dir) = &self.triage_only {
            let summary = batch::triage_only(dir, self.group_by, &self.rereading_options()?)?;
            print!("{}", triage::render(&summary));
            return Ok(ExitCode::SUCCESS);
        }
        let (Some(check), Some(out_dir)) = (self.check.clone(), self.output.clone()) else {
            return Err(coded(ExitKind::Usage, "--check and -o are required"));
        };
        let out_dir = std::path::absolute(&out_dir)
            .map_err(|e| coded(ExitKind::Input, format!("{}: {e}", out_dir.display())))?;
        if out_dir.to_str().is_none() {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "{}: -o is not UTF-8, which the campaign's journal cannot record; choose \
                     another -o",
                    out_dir.display()
                ),
            ));
        }
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        // A built-in check's scripts live as long as this value.
        let check = crate::checks::resolve(&check)?;
        let opts = self.options(&flags, check.script().to_path_buf(), out_dir);
        if let Some(stem) = &self.one {
            return self.run_one(stem, &opts);
        }
        let tests = batch::discover(&self.inputs)?;
        if tests.is_empty() {
            return Err(coded(
                ExitKind::Input,
                "no tests found: give MF++ test files or directories holding *.cpp tests",
            ));
        }
        let mut opts = opts;
        if self.run.tests_at_once.is_none() {
            opts.tests_at_once = opts.tests_at_once.min(tests.len());
        }
        if let Some(file) = &self.emit_tasks {
            batch::tasks::emit(file, &tests, &opts)?;
            crate::messages::progress(format!(
                "mfppr batch: wrote {} tasks to {}; run them with `scripts/batch-parallel {}` or \
                 `sbatch --array=1-{} scripts/batch-slurm.sbatch {}`, then `mfppr batch \
                 --collect {}`",
                tests.len(),
                file.display(),
                file.display(),
                tests.len(),
                file.display(),
                opts.out_dir.display()
            ));
            return Ok(ExitCode::SUCCESS);
        }
        let summary = batch::run(&tests, &opts)?;
        print!("{}", triage::render(&summary));
        Ok(ExitCode::SUCCESS)
    }

    /// The reduction and compiler options `--explain` and `--triage-only` read a finished
    /// campaign with (no input, no output of their own).
    fn rereading_options(&self) -> anyhow::Result<ReduceOptions> {
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        let mut ro = ReduceOptions::new(PathBuf::new(), PathBuf::new());
        self.reduction.apply(&mut ro);
        flags.apply(&self.reduction.include, &mut ro);
        Ok(ro)
    }

    /// `--one=STEM INPUT`: reduce one test of a task file and write its `result.json`; with
    /// `--resume`, a test already finished with the same input is not redone.
    fn run_one(&self, stem: &str, opts: &BatchOptions) -> anyhow::Result<ExitCode> {
        let [input] = self.inputs.as_slice() else {
            return Err(coded(ExitKind::Usage, "--one takes exactly one INPUT"));
        };
        if !batch::stem_is_valid(stem) {
            return Err(coded(
                ExitKind::Usage,
                format!(
                    "--one={stem:?} cannot name a test directory; emit the tasks again with \
                     --emit-tasks"
                ),
            ));
        }
        crate::interrupt::install()?;
        let input = std::path::absolute(input)?;
        let text = crate::input::read_test(&input)
            .map_err(|e| coded(ExitKind::Input, format!("{e:#}")))?;
        let result = opts.out_dir.join(stem).join(batch::RESULT);
        if opts.resume {
            let hash = blake3::hash(&text).to_hex().to_string();
            let done = std::fs::read(&result)
                .ok()
                .and_then(|b| serde_json::from_slice::<batch::journal::Record>(&b).ok())
                .is_some_and(|r| r.hash == hash);
            if done {
                if !self.quiet {
                    crate::messages::progress(format!(
                        "mfppr batch: {stem} already finished ({})",
                        result.display()
                    ));
                }
                return Ok(ExitCode::SUCCESS);
            }
        }
        let test = Test {
            input,
            stem: stem.to_string(),
            bytes: text.len() as u64,
        };
        let record = batch::run_one(&test, opts)?;
        if !self.quiet {
            crate::messages::progress(format!(
                "mfppr batch: {stem}: {} ({} -> {} bytes) {}",
                record.outcome.name(),
                record.bytes_before,
                record.bytes_after,
                record.signature
            ));
        }
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_pairs_are_validated() {
        assert_eq!(
            parse_env("A=b=c").unwrap(),
            ("A".to_string(), "b=c".to_string())
        );
        assert!(parse_env("=x").is_err());
        assert!(parse_env("x").is_err());
    }

    fn batch_args(extra: &[&str]) -> BatchArgs {
        #[derive(Debug, clap::Parser)]
        struct Parser {
            #[command(flatten)]
            batch: BatchArgs,
        }
        let argv = ["batch", "t.cpp", "--check", "c.py", "-o", "out"];
        <Parser as clap::Parser>::try_parse_from(argv.iter().chain(extra))
            .unwrap()
            .batch
    }

    /// A campaign reduces the fuzzed inputs last unless told otherwise; `--inputs` is a flag,
    /// never an input file.
    #[test]
    fn inputs_are_reduced_last_unless_told_otherwise() {
        let flags = CompilerFlags::parse(&[]).unwrap();
        let options = |args: &BatchArgs| args.options(&flags, "c.py".into(), "out".into());
        let default = batch_args(&[]);
        assert_eq!(options(&default).reduce.inputs, Inputs::Last);
        let anytime = batch_args(&["--inputs", "anytime"]);
        assert_eq!(anytime.inputs, [PathBuf::from("t.cpp")]);
        assert_eq!(options(&anytime).reduce.inputs, Inputs::Anytime);
    }
}
