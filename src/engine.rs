//! The search (design §5): which candidates are tried, in which order, how many at once, and what
//! is accepted.
//!
//! Kinds are visited in [`OpportunityKind::ALL`] order. For a kind with n opportunities the windows have size
//! ⌈n/2⌉, ⌈n/4⌉ … 1 ([`ChunkCursor`]); each window is one candidate. An accepted candidate becomes
//! the current text, the same kind is gathered again and restarts at the top chunk size. Rounds over
//! all kinds repeat until a round accepts nothing (fixpoint).
//!
//! With `jobs` = N the search keeps a sliding window over the enumeration: up to N oracle runs are
//! in flight, always the earliest candidates not yet judged, and a new run starts as soon as one
//! ends (one candidate is built ahead while the runs go on). Verdicts are used strictly in
//! enumeration order: a candidate wins once every earlier one has been found uninteresting, and a
//! candidate known to be interesting stops the start of later ones and kills those running. The
//! enumeration between two accepted candidates does not depend on verdicts, so the result is the
//! same for every N (given a deterministic oracle).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::error::{coded, ExitKind};
use crate::opportunity::{Gathered, Opportunities, OpportunityKind};
use crate::oracle::{Oracle, Verdict};

/// Halving-first chunk schedule over `n` opportunities: windows `[k·size, min((k+1)·size, n))` for
/// size = ⌈n/2⌉, then ⌈size/2⌉ … down to 1. A pure state machine; the engine drives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkCursor {
    n: usize,
    size: usize,
    offset: usize,
}

impl ChunkCursor {
    /// A cursor at the top chunk size for `n` opportunities.
    pub fn new(n: usize) -> ChunkCursor {
        ChunkCursor {
            n,
            size: n.div_ceil(2),
            offset: 0,
        }
    }

    /// The current window, or `None` when every size has been tried.
    pub fn next_window(&self) -> Option<Range<usize>> {
        if self.size == 0 || self.offset >= self.n {
            return None;
        }
        Some(self.offset..(self.offset + self.size).min(self.n))
    }

    /// Move past the current window (it was rejected or skipped): the next window of this size, or
    /// the first window of the next smaller size.
    pub fn advance(&mut self) {
        if self.size == 0 {
            return;
        }
        self.offset += self.size;
        if self.offset >= self.n {
            self.size = if self.size <= 1 {
                0
            } else {
                self.size.div_ceil(2)
            };
            self.offset = 0;
        }
    }
}

/// The window holds at most this many candidates per job: runs in flight, plus finished runs and
/// cached verdicts waiting for an earlier run. Bounds memory and speculation behind a slow run.
const WINDOW_PER_JOB: usize = 4;

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
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cache: true,
            quiet: false,
            progress_every: Duration::from_secs(10),
            verbose: 0,
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
    /// Rounds over all kinds (the last one accepted nothing).
    pub rounds: u64,
    /// Candidates judged twice (with `--no-cache`) that got different verdicts: a flaky check.
    pub disagreements: u64,
    /// Runs of the final result (and earlier results, if it was not interesting every time)
    /// after the search, to catch a flaky check (`--recheck`).
    pub rechecks: u64,
    /// Re-checks that were not interesting.
    pub recheck_failures: u64,
}

impl Stats {
    fn kind(&mut self, kind: OpportunityKind) -> &mut KindStats {
        self.kinds.entry(kind).or_default()
    }
}

/// Called with the new current text after every accepted candidate (the reduce command writes the
/// output there). An `Err` stops the search.
pub type OnAccept<'a> = dyn FnMut(&[u8]) -> anyhow::Result<()> + 'a;

/// One candidate of the enumeration.
struct Candidate {
    window: Range<usize>,
    bytes: Arc<Vec<u8>>,
    hash: blake3::Hash,
}

/// The candidates of one kind on one text, in order: windows from the cursor, skipping `None`,
/// texts identical to the current one, texts offered before, and texts accepted before (which
/// guarantees termination even if a pass could cycle).
struct Enumeration<'g> {
    gathered: &'g dyn Gathered,
    cursor: ChunkCursor,
    current: &'g [u8],
    seen: HashSet<blake3::Hash>,
}

impl Enumeration<'_> {
    fn next(&mut self, history: &HashSet<blake3::Hash>) -> Option<Candidate> {
        while let Some(window) = self.cursor.next_window() {
            self.cursor.advance();
            let Some(bytes) = self.gathered.candidate(window.clone()) else {
                continue;
            };
            if bytes == self.current {
                continue;
            }
            let hash = blake3::hash(&bytes);
            if history.contains(&hash) || !self.seen.insert(hash) {
                continue;
            }
            return Some(Candidate {
                window,
                bytes: Arc::new(bytes),
                hash,
            });
        }
        None
    }
}

/// How a started oracle run ended, as reported by its thread.
struct RunResult {
    verdict: anyhow::Result<Verdict>,
    elapsed: Duration,
    /// The run was cancelled (or interrupted) before or while it ran: its verdict means nothing.
    cancelled: bool,
}

/// Where a candidate of the window stands.
enum SlotState {
    /// Its verdict came from the cache; no run.
    Cached(Verdict),
    /// Its oracle run is in flight; setting the flag kills it.
    Running(Arc<AtomicBool>),
    /// Its oracle run has ended.
    Finished(RunResult),
}

/// A candidate of the window with its state.
struct Slot {
    candidate: Candidate,
    state: SlotState,
}

/// The sliding window of one kind's search: the candidates enumerated but not yet resolved, in
/// enumeration order. Sequence numbers count candidates of the enumeration from 0.
#[derive(Default)]
struct Window {
    slots: VecDeque<Slot>,
    /// Sequence number of `slots[0]`.
    first_seq: u64,
    /// Sequence number of the next candidate pushed.
    next_seq: u64,
    /// Oracle runs in flight.
    running: usize,
    /// The earliest candidate known to be interesting: nothing after it can win, so nothing after
    /// it is started and running ones after it are cancelled.
    limit: Option<u64>,
    /// The next candidate, built ahead of time while the oracle runs (waiting for a free job).
    prefetched: Option<Candidate>,
    /// The enumeration has no more candidates.
    exhausted: bool,
}

impl Window {
    fn slot_mut(&mut self, seq: u64) -> Option<&mut Slot> {
        let i = usize::try_from(seq.checked_sub(self.first_seq)?).ok()?;
        self.slots.get_mut(i)
    }

    /// Cancel every run in flight after sequence number `after` (`None`: all of them).
    fn cancel_after(&self, after: Option<u64>) {
        for (seq, slot) in (self.first_seq..).zip(&self.slots) {
            if let (SlotState::Running(cancel), true) = (&slot.state, after.is_none_or(|a| seq > a))
            {
                cancel.store(true, Ordering::SeqCst);
            }
        }
    }
}

/// Starts the oracle run of candidate `seq` on its own thread; the result comes back on the
/// engine's channel.
type StartRun<'s> = dyn Fn(u64, Arc<Vec<u8>>, Arc<AtomicBool>) -> anyhow::Result<()> + 's;

/// The search engine. Owns the verdict cache and the stats.
pub struct Engine<'a> {
    reduction: &'a dyn Opportunities,
    oracle: &'a dyn Oracle,
    options: EngineOptions,
    interrupt: &'a AtomicBool,
    cache: HashMap<blake3::Hash, Verdict>,
    history: HashSet<blake3::Hash>,
    stats: Stats,
    round: u64,
    tried: u64,
    /// Time the engine thread spent blocked waiting for oracle runs.
    waiting: Duration,
    last_progress: Instant,
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
    /// An engine searching with `reduction` and judging with `oracle`. The search stops with
    /// [`ExitKind::Interrupted`] once `interrupt` is set.
    pub fn new(
        reduction: &'a dyn Opportunities,
        oracle: &'a dyn Oracle,
        options: EngineOptions,
        interrupt: &'a AtomicBool,
    ) -> anyhow::Result<Engine<'a>> {
        let jobs = options.jobs.max(1);
        Ok(Engine {
            reduction,
            oracle,
            options: EngineOptions { jobs, ..options },
            interrupt,
            cache: HashMap::new(),
            history: HashSet::new(),
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
        })
    }

    /// Record a verdict known from elsewhere (e.g. the original, judged before the search).
    pub fn remember(&mut self, text: &[u8], verdict: Verdict) {
        self.cache.insert(blake3::hash(text), verdict);
    }

    /// The counters so far (also valid after an error or an interruption).
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Reduce `start` (which the caller has found interesting) to a fixpoint and return the result.
    /// `on_accept` is called with every newly accepted text.
    pub fn run(&mut self, start: Vec<u8>, on_accept: &mut OnAccept<'_>) -> anyhow::Result<Vec<u8>> {
        let began = Instant::now();
        self.waiting = Duration::ZERO;
        self.stats.bytes_before = start.len() as u64;
        self.stats.bytes_after = start.len() as u64;
        self.history.insert(blake3::hash(&start));
        self.last_progress = Instant::now();
        let mut current = start;
        let result = (|| -> anyhow::Result<()> {
            loop {
                self.round += 1;
                self.stats.rounds = self.round;
                let mut accepted_in_round = false;
                for kind in OpportunityKind::ALL {
                    while let Some((next, what)) = self.run_kind(kind, &current)? {
                        let ks = self.stats.kind(kind);
                        ks.accepted += 1;
                        ks.bytes_removed += current.len() as i64 - next.len() as i64;
                        self.stats.accepted += 1;
                        self.stats.bytes_after = next.len() as u64;
                        self.history.insert(blake3::hash(&next));
                        if !self.options.quiet {
                            eprintln!(
                                "mfppr: round {}, {}: {} -> {} bytes ({what})",
                                self.round,
                                kind.name(),
                                current.len(),
                                next.len()
                            );
                        }
                        current = next;
                        on_accept(&current)?;
                        accepted_in_round = true;
                    }
                }
                if !accepted_in_round {
                    return Ok(());
                }
            }
        })();
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
        result.map(|()| current)
    }

    /// Search `kind` on `current` until one candidate is accepted (returned with a description)
    /// or the chunk schedule is exhausted (`None`).
    fn run_kind(
        &mut self,
        kind: OpportunityKind,
        current: &[u8],
    ) -> anyhow::Result<Option<(Vec<u8>, String)>> {
        self.check_interrupt()?;
        let reduction = self.reduction;
        let gathered = reduction
            .gather(current, kind)
            .with_context(|| format!("cannot gather {} opportunities", kind.name()))?;
        let n = gathered.len();
        if n == 0 {
            return Ok(None);
        }
        let mut enumeration = Enumeration {
            gathered: &*gathered,
            cursor: ChunkCursor::new(n),
            current,
            seen: HashSet::new(),
        };
        let (oracle, interrupt) = (self.oracle, self.interrupt);
        let (sender, results) = mpsc::channel::<(u64, RunResult)>();
        let winner = std::thread::scope(|scope| {
            let start: &StartRun<'_> = &|seq, bytes, cancel| {
                let sender = sender.clone();
                std::thread::Builder::new()
                    .name(format!("mfppr-oracle-{seq}"))
                    .spawn_scoped(scope, move || {
                        let started = Instant::now();
                        let verdict = if cancel.load(Ordering::SeqCst) {
                            Ok(Verdict::Uninteresting)
                        } else {
                            panic::catch_unwind(AssertUnwindSafe(|| oracle.judge(&bytes, &cancel)))
                                .unwrap_or_else(|_| Err(anyhow::anyhow!("the oracle panicked")))
                        };
                        let run = RunResult {
                            verdict,
                            elapsed: started.elapsed(),
                            cancelled: cancel.load(Ordering::SeqCst)
                                || interrupt.load(Ordering::SeqCst),
                        };
                        // The engine only stops listening once every run has reported.
                        let _ = sender.send((seq, run));
                    })
                    .context("cannot start a thread for an oracle run")?;
                Ok(())
            };
            let mut window = Window::default();
            let result = self.search(
                kind,
                current.len(),
                &mut enumeration,
                &mut window,
                start,
                &results,
            );
            // Whatever happened, nothing in flight is needed any more: kill it and wait for it.
            window.cancel_after(None);
            self.drain(kind, &mut window, &results);
            result
        })?;
        Ok(winner.map(|c| {
            let what = describe_window(&*gathered, c.window);
            let bytes = Arc::try_unwrap(c.bytes).unwrap_or_else(|b| b.to_vec());
            (bytes, what)
        }))
    }

    /// The sliding window: keep up to `jobs` runs in flight, in enumeration order, and resolve
    /// candidates strictly in that order; the first interesting one wins.
    fn search(
        &mut self,
        kind: OpportunityKind,
        size: usize,
        enumeration: &mut Enumeration<'_>,
        window: &mut Window,
        start: &StartRun<'_>,
        results: &mpsc::Receiver<(u64, RunResult)>,
    ) -> anyhow::Result<Option<Candidate>> {
        loop {
            self.fill(enumeration, window, start)?;
            let mut resolved = false;
            while let Some(slot) = window.slots.front() {
                if matches!(slot.state, SlotState::Running(_)) {
                    break;
                }
                let Some(slot) = window.slots.pop_front() else {
                    break;
                };
                window.first_seq += 1;
                let cached = matches!(slot.state, SlotState::Cached(_));
                let verdict = match slot.state {
                    SlotState::Cached(v) => {
                        self.stats.kind(kind).cache_hits += 1;
                        self.stats.cache_hits += 1;
                        v
                    }
                    // Only runs after a known winner are cancelled, and those never reach the
                    // front: a cancelled run here was stopped by an interrupt.
                    SlotState::Finished(RunResult {
                        cancelled: true, ..
                    }) => {
                        return Err(coded(ExitKind::Interrupted, "interrupted"));
                    }
                    SlotState::Finished(run) => run.verdict.context("the oracle failed")?,
                    SlotState::Running(_) => unreachable!("checked above"),
                };
                resolved = true;
                if self.options.verbose >= 2 && !self.options.quiet {
                    eprintln!(
                        "mfppr: round {}, {}: tried {size} -> {} bytes ({}): {verdict:?}{}",
                        self.round,
                        kind.name(),
                        slot.candidate.bytes.len(),
                        describe_window(enumeration.gathered, slot.candidate.window.clone()),
                        if cached { " (cached)" } else { "" }
                    );
                }
                self.tried += 1;
                self.stats.candidates += 1;
                let ks = self.stats.kind(kind);
                ks.candidates += 1;
                match verdict {
                    Verdict::Interesting => return Ok(Some(slot.candidate)),
                    Verdict::Timeout => ks.timeouts += 1,
                    Verdict::Uninteresting => {}
                }
            }
            if window.slots.is_empty() && window.exhausted {
                return Ok(None);
            }
            if resolved {
                // The window moved: fill it again before waiting.
                continue;
            }
            let waited = Instant::now();
            let received = results.recv();
            self.waiting += waited.elapsed();
            let (seq, run) = received.context("lost an oracle run")?;
            self.finished(kind, window, seq, run);
            self.check_interrupt()?;
            self.progress(kind, size);
        }
    }

    /// Start runs (and take cached verdicts) in enumeration order until `jobs` runs are in flight,
    /// the window is full, or a candidate is known to be interesting. Builds one candidate ahead,
    /// so that the next run can start as soon as a job is free.
    fn fill(
        &mut self,
        enumeration: &mut Enumeration<'_>,
        window: &mut Window,
        start: &StartRun<'_>,
    ) -> anyhow::Result<()> {
        let jobs = self.options.jobs;
        while window.limit.is_none() && window.slots.len() < jobs * WINDOW_PER_JOB {
            let Some(candidate) = &window.prefetched else {
                if window.exhausted {
                    break;
                }
                window.prefetched = enumeration.next(&self.history);
                match window.prefetched {
                    Some(_) => self.stats.built += 1,
                    None => window.exhausted = true,
                }
                continue;
            };
            let seq = window.next_seq;
            let known = if self.options.cache {
                self.cache.get(&candidate.hash).copied()
            } else {
                None
            };
            let state = match known {
                Some(verdict) => {
                    if verdict == Verdict::Interesting {
                        window.limit = Some(seq);
                    }
                    SlotState::Cached(verdict)
                }
                None if window.running < jobs => {
                    let cancel = Arc::new(AtomicBool::new(false));
                    start(seq, Arc::clone(&candidate.bytes), Arc::clone(&cancel))?;
                    window.running += 1;
                    SlotState::Running(cancel)
                }
                None => break,
            };
            let Some(candidate) = window.prefetched.take() else {
                break;
            };
            window.slots.push_back(Slot { candidate, state });
            window.next_seq += 1;
        }
        Ok(())
    }

    /// Record the end of run `seq`: stats, cache, and — when it is interesting — the new limit.
    fn finished(&mut self, kind: OpportunityKind, window: &mut Window, seq: u64, run: RunResult) {
        self.stats.oracle_calls += 1;
        self.stats.kind(kind).oracle_secs += run.elapsed.as_secs_f64();
        window.running = window.running.saturating_sub(1);
        if let (Ok(verdict), false) = (&run.verdict, run.cancelled) {
            let hash = window.slot_mut(seq).map(|slot| slot.candidate.hash);
            if let Some(hash) = hash {
                // Without the cache the same text can run twice: a flaky check shows up here.
                let before = self.cache.insert(hash, *verdict);
                if before.is_some_and(|b| {
                    (b == Verdict::Interesting) != (*verdict == Verdict::Interesting)
                }) {
                    self.stats.disagreements += 1;
                }
            }
            if *verdict == Verdict::Interesting && window.limit.is_none_or(|l| seq < l) {
                window.limit = Some(seq);
                window.cancel_after(Some(seq));
            }
        }
        if let Some(slot) = window.slot_mut(seq) {
            slot.state = SlotState::Finished(run);
        }
    }

    /// Wait for every run in flight (they have been cancelled) and count every run whose verdict
    /// was not used as wasted.
    fn drain(
        &mut self,
        kind: OpportunityKind,
        window: &mut Window,
        results: &mpsc::Receiver<(u64, RunResult)>,
    ) {
        while window.running > 0 {
            let waited = Instant::now();
            let received = results.recv();
            self.waiting += waited.elapsed();
            match received {
                Ok((seq, run)) => self.finished(kind, window, seq, run),
                Err(_) => break,
            }
        }
        let wasted = window
            .slots
            .iter()
            .filter(|s| !matches!(s.state, SlotState::Cached(_)))
            .count() as u64;
        self.stats.kind(kind).wasted += wasted;
        self.stats.wasted += wasted;
        window.slots.clear();
    }

    fn check_interrupt(&self) -> anyhow::Result<()> {
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(coded(ExitKind::Interrupted, "interrupted"));
        }
        Ok(())
    }

    fn progress(&mut self, kind: OpportunityKind, size: usize) {
        if self.options.quiet || self.last_progress.elapsed() < self.options.progress_every {
            return;
        }
        self.last_progress = Instant::now();
        eprintln!(
            "mfppr: {size} bytes, round {}, trying {}, {} candidates tried, {} oracle calls",
            self.round,
            kind.name(),
            self.tried,
            self.stats.oracle_calls
        );
    }
}

/// One-line description of the accepted window.
fn describe_window(gathered: &dyn Gathered, window: Range<usize>) -> String {
    match window.len() {
        1 => gathered.describe(window.start),
        k => format!("{k} opportunities: {}, …", gathered.describe(window.start)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(n: usize) -> Vec<Range<usize>> {
        let mut c = ChunkCursor::new(n);
        let mut out = Vec::new();
        while let Some(w) = c.next_window() {
            out.push(w);
            c.advance();
        }
        out
    }

    #[test]
    fn cursor_halves_first() {
        assert!(windows(0).is_empty());
        assert_eq!(windows(1), vec![0..1]);
        assert_eq!(windows(2), vec![0..1, 1..2]);
        assert_eq!(windows(3), vec![0..2, 2..3, 0..1, 1..2, 2..3]);
        assert_eq!(
            windows(5),
            vec![0..3, 3..5, 0..2, 2..4, 4..5, 0..1, 1..2, 2..3, 3..4, 4..5]
        );
    }

    #[test]
    fn cursor_sizes_are_ceilings_of_n_over_powers_of_two() {
        for n in 1..200usize {
            let mut c = ChunkCursor::new(n);
            let mut sizes = vec![];
            // The first window of each size starts at 0 and is that size long.
            while let Some(w) = c.next_window() {
                if w.start == 0 {
                    sizes.push(w.len());
                }
                c.advance();
            }
            let mut expected = vec![];
            let mut d = 2;
            loop {
                let s = n.div_ceil(d);
                expected.push(s);
                if s == 1 {
                    break;
                }
                d *= 2;
            }
            assert_eq!(sizes, expected, "n = {n}");
            // Every window of every size covers 0..n exactly once.
            for w in windows(n) {
                assert!(w.start < w.end && w.end <= n);
            }
        }
    }

    #[test]
    fn cursor_with_no_opportunities_is_exhausted() {
        let mut c = ChunkCursor::new(0);
        assert_eq!(c.next_window(), None);
        c.advance();
        assert_eq!(c.next_window(), None);
    }
}
