//! The search (design §5, §12): which candidates are tried, in which order, how many at once,
//! and what is accepted.
//!
//! Kinds are visited in [`OpportunityKind::ALL`] order. Rounds over the four main kinds repeat
//! until a round accepts nothing (fixpoint); the tail kinds then run once, each from a first
//! window of all its opportunities (their edits keep every variant's meaning, so they enable
//! nothing the main kinds could take).
//!
//! **Windows.** A kind's search on the current text lists its *live* opportunities (edit caching
//! below) and cuts them, in enumeration order, into windows of ⌈n/2⌉, then ⌈n/4⌉ … 1
//! opportunities; each window is one candidate. The first interesting window is accepted; the kind
//! is gathered again on the new text and goes on at the same size with the opportunities not yet
//! in an uninteresting window of that size (no revisits: the next round gives them another
//! chance), then the smaller sizes.
//!
//! **Batches.** A batching kind ([`OpportunityKind::batches`]: the tail's kinds whose edits keep
//! the test's meaning) whose window of at most [`BATCH_MAX`] live opportunities is rejected
//! judges each of them alone on that same text (with more, it halves as the other kinds do, and
//! batches once the windows are single opportunities), then merges the interesting ones into one
//! more candidate, accepted if it is interesting (else the first of them is, and the others are
//! judged again on the new text). What it judges next never depends on the verdicts of the
//! single opportunities, so with `jobs` > 1 they all run at once, where halving would take a
//! latency per level.
//!
//! **Deferral.** A main kind other than the last with at least [`DEFER_MIN`] live opportunities
//! that accepts nothing at a size waits: the round goes on with the next kinds, and only if none
//! of them accepts anything does the kind go on at the smaller size (the deferred kinds take
//! turns, a size each).
//! An accept starts the next round, where every kind starts again from its largest windows, so
//! the fixpoint is the same kind of fixpoint; what is saved is the descent to single opportunities
//! of a kind that later kinds unblock (e.g. fuzzed inputs every recursion fold depends on).
//!
//! **Edit caching.** A single opportunity found uninteresting is remembered by its
//! [`Gathered::fingerprint`] (what its edits leave or remove and the rest of the lines they
//! touch, whitespace aside) for the rest of the kind's search: it is not live again after an
//! accept while its fingerprint stays the same. An opportunity whose lines change gets a new
//! fingerprint and is tried again. A kind's next search (in the next round) keeps them only if no
//! other kind accepted anything since; otherwise it starts afresh (another kind may have changed
//! what a verdict depends on, e.g. input values).
//!
//! **Parallelism.** The search is a state machine ([`Search`]) whose next candidate depends only
//! on the verdicts it was given, so the result is the same for every `jobs`. With `jobs` = N, while
//! the search waits for a verdict the engine follows copies of the state machine down both
//! verdicts of each candidate whose verdict is not known yet, most likely path first (the chance
//! that a window is interesting comes from per-opportunity beliefs updated as in probabilistic
//! delta debugging from a per-kind rate fitted to every window judged, [`Beliefs`], their
//! log-odds shifted by how far off they were on the verdicts the search used so far,
//! [`Calibration`]; a window judged on another text, typically the same window before the accept
//! the copy assumes, lends its verdict, [`Hints`]), and keeps the N most likely candidates
//! running. Runs nothing needs
//! any more are killed (counted as wasted); verdicts of runs that finish early wait for their
//! turn. Speculation stops as soon as a run reports (its verdict may change what is needed), so a
//! verdict the search waits for is taken in at once. Before the search, [`candidates_ahead`]
//! follows the same speculation from the starting text, so that the caller can judge the likely
//! first candidates while it judges the original, and hand over their verdicts with
//! [`Engine::remember_ahead`] and the runs still going with [`Engine::adopt`].

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::error::{coded, ExitKind};
use crate::opportunity::{Gathered, Opportunities, OpportunityKind};
use crate::oracle::{Oracle, Verdict};

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

/// The size of `kind`'s windows over `live` opportunities: `size` (half the live ones when
/// `None`), at most half of them, at least 1 — except that a tail kind's edits keep the test's
/// meaning, so its first window is all of them before the halving.
fn window_size(kind: OpportunityKind, size: Option<usize>, live: usize) -> usize {
    let most = match kind.is_tail() {
        true => live,
        false => live.div_ceil(2),
    };
    size.map_or(most, |s| s.min(most)).max(1)
}

/// A main kind's pass with at least this many live opportunities that accepts nothing at a size
/// is deferred ([`Search::next_size`]).
const DEFER_MIN: usize = 12;

/// A batching kind ([`OpportunityKind::batches`]) whose window of at most this many live
/// opportunities was rejected judges each of them alone next, on the same text.
const BATCH_MAX: usize = 8;

/// The window size after `size`.
fn smaller(size: usize) -> usize {
    size.div_ceil(2)
}

/// A set that grows: shared by copies of the search state, with what a copy learned on its own
/// kept apart (so speculative copies are cheap).
#[derive(Clone)]
struct Learned<T: std::hash::Hash + Eq + Clone> {
    base: Arc<HashSet<T>>,
    extra: HashSet<T>,
}

impl<T: std::hash::Hash + Eq + Clone> Default for Learned<T> {
    fn default() -> Learned<T> {
        Learned {
            base: Arc::new(HashSet::new()),
            extra: HashSet::new(),
        }
    }
}

impl<T: std::hash::Hash + Eq + Clone> Learned<T> {
    fn contains(&self, t: &T) -> bool {
        self.extra.contains(t) || self.base.contains(t)
    }

    fn insert(&mut self, t: T) {
        if !self.base.contains(&t) {
            self.extra.insert(t);
        }
    }

    /// Move what was learned into the shared part (the real search, between steps).
    fn settle(&mut self) {
        if !self.extra.is_empty() {
            Arc::make_mut(&mut self.base).extend(self.extra.drain());
        }
    }
}

/// Gathers and builds candidates for the search, remembering recent results so that the
/// speculative copies of the search (and the next window size on the same text) do not redo
/// them. Without speculation only the last gathering is kept and nothing built.
struct Workshop<'r> {
    reduction: &'r dyn Opportunities,
    /// Recent gatherings by text and kind.
    gathered: HashMap<(blake3::Hash, OpportunityKind), Kept<'r>>,
    gathered_bytes: usize,
    clock: u64,
    /// Built candidates by text, kind and window (only with speculation).
    built: HashMap<(blake3::Hash, OpportunityKind, Vec<usize>), Option<Candidate>>,
    built_bytes: usize,
    /// Speculation is on: keep more.
    speculating: bool,
    /// Candidates built.
    count: u64,
}

/// A remembered gathering, when it was last used, and the size of its text.
type Kept<'r> = (Arc<dyn Gathered + 'r>, u64, usize);

/// Gatherings are remembered while their texts add up to at most this many bytes.
const GATHERED_BYTES_KEPT: usize = 8 << 20;
/// At most this many bytes of built candidates are remembered.
const BUILT_BYTES_KEPT: usize = 256 << 20;

impl<'r> Workshop<'r> {
    fn new(reduction: &'r dyn Opportunities, speculating: bool) -> Workshop<'r> {
        Workshop {
            reduction,
            gathered: HashMap::new(),
            gathered_bytes: 0,
            clock: 0,
            built: HashMap::new(),
            built_bytes: 0,
            speculating,
            count: 0,
        }
    }

    fn gather(
        &mut self,
        text: &Text,
        kind: OpportunityKind,
    ) -> anyhow::Result<Arc<dyn Gathered + 'r>> {
        self.clock += 1;
        if let Some((g, used, _)) = self.gathered.get_mut(&(text.hash, kind)) {
            *used = self.clock;
            return Ok(Arc::clone(g));
        }
        let gathered: Arc<dyn Gathered + 'r> = Arc::from(
            self.reduction
                .gather(&text.bytes, kind)
                .with_context(|| format!("cannot gather {} opportunities", kind.name()))?,
        );
        self.gathered_bytes += text.bytes.len();
        self.gathered.insert(
            (text.hash, kind),
            (Arc::clone(&gathered), self.clock, text.bytes.len()),
        );
        // Forget the least recently used gatherings beyond the budget.
        let budget = if self.speculating {
            GATHERED_BYTES_KEPT
        } else {
            0
        };
        while self.gathered_bytes > budget && self.gathered.len() > 1 {
            let Some(oldest) = self
                .gathered
                .iter()
                .min_by_key(|(_, (_, used, _))| *used)
                .map(|(key, _)| *key)
            else {
                break;
            };
            if let Some((_, _, len)) = self.gathered.remove(&oldest) {
                self.gathered_bytes = self.gathered_bytes.saturating_sub(len);
            }
        }
        Ok(gathered)
    }

    /// The candidate of `window` (opportunity indices) on `text`.
    fn build(
        &mut self,
        text: &Text,
        kind: OpportunityKind,
        window: &[usize],
    ) -> anyhow::Result<Option<Candidate>> {
        let key = (text.hash, kind, window.to_vec());
        if let Some(c) = self.built.get(&key) {
            return Ok(c.clone());
        }
        let gathered = self.gather(text, kind)?;
        self.count += 1;
        let built = gathered.candidate(window).map(|bytes| Candidate {
            kind,
            text: Text::new(bytes),
            size: window.len(),
            prints: window
                .iter()
                .filter_map(|&i| gathered.fingerprint(i))
                .collect(),
            fingerprint: match window {
                [i] => gathered.fingerprint(*i),
                _ => None,
            },
            what: describe_window(&*gathered, window).into(),
        });
        if self.speculating {
            self.built_bytes += built.as_ref().map_or(0, |c| c.text.bytes.len());
            if self.built_bytes > BUILT_BYTES_KEPT {
                self.built.clear();
                self.built_bytes = 0;
            }
            self.built.insert(key, built.clone());
        }
        Ok(built)
    }
}

/// What the search does next.
enum Step {
    /// It needs the verdict of this candidate ([`Search::feed`]).
    Judge(Candidate),
    /// It accepted a candidate (now the current text), replacing a text of `before` bytes.
    Accepted {
        kind: OpportunityKind,
        before: usize,
        what: Arc<str>,
    },
    /// The fixpoint is reached.
    Done,
}

/// One kind's search on the current text.
#[derive(Clone)]
struct Pass {
    kind: OpportunityKind,
    /// Window size (`None`: half the live opportunities).
    size: Option<usize>,
    /// The windows of `size` on the current text, once cut.
    windows: Option<Windows>,
    /// Fingerprints of the opportunities of the windows of `visited_size` found uninteresting:
    /// after an accept the pass goes on with the others at that size (no revisits).
    visited: HashSet<u64>,
    visited_size: usize,
    /// The candidate handed out by [`Search::next`], waiting for its verdict.
    pending: Option<Candidate>,
    /// A candidate found interesting, accepted by the next [`Search::next`].
    winner: Option<Candidate>,
    /// Live opportunities when the windows were last cut.
    live: usize,
    /// The pass accepted a candidate.
    accepted: bool,
    /// The pass was deferred and goes on after the round's other kinds.
    resumed: bool,
    /// A batching kind's windows of one opportunity found interesting on the current text, in
    /// enumeration order, with their candidates: merged once every window is judged.
    batch: Vec<(Vec<usize>, Candidate)>,
    /// The pending candidate is the merge of `batch`.
    merging: bool,
}

/// The windows of one size on one text, in enumeration order.
#[derive(Clone)]
struct Windows {
    size: usize,
    list: Arc<Vec<Vec<usize>>>,
    /// The window judged next.
    next: usize,
    /// Candidates offered on this text.
    seen: HashSet<blake3::Hash>,
}

/// The state of the search: a deterministic function of the starting text and the verdicts fed.
#[derive(Clone)]
struct Search {
    text: Text,
    round: u64,
    /// Index into [`OpportunityKind::ALL`] of the kind searched now.
    kind: usize,
    /// A main kind accepted a candidate in this round.
    accepted_in_round: bool,
    /// The main kinds reached their fixpoint; the tail kinds run (once).
    in_tail: bool,
    pass: Option<Pass>,
    /// Passes of this round deferred at a smaller size ([`Search::next_size`]), in turn.
    deferred: VecDeque<Pass>,
    done: bool,
    /// Fingerprints of single opportunities found uninteresting in the current kind's search (edit
    /// caching).
    failed: Learned<u64>,
    /// Candidates accepted so far, of any kind.
    accepts: u64,
    /// Each kind's `failed` when its last pass ended, with `accepts` then: its next pass keeps
    /// them if no other kind accepted since ([`Search::failed_of`]).
    failed_before: BTreeMap<OpportunityKind, (Learned<u64>, u64)>,
    /// Texts accepted so far (never offered again, so the search ends even if a pass cycles).
    history: Learned<blake3::Hash>,
    /// How likely each opportunity is to be needed, for speculation.
    beliefs: Beliefs,
}

impl Search {
    fn new(start: Vec<u8>) -> Search {
        let text = Text::new(start);
        let mut history = Learned::default();
        history.insert(text.hash);
        history.settle();
        Search {
            text,
            round: 1,
            kind: 0,
            accepted_in_round: false,
            in_tail: false,
            pass: None,
            deferred: VecDeque::new(),
            done: false,
            failed: Learned::default(),
            accepts: 0,
            failed_before: BTreeMap::new(),
            history,
            beliefs: Beliefs::default(),
        }
    }

    /// The kind searched now.
    fn current_kind(&self) -> OpportunityKind {
        let kinds = OpportunityKind::ALL;
        self.pass
            .as_ref()
            .map_or(kinds[self.kind.min(kinds.len() - 1)], |p| p.kind)
    }

    /// Advance to the next candidate to judge, the next accept, or the end.
    fn next(&mut self, workshop: &mut Workshop<'_>) -> anyhow::Result<Step> {
        loop {
            if self.done {
                return Ok(Step::Done);
            }
            let Some(mut pass) = self.pass.take() else {
                self.start_pass();
                continue;
            };
            if let Some(c) = &pass.pending {
                let c = c.clone();
                self.pass = Some(pass);
                return Ok(Step::Judge(c));
            }
            if let Some(c) = pass.winner.take() {
                return Ok(self.accept(pass, c));
            }
            let kind = pass.kind;
            let Some(mut windows) = pass.windows.take() else {
                let gathered = workshop.gather(&self.text, kind)?;
                let live: Vec<(usize, Option<u64>)> = (0..gathered.len())
                    .map(|i| (i, gathered.fingerprint(i)))
                    .filter(|(_, f)| f.is_none_or(|f| !self.failed.contains(&f)))
                    .collect();
                if live.is_empty() {
                    self.end_pass(&pass);
                    continue;
                }
                pass.live = live.len();
                let size = window_size(kind, pass.size, live.len());
                if pass.visited_size != size {
                    pass.visited.clear();
                    pass.visited_size = size;
                }
                let fresh: Vec<usize> = live
                    .iter()
                    .filter(|(_, f)| f.is_none_or(|f| !pass.visited.contains(&f)))
                    .map(|(i, _)| *i)
                    .collect();
                if fresh.is_empty() {
                    self.next_size(pass, size);
                    continue;
                }
                pass.windows = Some(Windows {
                    size,
                    list: Arc::new(fresh.chunks(size).map(<[usize]>::to_vec).collect()),
                    next: 0,
                    seen: HashSet::new(),
                });
                self.pass = Some(pass);
                continue;
            };
            let Some(window) = windows.list.get(windows.next).cloned() else {
                if !pass.batch.is_empty() {
                    let merge = match pass.merging || pass.batch.len() == 1 {
                        true => None,
                        false => {
                            let all: Vec<usize> =
                                pass.batch.iter().flat_map(|(w, _)| w.clone()).collect();
                            workshop.build(&self.text, kind, &all)?.filter(|c| {
                                c.text.hash != self.text.hash
                                    && !self.history.contains(&c.text.hash)
                            })
                        }
                    };
                    pass.windows = Some(windows);
                    if let Some(merged) = merge {
                        pass.merging = true;
                        pass.pending = Some(merged);
                        self.pass = Some(pass);
                        continue;
                    }
                    // One interesting window, or their merge was not: the first goes in.
                    let (_, first) = std::mem::take(&mut pass.batch).remove(0);
                    pass.merging = false;
                    return Ok(self.accept(pass, first));
                }
                // Nothing interesting at this size on this text.
                self.next_size(pass, windows.size);
                continue;
            };
            let fresh = workshop.build(&self.text, kind, &window)?.filter(|c| {
                c.text.hash != self.text.hash
                    && !self.history.contains(&c.text.hash)
                    && windows.seen.insert(c.text.hash)
            });
            match fresh {
                Some(c) => pass.pending = Some(c),
                None => windows.next += 1,
            }
            pass.windows = Some(windows);
            self.pass = Some(pass);
        }
    }

    /// The verdict of the candidate [`Search::next`] returned last.
    fn feed(&mut self, verdict: Verdict) {
        let Some(pass) = self.pass.as_mut() else {
            return;
        };
        let Some(c) = pass.pending.take() else {
            return;
        };
        let interesting = verdict == Verdict::Interesting;
        self.beliefs.judged(c.kind, c.size, &c.prints, interesting);
        if pass.merging {
            // The merge goes in if it is interesting, else the batch's first (the next `next`).
            if interesting {
                pass.batch.clear();
                pass.merging = false;
                pass.winner = Some(c);
            }
            return;
        }
        if interesting {
            let kind = pass.kind;
            match pass
                .windows
                .as_mut()
                .filter(|w| kind.batches() && w.size == 1)
            {
                // A batching kind's single opportunity waits for the merge; the next one is judged.
                Some(w) => {
                    pass.batch.push((w.list[w.next].clone(), c));
                    w.next += 1;
                }
                None => pass.winner = Some(c),
            }
            return;
        }
        if let Some(f) = c.fingerprint {
            self.failed.insert(f);
        }
        pass.visited.extend(c.prints.iter().copied());
        if let Some(w) = pass.windows.as_mut() {
            w.next += 1;
        }
    }

    /// The pass goes on at the size after `size`, or ends after size 1. A main kind's pass that
    /// has accepted nothing, has at least [`DEFER_MIN`] live opportunities and is not the last
    /// main kind is deferred instead: it goes on at the smaller size after the round's other
    /// kinds, if none of them accepts.
    fn next_size(&mut self, mut pass: Pass, size: usize) {
        if size <= 1 {
            self.end_pass(&pass);
            return;
        }
        // A batching kind with few live opportunities judges them one by one.
        pass.size = Some(match pass.kind.batches() && pass.live <= BATCH_MAX {
            true => 1,
            false => smaller(size),
        });
        pass.windows = None;
        // Something can still unblock it in this round: a later main kind, or (once the round
        // accepted nothing) the other deferred kinds' smaller sizes.
        let later = pass.resumed
            || OpportunityKind::ALL
                .get(self.kind + 1)
                .is_some_and(|k| !k.is_tail());
        if !pass.accepted && !pass.kind.is_tail() && pass.live >= DEFER_MIN && later {
            self.end_pass(&pass);
            pass.resumed = true;
            self.deferred.push_back(pass);
        } else {
            self.pass = Some(pass);
        }
    }

    /// The pass is over: the search goes on with the next kind (a resumed pass was not the
    /// current kind's).
    fn end_pass(&mut self, pass: &Pass) {
        self.failed_before
            .insert(pass.kind, (self.failed.clone(), self.accepts));
        if !pass.resumed {
            self.kind += 1;
        }
    }

    /// Make `c` the current text; the pass goes on at the same window size on it.
    fn accept(&mut self, mut pass: Pass, c: Candidate) -> Step {
        let before = self.text.bytes.len();
        self.history.insert(c.text.hash);
        self.accepts += 1;
        self.text = c.text;
        self.accepted_in_round |= !c.kind.is_tail();
        pass.size = Some(pass.windows.as_ref().map_or(c.size, |w| w.size));
        pass.windows = None;
        pass.accepted = true;
        self.pass = Some(pass);
        Step::Accepted {
            kind: c.kind,
            before,
            what: c.what,
        }
    }

    /// Start the next kind, the next round, the tail, or end the search.
    fn start_pass(&mut self) {
        let kinds = OpportunityKind::ALL;
        loop {
            let main_done = kinds.get(self.kind).is_none_or(|k| k.is_tail());
            if main_done && !self.in_tail {
                if self.accepted_in_round {
                    self.round += 1;
                    self.kind = 0;
                    self.accepted_in_round = false;
                    self.deferred.clear();
                    continue;
                }
                // Nothing accepted in this round: the deferred passes go on, a size each in turn.
                if let Some(pass) = self.deferred.pop_front() {
                    self.failed = self.failed_of(pass.kind);
                    self.pass = Some(pass);
                    return;
                }
                self.in_tail = true;
            }
            let Some(&kind) = kinds.get(self.kind) else {
                self.done = true;
                return;
            };
            self.failed = self.failed_of(kind);
            self.pass = Some(Pass {
                kind,
                size: None,
                windows: None,
                visited: HashSet::new(),
                visited_size: 0,
                pending: None,
                winner: None,
                live: 0,
                accepted: false,
                resumed: false,
                batch: Vec::new(),
                merging: false,
            });
            return;
        }
    }

    /// What `kind`'s search starts with as found uninteresting: what its last pass found, if no
    /// other kind accepted a candidate since (the text then changed only by the kind's own
    /// accepts, across which its pass keeps them too); nothing otherwise, since verdicts may
    /// change once another kind changed the text (new input values, say).
    fn failed_of(&self, kind: OpportunityKind) -> Learned<u64> {
        match self.failed_before.get(&kind) {
            Some((failed, at)) if *at == self.accepts => failed.clone(),
            _ => Learned::default(),
        }
    }

    /// The next candidate to judge, past accepts; `None` at the end (or when the text cannot
    /// be read).
    fn advance(&mut self, workshop: &mut Workshop<'_>) -> Option<Candidate> {
        loop {
            match self.next(workshop) {
                Ok(Step::Judge(c)) => return Some(c),
                Ok(Step::Accepted { .. }) => {}
                Ok(Step::Done) | Err(_) => return None,
            }
        }
    }

    /// Move what this state learned into its shared sets.
    fn settle(&mut self) {
        self.failed.settle();
        self.history.settle();
        self.beliefs.settle();
    }

    /// The chance that `c` is interesting, for speculation ([`Beliefs::chance`]).
    fn chance(&self, c: &Candidate) -> f64 {
        self.beliefs
            .chance(c.kind, &c.prints, c.size.saturating_sub(c.prints.len()))
            .clamp(0.02, 0.98)
    }
}

/// Prior probability that an opportunity is needed (that removing it loses the interesting
/// behaviour), as in probabilistic delta debugging (ProbDD), and how many opportunities of a kind
/// it weighs as against the windows judged so far.
const NEEDED_PRIOR: f64 = 0.1;
const NEEDED_PRIOR_WEIGHT: f64 = 4.0;

/// For speculation only: the probability that each opportunity (by fingerprint) is needed,
/// updated as in ProbDD, starting from its kind's rate of needed opportunities estimated from
/// every window of the kind judged so far ([`KindRate`]). Shared by copies of the search like
/// [`Learned`].
#[derive(Clone, Default)]
struct Beliefs {
    base: Arc<HashMap<u64, f64>>,
    extra: HashMap<u64, f64>,
    rates: BTreeMap<OpportunityKind, KindRate>,
}

/// The windows of one kind judged so far, by size, and the rate of needed opportunities that
/// explains them best.
#[derive(Clone, Debug)]
struct KindRate {
    /// (window size, interesting, uninteresting).
    windows: Vec<(usize, u32, u32)>,
    /// The estimate: the rate q on a grid that maximises the likelihood of the verdicts (a
    /// window of n is interesting with chance (1 − q)^n) times a Beta prior of mean
    /// [`NEEDED_PRIOR`] and weight [`NEEDED_PRIOR_WEIGHT`].
    rate: f64,
}

impl Default for KindRate {
    fn default() -> KindRate {
        KindRate {
            windows: Vec::new(),
            rate: NEEDED_PRIOR,
        }
    }
}

impl KindRate {
    fn add(&mut self, size: usize, interesting: bool) {
        let at = match self.windows.iter().position(|w| w.0 == size) {
            Some(at) => at,
            None => {
                self.windows.push((size, 0, 0));
                self.windows.len() - 1
            }
        };
        let w = &mut self.windows[at];
        match interesting {
            true => w.1 += 1,
            false => w.2 += 1,
        }
        let log_likelihood = |q: f64| {
            let keep = (1.0 - q).ln();
            let prior = NEEDED_PRIOR * NEEDED_PRIOR_WEIGHT * q.ln()
                + (1.0 - NEEDED_PRIOR) * NEEDED_PRIOR_WEIGHT * keep;
            self.windows.iter().fold(prior, |sum, &(n, yes, no)| {
                let all_kept = keep * n.min(256) as f64;
                sum + f64::from(yes) * all_kept + f64::from(no) * (-all_kept.exp_m1()).ln()
            })
        };
        self.rate = (1..100)
            .map(|i| f64::from(i) / 100.0)
            .max_by(|a, b| log_likelihood(*a).total_cmp(&log_likelihood(*b)))
            .unwrap_or(NEEDED_PRIOR);
    }
}

impl Beliefs {
    /// The prior of an opportunity of `kind`.
    fn prior(&self, kind: OpportunityKind) -> f64 {
        self.rates.get(&kind).map_or(NEEDED_PRIOR, |r| r.rate)
    }

    fn get(&self, f: u64, prior: f64) -> f64 {
        self.extra
            .get(&f)
            .or_else(|| self.base.get(&f))
            .copied()
            .unwrap_or(prior)
    }

    /// The chance that a window of `kind` of the opportunities `prints` and `unknown` more
    /// (without fingerprints) is interesting: that none of them is needed.
    fn chance(&self, kind: OpportunityKind, prints: &[u64], unknown: usize) -> f64 {
        let prior = self.prior(kind);
        prints
            .iter()
            .map(|&f| 1.0 - self.get(f, prior))
            .product::<f64>()
            * (1.0 - prior).powi(unknown.min(64) as i32)
    }

    /// A window of `size` opportunities of `kind` (those with fingerprints: `prints`) was
    /// judged. If it was not interesting, at least one of them is needed, so each is more likely
    /// needed (a single one surely is).
    fn judged(&mut self, kind: OpportunityKind, size: usize, prints: &[u64], interesting: bool) {
        let prior = self.prior(kind);
        let some_needed = 1.0 - self.chance(kind, prints, 0);
        self.rates.entry(kind).or_default().add(size, interesting);
        if interesting || some_needed <= 0.0 {
            return;
        }
        for &f in prints {
            let p = (self.get(f, prior) / some_needed).min(1.0);
            self.extra.insert(f, p);
        }
    }

    fn settle(&mut self) {
        if !self.extra.is_empty() {
            Arc::make_mut(&mut self.base).extend(self.extra.drain());
        }
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

/// An oracle run in flight.
struct Running {
    id: u64,
    kind: OpportunityKind,
    /// The fingerprints of the candidate's opportunities and its window's [`Hints`] key.
    prints: Vec<u64>,
    window: Option<u64>,
    /// Set to kill the run.
    cancel: Arc<AtomicBool>,
}

/// For speculation only: a shift of the beliefs' log-odds fitted to the verdicts the search used
/// so far (the beliefs' model fits some checks better than others: on the fixtures' real checks
/// they are too hopeful, on the latency-only benchmark about right).
#[derive(Default)]
struct Calibration {
    /// (log-odds believed, interesting) of each verdict the search used.
    seen: Vec<(f64, bool)>,
    /// The fitted shift.
    shift: f64,
}

/// The shift's prior: a normal of mean 0 and this variance (in log-odds²).
const CALIBRATION_PRIOR_VARIANCE: f64 = 1.0;

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl Calibration {
    fn add(&mut self, p: f64, interesting: bool) {
        self.seen.push((logit(p), interesting));
        // Newton's method on the log-posterior of the shift (concave: a few steps suffice).
        let mut b = self.shift;
        for _ in 0..8 {
            let (mut grad, mut hess) = (
                -b / CALIBRATION_PRIOR_VARIANCE,
                -1.0 / CALIBRATION_PRIOR_VARIANCE,
            );
            for &(z, y) in &self.seen {
                let q = logistic(z + b);
                grad += f64::from(u8::from(y)) - q;
                hess -= q * (1.0 - q);
            }
            b -= grad / hess;
        }
        self.shift = b;
    }

    fn apply(&self, p: f64) -> f64 {
        logistic(logit(p) + self.shift).clamp(0.02, 0.98)
    }
}

/// For speculation only: what the runs said about windows, whatever text they were cut from.
/// After an accept the search cuts the same windows again from the new text (same opportunities,
/// same fingerprints), and those were often judged on the old text meanwhile, as speculation
/// down the other verdict: their verdicts there predict the new ones far better than beliefs.
#[derive(Default)]
struct Hints {
    /// Verdicts by window key ([`Hints::key`]): interesting or not.
    windows: HashMap<u64, bool>,
    /// Fingerprints of opportunities that were in an interesting window.
    removable: HashSet<u64>,
}

/// The chance [`Hints`] give a window judged on another text with this verdict.
const HINT_INTERESTING: f64 = 0.9;
const HINT_UNINTERESTING: f64 = 0.1;
/// The chance they give a window of opportunities that were each in some interesting window.
const HINT_REMOVABLE: f64 = 0.8;

impl Hints {
    /// The key of a window: its kind and the fingerprints of its opportunities (`None` if one
    /// has none).
    fn key(kind: OpportunityKind, size: usize, prints: &[u64]) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        if prints.len() != size || size == 0 {
            return None;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (kind, prints).hash(&mut h);
        Some(h.finish())
    }

    fn record(&mut self, run: &Running, interesting: bool) {
        if let Some(key) = run.window {
            self.windows.insert(key, interesting);
        }
        if interesting {
            self.removable.extend(run.prints.iter().copied());
        }
    }

    /// The chance of `c` from what runs said, if they said anything about it.
    fn chance(&self, c: &Candidate) -> Option<f64> {
        let key = Hints::key(c.kind, c.size, &c.prints)?;
        if let Some(&interesting) = self.windows.get(&key) {
            return Some(match interesting {
                true => HINT_INTERESTING,
                false => HINT_UNINTERESTING,
            });
        }
        c.prints
            .iter()
            .all(|f| self.removable.contains(f))
            .then_some(HINT_REMOVABLE)
    }
}

/// The oracle runs of the search, by candidate hash.
#[derive(Default)]
struct Runs {
    running: HashMap<blake3::Hash, Running>,
    /// Ended; their verdicts are not used yet.
    finished: HashMap<blake3::Hash, (OpportunityKind, RunResult)>,
    /// Runs cancelled because nothing needs them any more, not reported yet (id → kind).
    cancelled: HashMap<u64, OpportunityKind>,
    /// Id of the next run.
    next_id: u64,
}

impl Runs {
    /// Threads still running (cancelled ones included: they are being killed).
    fn alive(&self) -> usize {
        self.running.len() + self.cancelled.len()
    }

    fn cancel(&mut self, hash: &blake3::Hash) {
        if let Some(run) = self.running.remove(hash) {
            run.cancel.store(true, Ordering::SeqCst);
            self.cancelled.insert(run.id, run.kind);
        }
    }
}

/// Where and how an oracle run reports: as run `id` of candidate `hash`, on the engine's channel,
/// cancelled if `cancel` (or the interrupt) is set when it ends.
struct Reporter<'a> {
    id: u64,
    hash: blake3::Hash,
    cancel: Arc<AtomicBool>,
    interrupt: &'a AtomicBool,
    sender: mpsc::Sender<Report>,
}

impl<'a> Reporter<'a> {
    /// Do `work` (given the kill flag) on its own thread in `scope`, then report its verdict and
    /// how long it took.
    fn spawn<'s>(
        self,
        scope: &'s std::thread::Scope<'s, '_>,
        work: impl FnOnce(&AtomicBool) -> InFlightEnd + Send + 's,
    ) -> anyhow::Result<()>
    where
        'a: 's,
    {
        std::thread::Builder::new()
            .name(format!("mfppr-oracle-{}", self.id))
            .spawn_scoped(scope, move || {
                let (verdict, elapsed) = work(&self.cancel);
                let run = RunResult {
                    verdict,
                    elapsed,
                    cancelled: self.cancel.load(Ordering::SeqCst)
                        || self.interrupt.load(Ordering::SeqCst),
                };
                // The engine only stops listening once every run has reported.
                let _ = self.sender.send((self.id, self.hash, run));
            })
            .context("cannot start a thread for an oracle run")?;
        Ok(())
    }
}

/// Starts an oracle run (id, hash, bytes, kill flag) on its own thread; the result comes back on
/// the engine's channel.
type StartRun<'s> =
    dyn Fn(u64, blake3::Hash, Arc<Vec<u8>>, Arc<AtomicBool>) -> anyhow::Result<()> + 's;

/// A speculative continuation of the search: a copy of it fed with assumed verdicts, the
/// candidate it needs next (found when the path is followed), and the chance that the search
/// gets there.
struct Path {
    chance: f64,
    /// Tie-break: older paths first.
    order: u64,
    search: Search,
    candidate: Option<Candidate>,
}

impl PartialEq for Path {
    fn eq(&self, other: &Path) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Path {}

impl PartialOrd for Path {
    fn partial_cmp(&self, other: &Path) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Path {
    fn cmp(&self, other: &Path) -> std::cmp::Ordering {
        self.chance
            .total_cmp(&other.chance)
            .then(other.order.cmp(&self.order))
    }
}

/// At most this many speculative paths are followed per scheduling.
const SPECULATION_STEPS: usize = 256;

/// What [`speculate`] asks while it follows copies of the search.
trait Speculation {
    /// The verdict of candidate `hash` if it is known.
    fn known(&self, hash: &blake3::Hash) -> Option<Verdict>;
    /// The chance that `c`, which `search` needs, is interesting.
    fn chance(&self, search: &Search, c: &Candidate) -> f64;
    /// `c`'s verdict is not known and a continuation needs it.
    fn found(&mut self, c: &Candidate) -> anyhow::Result<()>;
    /// Enough candidates are found.
    fn enough(&mut self) -> bool;
}

/// Follow copies of `search`, which needs `first` now, down the verdicts known so far and, for
/// unknown ones, down both verdicts, most likely path first, handing every candidate whose verdict
/// is unknown to `speculation` until it has enough or [`SPECULATION_STEPS`] paths were followed.
fn speculate(
    search: &Search,
    first: &Candidate,
    workshop: &mut Workshop<'_>,
    speculation: &mut dyn Speculation,
) -> anyhow::Result<()> {
    let mut paths: BinaryHeap<Path> = BinaryHeap::new();
    let mut order = 0u64;
    paths.push(Path {
        chance: 1.0,
        order,
        search: search.clone(),
        candidate: Some(first.clone()),
    });
    let mut expanded = 0;
    while let Some(path) = paths.pop() {
        if expanded >= SPECULATION_STEPS || speculation.enough() {
            break;
        }
        expanded += 1;
        let Path {
            chance,
            search: mut copy,
            candidate,
            ..
        } = path;
        // A copy that cannot go on (e.g. a text that cannot be read) just stops: the search
        // itself will say why if it gets there.
        let Some(candidate) = candidate.or_else(|| copy.advance(workshop)) else {
            continue;
        };
        let mut follow = |mut copy: Search, verdict: Verdict, chance: f64| {
            copy.feed(verdict);
            order += 1;
            paths.push(Path {
                chance,
                order,
                search: copy,
                candidate: None,
            });
        };
        match speculation.known(&candidate.text.hash) {
            Some(verdict) => follow(copy, verdict, chance),
            None => {
                let p = speculation.chance(&copy, &candidate);
                speculation.found(&candidate)?;
                follow(copy.clone(), Verdict::Interesting, chance * p);
                follow(copy, Verdict::Uninteresting, chance * (1.0 - p));
            }
        }
    }
    Ok(())
}

/// [`Engine::schedule`]'s speculation: known verdicts from the runs and the cache, chances from
/// hints and beliefs, and every candidate found is started while slots are free. It has enough
/// once `jobs` candidates are wanted, or once a run that is not cancelled reported.
struct Scheduling<'e, 'a, 'r, 's> {
    engine: &'e Engine<'a>,
    runs: &'r mut Runs,
    start: &'r StartRun<'s>,
    wanted: Vec<Candidate>,
    results: &'r mpsc::Receiver<Report>,
    /// Reports received while speculating.
    arrived: Vec<Report>,
    /// One of them is of a run that is not cancelled.
    news: bool,
}

impl Speculation for Scheduling<'_, '_, '_, '_> {
    fn known(&self, hash: &blake3::Hash) -> Option<Verdict> {
        self.engine.judged(hash, self.runs)
    }

    fn chance(&self, search: &Search, c: &Candidate) -> f64 {
        self.engine
            .hints
            .chance(c)
            .unwrap_or_else(|| self.engine.calibration.apply(search.chance(c)))
    }

    fn found(&mut self, c: &Candidate) -> anyhow::Result<()> {
        if self.wanted.iter().all(|w| w.text.hash != c.text.hash) {
            self.engine.launch(c, self.runs, self.start)?;
            self.wanted.push(c.clone());
        }
        Ok(())
    }

    fn enough(&mut self) -> bool {
        for report in self.results.try_iter() {
            self.news |= !self.runs.cancelled.contains_key(&report.0);
            self.arrived.push(report);
        }
        self.news || self.wanted.len() >= self.engine.options.jobs
    }
}

/// Before the original's verdict is known: the candidates the search will need first if it is
/// interesting, most likely first, each handed on as soon as it is found.
struct Ahead<'f> {
    found: HashSet<blake3::Hash>,
    count: usize,
    on_found: &'f mut dyn FnMut(OpportunityKind, Vec<u8>),
}

impl Speculation for Ahead<'_> {
    fn known(&self, _: &blake3::Hash) -> Option<Verdict> {
        None
    }

    fn chance(&self, search: &Search, c: &Candidate) -> f64 {
        search.chance(c)
    }

    fn found(&mut self, c: &Candidate) -> anyhow::Result<()> {
        if self.found.insert(c.text.hash) {
            (self.on_found)(c.kind, c.text.bytes.to_vec());
        }
        Ok(())
    }

    fn enough(&mut self) -> bool {
        self.found.len() >= self.count
    }
}

/// The first `count` candidates the search from `start` is likely to need, most likely first,
/// assuming `start` is interesting, each handed to `on_found` (with its kind) as soon as it is
/// found: the caller can judge them while it judges `start` (their verdicts go to
/// [`Engine::remember_ahead`], the runs still going to [`Engine::adopt`]).
pub fn candidates_ahead(
    reduction: &dyn Opportunities,
    start: &[u8],
    count: usize,
    on_found: &mut dyn FnMut(OpportunityKind, Vec<u8>),
) -> anyhow::Result<()> {
    if count == 0 {
        return Ok(());
    }
    let mut search = Search::new(start.to_vec());
    let mut workshop = Workshop::new(reduction, true);
    let Some(first) = search.advance(&mut workshop) else {
        return Ok(());
    };
    let mut ahead = Ahead {
        found: HashSet::new(),
        count,
        on_found,
    };
    speculate(&search, &first, &mut workshop, &mut ahead)
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
    reduction: &'a dyn Opportunities,
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
        let mut search = Search::new(start);
        let mut workshop = Workshop::new(self.reduction, self.options.jobs > 1);
        let (oracle, interrupt) = (self.oracle, self.interrupt);
        let (sender, results) = mpsc::channel::<Report>();
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
                        panic::catch_unwind(AssertUnwindSafe(|| oracle.judge(&bytes, cancel)))
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("the oracle panicked")))
                    };
                    (verdict, started.elapsed())
                })
            };
            let mut runs = Runs::default();
            let result = self.take_over(&mut runs, scope, &sender).and_then(|()| {
                self.search(
                    &mut search,
                    &mut workshop,
                    &mut runs,
                    start,
                    &results,
                    on_accept,
                )
            });
            // Whatever happened, nothing in flight is needed any more: kill it and wait for it.
            self.drain(&mut runs, &results);
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
        sender: &mpsc::Sender<Report>,
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
        runs: &mut Runs,
        start: &StartRun<'_>,
        results: &mpsc::Receiver<Report>,
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
                    let believed = (self.options.jobs > 1 && self.hints.chance(&c).is_none())
                        .then(|| search.chance(&c));
                    let verdict = self.await_verdict(search, &c, workshop, runs, start, results)?;
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
        runs: &mut Runs,
        start: &StartRun<'_>,
        results: &mpsc::Receiver<Report>,
    ) -> anyhow::Result<Verdict> {
        loop {
            if let Some(verdict) = self.verdict_of(c.kind, &c.text.hash, runs)? {
                return Ok(verdict);
            }
            let mut arrived = self.schedule(search, c, workshop, runs, start, results)?;
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

    /// Decide which candidates run now: `c` (the search needs it), then the candidates the
    /// search needs next on its most likely continuations ([`speculate`]), until `jobs` unknown
    /// candidates are found. Runs nothing needs any more are cancelled. Speculation stops early
    /// when a run that is not cancelled reports meanwhile (its verdict may change what is
    /// needed); nothing is cancelled then, and the reports received are returned. Only what runs
    /// depends on timing; what the search decides never does.
    fn schedule(
        &mut self,
        search: &Search,
        c: &Candidate,
        workshop: &mut Workshop<'_>,
        runs: &mut Runs,
        start: &StartRun<'_>,
        results: &mpsc::Receiver<Report>,
    ) -> anyhow::Result<Vec<Report>> {
        // What is wanted starts as soon as it is found, on the slots already free; the slots of
        // runs nothing needs any more are given out at the end.
        self.launch(c, runs, start)?;
        let mut scheduling = Scheduling {
            engine: self,
            runs,
            start,
            wanted: vec![c.clone()],
            results,
            arrived: Vec::new(),
            news: false,
        };
        if self.options.jobs > 1 {
            speculate(search, c, workshop, &mut scheduling)?;
        }
        let Scheduling {
            runs,
            wanted,
            arrived,
            news,
            ..
        } = scheduling;
        if news {
            return Ok(arrived);
        }
        let keep: HashSet<blake3::Hash> = wanted.iter().map(|w| w.text.hash).collect();
        let stale: Vec<blake3::Hash> = runs
            .running
            .keys()
            .filter(|h| !keep.contains(h))
            .copied()
            .collect();
        for h in &stale {
            runs.cancel(h);
        }
        for w in &wanted {
            self.launch(w, runs, start)?;
        }
        Ok(arrived)
    }

    /// Start the run of `w` unless it is running, its verdict is known, or `jobs` runs are alive.
    fn launch(&self, w: &Candidate, runs: &mut Runs, start: &StartRun<'_>) -> anyhow::Result<()> {
        let hash = w.text.hash;
        if runs.alive() >= self.options.jobs
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
    fn drain(&mut self, runs: &mut Runs, results: &mpsc::Receiver<Report>) {
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

/// One-line description of a window of opportunities.
fn describe_window(gathered: &dyn Gathered, window: &[usize]) -> String {
    match window {
        [] => String::new(),
        [i] => gathered.describe(*i),
        [i, ..] => format!(
            "{} opportunities: {}, …",
            window.len(),
            gathered.describe(*i)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window sizes `kind` with `n` live opportunities goes through when nothing is
    /// interesting.
    fn sizes(kind: OpportunityKind, n: usize) -> Vec<usize> {
        let mut out = vec![window_size(kind, None, n)];
        while *out.last().unwrap() > 1 {
            let s = smaller(*out.last().unwrap());
            out.push(window_size(kind, Some(s), n));
        }
        out
    }

    #[test]
    fn window_sizes_halve_down_to_one() {
        let fuzz = |n| sizes(OpportunityKind::Fuzz, n);
        assert_eq!(fuzz(0), vec![1]);
        assert_eq!(fuzz(1), vec![1]);
        assert_eq!(fuzz(2), vec![1]);
        assert_eq!(fuzz(3), vec![2, 1]);
        assert_eq!(fuzz(5), vec![3, 2, 1]);
        assert_eq!(fuzz(16), vec![8, 4, 2, 1]);
        // A size carried over from a larger list never exceeds half the live opportunities.
        assert_eq!(window_size(OpportunityKind::Fuzz, Some(8), 5), 3);
        assert_eq!(window_size(OpportunityKind::Fuzz, Some(1), 5), 1);
    }

    #[test]
    fn tail_kinds_try_every_opportunity_first() {
        let tail = |n| sizes(OpportunityKind::TailText, n);
        assert_eq!(tail(3), vec![3, 2, 1]);
        assert_eq!(tail(16), vec![16, 8, 4, 2, 1]);
        assert_eq!(tail(1), vec![1]);
        // After an accepted window, at most every live opportunity.
        assert_eq!(window_size(OpportunityKind::Tail, Some(8), 5), 5);
        assert_eq!(window_size(OpportunityKind::Tail, Some(2), 5), 2);
    }

    #[test]
    fn beliefs_follow_probabilistic_delta_debugging() {
        let kind = OpportunityKind::Fuzz;
        let mut b = Beliefs::default();
        let fresh = b.chance(kind, &[1, 2], 0);
        assert!((fresh - (1.0 - NEEDED_PRIOR).powi(2)).abs() < 1e-9);
        // A pair that fails: each is more likely needed, the pair surely has one.
        b.judged(kind, 2, &[1, 2], false);
        assert!(b.get(1, b.prior(kind)) > NEEDED_PRIOR);
        assert!(b.chance(kind, &[1], 0) < b.chance(kind, &[3], 0));
        // A single one that fails is needed.
        b.judged(kind, 1, &[1], false);
        assert_eq!(b.chance(kind, &[1], 0), 0.0);
        // Windows of the kind found uninteresting raise its prior.
        assert!(b.prior(kind) > NEEDED_PRIOR);
        assert_eq!(b.prior(OpportunityKind::Variant), NEEDED_PRIOR);
    }

    #[test]
    fn a_kind_rate_explains_the_windows_judged() {
        let mut large_ones_pass = KindRate::default();
        large_ones_pass.add(10, true);
        large_ones_pass.add(10, true);
        // Twenty opportunities removed at once: few can be needed.
        assert!(large_ones_pass.rate < NEEDED_PRIOR / 2.0);
        let mut singles_fail = KindRate::default();
        for _ in 0..6 {
            singles_fail.add(1, false);
        }
        singles_fail.add(1, true);
        // Six of seven singles needed (the Beta prior pulls the estimate down a little).
        assert!((0.55..0.86).contains(&singles_fail.rate));
        // Both kinds of evidence: a pair fails, a larger window passes.
        let mut mixed = KindRate::default();
        mixed.add(2, false);
        mixed.add(8, true);
        assert!(mixed.rate > 0.0 && mixed.rate < 0.5);
    }

    #[test]
    fn calibration_shifts_beliefs_towards_the_verdicts_seen() {
        let mut none = Calibration::default();
        assert!((none.apply(0.6) - 0.6).abs() < 1e-9);
        // Beliefs of 0.6, one window in four interesting: too hopeful, pulled down.
        let mut hopeful = Calibration::default();
        for i in 0..40 {
            hopeful.add(0.6, i % 4 == 0);
        }
        assert!(
            (0.2..0.4).contains(&hopeful.apply(0.6)),
            "{}",
            hopeful.apply(0.6)
        );
        assert!(hopeful.apply(0.9) < 0.9 && hopeful.apply(0.1) < 0.1);
        // Right on average (0.8: four in five interesting, 0.2: one in five): hardly moved.
        for i in 0..20 {
            none.add(0.8, i % 5 != 0);
            none.add(0.2, i % 5 == 0);
        }
        assert!((none.apply(0.5) - 0.5).abs() < 0.1, "{}", none.apply(0.5));
        // A few verdicts move it a little only (the prior).
        let mut early = Calibration::default();
        early.add(0.6, false);
        assert!(
            (0.4..0.6).contains(&early.apply(0.6)),
            "{}",
            early.apply(0.6)
        );
    }

    #[test]
    fn hints_carry_verdicts_to_the_same_window_on_another_text() {
        let kind = OpportunityKind::Fuzz;
        let candidate = |prints: Vec<u64>| Candidate {
            kind,
            text: Text::new(b"x".to_vec()),
            fingerprint: None,
            size: prints.len(),
            prints,
            what: "w".into(),
        };
        let running = |prints: Vec<u64>| Running {
            id: 0,
            kind,
            window: Hints::key(kind, prints.len(), &prints),
            prints,
            cancel: Arc::new(AtomicBool::new(false)),
        };
        let mut hints = Hints::default();
        assert_eq!(hints.chance(&candidate(vec![1, 2])), None);
        hints.record(&running(vec![1, 2]), true);
        hints.record(&running(vec![3, 4]), false);
        assert_eq!(hints.chance(&candidate(vec![1, 2])), Some(HINT_INTERESTING));
        assert_eq!(
            hints.chance(&candidate(vec![3, 4])),
            Some(HINT_UNINTERESTING)
        );
        // Another window of opportunities each seen in an interesting one.
        assert_eq!(hints.chance(&candidate(vec![2])), Some(HINT_REMOVABLE));
        assert_eq!(hints.chance(&candidate(vec![2, 3])), None);
        // A window with an opportunity without a fingerprint has no key.
        assert_eq!(Hints::key(kind, 3, &[1, 2]), None);
    }

    #[test]
    fn learned_sets_keep_what_a_copy_learns_apart() {
        let mut real: Learned<u64> = Learned::default();
        real.insert(1);
        real.settle();
        let mut copy = real.clone();
        copy.insert(2);
        assert!(copy.contains(&1) && copy.contains(&2));
        assert!(real.contains(&1) && !real.contains(&2));
        real.insert(3);
        real.settle();
        assert!(!copy.contains(&3));
    }
}
