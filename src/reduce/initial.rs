//! The initial checks (design §6): the original must be interesting before anything is
//! written; the check cut's run of the instrumented original, the search's likely first
//! candidates and then the trivial tests run on the spare slots meanwhile; the per-run timeout
//! follows from the original's run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::ReduceOptions;
use crate::engine::{candidates_ahead, InFlight, InFlightEnd};
use crate::error::{coded, ExitKind};
use crate::evidence::checks::Instrumented;
use crate::evidence::values::PATIENCE;
use crate::judge::{Judged, INITIAL_TIMEOUT};
use crate::line_endings::LineEndings;
use crate::opportunity::OpportunityKind;
use crate::oracle::{lock, Expected, Oracle, Run, RunEnd, ScriptOracle, Verdict};
use crate::passes::MfppOpportunities;
use crate::pool::{spawn_workers, JobQueue};

/// Interval between two looks at the initial checks.
const POLL: Duration = Duration::from_millis(5);
/// A long initial check says it is still running this often.
const WAIT_NOTE_EVERY: Duration = Duration::from_secs(30);
/// Tests that keep nothing of the original, and how the warning names them: a check that
/// accepts one checks nothing. The first that is interesting is named.
const TRIVIAL_TESTS: [(&[u8], &str); 2] = [
    (b"int main() {}\n", "`int main() {}`"),
    (b"", "the empty file"),
];

/// The input the initial checks judge, and what the search will need first if it is interesting.
pub(super) struct Original<'a> {
    /// The input, with LF line endings.
    pub(super) text: &'a [u8],
    pub(super) endings: LineEndings,
    pub(super) opportunities: &'a MfppOpportunities,
}

/// What the initial checks run with: the options, the check, the input, the spare slots' queue
/// and the scope of their threads (so that the search can take over runs still going).
pub(super) struct Setup<'a, 's, 'e: 's> {
    pub(super) opts: &'a ReduceOptions,
    /// The check as given, with the first run's timeout (`--timeout`, else [`INITIAL_TIMEOUT`])
    /// and exit 0's rule: the initial checks run with it.
    pub(super) oracle: &'e ScriptOracle,
    /// The judge the initial checks resolve, once: the original's exit rule and the timeout its
    /// run implies. The search, the re-check and every later step judge with it.
    pub(super) judge: &'e OnceLock<ScriptOracle>,
    pub(super) original: &'a Original<'a>,
    pub(super) queue: &'e SpareQueue,
    pub(super) scope: &'s std::thread::Scope<'s, 'e>,
}

/// What the initial checks found out besides the original being interesting.
pub(super) struct Initial<'e> {
    /// The judge resolved by the original's run.
    pub(super) judge: &'e ScriptOracle,
    /// The per-run timeout.
    pub(super) timeout: Duration,
    /// Runs of trivial tests killed when the original's run ended.
    pub(super) killed: u64,
    /// The verdicts of the trivial tests judged (the first ones of [`TRIVIAL_TESTS`]).
    pub(super) trivial: Vec<Verdict>,
    /// Candidates the search is likely to need first (LF line endings), judged alongside the
    /// original, with their verdicts.
    pub(super) ahead: Vec<(Vec<u8>, Verdict)>,
    /// Their runs still going, for the search to take over.
    pub(super) in_flight: Vec<InFlight<'e>>,
    /// The check cut's run of the instrumented original, begun on a spare slot beside the
    /// original's run ([`EarlyCheckCut`]).
    pub(super) check_cut: Option<EarlyCheckCut>,
}

/// Run the check on the original (and trivial tests and the search's likely first candidates
/// alongside it): fail unless it is interesting; set the oracle's contract and per-run timeout.
pub(super) fn check_original<'e>(setup: &Setup<'_, '_, 'e>) -> anyhow::Result<Initial<'e>> {
    let (opts, oracle, queue) = (setup.opts, setup.oracle, setup.queue);
    let initial = initial_checks(setup)?;
    if crate::interrupt::requested() {
        return Err(coded(
            ExitKind::Interrupted,
            "interrupted during the initial check; nothing was written",
        ));
    }
    let Some(expected) = contract(opts, &initial) else {
        return Err(not_interesting(opts, oracle, &initial));
    };
    let timeout = derived_timeout(opts, &initial);
    let judge: &'e ScriptOracle = setup
        .judge
        .get_or_init(|| oracle.resolved(Some(timeout), expected));
    if !opts.quiet {
        crate::messages::progress(format!(
            "mfppr: the original is interesting ({}, {:.1} s); timeout {:.1} s",
            initial.end,
            initial.elapsed.as_secs_f64(),
            timeout.as_secs_f64()
        ));
    }
    // The trivial tests' verdicts in their order, up to the first that has none.
    let mut trivial_judged = true;
    let mut checked = Initial {
        judge,
        timeout,
        killed: 0,
        trivial: Vec::new(),
        ahead: Vec::new(),
        in_flight: Vec::new(),
        check_cut: queue.take_check_cut(),
    };
    for item in queue.items() {
        if lock(&item.started).is_none() || matches!(item.role, Role::CheckCut(_)) {
            continue;
        }
        let ended = lock(&item.run).take();
        match (&item.role, ended) {
            (Role::Trivial, Some(_)) if item.cancel.load(Ordering::SeqCst) => {
                checked.killed += 1;
                trivial_judged = false;
            }
            (Role::Trivial, ended) => {
                let verdict = ended.map(|run| run.map(|run| judge.verdict_of(run.end)));
                match verdict.transpose()? {
                    Some(verdict) if trivial_judged => checked.trivial.push(verdict),
                    _ => trivial_judged = false,
                }
            }
            (Role::Ahead(_, text), Some(run)) => {
                checked
                    .ahead
                    .push((text.clone(), judge.verdict_of(run?.end)));
            }
            (Role::Ahead(kind, text), None) => {
                let cancel = Arc::new(AtomicBool::new(false));
                let flag = Arc::clone(&cancel);
                checked.in_flight.push(InFlight {
                    text: text.clone(),
                    kind: *kind,
                    cancel,
                    wait: Box::new(move || item.wait(judge, timeout, &flag)),
                });
            }
            (Role::CheckCut(_), _) => {}
        }
    }
    Ok(checked)
}

/// Whether the trivial tests that ran alongside the original (`known`, the first ones of
/// [`TRIVIAL_TESTS`]) settle the warning: all of them ran, or one is interesting.
pub(super) fn trivial_settled(known: &[Verdict]) -> bool {
    known.len() == TRIVIAL_TESTS.len() || known.contains(&Verdict::Interesting)
}

/// With a check that accepts `int main() {}` or the empty file, results may be meaningless: warn.
/// `known` are the verdicts of the first [`TRIVIAL_TESTS`], run alongside the original; the
/// others run here until one is interesting. Returns the number of oracle runs made here.
pub(super) fn warn_if_trivial_is_interesting(
    oracle: &dyn Oracle,
    known: Vec<Verdict>,
) -> anyhow::Result<u64> {
    let no_cancel = AtomicBool::new(false);
    let mut calls = 0;
    let mut known = known.into_iter();
    for (text, what) in TRIVIAL_TESTS {
        let verdict = match known.next() {
            Some(verdict) => verdict,
            None => {
                calls += 1;
                oracle.verdict(text, &no_cancel)?
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

/// Which exit statuses count as interesting, given the original's run; `None` if it is not
/// interesting.
fn contract(opts: &ReduceOptions, initial: &Run) -> Option<Expected> {
    crate::judge::interesting_exits(initial.end, opts.interesting_exit_auto)
}

/// The per-run timeout: `--timeout`, or derived from the initial run of the original.
fn derived_timeout(opts: &ReduceOptions, initial: &Run) -> Duration {
    opts.timeout
        .unwrap_or_else(|| crate::judge::timeout_after(initial.elapsed))
}

/// Check the original and, with more than one job, on the other slots meanwhile: the check cut's
/// run of the instrumented original, candidates the search is likely to need first, each as
/// soon as it is found, then the trivial tests (a slot takes the next one when it is free, until
/// the original's run ends, so that they add nothing to the critical path). The slots' threads
/// run in `scope`, so that runs still going when the original's run ends can go on in the
/// search ([`Engine::adopt`]) or the check cut. Once the original's run ended: if it is not
/// interesting, every other run is killed; otherwise so are the trivial tests' runs still going.
/// Returns the original's run; the runs on the spare slots are in `queue`.
///
/// [`Engine::adopt`]: crate::engine::Engine::adopt
fn initial_checks(setup: &Setup<'_, '_, '_>) -> anyhow::Result<Run> {
    let (opts, queue) = (setup.opts, setup.queue);
    let limit = opts.timeout.unwrap_or(INITIAL_TIMEOUT);
    if !opts.quiet {
        crate::messages::progress(format!(
            "mfppr: checking that the original is interesting with {} (at most {:.0} s)",
            crate::checks::shown(&opts.check),
            limit.as_secs_f64()
        ));
    }
    let spare = opts.jobs.saturating_sub(1);
    let initial = run_original(setup, spare)?;
    match &initial {
        Ok(run) if contract(opts, run).is_some() => queue.stop_trivial(),
        _ => queue.cancel_all(),
    }
    initial
}

/// The original's run, with `spare` slots working through `queue` meanwhile (their threads in
/// `scope`) and the candidates ahead queued as they are found. A long check says so every
/// [`WAIT_NOTE_EVERY`].
fn run_original(setup: &Setup<'_, '_, '_>, spare: usize) -> anyhow::Result<anyhow::Result<Run>> {
    let Setup {
        opts,
        oracle,
        original,
        queue,
        scope,
        ..
    } = *setup;
    let no_cancel = AtomicBool::new(false);
    let limit = opts.timeout.unwrap_or(INITIAL_TIMEOUT);
    let file = original.endings.to_file(original.text);
    let started = Instant::now();
    std::thread::scope(|inner| {
        let initial = std::thread::Builder::new()
            .name("mfppr-original".into())
            .spawn_scoped(inner, || {
                let run = oracle.run(&file, &no_cancel);
                // No spare slot starts anything once this is known.
                queue.original_done();
                run
            })
            .context("cannot start a thread for the initial checks")?;
        spawn_workers(scope, spare, "mfppr-spare", &queue.queue, move |item| {
            SpareRun::execute(&item, oracle)
        })?;
        if spare > 0 && opts.check_cut && !opts.resume {
            queue.begin_check_cut(original, oracle, opts.timeout);
        }
        if spare > 0 && opts.cache && !opts.resume {
            // Only a speed-up: if the input cannot be gathered, the search will say why.
            let _ = candidates_ahead(
                original.opportunities,
                original.text,
                opts.inputs,
                spare,
                &mut |kind, text| {
                    if !queue.queue.is_stopped() {
                        let file = original.endings.to_file(&text);
                        queue.push(SpareRun::new(file, Role::Ahead(kind, text)));
                    }
                },
            );
        }
        // After the candidates ahead: a slot takes them only once it has nothing the search
        // needs to run.
        for &(test, _) in TRIVIAL_TESTS
            .iter()
            .take(if spare > 0 { TRIVIAL_TESTS.len() } else { 0 })
        {
            queue.push(SpareRun::new(test.to_vec(), Role::Trivial));
        }
        queue.queue.close();
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
    })
}

/// The runs of the spare slots of the initial checks: queued for the slots ([`JobQueue`], taken
/// in the order they were pushed until the original's run ends), and every one queued so far,
/// for the search to take over.
pub(super) struct SpareQueue {
    queue: JobQueue<Arc<SpareRun>>,
    runs: Mutex<Vec<Arc<SpareRun>>>,
    /// The check cut's run, queued first.
    check_cut: Mutex<Option<EarlyCheckCut>>,
}

impl SpareQueue {
    pub(super) fn new() -> SpareQueue {
        SpareQueue {
            queue: JobQueue::new(),
            runs: Mutex::new(Vec::new()),
            check_cut: Mutex::new(None),
        }
    }

    /// Queue the check cut's run of the instrumented original first, so that a spare slot
    /// starts it at once, under the most patient limit the check cut can have (`timeout`, else
    /// the longest derived one, times [`PATIENCE`]): the limit it is judged under once the
    /// original's run has set the timeout is kept by [`EarlyCheckCut::wait`]. Only a speed-up:
    /// when the original cannot be read or has no check, the check cut says so later.
    fn begin_check_cut(
        &self,
        original: &Original<'_>,
        oracle: &ScriptOracle,
        timeout: Option<Duration>,
    ) {
        let Ok(model) = original.opportunities.model(original.text) else {
            return;
        };
        let Ok(Some(instrumented)) = Instrumented::new(original.text, &model) else {
            return;
        };
        let most = timeout.unwrap_or(crate::judge::MAX_TIMEOUT) * PATIENCE;
        let own = oracle.with_timeout(Some(most));
        let run = Arc::new(SpareRun::new(
            instrumented.text.clone(),
            Role::CheckCut(own),
        ));
        lock(&self.runs).push(Arc::clone(&run));
        self.queue.push(Arc::clone(&run));
        *lock(&self.check_cut) = Some(EarlyCheckCut { run, instrumented });
    }

    /// The check cut's run, if a spare slot started it.
    fn take_check_cut(&self) -> Option<EarlyCheckCut> {
        lock(&self.check_cut)
            .take()
            .filter(|cut| lock(&cut.run.started).is_some())
    }

    fn push(&self, run: SpareRun) {
        let run = Arc::new(run);
        lock(&self.runs).push(Arc::clone(&run));
        self.queue.push(run);
    }

    /// The original's run ended: no slot takes a run any more.
    fn original_done(&self) {
        self.queue.stop();
    }

    /// Every run queued so far.
    fn items(&self) -> Vec<Arc<SpareRun>> {
        lock(&self.runs).clone()
    }

    /// Kill the trivial tests' runs still going (the search does not wait for them; those not
    /// judged follow the `-j1` rule) and wait for them to end.
    fn stop_trivial(&self) {
        let going: Vec<Arc<SpareRun>> = self
            .items()
            .into_iter()
            .filter(|item| matches!(item.role, Role::Trivial))
            .filter(|item| lock(&item.started).is_some() && lock(&item.run).is_none())
            .collect();
        for item in &going {
            item.cancel.store(true, Ordering::SeqCst);
        }
        while going.iter().any(|item| lock(&item.run).is_none()) {
            std::thread::sleep(POLL);
        }
    }

    pub(super) fn cancel_all(&self) {
        self.original_done();
        for item in self.items() {
            item.cancel.store(true, Ordering::SeqCst);
        }
    }
}

/// What a spare slot's run of the initial checks is.
enum Role {
    /// A trivial test.
    Trivial,
    /// A candidate ahead of the search: its kind and text with LF line endings.
    Ahead(OpportunityKind, Vec<u8>),
    /// The check cut's run of the instrumented original ([`EarlyCheckCut`]), through its own
    /// check: the initial checks' with the check cut's most patient limit.
    CheckCut(ScriptOracle),
}

/// A run of the initial checks on a spare slot: a trivial test, a candidate ahead of the
/// search, or the check cut's run.
struct SpareRun {
    /// The text as the check sees it.
    file: Vec<u8>,
    role: Role,
    cancel: AtomicBool,
    started: Mutex<Option<Instant>>,
    run: Mutex<Option<anyhow::Result<Run>>>,
    /// Notified when `run` is set.
    done: Condvar,
}

impl SpareRun {
    fn new(file: Vec<u8>, role: Role) -> SpareRun {
        SpareRun {
            file,
            role,
            cancel: AtomicBool::new(false),
            started: Mutex::new(None),
            run: Mutex::new(None),
            done: Condvar::new(),
        }
    }

    /// A spare slot runs it.
    fn execute(&self, oracle: &ScriptOracle) {
        *lock(&self.started) = Some(Instant::now());
        let oracle = match &self.role {
            Role::CheckCut(own) => own,
            _ => oracle,
        };
        let run = oracle.run(&self.file, &self.cancel);
        *lock(&self.run) = Some(run);
        self.done.notify_all();
    }

    /// Wait for this run (started, not finished) on behalf of the search: its verdict under
    /// `oracle`'s contract, or [`Verdict::Timeout`] once it has run `timeout` (it is killed then,
    /// as the search's own runs are); killed without a verdict once `cancel` is set.
    fn wait(&self, oracle: &ScriptOracle, timeout: Duration, cancel: &AtomicBool) -> InFlightEnd {
        let started = lock(&self.started).unwrap_or_else(Instant::now);
        match self.wait_run(timeout, cancel) {
            Ok(r) => (Ok(oracle.verdict_of(r.end)), r.elapsed),
            Err(e) => (Err(e), started.elapsed()),
        }
    }

    /// Wait for this run (started): how it ended, as timed out when it was killed for having
    /// run `timeout`; killed once `cancel` is set.
    fn wait_run(&self, timeout: Duration, cancel: &AtomicBool) -> anyhow::Result<Run> {
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
        let run = end?;
        Ok(match timed_out {
            true => Run {
                end: RunEnd::TimedOut,
                elapsed: started.elapsed(),
                ..run
            },
            false => run,
        })
    }
}

/// The check cut's run of the instrumented original ([`Instrumented`]), begun on a spare slot
/// while the original's own check runs, so that with more than one job the check cut costs no
/// latency of its own when that run is the shorter. It runs the same text as the check cut at
/// `-j1` and is judged under the same limit, so the cut is the same at every `-j`. Killed when
/// dropped unwaited (the original was not interesting, or the reduction stopped).
pub(super) struct EarlyCheckCut {
    run: Arc<SpareRun>,
    pub(super) instrumented: Instrumented,
}

impl EarlyCheckCut {
    /// How the run ended through `patient` (the check cut's judge): killed, and ended as timed
    /// out, once it has run `patient`'s timeout.
    pub(super) fn wait(&self, patient: &ScriptOracle) -> anyhow::Result<Judged> {
        let limit = patient.timeout().unwrap_or(Duration::MAX);
        let run = self.run.wait_run(limit, &AtomicBool::new(false))?;
        Ok(Judged {
            verdict: patient.verdict_of(run.end),
            run,
        })
    }
}

impl Drop for EarlyCheckCut {
    fn drop(&mut self) {
        self.run.cancel.store(true, Ordering::SeqCst);
    }
}

/// The result of a finished initial-check thread.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> anyhow::Result<T> {
    handle
        .join()
        .map_err(|_| anyhow::anyhow!("an initial check panicked"))
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
