//! Reducing one test (library API behind `mfppr reduce`, also used by `mfppr cover`).
//!
//! Owns the safety rules of design §7: the input is never written; the output directory is checked
//! before any oracle run; the original must be interesting before anything else happens; the best
//! text so far is always on disk (written atomically at the start and after every accepted
//! candidate); Ctrl-C / SIGTERM stop the search with the best result kept.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::atomic::write_atomic;
use crate::catalogue::Catalogue;
use crate::engine::{Engine, EngineOptions, Stats};
use crate::error::{coded, exit_kind, ExitKind};
use crate::oracle::{Expected, Oracle, Run, RunEnd, ScriptOracle, Verdict};
use crate::passes::{MfppReduction, PassOptions};

/// Timeout for the initial check when `--timeout` is not given.
const INITIAL_TIMEOUT: Duration = Duration::from_secs(300);
/// Lower bound of the derived timeout.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Upper bound of the derived timeout.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);
/// The derived timeout is this many times the initial run.
const TIMEOUT_FACTOR: u32 = 5;
/// Interval between two looks at the trivial check running alongside the original.
const TRIVIAL_POLL: Duration = Duration::from_millis(5);
/// A test that keeps nothing of the original; a check that accepts it checks nothing.
const TRIVIAL_TEST: &[u8] = b"int main() {}\n";

/// Everything `reduce` needs to know.
#[derive(Clone, Debug)]
pub struct ReduceOptions {
    /// The MF++ test to reduce (never modified).
    pub input: PathBuf,
    /// Where to write the result (default `<stem>.reduced.cpp` beside the input).
    pub output: Option<PathBuf>,
    /// The interestingness script.
    pub check: PathBuf,
    /// Extra include directories to find spec headers.
    pub include_dirs: Vec<PathBuf>,
    /// Extra spec headers.
    pub specs: Vec<PathBuf>,
    /// Keep every remaining variant's checks.
    pub keep_checks: bool,
    /// Allow removing the last non-reference variant.
    pub drop_oracle: bool,
    /// Per-run timeout (default derived from the initial run).
    pub timeout: Option<Duration>,
    /// Interesting = same exit status as the original, instead of exit 0.
    pub interesting_exit_auto: bool,
    /// Candidates judged at once.
    pub jobs: usize,
    /// Cache verdicts by candidate hash.
    pub cache: bool,
    /// Write the stats as JSON here.
    pub stats: Option<PathBuf>,
    /// Continue from an existing output that is still interesting.
    pub resume: bool,
    /// Extra environment for the script (coverage mode passes `MARKER_ID`…).
    pub extra_env: Vec<(String, String)>,
    /// No progress lines.
    pub quiet: bool,
}

impl ReduceOptions {
    /// Options with the defaults of `mfppr reduce` for `input` and `check`.
    pub fn new(input: impl Into<PathBuf>, check: impl Into<PathBuf>) -> ReduceOptions {
        ReduceOptions {
            input: input.into(),
            output: None,
            check: check.into(),
            include_dirs: Vec::new(),
            specs: Vec::new(),
            keep_checks: false,
            drop_oracle: false,
            timeout: None,
            interesting_exit_auto: false,
            jobs: EngineOptions::default().jobs,
            cache: true,
            stats: None,
            resume: false,
            extra_env: Vec::new(),
            quiet: false,
        }
    }
}

/// What a finished reduction produced.
#[derive(Clone, Debug)]
pub struct ReduceOutcome {
    /// Where the result is.
    pub output: PathBuf,
    /// Size of the input.
    pub bytes_before: u64,
    /// Size of the result.
    pub bytes_after: u64,
    /// The per-run timeout that was used.
    pub timeout: Duration,
    /// The search counters; `oracle_calls` and `wall_secs` include the checks made before the
    /// search (the original, the trivial test, the output when resuming).
    pub stats: Stats,
}

impl ReduceOutcome {
    /// One summary line: sizes, oracle calls, cache hits, wall time, mean oracle time per call,
    /// mfppr's own time.
    pub fn summary(&self) -> String {
        let pct = if self.bytes_before == 0 {
            0.0
        } else {
            100.0 * (self.bytes_before as f64 - self.bytes_after as f64) / self.bytes_before as f64
        };
        let st = &self.stats;
        let engine_pct = if st.wall_secs > 0.0 {
            100.0 * st.engine_secs / st.wall_secs
        } else {
            0.0
        };
        format!(
            "mfppr: {} -> {} bytes (-{pct:.1}%) in {}; {} oracle calls ({} wasted), {} cache hits, \
             {:.1} s, {:.2} s per oracle call; mfppr's own time {:.2} s ({engine_pct:.1}%, {:.1} ms \
             per candidate)",
            self.bytes_before,
            self.bytes_after,
            self.output.display(),
            st.oracle_calls,
            st.wasted,
            st.cache_hits,
            st.wall_secs,
            st.mean_oracle_secs,
            st.engine_secs,
            st.engine_ms_per_candidate
        )
    }
}

/// The `--stats` JSON document.
#[derive(Serialize)]
struct StatsFile<'a> {
    input: &'a Path,
    output: &'a Path,
    timeout_secs: f64,
    interrupted: bool,
    #[serde(flatten)]
    stats: &'a Stats,
}

/// The default output path: `<stem>.reduced.cpp` beside `input`.
pub fn default_output(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "test".to_string());
    input.with_file_name(format!("{stem}.reduced.cpp"))
}

/// Reduce `opts.input` with the check script `opts.check` (design §5–§7).
pub fn reduce(opts: &ReduceOptions) -> anyhow::Result<ReduceOutcome> {
    crate::interrupt::install()?;
    let began = Instant::now();
    // Runs before the search: the original, the trivial tests, and the output when resuming.
    let mut setup_calls = 2;
    let input = &opts.input;
    let text = std::fs::read(input).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("cannot read input {}: {e}; check the path", input.display()),
        )
    })?;
    // One parse serves the check and the catalogue.
    let doc = crate::document::Document::parse(text.clone())?;
    crate::model::TestModel::build(&doc, &Catalogue::default()).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("{}: {e:#}; give a test generated by MF++", input.display()),
        )
    })?;
    let output = opts.output.clone().unwrap_or_else(|| default_output(input));
    check_output_path(input, &output)?;
    let catalogue = Catalogue::load_for(input, &doc, &opts.include_dirs, &opts.specs)
        .with_context(|| format!("cannot load the MR catalogue for {}", input.display()))?;
    let mut oracle = ScriptOracle::new(&opts.check, input, opts.extra_env.clone())?;
    // The scripts' cache of precompiled include blocks, removed when this function returns,
    // unless the user chose one (environment or --env).
    let cache_dir = run_cache_dir(opts)?;
    oracle.set_cache_dir(cache_dir.as_ref().map(|d| d.path().to_path_buf()));

    // The original must be interesting before anything is written.
    let no_cancel = AtomicBool::new(false);
    oracle.set_timeout(Some(opts.timeout.unwrap_or(INITIAL_TIMEOUT)));
    let (initial, trivial) = initial_checks(opts, &oracle, &text)?;
    if crate::interrupt::requested() {
        return Err(coded(
            ExitKind::Interrupted,
            "interrupted during the initial check; nothing was written",
        ));
    }
    let expected = match (initial.end, opts.interesting_exit_auto) {
        (RunEnd::Exited { status: 0, .. }, false) => Some(Expected::Zero),
        (RunEnd::Exited { status, .. }, true) if status != 0 => Some(Expected::Status(status)),
        _ => None,
    };
    let Some(expected) = expected else {
        return Err(not_interesting(opts, &oracle, &initial));
    };
    oracle.set_expected(expected);
    let timeout = derived_timeout(opts, &initial);
    oracle.set_timeout(Some(timeout));
    if !opts.quiet {
        eprintln!(
            "mfppr: the original is interesting ({}, {:.1} s); timeout {:.1} s",
            initial.end,
            initial.elapsed.as_secs_f64(),
            timeout.as_secs_f64()
        );
    }

    let mut start = text.clone();
    if opts.resume {
        setup_calls += 1;
        start = resume_from(opts, &oracle, &output, &no_cancel)?.unwrap_or(start);
    }
    write_atomic(&output, &start)
        .with_context(|| format!("cannot write the output {}", output.display()))?;

    // A check that accepts an empty `main` or the empty file cannot tell the failure apart.
    let trivial = match trivial {
        Some(run) => oracle.verdict_of(run.end),
        None => oracle.judge(TRIVIAL_TEST, &no_cancel)?,
    };
    let accepts = if trivial == Verdict::Interesting {
        Some("`int main() {}`")
    } else {
        setup_calls += 1;
        (oracle.judge(b"", &no_cancel)? == Verdict::Interesting).then_some("the empty file")
    };
    if let Some(what) = accepts.filter(|_| !crate::interrupt::requested()) {
        eprintln!(
            "warning: the check accepts {what}; results may be meaningless; make the script \
             check for the failure you are reducing"
        );
    }

    let reduction = MfppReduction::new(
        catalogue,
        PassOptions {
            keep_checks: opts.keep_checks,
            drop_oracle: opts.drop_oracle,
        },
    );
    let mut engine = Engine::new(
        &reduction,
        &oracle,
        EngineOptions {
            jobs: opts.jobs.max(1),
            cache: opts.cache,
            quiet: opts.quiet,
            ..EngineOptions::default()
        },
        crate::interrupt::flag(),
    )?;
    engine.remember(&text, Verdict::Interesting);
    engine.remember(&start, Verdict::Interesting);
    let mut best_len = start.len();
    let result = engine.run(start, &mut |t: &[u8]| {
        best_len = t.len();
        write_atomic(&output, t)
            .with_context(|| format!("cannot write the output {}", output.display()))
    });
    let mut stats = engine.stats().clone();
    stats.bytes_before = text.len() as u64;
    stats.oracle_calls += setup_calls;
    stats.wall_secs = began.elapsed().as_secs_f64();
    match result {
        Ok(result) => {
            stats.bytes_after = result.len() as u64;
            write_stats(opts, &output, timeout, &stats, false)?;
            Ok(ReduceOutcome {
                output,
                bytes_before: text.len() as u64,
                bytes_after: result.len() as u64,
                timeout,
                stats,
            })
        }
        Err(e) if exit_kind(&e) == ExitKind::Interrupted => {
            stats.bytes_after = best_len as u64;
            let _ = write_stats(opts, &output, timeout, &stats, true);
            Err(coded(
                ExitKind::Interrupted,
                format!(
                    "interrupted; the best result so far ({best_len} bytes) is in {}; continue \
                     with --resume",
                    output.display()
                ),
            ))
        }
        Err(e) => {
            let _ = write_stats(opts, &output, timeout, &stats, false);
            Err(e.context(format!(
                "reduction stopped; the best result so far ({best_len} bytes) is in {}",
                output.display()
            )))
        }
    }
}

/// A fresh cache directory for the check scripts, unless `MFPPR_CACHE_DIR` is already set.
fn run_cache_dir(opts: &ReduceOptions) -> anyhow::Result<Option<tempfile::TempDir>> {
    if std::env::var_os("MFPPR_CACHE_DIR").is_some()
        || opts.extra_env.iter().any(|(k, _)| k == "MFPPR_CACHE_DIR")
    {
        return Ok(None);
    }
    tempfile::Builder::new()
        .prefix("mfppr-cache-")
        .tempdir()
        .map(Some)
        .context("cannot create the cache directory for the check; check TMPDIR and free space")
}

/// The per-run timeout: `--timeout`, or derived from the initial run of the original.
fn derived_timeout(opts: &ReduceOptions, initial: &Run) -> Duration {
    opts.timeout
        .unwrap_or_else(|| (initial.elapsed * TIMEOUT_FACTOR).clamp(MIN_TIMEOUT, MAX_TIMEOUT))
}

/// Check the original and, with more than one job, the trivial test alongside it (one oracle run
/// less on the critical path). The trivial run is killed once it takes longer than the timeout
/// the original's run implies, or at once if the original's run failed.
fn initial_checks(
    opts: &ReduceOptions,
    oracle: &ScriptOracle,
    text: &[u8],
) -> anyhow::Result<(Run, Option<Run>)> {
    let no_cancel = AtomicBool::new(false);
    if opts.jobs < 2 {
        return Ok((oracle.run(text, &no_cancel)?, None));
    }
    let cancel_trivial = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let started = Instant::now();
        let trivial = std::thread::Builder::new()
            .name("mfppr-trivial".into())
            .spawn_scoped(scope, || oracle.run(TRIVIAL_TEST, &cancel_trivial))
            .context("cannot start a thread for the trivial check")?;
        let initial = oracle.run(text, &no_cancel);
        let limit = match &initial {
            Ok(run) => derived_timeout(opts, run),
            Err(_) => Duration::ZERO,
        };
        while !trivial.is_finished() {
            if started.elapsed() >= limit {
                cancel_trivial.store(true, Ordering::SeqCst);
            }
            std::thread::sleep(TRIVIAL_POLL);
        }
        let trivial = trivial
            .join()
            .map_err(|_| anyhow::anyhow!("the trivial check panicked"))?;
        Ok((initial?, Some(trivial?)))
    })
}

/// The output's directory must exist, the output must not be a directory, and never the input.
fn check_output_path(input: &Path, output: &Path) -> anyhow::Result<()> {
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "the output directory {} does not exist; create it or choose another -o",
                dir.display()
            ),
        ));
    }
    if output.is_dir() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "the output {} is a directory; give a file name with -o",
                output.display()
            ),
        ));
    }
    let same = match (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(coded(
            ExitKind::Input,
            format!(
                "the output {} is the input; mfppr never modifies its input, choose another -o",
                output.display()
            ),
        ));
    }
    Ok(())
}

/// `--resume`: the existing output, if it is an MF++ test that is still interesting.
fn resume_from(
    opts: &ReduceOptions,
    oracle: &ScriptOracle,
    output: &Path,
    cancel: &AtomicBool,
) -> anyhow::Result<Option<Vec<u8>>> {
    let Ok(previous) = std::fs::read(output) else {
        if !opts.quiet {
            eprintln!(
                "mfppr: nothing to resume from in {}; starting from the input",
                output.display()
            );
        }
        return Ok(None);
    };
    let usable = crate::model::check_is_mfpp_test(&previous).is_ok()
        && oracle.judge(&previous, cancel)? == Verdict::Interesting;
    if crate::interrupt::requested() {
        return Err(coded(
            ExitKind::Interrupted,
            format!(
                "interrupted while checking {}; it was not changed",
                output.display()
            ),
        ));
    }
    if usable {
        if !opts.quiet {
            eprintln!(
                "mfppr: resuming from {} ({} bytes)",
                output.display(),
                previous.len()
            );
        }
        Ok(Some(previous))
    } else {
        eprintln!(
            "warning: {} is not an interesting MF++ test any more; starting from the input",
            output.display()
        );
        Ok(None)
    }
}

/// The error for an original that is not interesting: what happened, how to reproduce, stderr.
fn not_interesting(opts: &ReduceOptions, oracle: &ScriptOracle, run: &Run) -> anyhow::Error {
    let what = match (run.end, opts.interesting_exit_auto) {
        (RunEnd::TimedOut, _) => format!(
            "the check timed out after {:.1} s; raise --timeout or make the script faster",
            run.elapsed.as_secs_f64()
        ),
        (RunEnd::Exited { status: 0, .. }, true) => "the check exits 0 and --interesting-exit \
             auto needs a failing original; use the default (exit 0 = interesting) or make the \
             script fail on the original"
            .to_string(),
        (end, _) => format!(
            "the check ended with {end} (interesting = exit 0); fix the script, or pass \
             --interesting-exit auto to keep the original's exit status"
        ),
    };
    let stderr = if run.stderr_tail.is_empty() {
        "the check printed nothing on stderr".to_string()
    } else {
        format!("the check's stderr ended with: {}", run.stderr_tail)
    };
    coded(
        ExitKind::NotInteresting,
        format!(
            "the original {} is not interesting: {what}; reproduce with `{}`; {stderr}",
            opts.input.display(),
            oracle.reproduction_command()
        ),
    )
}

fn write_stats(
    opts: &ReduceOptions,
    output: &Path,
    timeout: Duration,
    stats: &Stats,
    interrupted: bool,
) -> anyhow::Result<()> {
    let Some(path) = &opts.stats else {
        return Ok(());
    };
    let doc = StatsFile {
        input: &opts.input,
        output,
        timeout_secs: timeout.as_secs_f64(),
        interrupted,
        stats,
    };
    let json = serde_json::to_vec_pretty(&doc).context("cannot serialise the stats")?;
    write_atomic(path, &json)
        .with_context(|| format!("cannot write the stats file {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_output_is_beside_the_input() {
        assert_eq!(
            default_output(Path::new("/a/b/t_1.cpp")),
            PathBuf::from("/a/b/t_1.reduced.cpp")
        );
        assert_eq!(
            default_output(Path::new("t.cc")),
            PathBuf::from("t.reduced.cpp")
        );
    }

    #[test]
    fn output_path_rules() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::write(&input, "x").unwrap();
        assert!(check_output_path(&input, &dir.path().join("o.cpp")).is_ok());
        assert!(check_output_path(&input, &input).is_err());
        assert!(check_output_path(&input, &dir.path().join("missing/o.cpp")).is_err());
        assert!(check_output_path(&input, dir.path()).is_err());
    }
}
