//! The search engine (design §5, §12): which candidates are tried, in which order, how many at
//! once, and what is accepted.
//!
//! The engine owns the search order, the oracle runs (threads, cancellation, parallelism), the
//! verdict cache and the stats. It never looks inside a test: the passes, behind
//! [`Opportunities`], are pure (text in, opportunities and candidate texts out), and the engine
//! never starts a process itself: its runs call the [`Oracle`], which goes through the one
//! process runner (`crate::process`).
//!
//! The parts: `search` (the state machine that decides the next candidate), `workshop`
//! (gathering and building candidates), `beliefs` (how likely a candidate is interesting, for
//! speculation only), `speculation` (which runs go while the search waits), `runs` (oracle
//! runs in flight) and, here, [`Engine`], which drives them. With any `jobs`, what the search
//! decides depends only on the verdicts; only what runs meanwhile depends on timing.

mod beliefs;
mod runs;
mod search;
mod speculation;
mod workshop;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::error::{coded, ExitKind};
use crate::opportunity::{Opportunities, OpportunityKind};
use crate::oracle::{Oracle, Verdict};
use beliefs::{Calibration, Hints};
use runs::{Flight, Reporter, RunReport, RunResult, Running, Runs, StartRun};
pub use search::Inputs;
use search::{Search, Step};
use workshop::Workshop;

pub use speculation::candidates_ahead;

/// Search settings.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// How many oracle runs are in flight at once (≥ 1).
    pub jobs: usize,
    /// Remember verdicts by candidate hash.
    pub cache: bool,
    /// No progress lines on stderr.
    pub quiet: bool,
    /// Interval between two periodic progress lines.
    pub progress_every: Duration,
    /// 2 or more: a line on stderr for each candidate whose verdict is used (`-vv`).
    pub verbose: u8,
    /// When fuzz reduction runs.
    pub inputs: Inputs,
    /// Slots a campaign lends this search while it runs (its idle ones, issue 42): at most
    /// `max(jobs, lent)` runs are in flight, read at each launch. What the search accepts does
    /// not depend on it, as it does not depend on `jobs`.
    pub lent: Option<Arc<AtomicUsize>>,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cache: true,
            quiet: false,
            progress_every: Duration::from_secs(10),
            verbose: 0,
            inputs: Inputs::Anytime,
            lent: None,
        }
    }
}

/// Counters for one kind.
#[derive(Clone, Debug, Default, Serialize)]
pub struct KindStats {
    /// Candidates whose verdict was used (cache hits included; discarded speculative runs not).
    pub candidates: u64,
    /// Accepted candidates.
    pub accepted: u64,
    /// Bytes removed by accepted candidates (negative if they grew the text).
    pub bytes_removed: i64,
    /// Sum of the wall times of the oracle runs, in seconds (speculative runs included).
    pub oracle_secs: f64,
    /// Verdicts taken from the cache.
    pub cache_hits: u64,
    /// Candidates whose run timed out.
    pub timeouts: u64,
    /// Speculative runs whose verdicts were not used (they followed the winner, or were in flight
    /// at an interruption or an oracle error).
    pub wasted: u64,
}

/// Counters for a whole search (`--stats` JSON).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Per kind, keyed by [`OpportunityKind::name`].
    pub kinds: BTreeMap<OpportunityKind, KindStats>,
    /// Oracle runs actually started (cache hits excluded, speculative runs included).
    pub oracle_calls: u64,
    /// Verdicts taken from the cache.
    pub cache_hits: u64,
    /// Candidates whose verdict was used (cache hits included).
    pub candidates: u64,
    /// Candidates built by the passes (some are never judged: built ahead, or after the winner).
    pub built: u64,
    /// Oracle runs whose verdicts were not used.
    pub wasted: u64,
    /// Accepted candidates.
    pub accepted: u64,
    /// Wall time of the search, in seconds.
    pub wall_secs: f64,
    /// mfppr's own time in the search, in seconds: the wall time during which the engine was not
    /// waiting for an oracle run (gathering, building and hashing candidates, bookkeeping, writing
    /// accepted results). Oracle runs go on meanwhile, so this bounds the overhead from above.
    pub engine_secs: f64,
    /// `engine_secs` per built candidate, in milliseconds.
    pub engine_ms_per_candidate: f64,
    /// Mean wall time of one oracle run of the search, in seconds (the sum of the kinds'
    /// `oracle_secs` over the runs the engine started).
    pub mean_oracle_secs: f64,
    /// Size of the starting text.
    pub bytes_before: u64,
    /// Size of the result.
    pub bytes_after: u64,
    /// Rounds over the four main kinds (the last one accepted nothing; the tail ran after it).
    pub rounds: u64,
    /// Candidates judged twice (with `--no-cache`) that got different verdicts: a flaky check.
    pub disagreements: u64,
    /// Runs of the final result (and earlier results, if it was not interesting every time)
    /// after the search, to catch a flaky check (`--recheck`).
    pub rechecks: u64,
    /// Re-checks that were not interesting.
    pub recheck_failures: u64,
    /// The reduction curve: `[check runs started, bytes]` after each accepted candidate (the
    /// campaign page draws it).
    pub curve: Vec<[u64; 2]>,
    /// The anytime figures: after each accepted candidate, the check runs started, the bytes,
    /// the seconds since the reduction began and the kind accepted (a bench reads from them how
    /// many runs reached a given size, issue 60).
    pub anytime: Vec<AnytimePoint>,
    /// How the check cut ended (issue 60): `held`, `rejected` or `no cut: WHY`; absent when it
    /// was not tried (`--no-check-cut`, or a resumed run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_cut: Option<String>,
    /// The check cut's run began on a spare slot beside the original's check (`-j` > 1), so it
    /// cost no latency of its own but what it ran past the original's run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub check_cut_beside: bool,
    /// How the guided first cut ended (issue 60): `held`, `rejected` or `no cut: WHY`; absent
    /// when it was not tried (no `--guided-cut`, or a resumed run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guided_cut: Option<String>,
    /// How the unread step ended (issue 60; `crate::reduce`): `swept`, `kept NAMES` or `nothing
    /// unread`; absent when it was not tried (the failure is in a check, or the check cut was
    /// not tried).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

/// One point of [`Stats::anytime`].
#[derive(Clone, Debug, Serialize)]
pub struct AnytimePoint {
    /// Check runs started when the candidate was accepted (its own included).
    pub calls: u64,
    /// The size of the accepted text.
    pub bytes: u64,
    /// Seconds since the reduction began.
    pub secs: f64,
    /// The kind of the accepted candidate.
    pub kind: OpportunityKind,
}

impl Stats {
    fn kind(&mut self, kind: OpportunityKind) -> &mut KindStats {
        self.kinds.entry(kind).or_default()
    }
}

/// Called with the new current text after every accepted candidate (the reduce command writes the
/// output there). An `Err` stops the search.
pub type OnAccept<'a> = dyn FnMut(&[u8]) -> anyhow::Result<()> + 'a;

/// A text and its hash.
#[derive(Clone)]
struct Text {
    bytes: Arc<Vec<u8>>,
    hash: blake3::Hash,
}

impl Text {
    fn new(bytes: Vec<u8>) -> Text {
        let hash = blake3::hash(&bytes);
        Text {
            bytes: Arc::new(bytes),
            hash,
        }
    }
}

/// A candidate the search needs a verdict for.
#[derive(Clone)]
struct Candidate {
    kind: OpportunityKind,
    text: Text,
    /// The fingerprint of its opportunity, when it applies exactly one.
    fingerprint: Option<u64>,
    /// Number of opportunities it applies.
    size: usize,
    /// The fingerprints of its opportunities (those that have one).
    prints: Vec<u64>,
    /// What it does, for progress lines.
    what: Arc<str>,
}

/// A run of a candidate started before the search ([`candidates_ahead`]) and still going: the
/// engine takes it over ([`Engine::adopt`]) as if it had started it.
pub struct InFlight<'a> {
    /// The candidate (LF line endings).
    pub text: Vec<u8>,
    /// The kind of its window.
    pub kind: OpportunityKind,
    /// Set to kill the run.
    pub cancel: Arc<AtomicBool>,
    /// Blocks until the run ends.
    pub wait: Box<dyn FnOnce() -> InFlightEnd + Send + 'a>,
}

/// How a run ended: its verdict, and how long it ran.
pub type InFlightEnd = (anyhow::Result<Verdict>, Duration);

impl fmt::Debug for InFlight<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlight")
            .field("bytes", &self.text.len())
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The search engine. Owns the verdict cache and the stats.
pub struct Engine<'a> {
    opportunities: &'a dyn Opportunities,
    oracle: &'a dyn Oracle,
    options: EngineOptions,
    interrupt: &'a AtomicBool,
    cache: HashMap<blake3::Hash, Verdict>,
    /// Candidates judged ahead of the search ([`Engine::remember_ahead`]) whose verdicts it has
    /// not used yet.
    ahead: HashSet<blake3::Hash>,
    /// Runs to take over when the search starts ([`Engine::adopt`]).
    adopted: Vec<InFlight<'a>>,
    hints: Hints,
    calibration: Calibration,
    stats: Stats,
    round: u64,
    tried: u64,
    /// Time the engine thread spent blocked waiting for oracle runs.
    waiting: Duration,
    last_progress: Instant,
    /// When the current search began.
    began: Instant,
}

impl fmt::Debug for Engine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("options", &self.options)
            .field("cached", &self.cache.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<'a> Engine<'a> {
    /// An engine searching with `opportunities` and judging with `oracle`. The search stops with
    /// [`ExitKind::Interrupted`] once `interrupt` is set.
    pub fn new(
        opportunities: &'a dyn Opportunities,
        oracle: &'a dyn Oracle,
        options: EngineOptions,
        interrupt: &'a AtomicBool,
    ) -> anyhow::Result<Engine<'a>> {
        let jobs = options.jobs.max(1);
        Ok(Engine {
            opportunities,
            oracle,
            options: EngineOptions { jobs, ..options },
            interrupt,
            cache: HashMap::new(),
            ahead: HashSet::new(),
            adopted: Vec::new(),
            hints: Hints::default(),
            calibration: Calibration::default(),
            stats: Stats {
                kinds: OpportunityKind::ALL
                    .iter()
                    .map(|&k| (k, KindStats::default()))
                    .collect(),
                ..Stats::default()
            },
            round: 0,
            tried: 0,
            waiting: Duration::ZERO,
            last_progress: Instant::now(),
            began: Instant::now(),
        })
    }

    /// Record a verdict known from elsewhere (e.g. the original, judged before the search).
    pub fn remember(&mut self, text: &[u8], verdict: Verdict) {
        self.cache.insert(blake3::hash(text), verdict);
    }

    /// Record the verdict of a candidate judged ahead of the search ([`candidates_ahead`]): when
    /// the search needs it, it counts as judged, not as a cache hit; if it never does, the run
    /// counts as wasted.
    pub fn remember_ahead(&mut self, text: &[u8], verdict: Verdict) {
        let hash = blake3::hash(text);
        self.cache.insert(hash, verdict);
        self.ahead.insert(hash);
    }

    /// Take over `run`, a run of a candidate judged ahead of the search that is still going: the
    /// search uses its verdict when it needs the candidate, or kills it (counted as wasted) once
    /// nothing needs it. Its report counts as an oracle call.
    pub fn adopt(&mut self, run: InFlight<'a>) {
        self.adopted.push(run);
    }

    /// How many runs may be in flight now: `jobs`, or more while a campaign lends slots.
    fn jobs(&self) -> usize {
        let lent = self
            .options
            .lent
            .as_ref()
            .map_or(0, |l| l.load(Ordering::Relaxed));
        self.options.jobs.max(lent)
    }

    /// Whether the search looks ahead (more than one run may be in flight, now or later).
    fn speculates(&self) -> bool {
        self.options.jobs > 1 || self.options.lent.is_some()
    }

    /// The counters so far (also valid after an error or an interruption).
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Reduce `start` (which the caller has found interesting) to a fixpoint and return the result.
    /// `on_accept` is called with every newly accepted text.
    pub fn run(&mut self, start: Vec<u8>, on_accept: &mut OnAccept<'_>) -> anyhow::Result<Vec<u8>> {
        let began = Instant::now();
        self.began = began;
        self.waiting = Duration::ZERO;
        self.stats.bytes_before = start.len() as u64;
        self.stats.bytes_after = start.len() as u64;
        self.last_progress = Instant::now();
        let mut search = Search::new(start, self.options.inputs);
        let mut workshop = Workshop::new(self.opportunities, self.speculates());
        let (oracle, interrupt) = (self.oracle, self.interrupt);
        let (sender, results) = mpsc::channel::<RunReport>();
        let result = std::thread::scope(|scope| {
            let start: &StartRun<'_> = &|id, hash, bytes, cancel| {
                let reporter = Reporter {
                    id,
                    hash,
                    cancel,
                    interrupt,
                    sender: sender.clone(),
                };
                reporter.spawn(scope, move |cancel| {
                    let started = Instant::now();
                    let verdict = if cancel.load(Ordering::SeqCst) {
                        Ok(Verdict::Uninteresting)
                    } else {
                        panic::catch_unwind(AssertUnwindSafe(|| oracle.verdict(&bytes, cancel)))
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("the oracle panicked")))
                    };
                    (verdict, started.elapsed())
                })
            };
            let mut flight = Flight {
                runs: Runs::default(),
                start,
                results: &results,
            };
            let result = self
                .take_over(&mut flight.runs, scope, &sender)
                .and_then(|()| self.search(&mut search, &mut workshop, &mut flight, on_accept));
            // Whatever happened, nothing in flight is needed any more: kill it and wait for it.
            self.drain(&mut flight.runs, &results);
            result
        });
        crate::messages::clear_status();
        self.stats.wasted += self.ahead.len() as u64;
        self.ahead.clear();
        self.stats.built = workshop.count;
        self.stats.wall_secs = began.elapsed().as_secs_f64();
        self.stats.engine_secs = began.elapsed().saturating_sub(self.waiting).as_secs_f64();
        self.stats.engine_ms_per_candidate = if self.stats.built == 0 {
            0.0
        } else {
            1000.0 * self.stats.engine_secs / self.stats.built as f64
        };
        let oracle_secs: f64 = self.stats.kinds.values().map(|k| k.oracle_secs).sum();
        self.stats.mean_oracle_secs = if self.stats.oracle_calls == 0 {
            0.0
        } else {
            oracle_secs / self.stats.oracle_calls as f64
        };
        result.map(|()| Arc::try_unwrap(search.text.bytes).unwrap_or_else(|b| b.to_vec()))
    }

    /// Register the adopted runs as running, each reporting on `sender` from its own thread.
    fn take_over<'s>(
        &mut self,
        runs: &mut Runs,
        scope: &'s std::thread::Scope<'s, '_>,
        sender: &mpsc::Sender<RunReport>,
    ) -> anyhow::Result<()>
    where
        'a: 's,
    {
        for run in std::mem::take(&mut self.adopted) {
            let id = runs.next_id;
            runs.next_id += 1;
            let hash = blake3::hash(&run.text);
            let reporter = Reporter {
                id,
                hash,
                cancel: Arc::clone(&run.cancel),
                interrupt: self.interrupt,
                sender: sender.clone(),
            };
            let wait = run.wait;
            reporter.spawn(scope, move |_| wait())?;
            runs.running.insert(
                hash,
                Running {
                    id,
                    kind: run.kind,
                    window: None,
                    prints: Vec::new(),
                    cancel: run.cancel,
                },
            );
        }
        Ok(())
    }

    /// Drive the search to its fixpoint: judge what it asks for, report what it accepts.
    fn search<'r>(
        &mut self,
        search: &mut Search,
        workshop: &mut Workshop<'r>,
        flight: &mut Flight<'_>,
        on_accept: &mut OnAccept<'_>,
    ) -> anyhow::Result<()> {
        loop {
            self.check_interrupt()?;
            let step = search.next(workshop)?;
            self.round = search.round;
            self.stats.rounds = search.round;
            match step {
                Step::Done => return Ok(()),
                Step::Accepted { kind, before, what } => {
                    let after = search.text.bytes.len();
                    let ks = self.stats.kind(kind);
                    ks.accepted += 1;
                    ks.bytes_removed += before as i64 - after as i64;
                    self.stats.accepted += 1;
                    self.stats.bytes_after = after as u64;
                    self.stats
                        .curve
                        .push([self.stats.oracle_calls, after as u64]);
                    self.stats.anytime.push(AnytimePoint {
                        calls: self.stats.oracle_calls,
                        bytes: after as u64,
                        secs: self.began.elapsed().as_secs_f64(),
                        kind,
                    });
                    if !self.options.quiet {
                        crate::messages::progress(format!(
                            "mfppr: round {}, {}: {before} -> {after} bytes ({what})",
                            self.round,
                            kind.name(),
                        ));
                    }
                    on_accept(&search.text.bytes)?;
                }
                Step::Judge(c) => {
                    // Only speculation (more than one job) uses the calibration.
                    let believed = (self.speculates() && self.hints.chance(&c).is_none())
                        .then(|| search.chance(&c));
                    let verdict = self.await_verdict(search, &c, workshop, flight)?;
                    if let Some(p) = believed {
                        self.calibration.add(p, verdict == Verdict::Interesting);
                    }
                    self.tried += 1;
                    self.stats.candidates += 1;
                    let ks = self.stats.kind(c.kind);
                    ks.candidates += 1;
                    if verdict == Verdict::Timeout {
                        ks.timeouts += 1;
                    }
                    if self.options.verbose >= 2 && !self.options.quiet {
                        crate::messages::progress(format!(
                            "mfppr: round {}, {}: tried {} -> {} bytes ({}): {verdict:?}",
                            self.round,
                            c.kind.name(),
                            search.text.bytes.len(),
                            c.text.bytes.len(),
                            c.what,
                        ));
                    }
                    search.feed(verdict);
                    search.settle();
                }
            }
        }
    }

    /// The verdict of `c`, which `search` needs now: from the cache, or from its run, started
    /// here if it is not running yet, together with the runs a speculative copy of the search
    /// needs next.
    fn await_verdict(
        &mut self,
        search: &Search,
        c: &Candidate,
        workshop: &mut Workshop<'_>,
        flight: &mut Flight<'_>,
    ) -> anyhow::Result<Verdict> {
        loop {
            if let Some(verdict) = self.verdict_of(c.kind, &c.text.hash, &mut flight.runs)? {
                return Ok(verdict);
            }
            let mut arrived = self.schedule(search, c, workshop, flight)?;
            let (runs, results) = (&mut flight.runs, flight.results);
            if arrived.is_empty() {
                let waited = Instant::now();
                let received = results.recv();
                self.waiting += waited.elapsed();
                arrived.push(received.context("lost an oracle run")?);
            }
            // Runs that ended meanwhile are taken in too before the next scheduling.
            arrived.extend(results.try_iter());
            for (id, hash, run) in arrived {
                self.finished(runs, id, hash, run);
            }
            self.check_interrupt()?;
            self.progress(search.current_kind(), search.text.bytes.len());
        }
    }

    /// The verdict of candidate `hash` if it is known: from its finished run (used once), or from
    /// the cache.
    fn verdict_of(
        &mut self,
        kind: OpportunityKind,
        hash: &blake3::Hash,
        runs: &mut Runs,
    ) -> anyhow::Result<Option<Verdict>> {
        if let Some((_, run)) = runs.finished.remove(hash) {
            if run.cancelled {
                return Err(coded(ExitKind::Interrupted, "interrupted"));
            }
            return run.verdict.context("the oracle failed").map(Some);
        }
        if !self.options.cache {
            return Ok(None);
        }
        let known = self.cache.get(hash).copied();
        if known.is_some() && !self.ahead.remove(hash) {
            self.stats.kind(kind).cache_hits += 1;
            self.stats.cache_hits += 1;
        }
        Ok(known)
    }

    /// Whether the verdict of `hash` is known (without using it).
    fn judged(&self, hash: &blake3::Hash, runs: &Runs) -> Option<Verdict> {
        if let Some((_, run)) = runs.finished.get(hash) {
            return Some(*run.verdict.as_ref().unwrap_or(&Verdict::Uninteresting));
        }
        if self.options.cache {
            return self.cache.get(hash).copied();
        }
        None
    }

    /// Start the run of `w` unless it is running, its verdict is known, or `jobs` runs are alive.
    fn launch(&self, w: &Candidate, runs: &mut Runs, start: &StartRun<'_>) -> anyhow::Result<()> {
        let hash = w.text.hash;
        if runs.alive() >= self.jobs()
            || runs.running.contains_key(&hash)
            || self.judged(&hash, runs).is_some()
        {
            return Ok(());
        }
        let id = runs.next_id;
        runs.next_id += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        start(id, hash, Arc::clone(&w.text.bytes), Arc::clone(&cancel))?;
        runs.running.insert(
            hash,
            Running {
                id,
                kind: w.kind,
                window: Hints::key(w.kind, w.size, &w.prints),
                prints: w.prints.clone(),
                cancel,
            },
        );
        Ok(())
    }

    /// Record the end of run `id` on candidate `hash`: stats, cache, and its verdict for the
    /// search (unless it was cancelled because nothing needed it).
    fn finished(&mut self, runs: &mut Runs, id: u64, hash: blake3::Hash, run: RunResult) {
        self.stats.oracle_calls += 1;
        if let Some(kind) = runs.cancelled.remove(&id) {
            let ks = self.stats.kind(kind);
            ks.oracle_secs += run.elapsed.as_secs_f64();
            ks.wasted += 1;
            self.stats.wasted += 1;
            return;
        }
        let Some(running) = runs.running.remove(&hash) else {
            return;
        };
        self.stats.kind(running.kind).oracle_secs += run.elapsed.as_secs_f64();
        if let (Ok(verdict), false) = (&run.verdict, run.cancelled) {
            self.hints
                .record(&running, *verdict == Verdict::Interesting);
            // Without the cache the same text can run twice: a flaky check shows up here.
            let before = self.cache.insert(hash, *verdict);
            if before
                .is_some_and(|b| (b == Verdict::Interesting) != (*verdict == Verdict::Interesting))
            {
                self.stats.disagreements += 1;
            }
        }
        runs.finished.insert(hash, (running.kind, run));
    }

    /// Kill every run in flight, wait for them, and count every run whose verdict was not used as
    /// wasted.
    fn drain(&mut self, runs: &mut Runs, results: &mpsc::Receiver<RunReport>) {
        let running: Vec<blake3::Hash> = runs.running.keys().copied().collect();
        for h in &running {
            runs.cancel(h);
        }
        while runs.alive() > 0 {
            let waited = Instant::now();
            let received = results.recv();
            self.waiting += waited.elapsed();
            match received {
                Ok((id, hash, run)) => self.finished(runs, id, hash, run),
                Err(_) => break,
            }
        }
        for (_, (kind, _)) in runs.finished.drain() {
            self.stats.kinds.entry(kind).or_default().wasted += 1;
            self.stats.wasted += 1;
        }
    }

    fn check_interrupt(&self) -> anyhow::Result<()> {
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(coded(ExitKind::Interrupted, "interrupted"));
        }
        Ok(())
    }

    /// Bytes now and at the start, the current kind and round, candidates tried, elapsed time:
    /// an updating line on a terminal (every [`STATUS_EVERY`]), a plain line every
    /// `progress_every` otherwise.
    fn progress(&mut self, kind: OpportunityKind, size: usize) {
        let every = if crate::messages::status_updates_in_place() {
            STATUS_EVERY
        } else {
            self.options.progress_every
        };
        if self.options.quiet || self.last_progress.elapsed() < every {
            return;
        }
        self.last_progress = Instant::now();
        let start = self.stats.bytes_before.max(1) as f64;
        crate::messages::status(format!(
            "mfppr: {size} of {} bytes (-{:.1}%), round {}, {}, {} candidates tried, {} oracle \
             calls, {:.0} s",
            self.stats.bytes_before,
            100.0 * (start - size as f64) / start,
            self.round,
            kind.name(),
            self.tried,
            self.stats.oracle_calls,
            self.began.elapsed().as_secs_f64()
        ));
    }
}

/// How often the updating progress line of a terminal is redrawn.
const STATUS_EVERY: Duration = Duration::from_secs(1);
