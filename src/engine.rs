//! The search (design §5): which candidates are tried, in which order, how many at once, and what
//! is accepted.
//!
//! Kinds are visited in [`OpportunityKind::ALL`] order. For a kind with n opportunities the
//! windows have size ⌈n/2⌉, ⌈n/4⌉ … 1 ([`ChunkCursor`]); each window is one candidate. An accepted
//! candidate becomes the current text, the same kind is gathered again and restarts at the chunk
//! size of the accepted window (larger windows come again in the next round). Rounds over the
//! four main kinds repeat until a round accepts nothing (fixpoint); the tail kinds then run once,
//! each from a first window of all its opportunities ([`ChunkCursor::for_kind`]).
//!
//! With `jobs` = N up to N oracle runs are in flight (design §12). Verdicts are used strictly in
//! enumeration order: a candidate wins once every earlier one has been found uninteresting. While
//! the earliest candidate runs, the engine speculates both ways: later candidates of the
//! enumeration (needed if it is not interesting) and the first candidates on its text, then on
//! the first of those, and so on (needed if it is accepted). The N most likely ones run
//! ([`speculation_shape`], from the kind's acceptance rate so far); runs nothing needs any more
//! are killed, verdicts of runs that finish early wait for their turn. What runs depends on
//! timing, but which candidate wins depends only on verdicts, so the result is the same for every
//! N (given a deterministic oracle).

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

    /// A cursor for `n` opportunities that starts at chunk size `size` (or the top size, if that
    /// is smaller).
    pub fn starting_at(n: usize, size: usize) -> ChunkCursor {
        ChunkCursor {
            n,
            size: n.div_ceil(2).min(size),
            offset: 0,
        }
    }

    /// The cursor for `kind` on `n` opportunities after an accepted window of size `size`
    /// (`usize::MAX` at the start): [`ChunkCursor::starting_at`], except that a tail kind's
    /// edits keep the test's meaning, so its first window is all of them (size `n`) before the
    /// halving.
    pub fn for_kind(kind: OpportunityKind, n: usize, size: usize) -> ChunkCursor {
        if kind.is_tail() {
            ChunkCursor {
                n,
                size: n.min(size),
                offset: 0,
            }
        } else {
            ChunkCursor::starting_at(n, size)
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
    /// Rounds over the four main kinds (the last one accepted nothing; the tail ran after it).
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
    /// The next candidate; `accepted` lists texts accepted on the way to `current` that are not in
    /// `history` yet (a speculative path).
    fn next(
        &mut self,
        history: &HashSet<blake3::Hash>,
        accepted: &[blake3::Hash],
    ) -> Option<Candidate> {
        while let Some(window) = self.cursor.next_window() {
            self.cursor.advance();
            let Some(bytes) = self.gathered.candidate(window.clone()) else {
                continue;
            };
            if bytes == self.current {
                continue;
            }
            let hash = blake3::hash(&bytes);
            if history.contains(&hash) || accepted.contains(&hash) || !self.seen.insert(hash) {
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

/// A report from an oracle run's thread: run id, candidate hash, result.
type Report = (u64, blake3::Hash, RunResult);

/// The oracle runs of one kind's search, by candidate hash: runs of the enumeration and
/// speculative runs on the texts it leads to if its earliest candidate is accepted.
#[derive(Default)]
struct Runs {
    /// In flight: run id and the flag that kills the run.
    running: HashMap<blake3::Hash, (u64, Arc<AtomicBool>)>,
    /// Ended; their verdicts are not used yet.
    finished: HashMap<blake3::Hash, RunResult>,
    /// Runs cancelled because nothing needs them any more, not reported yet.
    cancelled: usize,
    /// Id of the next run.
    next_id: u64,
}

impl Runs {
    /// Threads still running (cancelled ones included: they are being killed).
    fn alive(&self) -> usize {
        self.running.len() + self.cancelled
    }

    fn cancel(&mut self, hash: &blake3::Hash) {
        if let Some((_, flag)) = self.running.remove(hash) {
            flag.store(true, Ordering::SeqCst);
            self.cancelled += 1;
        }
    }
}

/// The texts the search reaches if the earliest candidate of the enumeration (`front`) is
/// accepted, then the first candidate on its text, and so on: level d holds the first candidates
/// of the text reached after d acceptances.
struct Speculation {
    front: blake3::Hash,
    levels: Vec<Level>,
}

/// The first candidates of one speculative text.
struct Level {
    candidates: Vec<Candidate>,
    /// The enumeration has no more.
    complete: bool,
}

/// Starts an oracle run (id, hash, bytes, kill flag) on its own thread; the result comes back on
/// the engine's channel.
type StartRun<'s> =
    dyn Fn(u64, blake3::Hash, Arc<Vec<u8>>, Arc<AtomicBool>) -> anyhow::Result<()> + 's;

/// The shape of the speculation for `jobs` runs at once when a candidate is accepted with
/// probability `p`: how many candidates of the enumeration to run (the i-th is needed when the i
/// before it are not interesting: (1−p)^i), and how many candidates of each speculative level
/// (the j-th of level d: p^d·(1−p)^j). The `jobs` most likely ones are chosen.
fn speculation_shape(jobs: usize, p: f64) -> (usize, Vec<usize>) {
    let q = 1.0 - p;
    let mut items: Vec<(f64, usize, usize)> = Vec::new();
    for i in 0..jobs {
        items.push((q.powi(i as i32), 0, i));
        for d in 1..jobs {
            items.push((p.powi(d as i32) * q.powi(i as i32), d, i));
        }
    }
    // Most likely first; ties: shallower level, then earlier candidate.
    items.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut mains = 0;
    let mut levels: Vec<usize> = Vec::new();
    for &(_, d, _) in items.iter().take(jobs) {
        if d == 0 {
            mains += 1;
        } else {
            if levels.len() < d {
                levels.resize(d, 0);
            }
            levels[d - 1] += 1;
        }
    }
    (mains, levels)
}

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
            began: Instant::now(),
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
        self.began = began;
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
                for kind in OpportunityKind::ALL.into_iter().filter(|k| !k.is_tail()) {
                    accepted_in_round |= self.run_kind(kind, &mut current, on_accept)?;
                }
                if !accepted_in_round {
                    // The tail, once, on the fixpoint: its edits keep every variant's meaning,
                    // so they enable nothing the four kinds could take.
                    for kind in OpportunityKind::ALL.into_iter().filter(|k| k.is_tail()) {
                        self.run_kind(kind, &mut current, on_accept)?;
                    }
                    return Ok(());
                }
            }
        })();
        crate::messages::clear_status();
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

    /// Search `kind` from `current` until the chunk schedule is exhausted; every accepted
    /// candidate becomes `current` (and goes to `on_accept`) and the kind restarts on it. Returns
    /// whether anything was accepted.
    fn run_kind(
        &mut self,
        kind: OpportunityKind,
        current: &mut Vec<u8>,
        on_accept: &mut OnAccept<'_>,
    ) -> anyhow::Result<bool> {
        let (oracle, interrupt) = (self.oracle, self.interrupt);
        let (sender, results) = mpsc::channel::<Report>();
        std::thread::scope(|scope| {
            let start: &StartRun<'_> = &|id, hash, bytes, cancel| {
                let sender = sender.clone();
                std::thread::Builder::new()
                    .name(format!("mfppr-oracle-{id}"))
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
                        let _ = sender.send((id, hash, run));
                    })
                    .context("cannot start a thread for an oracle run")?;
                Ok(())
            };
            let mut runs = Runs::default();
            let result = (|| -> anyhow::Result<bool> {
                let mut accepted = false;
                let mut size = usize::MAX;
                while let Some((next, what, window)) =
                    self.search(kind, current, size, &mut runs, start, &results)?
                {
                    size = window;
                    self.accept(kind, current, next, &what)?;
                    on_accept(current)?;
                    accepted = true;
                }
                Ok(accepted)
            })();
            // Whatever happened, nothing in flight is needed any more: kill it and wait for it.
            self.drain(kind, &mut runs, &results);
            result
        })
    }

    /// Make `next` the current text and count it.
    fn accept(
        &mut self,
        kind: OpportunityKind,
        current: &mut Vec<u8>,
        next: Vec<u8>,
        what: &str,
    ) -> anyhow::Result<()> {
        let ks = self.stats.kind(kind);
        ks.accepted += 1;
        ks.bytes_removed += current.len() as i64 - next.len() as i64;
        self.stats.accepted += 1;
        self.stats.bytes_after = next.len() as u64;
        self.history.insert(blake3::hash(&next));
        if !self.options.quiet {
            crate::messages::progress(format!(
                "mfppr: round {}, {}: {} -> {} bytes ({what})",
                self.round,
                kind.name(),
                current.len(),
                next.len()
            ));
        }
        *current = next;
        Ok(())
    }

    /// Search `kind` on `current` until one candidate is accepted (returned with a description)
    /// or the chunk schedule is exhausted (`None`). Candidates are resolved strictly in
    /// enumeration order; while the earliest one runs, later ones and speculative ones run too
    /// ([`Engine::schedule`]).
    fn search(
        &mut self,
        kind: OpportunityKind,
        current: &[u8],
        size: usize,
        runs: &mut Runs,
        start: &StartRun<'_>,
        results: &mpsc::Receiver<Report>,
    ) -> anyhow::Result<Option<(Vec<u8>, String, usize)>> {
        self.check_interrupt()?;
        let reduction = self.reduction;
        let gathered = reduction
            .gather(current, kind)
            .with_context(|| format!("cannot gather {} opportunities", kind.name()))?;
        if gathered.is_empty() {
            return Ok(None);
        }
        let mut enumeration = Enumeration {
            gathered: &*gathered,
            cursor: ChunkCursor::for_kind(kind, gathered.len(), size),
            current,
            seen: HashSet::new(),
        };
        let mut pending: VecDeque<Candidate> = VecDeque::new();
        let mut exhausted = false;
        let mut speculation: Option<Speculation> = None;
        loop {
            if pending.is_empty() && !exhausted {
                match enumeration.next(&self.history, &[]) {
                    Some(c) => {
                        self.stats.built += 1;
                        pending.push_back(c);
                    }
                    None => exhausted = true,
                }
            }
            let Some(front) = pending.front() else {
                return Ok(None);
            };
            if let Some(verdict) = self.verdict_of(kind, &front.hash, runs)? {
                self.tried += 1;
                self.stats.candidates += 1;
                let ks = self.stats.kind(kind);
                ks.candidates += 1;
                let Some(front) = pending.pop_front() else {
                    continue;
                };
                if self.options.verbose >= 2 && !self.options.quiet {
                    crate::messages::progress(format!(
                        "mfppr: round {}, {}: tried {} -> {} bytes ({}): {verdict:?}",
                        self.round,
                        kind.name(),
                        current.len(),
                        front.bytes.len(),
                        describe_window(&*gathered, front.window.clone()),
                    ));
                }
                match verdict {
                    Verdict::Interesting => {
                        let size = front.window.len();
                        let what = describe_window(&*gathered, front.window);
                        let bytes = Arc::try_unwrap(front.bytes).unwrap_or_else(|b| b.to_vec());
                        return Ok(Some((bytes, what, size)));
                    }
                    Verdict::Timeout => ks.timeouts += 1,
                    Verdict::Uninteresting => {}
                }
                continue;
            }
            self.schedule(
                kind,
                &mut enumeration,
                &mut pending,
                &mut exhausted,
                &mut speculation,
                runs,
                start,
            )?;
            let waited = Instant::now();
            let received = results.recv();
            self.waiting += waited.elapsed();
            let (id, hash, run) = received.context("lost an oracle run")?;
            self.finished(kind, runs, id, hash, run);
            self.check_interrupt()?;
            self.progress(kind, current.len());
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
        if let Some(run) = runs.finished.remove(hash) {
            if run.cancelled {
                return Err(coded(ExitKind::Interrupted, "interrupted"));
            }
            return run.verdict.context("the oracle failed").map(Some);
        }
        if !self.options.cache {
            return Ok(None);
        }
        let known = self.cache.get(hash).copied();
        if known.is_some() {
            self.stats.kind(kind).cache_hits += 1;
            self.stats.cache_hits += 1;
        }
        Ok(known)
    }

    /// Whether the verdict of `hash` is known or on its way.
    fn judged(&self, hash: &blake3::Hash, runs: &Runs) -> Option<Verdict> {
        if let Some(run) = runs.finished.get(hash) {
            return Some(*run.verdict.as_ref().unwrap_or(&Verdict::Uninteresting));
        }
        if self.options.cache {
            return self.cache.get(hash).copied();
        }
        None
    }

    /// Decide which candidates run now, from the verdict-independent [`speculation_shape`]: the
    /// earliest candidates of the enumeration, and the first candidates on the texts reached by
    /// accepting the earliest one (level 1), then the first of those (level 2), and so on. Runs
    /// nothing needs any more are cancelled. Only what runs depends on timing; which candidate
    /// wins never does, so the result is the same for every `jobs`.
    #[allow(clippy::too_many_arguments)]
    fn schedule(
        &mut self,
        kind: OpportunityKind,
        enumeration: &mut Enumeration<'_>,
        pending: &mut VecDeque<Candidate>,
        exhausted: &mut bool,
        speculation: &mut Option<Speculation>,
        runs: &mut Runs,
        start: &StartRun<'_>,
    ) -> anyhow::Result<()> {
        let jobs = self.options.jobs;
        let ks = &self.stats.kinds[&kind];
        let p = (ks.accepted as f64 + 1.0) / (ks.candidates as f64 + 2.0);
        let (mains, level_sizes) = speculation_shape(jobs, p);
        while pending.len() < mains && !*exhausted {
            match enumeration.next(&self.history, &[]) {
                Some(c) => {
                    self.stats.built += 1;
                    pending.push_back(c);
                }
                None => *exhausted = true,
            }
        }
        // Wanted runs, most likely first. Nothing after a candidate known to be interesting can
        // win.
        let mut wanted: Vec<(blake3::Hash, Arc<Vec<u8>>)> = Vec::new();
        for c in pending.iter().take(mains) {
            wanted.push((c.hash, Arc::clone(&c.bytes)));
            if self.judged(&c.hash, runs) == Some(Verdict::Interesting) {
                break;
            }
        }
        if let Some(front) = pending.front() {
            if !level_sizes.is_empty() && self.judged(&front.hash, runs).is_none() {
                self.speculate(kind, front, &level_sizes, speculation)?;
                if let Some(s) = speculation.as_ref() {
                    for (level, &size) in s.levels.iter().zip(&level_sizes) {
                        for c in level.candidates.iter().take(size) {
                            wanted.push((c.hash, Arc::clone(&c.bytes)));
                        }
                    }
                }
            }
        }
        let keep: HashSet<blake3::Hash> = wanted.iter().map(|(h, _)| *h).collect();
        let stale: Vec<blake3::Hash> = runs
            .running
            .keys()
            .filter(|h| !keep.contains(h))
            .copied()
            .collect();
        for h in &stale {
            runs.cancel(h);
        }
        for (hash, bytes) in wanted {
            if runs.alive() >= jobs {
                break;
            }
            if runs.running.contains_key(&hash) || self.judged(&hash, runs).is_some() {
                continue;
            }
            let id = runs.next_id;
            runs.next_id += 1;
            let cancel = Arc::new(AtomicBool::new(false));
            start(id, hash, bytes, Arc::clone(&cancel))?;
            runs.running.insert(hash, (id, cancel));
        }
        Ok(())
    }

    /// Build the speculative levels for `front` (kept while the front stays the same), with at
    /// least `sizes[d]` candidates on level d where the enumeration has them.
    fn speculate(
        &mut self,
        kind: OpportunityKind,
        front: &Candidate,
        sizes: &[usize],
        speculation: &mut Option<Speculation>,
    ) -> anyhow::Result<()> {
        if speculation.as_ref().is_none_or(|s| s.front != front.hash) {
            *speculation = Some(Speculation {
                front: front.hash,
                levels: Vec::new(),
            });
        }
        let Some(s) = speculation.as_mut() else {
            return Ok(());
        };
        let mut text = Arc::clone(&front.bytes);
        let mut size_at = front.window.len();
        let mut accepted = vec![front.hash];
        for (d, &size) in sizes.iter().enumerate() {
            let built = s.levels.get(d).map(|l| (l.candidates.len(), l.complete));
            if built.is_none_or(|(n, complete)| n < size && !complete) {
                let gathered = self.reduction.gather(&text, kind)?;
                let mut enumeration = Enumeration {
                    gathered: &*gathered,
                    cursor: ChunkCursor::for_kind(kind, gathered.len(), size_at),
                    current: &text,
                    seen: HashSet::new(),
                };
                let mut level = Level {
                    candidates: Vec::new(),
                    complete: false,
                };
                while level.candidates.len() < size {
                    let Some(c) = enumeration.next(&self.history, &accepted) else {
                        level.complete = true;
                        break;
                    };
                    self.stats.built += 1;
                    level.candidates.push(c);
                }
                if d < s.levels.len() {
                    s.levels[d] = level;
                } else {
                    s.levels.push(level);
                }
            }
            let Some(first) = s.levels[d].candidates.first() else {
                break;
            };
            text = Arc::clone(&first.bytes);
            size_at = first.window.len();
            accepted.push(first.hash);
        }
        Ok(())
    }

    /// Record the end of run `id` on candidate `hash`: stats, cache, and its verdict for the
    /// search (unless it was cancelled because nothing needed it).
    fn finished(
        &mut self,
        kind: OpportunityKind,
        runs: &mut Runs,
        id: u64,
        hash: blake3::Hash,
        run: RunResult,
    ) {
        self.stats.oracle_calls += 1;
        self.stats.kind(kind).oracle_secs += run.elapsed.as_secs_f64();
        if runs.running.get(&hash).is_none_or(|(rid, _)| *rid != id) {
            runs.cancelled = runs.cancelled.saturating_sub(1);
            self.stats.kind(kind).wasted += 1;
            self.stats.wasted += 1;
            return;
        }
        runs.running.remove(&hash);
        if let (Ok(verdict), false) = (&run.verdict, run.cancelled) {
            // Without the cache the same text can run twice: a flaky check shows up here.
            let before = self.cache.insert(hash, *verdict);
            if before
                .is_some_and(|b| (b == Verdict::Interesting) != (*verdict == Verdict::Interesting))
            {
                self.stats.disagreements += 1;
            }
        }
        runs.finished.insert(hash, run);
    }

    /// Kill every run in flight, wait for them, and count every run whose verdict was not used as
    /// wasted.
    fn drain(&mut self, kind: OpportunityKind, runs: &mut Runs, results: &mpsc::Receiver<Report>) {
        let running: Vec<blake3::Hash> = runs.running.keys().copied().collect();
        for h in &running {
            runs.cancel(h);
        }
        while runs.alive() > 0 {
            let waited = Instant::now();
            let received = results.recv();
            self.waiting += waited.elapsed();
            match received {
                Ok((id, hash, run)) => self.finished(kind, runs, id, hash, run),
                Err(_) => break,
            }
        }
        let unused = runs.finished.len() as u64;
        self.stats.kind(kind).wasted += unused;
        self.stats.wasted += unused;
        runs.finished.clear();
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
    fn tail_kinds_try_every_opportunity_first() {
        let sizes = |kind, n, size| {
            let mut c = ChunkCursor::for_kind(kind, n, size);
            let mut out = Vec::new();
            while let Some(w) = c.next_window() {
                out.push(w);
                c.advance();
            }
            out
        };
        assert_eq!(
            sizes(OpportunityKind::TailText, 3, usize::MAX),
            vec![0..3, 0..2, 2..3, 0..1, 1..2, 2..3]
        );
        assert_eq!(
            sizes(OpportunityKind::TailText, 3, 1),
            vec![0..1, 1..2, 2..3]
        );
        assert_eq!(sizes(OpportunityKind::Fuzz, 3, usize::MAX), windows(3));
        assert!(sizes(OpportunityKind::Tail, 0, usize::MAX).is_empty());
    }

    #[test]
    fn cursor_with_no_opportunities_is_exhausted() {
        let mut c = ChunkCursor::new(0);
        assert_eq!(c.next_window(), None);
        c.advance();
        assert_eq!(c.next_window(), None);
    }
}
