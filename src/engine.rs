//! The search (design §5): which candidates are tried, in which order, how many at once, and what
//! is accepted.
//!
//! Kinds are visited in [`Kind::ALL`] order. For a kind with n opportunities the windows have size
//! ⌈n/2⌉, ⌈n/4⌉ … 1 ([`ChunkCursor`]); each window is one candidate. An accepted candidate becomes
//! the current text, the same kind is gathered again and restarts at the top chunk size. Rounds over
//! all kinds repeat until a round accepts nothing (fixpoint).
//!
//! With `jobs` = N the next N candidates in enumeration order are judged at once. The enumeration
//! between two accepted candidates does not depend on verdicts, so it can run ahead; the first
//! interesting candidate *in enumeration order* wins and later runs are cancelled and discarded.
//! The result is therefore the same for every N (given a deterministic oracle).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::error::{coded, ExitKind};
use crate::oracle::{Oracle, Verdict};
use crate::reduction::{Gathered, Kind, Reduction};

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

    /// The current window was accepted and the kind now has `n` opportunities: restart at the top.
    pub fn restart_after_success(&mut self, n: usize) {
        *self = ChunkCursor::new(n);
    }

    /// The current chunk size (0 when exhausted).
    pub fn size(&self) -> usize {
        self.size
    }
}

/// Search settings.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// How many candidates are judged at once (≥ 1).
    pub jobs: usize,
    /// Remember verdicts by candidate hash.
    pub cache: bool,
    /// No progress lines on stderr.
    pub quiet: bool,
    /// Interval between two periodic progress lines.
    pub progress_every: Duration,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cache: true,
            quiet: false,
            progress_every: Duration::from_secs(10),
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
    /// Speculative runs started after the winner of their batch, whose verdicts were discarded.
    pub wasted: u64,
}

/// Counters for a whole search (`--stats` JSON).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Per kind, keyed by [`Kind::name`].
    pub kinds: BTreeMap<Kind, KindStats>,
    /// Oracle runs actually started (cache hits excluded, speculative runs included).
    pub oracle_calls: u64,
    /// Verdicts taken from the cache.
    pub cache_hits: u64,
    /// Accepted candidates.
    pub accepted: u64,
    /// Wall time of the search, in seconds.
    pub wall_secs: f64,
    /// Size of the starting text.
    pub bytes_before: u64,
    /// Size of the result.
    pub bytes_after: u64,
    /// Rounds over all kinds (the last one accepted nothing).
    pub rounds: u64,
}

impl Stats {
    fn kind(&mut self, kind: Kind) -> &mut KindStats {
        self.kinds.entry(kind).or_default()
    }
}

/// Called with the new current text after every accepted candidate (the reduce command writes the
/// output there). An `Err` stops the search.
pub type OnAccept<'a> = dyn FnMut(&[u8]) -> anyhow::Result<()> + 'a;

/// One candidate of the enumeration.
struct Candidate {
    window: Range<usize>,
    bytes: Vec<u8>,
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
                bytes,
                hash,
            });
        }
        None
    }
}

/// The result of one oracle run inside a batch.
struct RunResult {
    verdict: anyhow::Result<Verdict>,
    elapsed: Duration,
    cancelled: bool,
}

/// The search engine. Owns the verdict cache, the thread pool and the stats.
pub struct Engine<'a> {
    reduction: &'a dyn Reduction,
    oracle: &'a dyn Oracle,
    options: EngineOptions,
    interrupt: &'a AtomicBool,
    pool: rayon::ThreadPool,
    cache: HashMap<blake3::Hash, Verdict>,
    history: HashSet<blake3::Hash>,
    stats: Stats,
    round: u64,
    tried: u64,
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
        reduction: &'a dyn Reduction,
        oracle: &'a dyn Oracle,
        options: EngineOptions,
        interrupt: &'a AtomicBool,
    ) -> anyhow::Result<Engine<'a>> {
        let jobs = options.jobs.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("mfppr-oracle-{i}"))
            .build()
            .context("cannot start the oracle thread pool")?;
        Ok(Engine {
            reduction,
            oracle,
            options: EngineOptions { jobs, ..options },
            interrupt,
            pool,
            cache: HashMap::new(),
            history: HashSet::new(),
            stats: Stats {
                kinds: Kind::ALL
                    .iter()
                    .map(|&k| (k, KindStats::default()))
                    .collect(),
                ..Stats::default()
            },
            round: 0,
            tried: 0,
            last_progress: Instant::now(),
        })
    }

    /// Record a verdict known from elsewhere (e.g. the original, judged before the search).
    pub fn remember(&mut self, text: &[u8], verdict: Verdict) {
        if self.options.cache {
            self.cache.insert(blake3::hash(text), verdict);
        }
    }

    /// The counters so far (also valid after an error or an interruption).
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Reduce `start` (which the caller has found interesting) to a fixpoint and return the result.
    /// `on_accept` is called with every newly accepted text.
    pub fn run(&mut self, start: Vec<u8>, on_accept: &mut OnAccept<'_>) -> anyhow::Result<Vec<u8>> {
        let began = Instant::now();
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
                for kind in Kind::ALL {
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
        result.map(|()| current)
    }

    /// Search `kind` on `current` until one candidate is accepted (returned with a description)
    /// or the chunk schedule is exhausted (`None`).
    fn run_kind(
        &mut self,
        kind: Kind,
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
        loop {
            let mut batch = Vec::with_capacity(self.options.jobs);
            while batch.len() < self.options.jobs {
                match enumeration.next(&self.history) {
                    Some(c) => batch.push(c),
                    None => break,
                }
            }
            if batch.is_empty() {
                return Ok(None);
            }
            let winner = self.judge_batch(kind, &batch)?;
            self.progress(kind, current.len());
            if let Some(i) = winner {
                let c = batch.swap_remove(i);
                let what = describe_window(&*gathered, c.window);
                return Ok(Some((c.bytes, what)));
            }
        }
    }

    /// Judge `batch` (in enumeration order) and return the index of its first interesting
    /// candidate. Candidates after that one are cancelled and their verdicts discarded.
    fn judge_batch(&mut self, kind: Kind, batch: &[Candidate]) -> anyhow::Result<Option<usize>> {
        let m = batch.len();
        let known: Vec<Option<Verdict>> = batch
            .iter()
            .map(|c| {
                if self.options.cache {
                    self.cache.get(&c.hash).copied()
                } else {
                    None
                }
            })
            .collect();
        // A cached interesting candidate wins unless an earlier one turns out interesting too.
        let limit = known
            .iter()
            .position(|v| *v == Some(Verdict::Interesting))
            .unwrap_or(m);
        let to_run: Vec<usize> = (0..limit).filter(|&i| known[i].is_none()).collect();
        let runs: Vec<Mutex<Option<RunResult>>> = (0..m).map(|_| Mutex::new(None)).collect();
        if !to_run.is_empty() {
            let best = AtomicUsize::new(limit);
            let cancels: Vec<AtomicBool> = (0..m).map(|_| AtomicBool::new(false)).collect();
            let oracle = self.oracle;
            let (best, cancels, runs_ref) = (&best, &cancels, &runs);
            self.pool.scope_fifo(|scope| {
                for &i in &to_run {
                    let candidate = &batch[i];
                    scope.spawn_fifo(move |_| {
                        if best.load(Ordering::SeqCst) < i {
                            return; // an earlier candidate already won: do not start
                        }
                        let started = Instant::now();
                        let verdict = oracle.judge(&candidate.bytes, &cancels[i]);
                        let elapsed = started.elapsed();
                        if matches!(verdict, Ok(Verdict::Interesting)) {
                            best.fetch_min(i, Ordering::SeqCst);
                            for c in &cancels[i + 1..] {
                                c.store(true, Ordering::SeqCst);
                            }
                        }
                        let cancelled = cancels[i].load(Ordering::SeqCst);
                        if let Ok(mut slot) = runs_ref[i].lock() {
                            *slot = Some(RunResult {
                                verdict,
                                elapsed,
                                cancelled,
                            });
                        }
                    });
                }
            });
        }
        // Verdicts of cancelled runs are meaningless; so are all verdicts once interrupted.
        self.check_interrupt()?;

        let mut winner = None;
        for (i, (candidate, slot)) in batch.iter().zip(runs).enumerate() {
            let run = slot.into_inner().ok().flatten();
            if let Some(r) = &run {
                self.stats.oracle_calls += 1;
                self.stats.kind(kind).oracle_secs += r.elapsed.as_secs_f64();
                if let (Ok(v), false, true) = (&r.verdict, r.cancelled, self.options.cache) {
                    self.cache.insert(candidate.hash, *v);
                }
            }
            if winner.is_some() {
                if run.is_some() {
                    self.stats.kind(kind).wasted += 1;
                }
                continue;
            }
            let verdict = match (known[i], run) {
                (Some(v), _) => {
                    self.stats.kind(kind).cache_hits += 1;
                    self.stats.cache_hits += 1;
                    v
                }
                (None, Some(r)) => r.verdict.context("the oracle failed")?,
                // Not started: only happens after an interesting candidate, handled above.
                (None, None) => continue,
            };
            self.tried += 1;
            let ks = self.stats.kind(kind);
            ks.candidates += 1;
            match verdict {
                Verdict::Interesting => winner = Some(i),
                Verdict::Timeout => ks.timeouts += 1,
                Verdict::Uninteresting => {}
            }
        }
        Ok(winner)
    }

    fn check_interrupt(&self) -> anyhow::Result<()> {
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(coded(ExitKind::Interrupted, "interrupted"));
        }
        Ok(())
    }

    fn progress(&mut self, kind: Kind, size: usize) {
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
            while c.next_window().is_some() {
                if sizes.last() != Some(&c.size()) {
                    sizes.push(c.size());
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
    fn cursor_restarts_at_the_top_after_success() {
        let mut c = ChunkCursor::new(8);
        c.advance();
        c.advance();
        assert_eq!(c.next_window(), Some(0..2));
        c.restart_after_success(6);
        assert_eq!(c.next_window(), Some(0..3));
        c.restart_after_success(0);
        assert_eq!(c.next_window(), None);
        c.advance();
        assert_eq!(c.next_window(), None);
    }
}
