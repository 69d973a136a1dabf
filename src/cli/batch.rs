//! `mfppr batch` command line: its modes as subcommands (`run`, `emit`, `collect`, `retriage`,
//! `explain`, `page`; no subcommand runs `run`, as `git stash` runs `push`), the per-test step
//! task files run (`--one`). The flag forms of the modes from before the subcommands are refused
//! in one line that names the subcommand (one door per mode, as `cover`'s).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::batch::{self, triage, BatchOptions, Test};
use crate::cli::common::{CompilerFlags, ReductionArgs};
use crate::engine::Inputs;
use crate::error::{coded, ExitKind};
use crate::reduce::ReduceOptions;

const AFTER_HELP: &str = "\
Examples:
  mfppr batch run failing/ --check builtin:failure -I spec/ -o campaign -j 8
    reduces every test of failing/ (largest first when several run at once) into campaign/<stem>/, journals each
    finished test in campaign/results.jsonl and groups the results in campaign/summary.json
    (`mfppr batch failing/ …`, without `run`, is the same).
  mfppr batch run failing/ --check … -o campaign --resume
    skips the finished tests and continues the others from their best result.
  mfppr batch emit failing/ --check … -o campaign --tasks tasks.txt
  scripts/batch-parallel tasks.txt        (or: sbatch --array=1-N scripts/batch-slurm.sbatch tasks.txt)
  mfppr batch collect campaign
  mfppr batch retriage campaign --group-by mrs
    groups the finished results again (here by suspect MR families instead of the library
    operation whose value is wrong), reducing nothing.
  mfppr batch explain 2 -o campaign
    why the members of group 2 were grouped (with the spec flags the campaign journaled; flags
    given after the mode override them).
  mfppr batch page campaign -o bugs.html
    the campaign page: every group with its standalone export, evidence and members, in one
    self-contained HTML file (`run`, `collect` and `retriage` write it too with --html FILE).

A test whose original is not interesting, or whose check cannot run, is recorded and skipped.
Task files are bash: one line per test, file names with newlines or quotes included.
`collect` counts the tasks of the last task file emitted for OUTDIR (OUTDIR/tasks.json) that left
no result as `missing`, and then exits 1. Two runs on one OUTDIR at once are refused (the lock
OUTDIR/.mfppr.lock; each task locks OUTDIR/<stem>/.mfppr.lock).
Exit codes: 0 done (whatever the tests' outcomes), 1 bad input or output directory, an OUTDIR in
use, or tasks missing at collect, 2 usage error, 130 interrupted (every finished test is in the
journal; continue with --resume).";

/// `mfppr batch`: a mode, or the arguments of `run` (and the old flag forms of the modes).
#[derive(Debug, clap::Args)]
#[command(
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    override_usage = "mfppr batch [run] INPUT… --check SCRIPT -o OUTDIR [OPTIONS] [-- COMPILER FLAGS…]\n       \
                      mfppr batch <emit|collect|retriage|explain|page> [OPTIONS]"
)]
pub struct BatchCommand {
    #[command(subcommand)]
    mode: Option<BatchMode>,

    #[command(flatten)]
    args: BatchArgs,
}

/// The modes of `mfppr batch`.
#[derive(Debug, clap::Subcommand)]
enum BatchMode {
    /// Reduce and triage the campaign here (the default).
    #[command(after_help = AFTER_HELP)]
    Run(BatchArgs),
    /// Write one self-contained command per test to a task file (GNU parallel, Slurm) instead
    /// of running them.
    Emit {
        /// The task file.
        #[arg(long, value_name = "FILE", help_heading = "Scale-out")]
        tasks: PathBuf,
        #[command(flatten)]
        args: BatchArgs,
    },
    /// Merge the per-test results of a campaign's tasks into its journal, summary and table.
    Collect {
        /// The campaign's output directory.
        #[arg(value_name = "OUTDIR")]
        dir: PathBuf,
        #[command(flatten)]
        grouping: Grouping,
    },
    /// Group the finished results of a campaign again (by --group-by), reducing nothing.
    Retriage {
        /// The campaign's output directory.
        #[arg(value_name = "OUTDIR")]
        dir: PathBuf,
        #[command(flatten)]
        grouping: Grouping,
        /// Localise each result's wrong value again with this check (one run per result; the
        /// new findings are journaled), e.g. after upgrading mfppr: builtin:NAME or a script.
        #[arg(long, value_name = "SCRIPT")]
        check: Option<PathBuf>,
        /// Environment variable for that check, NAME=VALUE (repeatable).
        #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env, requires = "check")]
        env: Vec<(String, String)>,
        #[command(flatten)]
        rereading: Rereading,
    },
    /// Print why the members of group N were grouped: what they share, each member's own
    /// evidence, and the representative's standalone export.
    Explain {
        /// The group (1 is the largest).
        #[arg(value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        group: u32,
        /// The campaign's output directory.
        #[arg(short = 'o', long, value_name = "OUTDIR")]
        dir: PathBuf,
        #[command(flatten)]
        rereading: Rereading,
    },
    /// Write the campaign page of a finished campaign: its groups, ready to file, in one
    /// self-contained HTML file (from the journal alone: no check runs).
    Page {
        /// The campaign's output directory.
        #[arg(value_name = "OUTDIR")]
        dir: PathBuf,
        /// The page to write.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: PathBuf,
        #[command(flatten)]
        rereading: Rereading,
    },
}

/// What groups a campaign's results (`--group-by`).
#[derive(Debug, clap::Args)]
struct Grouping {
    /// What groups the results: `value` (the default), `library` or `mrs` (see `mfppr batch run
    /// --help`).
    #[arg(long, value_enum, default_value_t, value_name = "BY")]
    group_by: triage::GroupBy,

    /// No progress lines on stderr.
    #[arg(short, long)]
    quiet: bool,

    /// Also write the campaign page (see `mfppr batch page`) to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// How a finished campaign's results are read again: the spec's directories and the compiler
/// flags its tests were reduced with; when none is given, those the campaign journaled.
#[derive(Debug, clap::Args)]
struct Rereading {
    #[command(flatten)]
    reduction: ReductionArgs,

    /// The compiler's flags the campaign was reduced with.
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,
}

impl BatchCommand {
    /// Run the mode (`run` when none is named; an old flag form is refused, naming its
    /// subcommand).
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self.mode {
            None => {
                if let Some(new) = self.args.old_form() {
                    return Err(coded(
                        ExitKind::Usage,
                        format!("this flag form of `mfppr batch` is gone; use `{new}`"),
                    ));
                }
                self.args.run()
            }
            Some(BatchMode::Run(args)) => args.run(),
            Some(BatchMode::Emit { tasks, mut args }) => {
                args.emit_tasks = Some(tasks);
                args.run()
            }
            Some(BatchMode::Collect { dir, grouping }) => {
                crate::messages::set_quiet(grouping.quiet);
                let html = page_target(grouping.html.as_deref(), &dir, "--html")?;
                collect(&dir, grouping.group_by, html.as_deref())
            }
            Some(BatchMode::Retriage {
                dir,
                grouping,
                check,
                env,
                rereading,
            }) => {
                crate::messages::set_quiet(grouping.quiet);
                let html = page_target(grouping.html.as_deref(), &dir, "--html")?;
                let mut ro = rereading.options(&dir)?;
                // A built-in check's scripts live as long as this value.
                let resolved = check.map(|c| crate::checks::resolve(&c)).transpose()?;
                if let Some(c) = &resolved {
                    ro.check = c.script().to_path_buf();
                    ro.extra_env.extend(env);
                }
                retriage(&dir, grouping.group_by, &ro)?;
                write_page(&dir, html.as_deref(), &ro)
            }
            Some(BatchMode::Explain {
                group,
                dir,
                rereading,
            }) => explain(&dir, group, &rereading.options(&dir)?),
            Some(BatchMode::Page {
                dir,
                output,
                rereading,
            }) => {
                let html = page_target(Some(&output), &dir, "-o")?;
                write_page(&dir, html.as_deref(), &rereading.options(&dir)?)
            }
        }
    }
}

impl Rereading {
    /// The reduction and compiler options the finished campaign in `dir` is read again with (no
    /// input, no output of their own).
    fn options(&self, dir: &Path) -> anyhow::Result<ReduceOptions> {
        rereading_options(dir, &self.reduction, &self.compiler_flags)
    }
}

/// Arguments of `mfppr batch run` (and of `mfppr batch` without a mode).
#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// MF++ tests, or directories searched for `*.cpp` tests.
    #[arg(value_name = "INPUT", required_unless_present_any = ["collect", "triage_only", "explain", "emit_tasks"])]
    inputs: Vec<PathBuf>,

    /// Interestingness script: an executable, a .py file run with python3, or builtin:NAME (a
    /// check built into mfppr: `mfppr checks list`; task files keep the name).
    #[arg(
        long,
        value_name = "SCRIPT",
        required_unless_present_any = ["collect", "triage_only", "explain", "emit_tasks"],
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
        required_unless_present_any = ["collect", "triage_only", "explain", "emit_tasks"],
        help_heading = "Output"
    )]
    output: Option<PathBuf>,

    /// Skip tests finished with the same input, continue the others from their best result.
    #[arg(long, help_heading = "Output")]
    resume: bool,

    /// No progress lines on stderr.
    #[arg(short, long, help_heading = "Output")]
    quiet: bool,

    /// Also write the campaign page (see `mfppr batch page`) to FILE when the campaign ends.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Output",
        conflicts_with = "one"
    )]
    html: Option<PathBuf>,

    /// The task file of `batch emit --tasks` (set by that subcommand, not a flag).
    #[arg(skip)]
    emit_tasks: Option<PathBuf>,

    /// The old flag forms (`--emit-tasks FILE`, `--collect OUTDIR`, `--triage-only OUTDIR`,
    /// `--explain N`), parsed only to be refused with the subcommand that replaced each.
    #[command(flatten)]
    old: OldForms,

    /// What groups the results, each with the program's own failure: `value` (the default), the
    /// library operation whose value is wrong, localised in the result; `library`, the relation
    /// that triggers each failure (blame's innermost suspect), else the MR families its calls
    /// need, else the library operations of its standalone export; or `mrs`, the suspect MR
    /// families (blame). Blame, the knockouts and the slip check run with `library` and `mrs`.
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "BY",
        help_heading = "Triage"
    )]
    group_by: triage::GroupBy,

    /// Keep a result the slip check flags (its original still fails with the result's trigger
    /// folded away) instead of reducing that folded original again; grouped by value, skip the
    /// slip check too.
    #[arg(long, help_heading = "Triage")]
    keep_slips: bool,

    /// The slip check and its repair, the default for every grouping since issue 62 (hidden:
    /// task files and scripts written before still pass it).
    #[arg(long, hide = true, conflicts_with = "keep_slips")]
    repair_slips: bool,

    /// Reduce the single INPUT as the campaign's test STEM (the command of a task file).
    #[arg(long, value_name = "STEM", hide = true)]
    one: Option<String>,
}

/// The flag forms of the modes from before the subcommands (hidden; see [`BatchArgs::old_form`]).
#[derive(Debug, clap::Args)]
struct OldForms {
    #[arg(long = "emit-tasks", value_name = "FILE", hide = true)]
    emit_tasks: Option<PathBuf>,
    #[arg(long, value_name = "OUTDIR", hide = true)]
    collect: Option<PathBuf>,
    #[arg(long, value_name = "OUTDIR", hide = true)]
    triage_only: Option<PathBuf>,
    #[arg(long, value_name = "N", hide = true)]
    explain: Option<String>,
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

/// The reduction and compiler options the finished campaign in `dir` is read again with (no
/// input, no output of their own): the spec directories, spec headers and compiler flags given,
/// else (none given) those the campaign journaled.
fn rereading_options(
    dir: &Path,
    reduction: &ReductionArgs,
    compiler_flags: &[String],
) -> anyhow::Result<ReduceOptions> {
    let flags = CompilerFlags::parse(compiler_flags)?;
    let mut ro = ReduceOptions::new(PathBuf::new(), PathBuf::new());
    reduction.apply(&mut ro);
    flags.apply(&reduction.include, &mut ro);
    let given =
        !(reduction.include.is_empty() && reduction.spec.is_empty() && compiler_flags.is_empty());
    if given {
        return Ok(ro);
    }
    batch::journal::with_journaled_flags(dir, ro)
}

/// The page `html` of the campaign in `dir` (named by `flag`), checked before anything runs.
fn page_target(
    html: Option<&Path>,
    dir: &Path,
    flag: &'static str,
) -> anyhow::Result<Option<PathBuf>> {
    html.map(|h| batch::page::target(h, flag, dir, &[]))
        .transpose()
}

/// Write the campaign page of `dir` to `html`, when asked, reading its results with `ro`.
fn write_page(dir: &Path, html: Option<&Path>, ro: &ReduceOptions) -> anyhow::Result<ExitCode> {
    if let Some(html) = html {
        batch::page::write(dir, html, ro)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `collect OUTDIR`: merge the per-test results into the journal, summary and table (and the
/// page `html`); tasks that left no result are an error (exit 1) after the table.
fn collect(dir: &Path, group_by: triage::GroupBy, html: Option<&Path>) -> anyhow::Result<ExitCode> {
    let collected = batch::collect(dir, group_by)?;
    print!("{}", triage::render(&collected.summary));
    let ro = batch::journal::with_journaled_flags(dir, ReduceOptions::new("", ""))?;
    write_page(dir, html, &ro)?;
    if let Some(first) = collected.missing.first() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{} emitted tasks have no result (the first: {first:?}); run the task file again \
                 (finished tasks skip themselves), then collect again",
                collected.missing.len()
            ),
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// `retriage OUTDIR`: group the finished results again, reducing nothing.
fn retriage(dir: &Path, group_by: triage::GroupBy, ro: &ReduceOptions) -> anyhow::Result<ExitCode> {
    let summary = batch::triage_only(dir, group_by, ro)?;
    print!("{}", triage::render(&summary));
    Ok(ExitCode::SUCCESS)
}

/// `explain N -o OUTDIR`: why group N's members were grouped.
fn explain(dir: &Path, group: u32, ro: &ReduceOptions) -> anyhow::Result<ExitCode> {
    print!(
        "{}",
        batch::triage::explain::explain(dir, group as usize, ro)?
    );
    Ok(ExitCode::SUCCESS)
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

    /// The new form of an old flag form of a mode (`--collect`, `--triage-only`, `--explain`,
    /// `--emit-tasks`), for its warning; `None` for `run`'s own flags and task files' `--one`.
    fn old_form(&self) -> Option<&'static str> {
        let old = &self.old;
        if old.collect.is_some() {
            Some("mfppr batch collect OUTDIR")
        } else if old.triage_only.is_some() {
            Some("mfppr batch retriage OUTDIR")
        } else if old.explain.is_some() {
            Some("mfppr batch explain N -o OUTDIR")
        } else if old.emit_tasks.is_some() {
            Some("mfppr batch emit INPUT… --check SCRIPT -o OUTDIR --tasks FILE")
        } else {
            None
        }
    }

    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        crate::messages::set_quiet(self.quiet);
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
        let html = self.campaign_page(&out_dir)?;
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
                 collect {}`",
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
        let ro = batch::journal::with_journaled_flags(&opts.out_dir, ReduceOptions::new("", ""))?;
        write_page(&opts.out_dir, html.as_deref(), &ro)
    }

    /// The page `--html` of the campaign in `out_dir`, checked before anything runs (the
    /// campaign's directory is made first, so that the page may lie in it); `--html` is refused
    /// where no campaign runs here (`emit`).
    fn campaign_page(&self, out_dir: &Path) -> anyhow::Result<Option<PathBuf>> {
        let Some(html) = &self.html else {
            return Ok(None);
        };
        if self.emit_tasks.is_some() {
            return Err(coded(
                ExitKind::Usage,
                "--html needs the campaign to run here; after the tasks ran, write the page \
                 with `mfppr batch collect OUTDIR --html FILE`",
            ));
        }
        std::fs::create_dir_all(out_dir).with_context(|| {
            format!(
                "cannot create the output directory {}; check -o",
                out_dir.display()
            )
        })?;
        batch::page::target(html, "--html", out_dir, &self.inputs).map(Some)
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
                     `mfppr batch emit`"
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
            let done =
                crate::input::read_regular(&result, crate::input::MAX_RECORD_BYTES, "a result")
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
                record.sign.signature
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

    /// `argv` (after the program name) parsed as `mfppr batch …`.
    fn batch(argv: &[&str]) -> Result<BatchCommand, clap::Error> {
        #[derive(Debug, clap::Parser)]
        struct Top {
            #[command(subcommand)]
            command: TopCommand,
        }
        #[derive(Debug, clap::Subcommand)]
        enum TopCommand {
            Batch(BatchCommand),
        }
        let top = <Top as clap::Parser>::try_parse_from(["mfppr"].iter().chain(argv))?;
        let TopCommand::Batch(b) = top.command;
        Ok(b)
    }

    #[test]
    fn modes_are_subcommands_and_the_old_flag_forms_name_them() {
        let collect = batch(&["batch", "collect", "out", "-q"]).unwrap();
        assert!(
            matches!(collect.mode, Some(BatchMode::Collect { ref dir, .. }) if dir.as_os_str() == "out")
        );
        let emit = batch(&[
            "batch", "emit", "t.cpp", "--check", "c.py", "-o", "out", "--tasks", "t.txt",
        ])
        .unwrap();
        assert!(
            matches!(emit.mode, Some(BatchMode::Emit { ref tasks, .. }) if tasks.as_os_str() == "t.txt")
        );
        let explain = batch(&["batch", "explain", "2", "-o", "out", "-I", "spec"]).unwrap();
        assert!(matches!(
            explain.mode,
            Some(BatchMode::Explain { group: 2, .. })
        ));
        let retriage = batch(&[
            "batch",
            "retriage",
            "out",
            "--group-by",
            "mrs",
            "--",
            "-I",
            "x",
        ])
        .unwrap();
        assert!(matches!(retriage.mode, Some(BatchMode::Retriage { .. })));
        assert!(
            batch(&["batch", "collect"]).is_err(),
            "collect needs OUTDIR"
        );
        // No mode: `run`; the old flag forms are refused, naming their subcommand.
        let plain = batch(&["batch", "t.cpp", "--check", "c.py", "-o", "out"]).unwrap();
        assert!(plain.mode.is_none() && plain.args.old_form().is_none());
        let run = batch(&["batch", "run", "t.cpp", "--check", "c.py", "-o", "out"]).unwrap();
        assert!(matches!(run.mode, Some(BatchMode::Run(_))));
        for (old, new) in [
            (
                &["batch", "--collect", "out"][..],
                "mfppr batch collect OUTDIR",
            ),
            (
                &["batch", "--triage-only", "out"],
                "mfppr batch retriage OUTDIR",
            ),
            (
                &["batch", "--explain", "1", "-o", "out"],
                "mfppr batch explain N -o OUTDIR",
            ),
            (
                &[
                    "batch",
                    "t.cpp",
                    "--check",
                    "c.py",
                    "-o",
                    "out",
                    "--emit-tasks",
                    "t.txt",
                ],
                "mfppr batch emit INPUT… --check SCRIPT -o OUTDIR --tasks FILE",
            ),
        ] {
            assert_eq!(batch(old).unwrap().args.old_form(), Some(new));
        }
    }

    /// `explain`, `retriage` and `page` read a campaign with the flags it journaled, unless
    /// flags are given again; a journal without them (an older mfppr) reads with none.
    #[test]
    fn the_journaled_flags_stand_in_for_flags_not_given_again() {
        use crate::batch::journal::{CampaignFlags, Journal, Outcome, Record};
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let rereading = |argv: &[&str]| match batch(argv).unwrap().mode {
            Some(BatchMode::Explain { rereading, .. } | BatchMode::Page { rereading, .. }) => {
                rereading.options(dir.path()).unwrap()
            }
            _ => panic!("{argv:?}"),
        };
        let explain = ["batch", "explain", "1", "-o", out];
        assert!(rereading(&explain).include_dirs.is_empty(), "no journal");
        let mut record = Record::new("/t.cpp".into(), "t".into(), 1, Outcome::Reduced);
        record.flags = CampaignFlags {
            include_dirs: vec![PathBuf::from("/spec")],
            specs: vec![PathBuf::from("/spec/extra.hpp")],
            env: vec![("MFPPR_CXXFLAGS".into(), "-DX".into())],
        };
        Journal::open(dir.path()).unwrap().append(&record).unwrap();
        let journaled = rereading(&explain);
        assert_eq!(journaled.include_dirs, [PathBuf::from("/spec")]);
        assert_eq!(journaled.specs, [PathBuf::from("/spec/extra.hpp")]);
        assert!(journaled
            .extra_env
            .contains(&("MFPPR_CXXFLAGS".into(), "-DX".into())));
        let page = rereading(&["batch", "page", out, "-o", "p.html"]);
        assert_eq!(page.include_dirs, journaled.include_dirs);
        let given = rereading(&["batch", "explain", "1", "-o", out, "-I", "/mine"]);
        assert_eq!(given.include_dirs, [PathBuf::from("/mine")]);
        assert!(given.specs.is_empty() && given.extra_env.is_empty());
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
