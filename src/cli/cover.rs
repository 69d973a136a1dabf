//! `mfppr cover report|inject|restore|find`: turns flags into the option structs of
//! [`crate::coverage::commands`] and prints what they return.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{ArgGroup, Subcommand};
use regex::Regex;

use crate::cli::common::CompilerFlags;
use crate::coverage::find::pipeline::TestSource;
use crate::coverage::{
    self, find::shell, Filters, FindOptions, InjectRunOptions, InjectTarget, MarkerKind,
    NewLinesReport, ReduceSettings, ReportOptions, VerifySettings,
};
use crate::error::{coded, ExitKind};
use crate::messages;

const EXAMPLE: &str = "\
Examples:
  # Lines the fuzzer reached that the test suite never did, per file and function (`cover` with
  # no subcommand is `cover report`):
  mfppr cover --suite build-suite/ --fuzz build-fuzz/ --source-root ~/lib --include '^include/'
  # The same as JSON, plus lcov tracefiles (suite.info, fuzz.info, new.info) for genhtml:
  mfppr cover report --suite s.gcov.json.gz --fuzz f.gcov.json.gz --json --lcov lcov/
  # Copy the library with a marker before each new line, then build the fuzz test against it:
  mfppr cover inject --suite s/ --fuzz f/ --source-root ~/lib --inject-into /tmp/lib-marked
  # Edit in place (manifest first), and put everything back afterwards:
  mfppr cover inject --suite s/ --fuzz f/ --source-root ~/lib --in-place
  mfppr cover restore mfppr-cover-manifest.json
  # Find the smallest generated test per marker, reduce it toward the marker (checks kept) and
  # confirm with gcov that the reduced test covers the line in the original library:
  mfppr cover find --suite s/ --fuzz f/ --source-root lib --corpus tests/ \\
      --run 'g++ -std=c++17 -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {test} -o t && ./t' \\
      --reduce --verify-gcov --out found/ -j 4
  # Tests from a generator instead (seeds 1..50):
  mfppr cover find ... --generate 'gen-mfpp --seed {seed} -o {out}' --budget 50 --run '...'

Inputs: gcov --json-format (.gcov.json[.gz], or --stdout output with one document per line),
gcovr --json reports, and text .gcov files; directories are searched recursively.
New line = executed in the fuzz run, never in the suite run (lcov's GBC + GIC).";

const FIND_HELP: &str = "\
find injects markers into --inject-into DIR (default OUT/injected; with --build CMD it builds it
there once), or reuses a tree made by `cover inject --inject-into DIR --build CMD` (--marked DIR),
and runs `sh -c` on the --run
command for each test, with {test} = the test's absolute path, in a fresh directory, with
MFPPR_INJECTED = the marked tree (put it first on the include path). Each `MFPPR-COV <id> ` line on
its stderr or stdout means marker <id> was reached; per marker, the smallest test (bytes, then
name) whose command exits 0 is chosen. --reduce reduces it with builtin:coverage-marker
(`mfppr checks show coverage-marker`; MARKER_ID=<id>, MFPPR_INCLUDES=<marked tree>:<-I dirs>,
CXXFLAGS=--cxxflags) keeping every
check, into OUT/<id>.cpp. --verify-gcov builds each reduced test with --verify-cmd (default: $CXX
or g++ with --cxxflags, -DEXECUTE=1 --coverage, -I dirs and the original --source-root), runs it,
runs `gcov --json-format --stdout` on the .gcda files below {exe}'s directory, and checks that the
marker's line ran. --metamorphic builds tests the same way with only r_0 and with only r_k for
each checked pair (r_0, r_k), into OUT/metamorphic/: a line is `metamorphic (pair r_0/r_k)` in a
test when exactly one side of a pair runs it, else `executed only`. Per marker, the smallest of
its --mc-tests smallest passing tests in which it is metamorphic is chosen instead (else the
smallest), with the reason; its reduction keeps it metamorphic (the oracle gets MC_PAIR=k and
MFPPR_EXE, and asks that exactly one side reaches the marker) and is checked again under gcov
(`, kept` or `, lost`). OUT/metamorphic.json has each analysed test's pairs and lines; OUT also
gets find.json (the plain smallest-test choice) and summary.json. After --reduce, each distinct
reduced test is run with the value of the statement reaching each new line replaced by another
value of the program: the line is `checked (metamorphic, pair r_0/r_k)` or `checked (value)` when
a check then fails, else `executed only`; with a --printer for the value's type, such a value
gets a regression check of what the library prints today (`checked (value): regression check
(current behaviour)`). As few tests as give every line its best check go to OUT/tests/, each
headed by the lines it covers, with OUT/tests/INDEX.md; the last line printed is then `cover: P
new lines, R reached, T tests, C checked (M metamorphic, V value), E executed only` (without
--reduce: `cover: P new lines, R reached, D reduced, V verified`, and `, M metamorphic`).";

fn default_jobs() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| e.to_string())
}

fn template(flag: &str, s: &str, needed: &[&str]) -> Result<String, String> {
    shell::check_template(flag, s, needed)
        .map(|()| s.to_string())
        .map_err(|e| format!("{e:#}"))
}

fn parse_run(s: &str) -> Result<String, String> {
    template("--run", s, &["test"])
}

fn parse_generate(s: &str) -> Result<String, String> {
    template("--generate", s, &["seed", "out"])
}

fn parse_verify_cmd(s: &str) -> Result<String, String> {
    template("--verify-cmd", s, &["test", "exe"])
}

/// Arguments of `mfppr cover`: a subcommand, or the options of `report` alone (as `git stash`
/// is `git stash push`).
#[derive(Debug, clap::Args)]
#[command(
    after_help = EXAMPLE,
    arg_required_else_help = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    override_usage = "mfppr cover [report] --suite PATH --fuzz PATH [OPTIONS]\n       \
                      mfppr cover <inject|restore|find> [OPTIONS]"
)]
pub struct CoverArgs {
    #[command(subcommand)]
    command: Option<CoverCommand>,
    /// `mfppr cover --suite S --fuzz F …`: the options of `report`, without the subcommand.
    #[command(flatten)]
    report: ReportCmd,
}

#[derive(Debug, Subcommand)]
enum CoverCommand {
    /// Report the lines the fuzz run executed and the suite run never did.
    Report(ReportCmd),
    /// Report, then insert a marker before each new line (in a copy, or in place).
    Inject(InjectCmd),
    /// Put back every file of an in-place injection, byte for byte.
    Restore(RestoreCmd),
    /// Report, mark a copy, find the smallest test per marker, reduce and verify it.
    Find(Box<FindCmd>),
    /// Internal, for the reduction oracle of `find --metamorphic`: write the test once per
    /// --variant K with only r_K left (variant elimination), print the paths.
    #[command(hide = true)]
    Isolate(IsolateCmd),
}

#[derive(Debug, clap::Args)]
struct IsolateCmd {
    /// The MF++ test.
    #[arg(value_name = "TEST")]
    test: PathBuf,
    /// Keep only r_K (repeatable: one file per K).
    #[arg(long = "variant", value_name = "K", required = true)]
    variants: Vec<usize>,
    /// Where to write `<stem>.r_<K>.<ext>`.
    #[arg(long, value_name = "DIR", required = true)]
    out_dir: PathBuf,
}

/// The coverage to diff.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Coverage")]
struct CoverageArgs {
    /// Coverage of the existing test suite (file or directory; repeatable).
    #[arg(long, value_name = "PATH", required = true)]
    suite: Vec<PathBuf>,
    /// Coverage of the fuzzer's tests (file or directory; repeatable).
    #[arg(long, value_name = "PATH", required = true)]
    fuzz: Vec<PathBuf>,
    /// Library source root: relative names resolve against it, report paths are relative to it,
    /// files outside it are ignored.
    #[arg(long, value_name = "DIR")]
    source_root: Option<PathBuf>,
    /// Only report files whose (normalised) path matches (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    include: Vec<Regex>,
    /// Do not report files whose (normalised) path matches (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    exclude: Vec<Regex>,
    /// Accept suite and fuzz coverage with no file in common (every fuzz line is then new).
    #[arg(long)]
    allow_disjoint: bool,
}

/// How the report is printed.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Output")]
struct OutputArgs {
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write lcov tracefiles into DIR: suite.info and fuzz.info (each run whole) and
    /// new.info (the new lines); the note gives the `genhtml --baseline-file` command.
    #[arg(long, value_name = "DIR")]
    lcov: Option<PathBuf>,
    /// Print only results and warnings, no notes or progress.
    #[arg(short, long)]
    quiet: bool,
}

/// What the markers do and where they are listed.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Injection")]
struct MarkerArgs {
    /// What a marker does: log `MFPPR-COV <id> <file>:<line>` to stderr and continue, or also abort.
    #[arg(long, value_enum, default_value_t = MarkerKind::Log)]
    marker: MarkerKind,
    /// Where to write markers.json (default: DIR/markers.json, or next to the manifest).
    #[arg(long, value_name = "FILE")]
    markers: Option<PathBuf>,
}

/// The report, and the markers made from it (`inject` and `find`).
#[derive(Debug, clap::Args)]
struct MarkingArgs {
    #[command(flatten)]
    coverage: CoverageArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    marker: MarkerArgs,
}

#[derive(Debug, clap::Args)]
struct ReportCmd {
    #[command(flatten)]
    coverage: CoverageArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Also write a coverage page: one self-contained HTML file with the new lines per file and
    /// function and each file's source with them marked.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    html: Option<PathBuf>,
}

/// Edited files get `#include <stdio.h>`, `#include <stdlib.h>` and `#line 1` prepended, so line
/// numbers hold.
#[derive(Debug, clap::Args)]
#[command(
    group = ArgGroup::new("target").required(true).args(["inject_into", "in_place"]),
    next_help_heading = "Injection"
)]
struct InjectCmd {
    #[command(flatten)]
    marking: MarkingArgs,
    /// Inject into a copy of everything under --source-root, written to DIR.
    #[arg(long, value_name = "DIR", requires = "source_root")]
    inject_into: Option<PathBuf>,
    /// Inject into the sources under --source-root themselves (a manifest and backups are
    /// written first).
    #[arg(long, requires = "source_root")]
    in_place: bool,
    /// Manifest for --in-place.
    #[arg(long, value_name = "FILE", default_value = "mfppr-cover-manifest.json")]
    manifest: PathBuf,
    /// Build the marked tree once with this shell command, run in it (e.g. 'make -j4'); a
    /// failure is an error and the original sources stay untouched.
    #[arg(long, value_name = "CMD")]
    build: Option<String>,
}

#[derive(Debug, clap::Args)]
struct RestoreCmd {
    /// The manifest written by `mfppr cover inject --in-place`.
    #[arg(value_name = "MANIFEST")]
    manifest: PathBuf,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

/// Where the tests come from and how each is run.
#[derive(Debug, clap::Args)]
#[command(
    next_help_heading = "Tests",
    group = ArgGroup::new("tests").required(true).args(["corpus", "generate"])
)]
struct TestsArgs {
    /// Directory of generated tests (every .cpp/.cc/.cxx below it).
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// Generate the tests instead: run CMD for seeds 1..=N, with {seed} and {out} (a path in
    /// OUT/generated) replaced.
    #[arg(long, value_name = "CMD", requires = "budget", value_parser = parse_generate)]
    generate: Option<String>,
    /// Number of seeds for --generate.
    #[arg(
        long,
        value_name = "N",
        requires = "generate",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    budget: Option<u32>,
    /// Build and run one test against the marked library: CMD with {test} replaced, run by
    /// `sh -c` in a fresh directory with MFPPR_INJECTED set.
    #[arg(long, value_name = "CMD", required = true, value_parser = parse_run)]
    run: String,
    /// Kill a --run or --generate command (and its process group) after SECS.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60,
        value_parser = clap::value_parser!(u64).range(1..=super::common::MAX_TIMEOUT_SECS)
    )]
    run_timeout: u64,
    /// Output directory (must be new or empty): find.json, <id>.cpp, summary.json.
    #[arg(long, value_name = "DIR", required = true)]
    out: PathBuf,
    /// Tests run at once, and candidates judged at once per reduction (default: all CPUs).
    #[arg(
        short,
        long,
        value_name = "N",
        default_value_t = default_jobs(),
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    jobs: u32,
    /// Other include directories of the tests (after the marked tree; repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    include_dirs: Vec<PathBuf>,
}

/// Reduction of each chosen test.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Reduce")]
struct ReduceArgs {
    /// Reduce each chosen test toward its marker, keeping every check, into OUT/<id>.cpp.
    #[arg(long)]
    reduce: bool,
    /// The oracle for --reduce: a script, or builtin:NAME (`mfppr checks list`) [default:
    /// builtin:coverage-marker].
    #[arg(long, value_name = "SCRIPT", requires = "reduce")]
    check: Option<PathBuf>,
    /// Per-check timeout of the reduction (default: derived from the first check).
    #[arg(
        long,
        value_name = "SECS",
        requires = "reduce",
        value_parser = clap::value_parser!(u64).range(1..=super::common::MAX_TIMEOUT_SECS)
    )]
    timeout: Option<u64>,
    /// Compiler flags: CXXFLAGS of the oracle and flags of the default --verify-cmd
    /// (default: the flags after --, else $CXXFLAGS, else -std=c++17 -O0 -w).
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    cxxflags: Option<String>,
    /// The default oracle builds and runs each candidate with the --run command (against the
    /// marked, built library) instead of compiling it itself: for a compiled library.
    #[arg(long, requires = "reduce")]
    reduce_with_run: bool,
    /// How to print values of a type for regression checks, as TYPE:EXPR with {} for the value
    /// (repeatable): e.g. 'isl::set:{}.to_str()', 'z3::expr:{}.to_string()'. A new line that
    /// no check sees gets `assert(std::string(EXPR) == "<what the library prints today>")`.
    #[arg(long, value_name = "TYPE:EXPR", requires = "reduce")]
    printer: Vec<String>,
}

/// gcov verification of each reduced test, and metamorphic coverage with the same build.
#[derive(Debug, clap::Args)]
#[command(
    next_help_heading = "Verify",
    group(clap::ArgGroup::new("gcov_build").multiple(true).args(["verify_gcov", "metamorphic"]))
)]
struct VerifyArgs {
    /// Rebuild each reduced test against the original library with coverage and check with gcov
    /// that the marker's line ran.
    #[arg(long, requires = "reduce")]
    verify_gcov: bool,
    /// Judge each reached line by metamorphic coverage: build tests with only r_0 and with only
    /// r_k per checked pair under gcov (the --verify-cmd build); a line is metamorphic when
    /// exactly one side of a pair runs it. Prefer, per marker, a test where it is, and keep it
    /// so in the reduction.
    #[arg(long)]
    metamorphic: bool,
    /// With --metamorphic, look at up to N of the smallest tests reaching each marker for one
    /// whose metamorphic coverage holds it (that one is chosen and reduced, keeping it there).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 5,
        requires = "metamorphic",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    mc_tests: u32,
    /// Build command for --verify-gcov and --metamorphic, with {test} and {exe}; it must use
    /// --coverage and write its objects below {exe}'s directory.
    #[arg(
        long,
        value_name = "CMD",
        requires = "gcov_build",
        value_parser = parse_verify_cmd
    )]
    verify_cmd: Option<String>,
    /// The gcov program for --verify-gcov (e.g. gcov-13 to match g++-13).
    #[arg(long, value_name = "PROG", default_value = "gcov")]
    gcov: String,
    /// A directory of the library's .gcno files (its own coverage build; repeatable): the test
    /// runs with GCOV_PREFIX in a fresh directory and gcov reads the library's counts there.
    #[arg(long, value_name = "DIR", requires = "gcov_build")]
    gcov_objdir: Vec<PathBuf>,
    /// Extra environment of the verification build and run (repeatable), e.g.
    /// LD_LIBRARY_PATH=/lib/build or GCOV_PREFIX=/tmp/g.
    #[arg(long, value_name = "K=V", value_parser = parse_env, requires = "gcov_build")]
    env: Vec<(String, String)>,
}

impl VerifyArgs {
    fn settings(&self) -> VerifySettings {
        VerifySettings {
            command: self.verify_cmd.clone(),
            gcov: self.gcov.clone(),
            objdirs: self.gcov_objdir.clone(),
            env: self.env.clone(),
        }
    }
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    super::common::parse_env(s, "K=V")
}

/// The marked tree of `find`: made here, or reused.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Injection")]
struct TreeArgs {
    /// Write the marked copy of --source-root to DIR (default: OUT/injected).
    #[arg(long, value_name = "DIR")]
    inject_into: Option<PathBuf>,
    /// Reuse a marked tree made (and built) by `cover inject --inject-into DIR [--build CMD]`:
    /// read DIR/markers.json, inject nothing; --suite and --fuzz are then not needed.
    #[arg(long, value_name = "DIR", conflicts_with = "inject_into")]
    marked: Option<PathBuf>,
    /// Build the new marked copy once with this shell command, run in it.
    #[arg(long, value_name = "CMD", conflicts_with = "marked")]
    build: Option<String>,
    /// Only these markers: ids or FILE:LINE, comma-separated (e.g. iset_h-L120,src/p.c:408).
    #[arg(long, value_name = "P1,P2", value_delimiter = ',')]
    points: Vec<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = FIND_HELP,
    mut_arg("source_root", |a| a.required(true)),
    mut_arg("suite", |a| a.required(false).required_unless_present("marked")),
    mut_arg("fuzz", |a| a.required(false).required_unless_present("marked"))
)]
struct FindCmd {
    #[command(flatten)]
    marking: MarkingArgs,
    #[command(flatten)]
    tree: TreeArgs,
    #[command(flatten)]
    tests: TestsArgs,
    #[command(flatten)]
    reduce: ReduceArgs,
    #[command(flatten)]
    verify: VerifyArgs,
    /// Also write a coverage page (e.g. OUT/index.html): one self-contained HTML file with each
    /// new line's status, the tests reaching it and its check, linked to the files in OUT.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    html: Option<PathBuf>,
    /// The tests' compiler flags, as MF++'s generator takes them: -I/-iquote/-isystem DIR are
    /// include directories of the tests (after -I DIR); all of them are the default --cxxflags.
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,
}

impl CoverArgs {
    /// Run the command: the subcommand, else `report` with the options given.
    pub fn run(self) -> Result<ExitCode> {
        self.command
            .unwrap_or(CoverCommand::Report(self.report))
            .run()
    }
}

impl CoverCommand {
    fn run(self) -> Result<ExitCode> {
        match self {
            CoverCommand::Report(cmd) => {
                messages::set_quiet(cmd.output.quiet);
                let opts = cmd.coverage.options(&cmd.output);
                let html = match &cmd.html {
                    Some(h) => Some(coverage::html::check_target(
                        &coverage::commands::report_page_target(&opts, h),
                    )?),
                    None => None,
                };
                let report = coverage::run_report(&opts)?;
                print_report(&report, &cmd.output)?;
                if let Some(h) = &html {
                    coverage::html::write_report_page(&report, h)?;
                }
            }
            CoverCommand::Inject(cmd) => {
                messages::set_quiet(cmd.marking.output.quiet);
                let target = match cmd.inject_into {
                    Some(dir) => InjectTarget::Copy(dir),
                    None => InjectTarget::InPlace {
                        manifest: cmd.manifest,
                    },
                };
                let (report, _) = coverage::run_inject(&InjectRunOptions {
                    report: cmd.marking.coverage.options(&cmd.marking.output),
                    kind: cmd.marking.marker.marker,
                    target,
                    markers_path: cmd.marking.marker.markers,
                    build: cmd.build,
                })?;
                print_report(&report, &cmd.marking.output)?;
            }
            CoverCommand::Restore(cmd) => {
                messages::set_quiet(cmd.quiet);
                coverage::run_restore(&cmd.manifest)?;
            }
            CoverCommand::Isolate(cmd) => {
                let files = coverage::find::metamorphic::isolate_files(
                    &cmd.test,
                    &cmd.variants,
                    &cmd.out_dir,
                )?;
                let mut stdout = std::io::stdout().lock();
                for f in files {
                    writeln!(stdout, "{}", f.display()).context("cannot write the paths")?;
                }
            }
            CoverCommand::Find(cmd) => {
                messages::set_quiet(cmd.marking.output.quiet);
                let (report, summary) = coverage::run_find(&cmd.options()?)?;
                if let Some(report) = &report {
                    print_report(report, &cmd.marking.output)?;
                }
                let mut stdout = std::io::stdout().lock();
                write!(stdout, "\n{}\n{}\n", summary.table(), summary.last_line())
                    .context("cannot write the summary")?;
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

impl CoverageArgs {
    fn options(&self, output: &OutputArgs) -> ReportOptions {
        ReportOptions {
            suite: self.suite.clone(),
            fuzz: self.fuzz.clone(),
            source_root: self.source_root.clone(),
            filters: Filters {
                include: self.include.clone(),
                exclude: self.exclude.clone(),
            },
            allow_disjoint: self.allow_disjoint,
            lcov: output.lcov.clone(),
        }
    }
}

impl FindCmd {
    fn options(&self) -> Result<FindOptions> {
        let t = &self.tests;
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        let r = &self.reduce;
        if r.cxxflags.is_some() && !flags.flags.is_empty() {
            return Err(coded(
                ExitKind::Usage,
                "give the compiler flags either with --cxxflags or after --, not both",
            ));
        }
        let source = match (&t.corpus, &t.generate, t.budget) {
            (Some(dir), _, _) => TestSource::Corpus(dir.clone()),
            (None, Some(template), Some(budget)) => TestSource::Generate {
                template: template.clone(),
                budget,
            },
            _ => unreachable!("clap requires --corpus or --generate with --budget"),
        };
        Ok(FindOptions {
            report: self.marking.coverage.options(&self.marking.output),
            kind: self.marking.marker.marker,
            inject_into: self.tree.inject_into.clone(),
            marked: self.tree.marked.clone(),
            build: self.tree.build.clone(),
            points: self.tree.points.clone(),
            markers_path: self.marking.marker.markers.clone(),
            source,
            run: t.run.clone(),
            run_timeout: Duration::from_secs(t.run_timeout),
            out: t.out.clone(),
            jobs: t.jobs as usize,
            include_dirs: flags.search_dirs(&t.include_dirs),
            cxxflags: r.cxxflags.clone().or_else(|| flags.env_value()),
            reduce: r.reduce.then(|| ReduceSettings {
                check: r.check.clone(),
                timeout: r.timeout.map(Duration::from_secs),
                with_run: r.reduce_with_run,
            }),
            verify: self.verify.verify_gcov.then(|| self.verify.settings()),
            metamorphic: self.verify.metamorphic.then(|| self.verify.settings()),
            mc_tests: self.verify.mc_tests as usize,
            printers: r
                .printer
                .iter()
                .map(|p| {
                    coverage::find::checked::Printer::parse(p)
                        .map_err(|e| coded(ExitKind::Usage, format!("{e:#}")))
                })
                .collect::<Result<_>>()?,
            html: self.html.clone(),
        })
    }
}

/// The report on stdout: a table, or JSON with `--json`.
fn print_report(report: &NewLinesReport, output: &OutputArgs) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if output.json {
        serde_json::to_writer_pretty(&mut stdout, &report.json())
            .context("cannot write the JSON report")?;
        writeln!(stdout).context("cannot write the JSON report")?;
    } else {
        write!(stdout, "{}", report.table()).context("cannot write the report")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mfppr cover` alone, to parse a subcommand in a test.
    #[derive(Debug, clap::Parser)]
    #[command(name = "mfppr cover")]
    struct CoverParser {
        #[command(subcommand)]
        command: CoverCommand,
    }

    fn find_options(extra: &[&str]) -> Result<FindOptions> {
        let argv = [
            "mfppr cover",
            "find",
            "--marked",
            "m",
            "--source-root",
            "src",
            "--corpus",
            "c",
            "--run",
            "true {test}",
            "--out",
            "o",
            "-I",
            "given",
        ];
        let parsed =
            <CoverParser as clap::Parser>::try_parse_from(argv.iter().chain(extra)).unwrap();
        match parsed.command {
            CoverCommand::Find(cmd) => cmd.options(),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn flags_after_dashdash_are_include_dirs_and_the_default_cxxflags() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec");
        std::fs::create_dir(&spec).unwrap();
        let spec_arg = spec.to_string_lossy().into_owned();
        let opts = find_options(&["--", "-std=c++17", "-I", &spec_arg, "-DEXTRA=1"]).unwrap();
        assert_eq!(opts.include_dirs, [PathBuf::from("given"), spec.clone()]);
        assert_eq!(
            opts.cxxflags.as_deref(),
            Some(format!("-std=c++17 -I {spec_arg} -DEXTRA=1").as_str())
        );
        let plain = find_options(&["--cxxflags", "-O1"]).unwrap();
        assert_eq!(plain.cxxflags.as_deref(), Some("-O1"));
        assert_eq!(plain.include_dirs, [PathBuf::from("given")]);
        let both = find_options(&["--cxxflags", "-O1", "--", "-O2"]).unwrap_err();
        assert!(both.to_string().contains("not both"), "{both}");
    }
}
