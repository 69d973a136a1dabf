//! Reducing one test (library API behind `mfppr reduce`, also used by `mfppr cover`).
//!
//! Owns the safety rules of design §7: the input is never written; the output directory is checked
//! before any oracle run; the original must be interesting before anything else happens; the best
//! text so far is always on disk (written atomically at the start and after every accepted
//! candidate); Ctrl-C / SIGTERM stop the search with the best result kept.

mod guided;
mod initial;
mod plan;
mod recheck;
mod unread;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::catalogue::{Catalogue, Completeness};
use crate::engine::{Engine, EngineOptions, InFlight, Inputs, Stats};
use crate::error::{coded, exit_kind, ExitKind};
use crate::judge::INITIAL_TIMEOUT;
use crate::line_endings::{EndingsOracle, LineEndings};
use crate::loaded::LoadedTest;
use crate::opportunity::Opportunities;
use crate::oracle::{Expected, ScriptOracle, Verdict};
use crate::passes::{MfppOpportunities, PassOptions};

use initial::{
    check_original, trivial_settled, warn_if_trivial_is_interesting, Original, Setup, SpareQueue,
};
pub(crate) use plan::origin_path;
use plan::{plan_outputs, resume_from, ReducePaths};
use recheck::{recheck, RECHECK_HISTORY};

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
    /// Judge the check cut before the search (`--no-check-cut` clears it).
    pub check_cut: bool,
    /// Judge the guided first cut before the search (`--guided-cut`).
    pub guided_cut: bool,
    /// When fuzz reduction runs (`--inputs`).
    pub inputs: Inputs,
    /// Per-run timeout (default derived from the initial run).
    pub timeout: Option<Duration>,
    /// Interesting = same exit status as the original, instead of exit 0.
    pub interesting_exit_auto: bool,
    /// Candidates judged at once.
    pub jobs: usize,
    /// Slots a campaign lends the search while it runs ([`EngineOptions::lent`]).
    pub lent_jobs: Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
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
            check_cut: true,
            guided_cut: false,
            inputs: Inputs::Anytime,
            timeout: None,
            interesting_exit_auto: false,
            jobs: EngineOptions::default().jobs,
            lent_jobs: None,
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

impl ReduceOptions {
    /// Where the input's MRs are found.
    pub(crate) fn spec_paths(&self) -> crate::loaded::SpecPaths<'_> {
        crate::loaded::SpecPaths {
            include_dirs: &self.include_dirs,
            specs: &self.specs,
        }
    }
}

/// What a finished reduction produced.
#[derive(Clone, Debug)]
pub(crate) struct ReduceOutcome {
    /// Where the result is.
    pub output: PathBuf,
    /// Size of the input.
    pub bytes_before: u64,
    /// Size of the result.
    pub bytes_after: u64,
    /// The per-run timeout that was used.
    pub timeout: Duration,
    /// Which exit statuses counted as interesting ([`crate::judge::interesting_exits`] of the original's run).
    pub expected: Expected,
    /// The search counters; `oracle_calls` and `wall_secs` include the checks made before the
    /// search (the original, the trivial test, the output when resuming).
    pub stats: Stats,
}

impl ReduceOutcome {
    /// One summary line: sizes, oracle calls, cache hits, wall time, mean oracle time per call,
    /// mfppr's own time.
    pub(crate) fn summary(&self) -> String {
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
pub(super) struct StatsFile<'a> {
    input: &'a Path,
    output: &'a Path,
    timeout_secs: f64,
    /// The exit status that counted as interesting with `--interesting-exit auto` (absent for
    /// exit 0, the default), so that a campaign read again (`batch retriage --check`) judges
    /// with the rule it was reduced with.
    #[serde(skip_serializing_if = "Option::is_none")]
    interesting_status: Option<i32>,
    interrupted: bool,
    catalogue: &'a Completeness,
    #[serde(flatten)]
    stats: &'a Stats,
}

/// The default output path: `<stem>.reduced.cpp` beside `input`.
pub(crate) fn default_output(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "test".to_string());
    input.with_file_name(format!("{stem}.reduced.cpp"))
}

/// Reduce `opts.input` with the check script `opts.check` (design §5–§7).
pub(crate) fn reduce(opts: &ReduceOptions) -> anyhow::Result<ReduceOutcome> {
    crate::interrupt::install()?;
    let began = Instant::now();
    let Input {
        text,
        endings,
        catalogue,
        completeness,
    } = read_input(opts)?;
    completeness.say(opts.strict_spec)?;
    let paths = plan_outputs(opts)?;
    let _lock = crate::lock::lock_output(&paths.result)?;
    // The scripts' cache of precompiled include blocks is removed when this function returns.
    let (oracle, _cache_dir) = script_oracle(opts)?;

    let opportunities = opportunities(opts, catalogue);
    let original = Original {
        text: &text,
        endings,
        opportunities: &opportunities,
    };
    let judge = OnceLock::new();
    let (result, mut stats, on_disk, timeout) =
        spare_slots_search(opts, (&oracle, &judge), &original, &paths)?;
    // The judge the initial checks resolved (the search ran, so they did).
    let expected = judge.get().map_or(Expected::Zero, ScriptOracle::expected);
    let interrupted = result
        .as_ref()
        .is_err_and(|e| exit_kind(e) == ExitKind::Interrupted);
    stats.wall_secs = began.elapsed().as_secs_f64();
    stats.bytes_after = on_disk as u64;
    let written = paths.write_stats(
        opts,
        (timeout, expected),
        &stats,
        &completeness,
        interrupted,
    );
    match result {
        Ok(()) => {
            written?;
            Ok(ReduceOutcome {
                expected,
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

/// The check script's oracle for `opts`, and the scripts' cache of precompiled include blocks
/// made for this run (removed when dropped), unless the user chose one (environment or --env)
/// or the caller gave one.
fn script_oracle(
    opts: &ReduceOptions,
) -> anyhow::Result<(ScriptOracle, Option<tempfile::TempDir>)> {
    let mut oracle = ScriptOracle::new(&opts.check, &opts.input, opts.extra_env.clone())?;
    oracle.set_save_temps(opts.save_temps.clone());
    let cache_dir = run_cache_dir(opts)?;
    oracle.set_cache_dir(
        opts.cache_dir
            .clone()
            .or_else(|| cache_dir.as_ref().map(|d| d.path().to_path_buf())),
    );
    let first = Some(opts.timeout.unwrap_or(INITIAL_TIMEOUT));
    Ok((oracle.resolved(first, Expected::Zero), cache_dir))
}

/// [`check_and_search`] the `original` with the spare slots' queue. The original must be
/// interesting before anything is written. The spare slots' runs of the initial checks may go on
/// in the search: their threads live until it ends; whatever it did not take over is killed on
/// the way out.
fn spare_slots_search<'e>(
    opts: &ReduceOptions,
    (oracle, judge): (&'e ScriptOracle, &'e OnceLock<ScriptOracle>),
    original: &Original<'_>,
    paths: &ReducePaths,
) -> anyhow::Result<(anyhow::Result<()>, Stats, usize, Duration)> {
    let queue = SpareQueue::new();
    std::thread::scope(|scope| {
        let setup = Setup {
            opts,
            oracle,
            judge,
            original,
            queue: &queue,
            scope,
        };
        let reduced = check_and_search(&setup, paths);
        queue.cancel_all();
        reduced
    })
}

/// The reduction's opportunities in a test with `catalogue`, as `opts` ask.
fn opportunities(opts: &ReduceOptions, catalogue: Catalogue) -> MfppOpportunities {
    let options = PassOptions {
        keep_checks: opts.keep_checks,
        drop_oracle: opts.drop_oracle,
        tail: opts.tail,
    };
    MfppOpportunities::new(catalogue, options)
}

/// The initial checks, then (if the original is interesting) the search: how the search ended,
/// its stats (the setup checks counted), the size of the result on disk and the per-run timeout.
fn check_and_search(
    setup: &Setup<'_, '_, '_>,
    paths: &ReducePaths,
) -> anyhow::Result<(anyhow::Result<()>, Stats, usize, Duration)> {
    let began = Instant::now();
    let (opts, original) = (setup.opts, setup.original);
    let (text, endings) = (original.text, original.endings);
    let mut initial = check_original(setup)?;
    let oracle = EndingsOracle {
        inner: initial.judge,
        endings,
    };
    // Runs before the search: the original, the trivial test(s) (killed ones included) and the
    // candidates judged ahead that ended (those still going end in the search).
    let mut setup_calls =
        1 + initial.killed + initial.trivial.len() as u64 + initial.ahead.len() as u64;
    let timeout = initial.timeout;

    let mut start = text.to_vec();
    let mut resumed = false;
    if opts.resume {
        setup_calls += 1;
        if let Some(best) = resume_from(opts, &oracle, paths, text)? {
            (start, resumed) = (best, true);
        }
    }
    paths.write_result(&endings.to_file(&start))?;
    paths.write_origin(&opts.input, text)?;
    let mut ahead = initial.ahead;
    let (mut check_cut, mut guided_cut, mut unread) = (None, None, None);
    let check_cut_beside = initial.check_cut.is_some();
    let tools = guided::Tools {
        mfpp: original.opportunities,
        judge: initial.judge,
        oracle: &oracle,
        timeout,
    };
    // A resumed run does not know where the failure is: with the check cut on, it looks again
    // when its text still holds a computation nothing reads (the sweep leaves one only when
    // told to keep it).
    let mut elsewhere = resumed && opts.check_cut;
    if !resumed {
        // The check cut first; the guided cut (which also folds) reads what it left.
        for (on, guided) in [(opts.check_cut, false), (opts.guided_cut, true)] {
            if !on {
                continue;
            }
            let cut = match guided {
                false => guided::check_cut(&tools, &start, initial.check_cut.take())?,
                true => guided::first_cut(&tools, &start)?,
            };
            setup_calls += cut.runs;
            elsewhere |= cut.elsewhere;
            if let Some(cut) = cut.text {
                paths.write_result(&endings.to_file(&cut))?;
                start = cut;
            }
            ahead.extend(cut.rejected);
            *(if guided {
                &mut guided_cut
            } else {
                &mut check_cut
            }) = Some(cut.said);
        }
    }
    if elsewhere {
        let step = unread::unread(&tools, &start)?;
        setup_calls += step.runs;
        if let Some(text) = step.text {
            paths.write_result(&endings.to_file(&text))?;
            start = text;
        }
        original.opportunities.keep_computations(step.keep);
        unread = Some(step.said);
    }
    // The trivial tests that ran on spare slots (free in wall time) are known now. Those that
    // did not would cost runs of their own: they run after the search, and only when the search
    // found no candidate uninteresting — a check that rejected one has shown it tells tests
    // apart, which is what the trivial tests are for.
    let trivial = initial.trivial;
    let settled = trivial_settled(&trivial);
    if settled {
        setup_calls += warn_if_trivial_is_interesting(&oracle, trivial.clone())?;
    }

    let from = SearchFrom {
        text,
        start,
        ahead,
        in_flight: initial.in_flight,
    };
    let before_search = began.elapsed();
    let (mut result, mut stats, on_disk) =
        search(opts, original.opportunities, &oracle, paths, from);
    stats.check_cut_beside = check_cut_beside;
    stats.check_cut = check_cut;
    stats.guided_cut = guided_cut;
    stats.unread = unread;
    // The curve counts the setup checks that ran before the search, as `oracle_calls` does.
    for point in &mut stats.curve {
        point[0] += setup_calls;
    }
    for point in &mut stats.anytime {
        point.calls += setup_calls;
        point.secs += before_search.as_secs_f64();
    }
    if !settled && result.is_ok() && stats.candidates == stats.accepted {
        match warn_if_trivial_is_interesting(&oracle, trivial) {
            Ok(calls) => setup_calls += calls,
            Err(e) => result = Err(e),
        }
    }
    stats.oracle_calls += setup_calls + stats.rechecks;
    Ok((result, stats, on_disk, timeout))
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
/// the re-check. Returns how it ended (with the last re-check run of the result), the stats (with `bytes_before` set) and the size of the
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
            inputs: opts.inputs,
            lent: opts.lent_jobs.clone(),
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

/// The input as read, checked and parsed once.
struct Input {
    /// The text, with LF line endings.
    text: Vec<u8>,
    endings: LineEndings,
    catalogue: Catalogue,
    completeness: Completeness,
}

/// Read, check and parse the input ([`LoadedTest::read_input`]): its text, its line-ending
/// convention, the MR catalogue and its completeness for the input.
fn read_input(opts: &ReduceOptions) -> anyhow::Result<Input> {
    let (loaded, endings) = LoadedTest::read_input(&opts.input, &opts.spec_paths())?;
    let completeness = loaded.model.completeness(&loaded.catalogue);
    Ok(Input {
        text: loaded.text().to_vec(),
        endings,
        catalogue: loaded.catalogue,
        completeness,
    })
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
}
