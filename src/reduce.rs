//! Reducing one test (library API behind `mfppr reduce`, also used by `mfppr cover`).
//!
//! Owns the safety rules of design §7: the input is never written; the output directory is checked
//! before any oracle run; the original must be interesting before anything else happens; the best
//! text so far is always on disk (written atomically at the start and after every accepted
//! candidate); Ctrl-C / SIGTERM stop the search with the best result kept.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::atomic::write_atomic;
use crate::catalogue::{Catalogue, Completeness};
use crate::engine::{candidates_ahead, Engine, EngineOptions, InFlight, InFlightEnd, Stats};
use crate::error::{coded, exit_kind, ExitKind};
use crate::line_endings::{EndingsOracle, LineEndings};
use crate::opportunity::{Opportunities, OpportunityKind};
use crate::oracle::{lock, Expected, Oracle, Run, RunEnd, ScriptOracle, Verdict};
use crate::outputs::{validate, Output};
use crate::passes::{MfppOpportunities, PassOptions};

/// Timeout for the initial check when `--timeout` is not given.
const INITIAL_TIMEOUT: Duration = Duration::from_secs(300);
/// Lower bound of the derived timeout.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Upper bound of the derived timeout.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);
/// The derived timeout is this many times the initial run.
const TIMEOUT_FACTOR: u32 = 5;
/// Interval between two looks at the initial checks.
const POLL: Duration = Duration::from_millis(5);
/// A long initial check says it is still running this often.
const WAIT_NOTE_EVERY: Duration = Duration::from_secs(30);
/// Accepted texts kept for the final re-check, besides the starting text.
const RECHECK_HISTORY: usize = 3;
/// Tests that keep nothing of the original, and how the warning names them: a check that
/// accepts one checks nothing. The first that is interesting is named.
const TRIVIAL_TESTS: [(&[u8], &str); 2] = [
    (b"int main() {}\n", "`int main() {}`"),
    (b"", "the empty file"),
];

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
    /// Run the tail passes after the four kinds reach their fixpoint (`--no-tail` clears it).
    pub tail: bool,
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
    /// Runs of the final result after the search, to catch a flaky check (0: none).
    pub recheck: u32,
    /// An incomplete MR catalogue is an error instead of a warning.
    pub strict_spec: bool,
    /// 1: a diff size for each accepted candidate; 2: also each candidate tried.
    pub verbose: u8,
    /// Keep the check directories of interesting and timed-out runs here, as `<n>/`.
    pub save_temps: Option<PathBuf>,
    /// The scripts' `MFPPR_CACHE_DIR` (an existing directory the caller owns, e.g. one per
    /// campaign); `None`: a fresh one for this run, removed at its end.
    pub cache_dir: Option<PathBuf>,
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
            tail: true,
            timeout: None,
            interesting_exit_auto: false,
            jobs: EngineOptions::default().jobs,
            cache: true,
            stats: None,
            resume: false,
            extra_env: Vec::new(),
            quiet: false,
            recheck: 1,
            strict_spec: false,
            verbose: 0,
            save_temps: None,
            cache_dir: None,
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
        let mut line = format!(
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
        );
        let timeouts: u64 = st.kinds.values().map(|k| k.timeouts).sum();
        if timeouts > 0 {
            line.push_str(&format!(
                "\nmfppr: {timeouts} candidates timed out after {:.1} s (counted as not \
                 interesting); if the check is just slow, raise --timeout",
                self.timeout.as_secs_f64()
            ));
        }
        if st.accepted == 0 && st.candidates > 0 && self.bytes_after == self.bytes_before {
            line.push_str(
                "\nmfppr: no candidate kept the failure, so the result is the input: the check \
                 rejects every change (does it compare more than the failure, e.g. line numbers \
                 or the whole output?), or the failure needs what every candidate loses (the \
                 sweep removes input blocks no variant reads); -vv lists each candidate and its \
                 verdict",
            );
        }
        if st.disagreements > 0 || st.recheck_failures > 0 {
            line.push_str(&format!(
                "\nmfppr: the check is flaky: {} candidates got different verdicts on two runs, \
                 {} of {} re-checks of the result failed",
                st.disagreements, st.recheck_failures, st.rechecks
            ));
        }
        line
    }
}

/// The `--stats` JSON document.
#[derive(Serialize)]
struct StatsFile<'a> {
    input: &'a Path,
    output: &'a Path,
    timeout_secs: f64,
    interrupted: bool,
    catalogue: &'a Completeness,
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
    let (text, endings, catalogue) = read_input(opts)?;
    let completeness = Completeness::of_test(&text, &catalogue)?;
    completeness.say(opts.strict_spec)?;
    let paths = plan_outputs(opts)?;
    let _lock = crate::lock::lock_output(&paths.result)?;
    let mut oracle = ScriptOracle::new(&opts.check, &opts.input, opts.extra_env.clone())?;
    oracle.set_save_temps(opts.save_temps.clone());
    // The scripts' cache of precompiled include blocks, removed when this function returns,
    // unless the user chose one (environment or --env) or the caller gave one.
    let cache_dir = run_cache_dir(opts)?;
    oracle.set_cache_dir(
        opts.cache_dir
            .clone()
            .or_else(|| cache_dir.as_ref().map(|d| d.path().to_path_buf())),
    );

    let opportunities = MfppOpportunities::new(
        catalogue,
        PassOptions {
            keep_checks: opts.keep_checks,
            drop_oracle: opts.drop_oracle,
            tail: opts.tail,
        },
    );

    // The original must be interesting before anything is written.
    let original = Original {
        text: &text,
        endings,
        opportunities: &opportunities,
    };
    // The spare slots' runs of the initial checks may go on in the search: their threads live
    // until it ends; whatever it did not take over is killed on the way out.
    let queue = Arc::new(SpareQueue::default());
    let reduced = std::thread::scope(|scope| {
        let reduced = check_and_search(opts, &oracle, &original, &paths, &queue, scope);
        queue.cancel_all();
        reduced
    });
    let (result, mut stats, on_disk, timeout) = reduced?;
    let interrupted = result
        .as_ref()
        .is_err_and(|e| exit_kind(e) == ExitKind::Interrupted);
    stats.wall_secs = began.elapsed().as_secs_f64();
    stats.bytes_after = on_disk as u64;
    let written = paths.write_stats(opts, timeout, &stats, &completeness, interrupted);
    match result {
        Ok(()) => {
            written?;
            Ok(ReduceOutcome {
                output: paths.result.clone(),
                bytes_before: text.len() as u64,
                bytes_after: on_disk as u64,
                timeout,
                stats,
            })
        }
        Err(_) if interrupted => Err(coded(
            ExitKind::Interrupted,
            format!(
                "interrupted; the best result so far ({on_disk} bytes) is in {}; continue with \
                 --resume",
                paths.result.display()
            ),
        )),
        Err(e) => Err(e.context(format!(
            "reduction stopped; the best result so far ({on_disk} bytes) is in {}",
            paths.result.display()
        ))),
    }
}

/// The initial checks, then (if the original is interesting) the search: how the search ended,
/// its stats (the setup checks counted), the size of the result on disk and the per-run timeout.
fn check_and_search<'s, 'e: 's>(
    opts: &ReduceOptions,
    oracle: &'e ScriptOracle,
    original: &Original<'_>,
    paths: &ReducePaths,
    queue: &Arc<SpareQueue>,
    scope: &'s std::thread::Scope<'s, 'e>,
) -> anyhow::Result<(anyhow::Result<()>, Stats, usize, Duration)> {
    let (text, endings) = (original.text, original.endings);
    let initial = check_original(opts, oracle, original, queue, scope)?;
    let oracle = EndingsOracle {
        inner: oracle,
        endings,
    };
    // Runs before the search: the original, the trivial test(s) and the candidates judged ahead
    // that ended (those still going end in the search).
    let mut setup_calls = 1 + initial.trivial.len() as u64 + initial.ahead.len() as u64;
    let timeout = initial.timeout;

    let mut start = text.to_vec();
    if opts.resume {
        setup_calls += 1;
        start = resume_from(opts, &oracle, paths, text)?.unwrap_or(start);
    }
    paths.write_result(&endings.to_file(&start))?;
    paths.write_origin(&opts.input, text)?;
    setup_calls += warn_if_trivial_is_interesting(&oracle, initial.trivial)?;

    let from = SearchFrom {
        text,
        start,
        ahead: initial.ahead,
        in_flight: initial.in_flight,
    };
    let (result, mut stats, on_disk) = search(opts, original.opportunities, &oracle, paths, from);
    stats.oracle_calls += setup_calls + stats.rechecks;
    Ok((result, stats, on_disk, timeout))
}

/// The input the initial checks judge, and what the search will need first if it is interesting.
struct Original<'a> {
    /// The input, with LF line endings.
    text: &'a [u8],
    endings: LineEndings,
    opportunities: &'a dyn Opportunities,
}

/// What the initial checks found out besides the original being interesting.
struct Initial<'e> {
    /// The per-run timeout.
    timeout: Duration,
    /// The verdicts of the trivial tests that ran (the first ones of [`TRIVIAL_TESTS`]).
    trivial: Vec<Verdict>,
    /// Candidates the search is likely to need first (LF line endings), judged alongside the
    /// original, with their verdicts.
    ahead: Vec<(Vec<u8>, Verdict)>,
    /// Their runs still going, for the search to take over.
    in_flight: Vec<InFlight<'e>>,
}

/// Run the check on the original (and trivial tests and the search's likely first candidates
/// alongside it): fail unless it is interesting; set the oracle's contract and per-run timeout.
fn check_original<'s, 'e: 's>(
    opts: &ReduceOptions,
    oracle: &'e ScriptOracle,
    original: &Original<'_>,
    queue: &Arc<SpareQueue>,
    scope: &'s std::thread::Scope<'s, 'e>,
) -> anyhow::Result<Initial<'e>> {
    oracle.set_timeout(Some(opts.timeout.unwrap_or(INITIAL_TIMEOUT)));
    let initial = initial_checks(opts, oracle, original, queue, scope)?;
    if crate::interrupt::requested() {
        return Err(coded(
            ExitKind::Interrupted,
            "interrupted during the initial check; nothing was written",
        ));
    }
    let Some(expected) = contract(opts, &initial) else {
        return Err(not_interesting(opts, oracle, &initial));
    };
    oracle.set_expected(expected);
    let timeout = derived_timeout(opts, &initial);
    oracle.set_timeout(Some(timeout));
    if !opts.quiet {
        crate::messages::progress(format!(
            "mfppr: the original is interesting ({}, {:.1} s); timeout {:.1} s",
            initial.end,
            initial.elapsed.as_secs_f64(),
            timeout.as_secs_f64()
        ));
    }
    let mut checked = Initial {
        timeout,
        trivial: Vec::new(),
        ahead: Vec::new(),
        in_flight: Vec::new(),
    };
    for item in queue.items() {
        if lock(&item.started).is_none() {
            continue;
        }
        let ended = lock(&item.run).take();
        match (&item.ahead, ended) {
            (None, ended) => {
                let verdict = ended.map(|run| run.map(|run| oracle.verdict_of(run.end)));
                checked.trivial.extend(verdict.transpose()?);
            }
            (Some((_, text)), Some(run)) => {
                checked
                    .ahead
                    .push((text.clone(), oracle.verdict_of(run?.end)));
            }
            (Some((kind, text)), None) => {
                let cancel = Arc::new(AtomicBool::new(false));
                let flag = Arc::clone(&cancel);
                checked.in_flight.push(InFlight {
                    text: text.clone(),
                    kind: *kind,
                    cancel,
                    wait: Box::new(move || item.wait(oracle, timeout, &flag)),
                });
            }
        }
    }
    Ok(checked)
}

/// Where the search starts: the input (LF line endings), the text it starts from (the input, or
/// the result resumed from), the verdicts of candidates judged ahead and their runs still going.
struct SearchFrom<'a, 'e> {
    text: &'a [u8],
    start: Vec<u8>,
    ahead: Vec<(Vec<u8>, Verdict)>,
    in_flight: Vec<InFlight<'e>>,
}

/// The search from `start` with the passes and the engine, writing every accepted text, then
/// the re-check. Returns how it ended, the stats (with `bytes_before` set) and the size of the
/// result on disk.
fn search(
    opts: &ReduceOptions,
    opportunities: &dyn Opportunities,
    oracle: &EndingsOracle<'_, ScriptOracle>,
    paths: &ReducePaths,
    from: SearchFrom<'_, '_>,
) -> (anyhow::Result<()>, Stats, usize) {
    let SearchFrom {
        text,
        start,
        ahead,
        in_flight,
    } = from;
    let engine = Engine::new(
        opportunities,
        oracle,
        EngineOptions {
            jobs: opts.jobs.max(1),
            cache: opts.cache,
            quiet: opts.quiet,
            verbose: opts.verbose,
            ..EngineOptions::default()
        },
        crate::interrupt::flag(),
    );
    let mut engine = match engine {
        Ok(engine) => engine,
        Err(e) => return (Err(e), Stats::default(), start.len()),
    };
    engine.remember(text, Verdict::Interesting);
    engine.remember(&start, Verdict::Interesting);
    for (candidate, verdict) in &ahead {
        engine.remember_ahead(candidate, *verdict);
    }
    for run in in_flight {
        engine.adopt(run);
    }
    // The result on disk, and the last few accepted texts for the re-check (newest last).
    let mut on_disk = start.len();
    let mut accepted = vec![start.clone()];
    let endings = oracle.endings;
    let result = engine.run(start, &mut |t: &[u8]| {
        if opts.verbose >= 1 {
            let before = accepted.last().map(Vec::as_slice).unwrap_or_default();
            crate::messages::progress(format!("mfppr:   {}", diff_size(before, t)));
        }
        paths.write_result(&endings.to_file(t))?;
        on_disk = t.len();
        if accepted.len() > RECHECK_HISTORY {
            accepted.remove(1);
        }
        accepted.push(t.to_vec());
        Ok(())
    });
    let mut stats = engine.stats().clone();
    stats.bytes_before = text.len() as u64;
    let result = result.and_then(|_| {
        let kept = recheck(opts, oracle, &accepted, &mut stats)?;
        if kept.len() != on_disk {
            paths.write_result(&endings.to_file(kept))?;
            on_disk = kept.len();
        }
        Ok(())
    });
    (result, stats, on_disk)
}

/// Read, check and parse the input: its text (with LF line endings), its line-ending
/// convention, and the MR catalogue.
fn read_input(opts: &ReduceOptions) -> anyhow::Result<(Vec<u8>, LineEndings, Catalogue)> {
    let input = &opts.input;
    let raw =
        crate::model::read_test(input).map_err(|e| coded(ExitKind::Input, format!("{e:#}")))?;
    let not_mfpp = |e: anyhow::Error| {
        coded(
            ExitKind::Input,
            format!("{}: {e:#}; give a test generated by MF++", input.display()),
        )
    };
    crate::model::check_text(&raw).map_err(not_mfpp)?;
    let endings = LineEndings::of(&raw);
    let text = endings.to_internal(&raw);
    // One parse serves the check and the catalogue.
    let doc = crate::document::Document::parse(text.clone())?;
    crate::model::TestModel::build(&doc, &Catalogue::default()).map_err(not_mfpp)?;
    let catalogue = Catalogue::load_for(input, &doc, &opts.include_dirs, &opts.specs)
        .with_context(|| format!("cannot load the MR catalogue for {}", input.display()))?;
    Ok((text, endings, catalogue))
}

/// `diff -R +A lines`: the lines an accepted candidate removed and added (`-v`).
fn diff_size(before: &[u8], after: &[u8]) -> String {
    let (before, after) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    let diff = similar::TextDiff::from_lines(&*before, &*after);
    let (mut removed, mut added) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    format!("diff -{removed} +{added} lines")
}

/// With a check that accepts `int main() {}` or the empty file, results may be meaningless: warn.
/// `known` are the verdicts of the first [`TRIVIAL_TESTS`], run alongside the original; the
/// others run here until one is interesting. Returns the number of oracle runs made here.
fn warn_if_trivial_is_interesting(oracle: &dyn Oracle, known: Vec<Verdict>) -> anyhow::Result<u64> {
    let no_cancel = AtomicBool::new(false);
    let mut calls = 0;
    let mut known = known.into_iter();
    for (text, what) in TRIVIAL_TESTS {
        let verdict = match known.next() {
            Some(verdict) => verdict,
            None => {
                calls += 1;
                oracle.judge(text, &no_cancel)?
            }
        };
        if verdict == Verdict::Interesting {
            if !crate::interrupt::requested() {
                crate::messages::warn(format!(
                    "the check accepts {what}; results may be meaningless; make the script \
                     check for the failure you are reducing"
                ));
            }
            break;
        }
    }
    Ok(calls)
}

/// A fresh cache directory for the check scripts, unless `MFPPR_CACHE_DIR` is already set or
/// the caller gave one.
pub(crate) fn run_cache_dir(opts: &ReduceOptions) -> anyhow::Result<Option<tempfile::TempDir>> {
    if opts.cache_dir.is_some()
        || std::env::var_os("MFPPR_CACHE_DIR").is_some()
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

/// Which exit statuses count as interesting, given the original's run; `None` if it is not
/// interesting.
fn contract(opts: &ReduceOptions, initial: &Run) -> Option<Expected> {
    match (initial.end, opts.interesting_exit_auto) {
        (RunEnd::Exited { status: 0, .. }, false) => Some(Expected::Zero),
        (RunEnd::Exited { status, .. }, true) if status != 0 => Some(Expected::Status(status)),
        _ => None,
    }
}

/// The per-run timeout: `--timeout`, or derived from the initial run of the original.
fn derived_timeout(opts: &ReduceOptions, initial: &Run) -> Duration {
    opts.timeout
        .unwrap_or_else(|| (initial.elapsed * TIMEOUT_FACTOR).clamp(MIN_TIMEOUT, MAX_TIMEOUT))
}

/// Check the original and, with more than one job, on the other slots meanwhile: the trivial
/// tests at once, then candidates the search is likely to need first, each as soon as it is found
/// (a slot takes the next one when it is free, until the original's run ends, so that they add
/// nothing to the critical path). The slots' threads run in `scope`, so that runs of candidates
/// still going when the original's run ends can go on in the search ([`Engine::adopt`]). Once the
/// original's run ended: if it is not interesting, every other run is killed; otherwise the
/// trivial runs are waited for (killed once they take longer than the timeout the original's run
/// implies). A long check says so every [`WAIT_NOTE_EVERY`]. Returns the original's run; the runs
/// on the spare slots are in `queue`.
fn initial_checks<'s, 'e: 's>(
    opts: &ReduceOptions,
    oracle: &'e ScriptOracle,
    original: &Original<'_>,
    queue: &Arc<SpareQueue>,
    scope: &'s std::thread::Scope<'s, 'e>,
) -> anyhow::Result<Run> {
    let no_cancel = AtomicBool::new(false);
    let limit = opts.timeout.unwrap_or(INITIAL_TIMEOUT);
    if !opts.quiet {
        crate::messages::progress(format!(
            "mfppr: checking that the original is interesting with {} (at most {:.0} s)",
            opts.check.display(),
            limit.as_secs_f64()
        ));
    }
    let spare = opts.jobs.saturating_sub(1);
    let file = original.endings.to_file(original.text);
    for &(test, _) in TRIVIAL_TESTS
        .iter()
        .take(if spare > 0 { TRIVIAL_TESTS.len() } else { 0 })
    {
        queue.push(SpareRun::new(test.to_vec(), None));
    }
    let started = Instant::now();
    let initial = std::thread::scope(|inner| {
        let initial = std::thread::Builder::new()
            .name("mfppr-original".into())
            .spawn_scoped(inner, || {
                let run = oracle.run(&file, &no_cancel);
                // No spare slot starts anything once this is known.
                queue.original_done.store(true, Ordering::SeqCst);
                run
            })
            .context("cannot start a thread for the initial checks")?;
        for _ in 0..spare {
            let queue = Arc::clone(queue);
            std::thread::Builder::new()
                .name("mfppr-spare".into())
                .spawn_scoped(scope, move || queue.work(oracle))
                .context("cannot start a thread for the initial checks")?;
        }
        if spare > 0 && opts.cache && !opts.resume {
            // Only a speed-up: if the input cannot be gathered, the search will say why.
            let _ = candidates_ahead(
                original.opportunities,
                original.text,
                spare,
                &mut |kind, text| {
                    if !queue.original_done.load(Ordering::SeqCst) {
                        let file = original.endings.to_file(&text);
                        queue.push(SpareRun::new(file, Some((kind, text))));
                    }
                },
            );
        }
        queue.close();
        let mut next_note = WAIT_NOTE_EVERY;
        while !initial.is_finished() {
            std::thread::sleep(POLL);
            if !opts.quiet && started.elapsed() >= next_note {
                crate::messages::progress(format!(
                    "mfppr: still checking the original ({:.0} s of at most {:.0} s)",
                    started.elapsed().as_secs_f64(),
                    limit.as_secs_f64()
                ));
                next_note += WAIT_NOTE_EVERY;
            }
        }
        join(initial)
    })?;
    let limit = match &initial {
        Ok(run) if contract(opts, run).is_some() => derived_timeout(opts, run),
        _ => {
            queue.cancel_all();
            return initial;
        }
    };
    loop {
        let mut waiting = false;
        for item in queue.items().iter().filter(|item| item.ahead.is_none()) {
            if lock(&item.started).is_some() && lock(&item.run).is_none() {
                waiting = true;
                if started.elapsed() >= limit {
                    item.cancel.store(true, Ordering::SeqCst);
                }
            }
        }
        if !waiting {
            return initial;
        }
        std::thread::sleep(POLL);
    }
}

/// The runs for the spare slots of the initial checks, in the order they are taken; more may
/// come until it is closed.
#[derive(Default)]
struct SpareQueue {
    /// The runs, how many were taken, and whether more may come.
    state: Mutex<(Vec<Arc<SpareRun>>, usize, bool)>,
    /// The original's run ended: no slot takes a run any more.
    original_done: AtomicBool,
}

impl SpareQueue {
    fn push(&self, run: SpareRun) {
        lock(&self.state).0.push(Arc::new(run));
    }

    fn close(&self) {
        lock(&self.state).2 = true;
    }

    /// A spare slot: take the next run and do it, until the original's run ended or the queue
    /// is closed and empty.
    fn work(&self, oracle: &ScriptOracle) {
        while !self.original_done.load(Ordering::SeqCst) {
            let next = {
                let mut state = lock(&self.state);
                let (runs, taken, closed) = &mut *state;
                match runs.get(*taken) {
                    Some(run) => {
                        *taken += 1;
                        Some(Arc::clone(run))
                    }
                    None if *closed => return,
                    None => None,
                }
            };
            let Some(item) = next else {
                std::thread::sleep(POLL);
                continue;
            };
            *lock(&item.started) = Some(Instant::now());
            let run = oracle.run(&item.file, &item.cancel);
            *lock(&item.run) = Some(run);
            item.done.notify_all();
        }
    }

    /// Every run queued so far.
    fn items(&self) -> Vec<Arc<SpareRun>> {
        lock(&self.state).0.clone()
    }

    fn cancel_all(&self) {
        self.original_done.store(true, Ordering::SeqCst);
        for item in self.items() {
            item.cancel.store(true, Ordering::SeqCst);
        }
    }
}

/// A run of the initial checks on a spare slot: a trivial test, or a candidate ahead of the
/// search.
struct SpareRun {
    /// The text as the check sees it.
    file: Vec<u8>,
    /// The candidate's kind and text with LF line endings (`None` for a trivial test).
    ahead: Option<(OpportunityKind, Vec<u8>)>,
    cancel: AtomicBool,
    started: Mutex<Option<Instant>>,
    run: Mutex<Option<anyhow::Result<Run>>>,
    /// Notified when `run` is set.
    done: Condvar,
}

impl SpareRun {
    fn new(file: Vec<u8>, ahead: Option<(OpportunityKind, Vec<u8>)>) -> SpareRun {
        SpareRun {
            file,
            ahead,
            cancel: AtomicBool::new(false),
            started: Mutex::new(None),
            run: Mutex::new(None),
            done: Condvar::new(),
        }
    }

    /// Wait for this run (started, not finished) on behalf of the search: its verdict under
    /// `oracle`'s contract, or [`Verdict::Timeout`] once it has run `timeout` (it is killed then,
    /// as the search's own runs are); killed without a verdict once `cancel` is set.
    fn wait(&self, oracle: &ScriptOracle, timeout: Duration, cancel: &AtomicBool) -> InFlightEnd {
        let started = lock(&self.started).unwrap_or_else(Instant::now);
        let mut timed_out = false;
        let mut run = lock(&self.run);
        let end = loop {
            if let Some(end) = run.take() {
                break end;
            }
            if cancel.load(Ordering::SeqCst) || started.elapsed() >= timeout {
                timed_out |= !cancel.load(Ordering::SeqCst);
                self.cancel.store(true, Ordering::SeqCst);
            }
            run = self
                .done
                .wait_timeout(run, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        match end {
            Ok(_) if timed_out => (Ok(Verdict::Timeout), started.elapsed()),
            Ok(r) => (Ok(oracle.verdict_of(r.end)), r.elapsed),
            Err(e) => (Err(e), started.elapsed()),
        }
    }
}

/// The result of a finished initial-check thread.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> anyhow::Result<T> {
    handle
        .join()
        .map_err(|_| anyhow::anyhow!("an initial check panicked"))
}

/// Where one reduction writes: the result, the record of what it was derived from (for
/// `--resume`), and the stats. Validated together before the first check run.
#[derive(Debug)]
struct ReducePaths {
    result: PathBuf,
    origin: PathBuf,
    stats: Option<PathBuf>,
}

/// The output paths of `opts`, validated (design §7).
fn plan_outputs(opts: &ReduceOptions) -> anyhow::Result<ReducePaths> {
    let result = opts
        .output
        .clone()
        .unwrap_or_else(|| default_output(&opts.input));
    let origin = origin_path(&result);
    let mut outputs = vec![
        Output {
            what: "the output",
            flag: "-o",
            path: &result,
            record: false,
        },
        Output {
            what: "the output's origin record",
            flag: "-o",
            path: &origin,
            record: true,
        },
    ];
    if let Some(stats) = &opts.stats {
        outputs.push(Output {
            what: "the stats file",
            flag: "--stats",
            path: stats,
            record: false,
        });
    }
    let mut valid = validate(&opts.input, &outputs)?.into_iter();
    let (Some(result), Some(origin)) = (valid.next(), valid.next()) else {
        unreachable!("validate returns one path per output");
    };
    Ok(ReducePaths {
        result,
        origin,
        stats: valid.next(),
    })
}

/// `<output>.mfppr-origin`: the input a result was derived from.
pub fn origin_path(result: &Path) -> PathBuf {
    let mut name = result.as_os_str().to_owned();
    name.push(".mfppr-origin");
    PathBuf::from(name)
}

/// The content of the origin record.
#[derive(Serialize, serde::Deserialize, PartialEq, Eq)]
struct Origin {
    input: PathBuf,
    input_blake3: String,
}

impl Origin {
    fn of(input: &Path, text: &[u8]) -> Origin {
        Origin {
            input: std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf()),
            input_blake3: blake3::hash(text).to_hex().to_string(),
        }
    }
}

impl ReducePaths {
    /// Replace the result on disk with `text`.
    fn write_result(&self, text: &[u8]) -> anyhow::Result<()> {
        write_atomic(&self.result, text).with_context(|| {
            format!(
                "cannot write the output {} ({} bytes); the previous result is still there",
                self.result.display(),
                text.len()
            )
        })
    }

    /// Record which input the result is derived from (`text`: the input as mfppr reads it).
    fn write_origin(&self, input: &Path, text: &[u8]) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(&Origin::of(input, text))
            .context("cannot serialise the origin record")?;
        crate::atomic::replace_atomic(&self.origin, &json)
            .with_context(|| format!("cannot write {}", self.origin.display()))
    }

    /// Whether the result on disk was derived from this input.
    fn derived_from(&self, input: &Path, text: &[u8]) -> bool {
        std::fs::read(&self.origin)
            .ok()
            .and_then(|b| serde_json::from_slice::<Origin>(&b).ok())
            .is_some_and(|o| o.input_blake3 == Origin::of(input, text).input_blake3)
    }

    /// Write the `--stats` JSON, if asked for.
    fn write_stats(
        &self,
        opts: &ReduceOptions,
        timeout: Duration,
        stats: &Stats,
        completeness: &Completeness,
        interrupted: bool,
    ) -> anyhow::Result<()> {
        let Some(path) = &self.stats else {
            return Ok(());
        };
        let doc = StatsFile {
            input: &opts.input,
            output: &self.result,
            timeout_secs: timeout.as_secs_f64(),
            interrupted,
            catalogue: completeness,
            stats,
        };
        let json = serde_json::to_vec_pretty(&doc).context("cannot serialise the stats")?;
        write_atomic(path, &json)
            .with_context(|| format!("cannot write the stats file {}", path.display()))
    }
}

/// `--resume`: the existing output, if it was derived from this input and is an MF++ test that
/// is still interesting.
fn resume_from(
    opts: &ReduceOptions,
    oracle: &dyn Oracle,
    paths: &ReducePaths,
    text: &[u8],
) -> anyhow::Result<Option<Vec<u8>>> {
    let output = &paths.result;
    let Ok(previous) = std::fs::read(output) else {
        if !opts.quiet {
            crate::messages::progress(format!(
                "mfppr: nothing to resume from in {}; starting from the input",
                output.display()
            ));
        }
        return Ok(None);
    };
    if !paths.derived_from(&opts.input, text) {
        crate::messages::warn(format!(
            "{} was not derived from {} (no matching {}); starting from the input",
            output.display(),
            opts.input.display(),
            paths.origin.display()
        ));
        return Ok(None);
    }
    let previous = LineEndings::of(&previous).to_internal(&previous);
    let usable = crate::model::check_is_mfpp_test(&previous).is_ok()
        && oracle.judge(&previous, &AtomicBool::new(false))? == Verdict::Interesting;
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
            crate::messages::progress(format!(
                "mfppr: resuming from {} ({} bytes)",
                output.display(),
                previous.len()
            ));
        }
        Ok(Some(previous))
    } else {
        crate::messages::warn(format!(
            "{} is not an interesting MF++ test any more; starting from the input",
            output.display()
        ));
        Ok(None)
    }
}

/// Re-check the result `opts.recheck` times, without the cache: a flaky check may have accepted
/// it by chance. Returns the newest of `accepted` (oldest first; the first is known interesting)
/// that was interesting every time, or the newest one when none was, with a warning either way.
fn recheck<'a>(
    opts: &ReduceOptions,
    oracle: &dyn Oracle,
    accepted: &'a [Vec<u8>],
    stats: &mut Stats,
) -> anyhow::Result<&'a [u8]> {
    let newest = accepted.last().map(Vec::as_slice).unwrap_or_default();
    if opts.recheck == 0 {
        return Ok(newest);
    }
    let no_cancel = AtomicBool::new(false);
    for (age, text) in accepted.iter().rev().enumerate() {
        let mut failed = 0;
        for _ in 0..opts.recheck {
            stats.rechecks += 1;
            if oracle.judge(text, &no_cancel)? != Verdict::Interesting {
                failed += 1;
            }
            if crate::interrupt::requested() {
                return Err(coded(
                    ExitKind::Interrupted,
                    "interrupted during the re-check",
                ));
            }
        }
        stats.recheck_failures += failed;
        if failed == 0 {
            if age > 0 {
                crate::messages::warn(format!(
                    "the check is flaky: the final result was not interesting on \
                     re-check; kept the last result that was ({} bytes); make the check \
                     deterministic, or reduce with --no-cache",
                    text.len()
                ));
            }
            return Ok(text);
        }
    }
    crate::messages::warn(format!(
        "the check is flaky: no recent result was interesting on every re-check \
         ({} of {} re-checks failed); the result may not reproduce",
        stats.recheck_failures, stats.rechecks
    ));
    Ok(newest)
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
    fn outputs_are_validated_together() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::write(&input, "x").unwrap();
        let mut opts = ReduceOptions::new(&input, "check.sh");
        let paths = plan_outputs(&opts).unwrap();
        assert_eq!(paths.result, dir.path().join("t.reduced.cpp"));
        assert_eq!(paths.origin, dir.path().join("t.reduced.cpp.mfppr-origin"));
        opts.stats = Some(input.clone());
        assert!(format!("{:#}", plan_outputs(&opts).unwrap_err()).contains("is the input"));
        opts.stats = Some(dir.path().join("t.reduced.cpp"));
        assert!(format!("{:#}", plan_outputs(&opts).unwrap_err()).contains("is also the output"));
        opts.stats = Some(dir.path().join("missing/s.json"));
        assert!(format!("{:#}", plan_outputs(&opts).unwrap_err()).contains("does not exist"));
    }
}
