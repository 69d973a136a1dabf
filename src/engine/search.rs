//! The search: a deterministic state machine ([`Search`]) that says which candidate it needs
//! judged next and what it accepts; its next candidate depends only on the verdicts fed to it.
//!
//! **Rounds.** Kinds are visited in [`OpportunityKind::ALL`] order. Rounds over the four main
//! kinds repeat until a round accepts nothing (fixpoint); the tail kinds then run once, each from
//! a first window of all its opportunities (their edits keep every variant's meaning), except
//! `tail_inputs` after a rejected `tail_all`, which held that window ([`Search::first_size`]).
//!
//! **Inputs last** ([`Inputs::Last`], the campaign default): fuzz reduction is left out of the
//! rounds; once they reach their fixpoint it runs alone, again until it accepts nothing, and the
//! tail follows.
//!
//! **Windows.** A kind's live opportunities are cut, in enumeration order, into windows of ⌈n/2⌉,
//! then ⌈n/4⌉ … 1; each window is one candidate. The first interesting window is accepted; the
//! kind is gathered again on the new text and goes on at the same size with the opportunities
//! not yet in an uninteresting window of that size, then the smaller sizes.
//!
//! **Hierarchy.** An opportunity with a parent ([`Gathered::parent`]: a recursion fold inside
//! the instance another fold removes) is not live until its parent was found uninteresting
//! alone: the folds inside a call are tried only once that call is known to be needed. When a
//! pass has judged its windows of one and its opportunities shown since then are not all
//! judged, it starts again from half of them (hierarchical delta debugging).
//!
//! **Batches.** A batching kind ([`OpportunityKind::batches`]) whose window of at most
//! [`BATCH_MAX`] opportunities is rejected judges each alone on that same text, then merges the
//! interesting ones into one more candidate (else the first of them goes in). What it judges
//! next never depends on those verdicts, so with `jobs` > 1 they all run at once.
//!
//! **Deferral.** A main kind with at least [`DEFER_MIN`] live opportunities that accepts nothing
//! at a size waits until the round's other kinds accepted nothing (the last main kind waits only
//! when the round already accepted something: the next round follows). When one of them
//! accepts, the next round starts; the deferred kind's pass there starts at the size it was
//! deferred at (its larger windows just failed). Every size still ends at 1, so the fixpoint is
//! 1-minimal as before.
//!
//! **Implied rejections.** A candidate that applies every edit of a candidate its pass rejected,
//! and more (what is left of that one's window, the rest of which went in since), is taken as
//! uninteresting without a run ([`Pass::implied_rejection`]).
//!
//! **Edit caching.** A single opportunity found uninteresting is remembered by its
//! [`Gathered::fingerprint`](crate::opportunity::Gathered::fingerprint) for the rest of the
//! kind's search (a changed opportunity gets a new fingerprint). The kind's next search keeps
//! them too, even when other kinds removed variants, steps or recursion since — but not once a
//! fuzz reduction was accepted (it changes the values the test computes), and fuzz reduction
//! keeps its own only if nothing at all was accepted since. A kept opportunity is not judged
//! again; that is what makes the later rounds cheap (measured on real MF++ output:
//! `scripts/bench-real`, docs/results/real.md).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;

use super::beliefs::Beliefs;
use super::workshop::Workshop;
use super::{Candidate, Text};
use crate::opportunity::{Gathered, OpportunityKind};
use crate::oracle::Verdict;

/// When fuzz reduction (the kind that changes the test's input values) runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inputs {
    /// In every round, after variant elimination and sequence shortening, before recursion.
    #[default]
    Anytime,
    /// Only once the structural kinds reached their fixpoint on the original inputs; after it,
    /// no structural kind runs again (the tail still does). The structure is then chosen while
    /// the inputs are the ones the failure was found with, so a reduction cannot trade the
    /// original's bug for another one that only the reducer's simplest inputs trigger (measured
    /// on a real three-fault Z3 campaign: docs/results/triage.md).
    Last,
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

/// What the search does next.
pub(super) enum Step {
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
    /// Fingerprints of the opportunities cut into windows of one: an opportunity shown once its
    /// parent was found needed ([`Search::revealed`]) and not among them starts the sizes again.
    singles: HashSet<u64>,
    /// A batching kind's windows of one opportunity found interesting on the current text, in
    /// enumeration order, with their candidates: merged once every window is judged.
    batch: Vec<(Vec<usize>, Candidate)>,
    /// The pending candidate is the merge of `batch`.
    merging: bool,
    /// This pass's rejected candidates whose every opportunity has a fingerprint, by those, and
    /// the fingerprints of the opportunities it accepted: what [`Pass::implied_rejection`]
    /// reads.
    rejected: Vec<Arc<[u64]>>,
    applied: HashSet<u64>,
    /// Fingerprints of the live opportunities when the windows were last cut.
    live_prints: HashSet<u64>,
}

impl Pass {
    /// Whether candidate `c` applies every edit a rejected candidate of this pass applied, and
    /// more: some of that one's opportunities are `c`'s, and the others went in since and are
    /// gone. Such a candidate is not judged: an edit added to a failing candidate does not bring
    /// the failure back (the assumption every delta debugger makes; where it does not hold, an
    /// opportunity is kept that could have gone, never one that could not). The case it saves:
    /// `{a, b}` rejected, then `b` alone and another `c` accepted, then `a` alone (measured on
    /// real MF++ output: docs/results/real.md).
    fn implied_rejection(&self, c: &Candidate) -> bool {
        self.rejected.iter().any(|r| {
            r.iter().any(|f| c.prints.contains(f))
                && r.iter().all(|f| {
                    c.prints.contains(f)
                        || (self.applied.contains(f) && !self.live_prints.contains(f))
                })
        })
    }
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
pub(super) struct Search {
    pub(super) text: Text,
    pub(super) round: u64,
    /// Index into [`OpportunityKind::ALL`] of the kind searched now.
    kind: usize,
    /// A main kind accepted a candidate in this round.
    accepted_in_round: bool,
    /// The main kinds reached their fixpoint; the tail kinds run (once).
    in_tail: bool,
    pass: Option<Pass>,
    /// Passes of this round deferred at a smaller size ([`Search::next_size`]), in turn.
    deferred: VecDeque<Pass>,
    /// The size a deferred kind was to go on at: its pass in the next round starts there.
    resume_size: BTreeMap<OpportunityKind, usize>,
    done: bool,
    /// Fingerprints of single opportunities found uninteresting in the current kind's search (edit
    /// caching).
    failed: Learned<u64>,
    /// Candidates accepted so far, of any kind.
    accepts: u64,
    /// Fuzz reductions accepted so far (they change the values the test computes).
    value_accepts: u64,
    /// Each kind's `failed` when its last pass ended, with `accepts` and `value_accepts` then:
    /// its next pass keeps them ([`Search::failed_of`]).
    failed_before: BTreeMap<OpportunityKind, (Learned<u64>, u64, u64)>,
    /// Texts accepted so far (never offered again, so the search ends even if a pass cycles).
    history: Learned<blake3::Hash>,
    /// How likely each opportunity is to be needed, for speculation.
    beliefs: Beliefs,
    /// [`Inputs::Last`].
    inputs_last: bool,
    /// The structural kinds reached their fixpoint (with `inputs_last`).
    inputs_phase: bool,
    /// [`OpportunityKind::TailAll`]'s candidate was judged uninteresting: every input deletion
    /// at once is then uninteresting too (the tail edits it adds keep the test's meaning), so
    /// `tail_inputs` does not judge that window again ([`Search::first_size`]).
    tail_all_rejected: bool,
}

impl Search {
    pub(super) fn new(start: Vec<u8>, inputs: Inputs) -> Search {
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
            resume_size: BTreeMap::new(),
            done: false,
            failed: Learned::default(),
            accepts: 0,
            value_accepts: 0,
            failed_before: BTreeMap::new(),
            history,
            beliefs: Beliefs::default(),
            inputs_last: inputs == Inputs::Last,
            inputs_phase: false,
            tail_all_rejected: false,
        }
    }

    /// The kind searched now.
    pub(super) fn current_kind(&self) -> OpportunityKind {
        let kinds = OpportunityKind::ALL;
        self.pass
            .as_ref()
            .map_or(kinds[self.kind.min(kinds.len() - 1)], |p| p.kind)
    }

    /// Advance to the next candidate to judge, the next accept, or the end.
    pub(super) fn next(&mut self, workshop: &mut Workshop<'_>) -> anyhow::Result<Step> {
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
            let Some(windows) = pass.windows.take() else {
                self.cut_windows(pass, workshop)?;
                continue;
            };
            if windows.next < windows.list.len() {
                self.offer_window(pass, windows, workshop)?;
            } else if let Some(step) = self.windows_done(pass, windows, workshop)? {
                return Ok(step);
            }
        }
    }

    /// Cut `pass`'s windows on the current text from its live opportunities not yet visited at
    /// its size; with none, the pass goes on at the next size (or ends).
    fn cut_windows(&mut self, mut pass: Pass, workshop: &mut Workshop<'_>) -> anyhow::Result<()> {
        let kind = pass.kind;
        let gathered = workshop.gather(&self.text, kind)?;
        let live = self.live(&*gathered);
        if live.is_empty() {
            self.end_pass(&pass);
            return Ok(());
        }
        pass.live = live.len();
        pass.live_prints = live.iter().filter_map(|(_, f)| *f).collect();
        let Some(first) = self.first_size(&pass) else {
            self.end_pass(&pass);
            return Ok(());
        };
        let size = window_size(kind, first, live.len());
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
            return self.next_size(pass, size, workshop);
        }
        if size == 1 {
            pass.singles
                .extend(fresh.iter().filter_map(|&i| gathered.fingerprint(i)));
        }
        pass.windows = Some(Windows {
            size,
            list: Arc::new(fresh.chunks(size).map(<[usize]>::to_vec).collect()),
            next: 0,
            seen: HashSet::new(),
        });
        self.pass = Some(pass);
        Ok(())
    }

    /// Build the candidate of the next window: it is pending if it is new on this text, else the
    /// window is skipped.
    fn offer_window(
        &mut self,
        mut pass: Pass,
        mut windows: Windows,
        workshop: &mut Workshop<'_>,
    ) -> anyhow::Result<()> {
        let window = windows.list[windows.next].clone();
        let fresh = workshop.build(&self.text, pass.kind, &window)?.filter(|c| {
            c.text.hash != self.text.hash
                && !self.history.contains(&c.text.hash)
                && windows.seen.insert(c.text.hash)
        });
        match fresh {
            Some(c) if pass.implied_rejection(&c) => {
                // As if judged uninteresting (its edit cached too), with no run.
                if let Some(f) = c.fingerprint {
                    self.failed.insert(f);
                }
                pass.visited.extend(c.prints.iter().copied());
                windows.next += 1;
            }
            Some(c) => pass.pending = Some(c),
            None => windows.next += 1,
        }
        pass.windows = Some(windows);
        self.pass = Some(pass);
        Ok(())
    }

    /// Every window of this size on this text is judged: a batch's merge is judged next, or the
    /// batch's first window goes in (the accept is returned); without a batch the pass goes on
    /// at the next size.
    fn windows_done(
        &mut self,
        mut pass: Pass,
        windows: Windows,
        workshop: &mut Workshop<'_>,
    ) -> anyhow::Result<Option<Step>> {
        if pass.batch.is_empty() {
            // Nothing interesting at this size on this text.
            self.next_size(pass, windows.size, workshop)?;
            return Ok(None);
        }
        let merge = match pass.merging || pass.batch.len() == 1 {
            true => None,
            false => {
                let all: Vec<usize> = pass.batch.iter().flat_map(|(w, _)| w.clone()).collect();
                workshop.build(&self.text, pass.kind, &all)?.filter(|c| {
                    c.text.hash != self.text.hash && !self.history.contains(&c.text.hash)
                })
            }
        };
        pass.windows = Some(windows);
        if let Some(merged) = merge {
            pass.merging = true;
            pass.pending = Some(merged);
            self.pass = Some(pass);
            return Ok(None);
        }
        // One interesting window, or their merge was not: the first goes in.
        let (_, first) = std::mem::take(&mut pass.batch).remove(0);
        pass.merging = false;
        Ok(Some(self.accept(pass, first)))
    }

    /// The verdict of the candidate [`Search::next`] returned last.
    pub(super) fn feed(&mut self, verdict: Verdict) {
        let Some(pass) = self.pass.as_mut() else {
            return;
        };
        let Some(c) = pass.pending.take() else {
            return;
        };
        let interesting = verdict == Verdict::Interesting;
        self.beliefs.judged(c.kind, c.size, &c.prints, interesting);
        self.tail_all_rejected |= c.kind == OpportunityKind::TailAll && !interesting;
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
        if c.prints.len() == c.size {
            pass.rejected.push(c.prints.clone().into());
        }
        pass.visited.extend(c.prints.iter().copied());
        if let Some(w) = pass.windows.as_mut() {
            w.next += 1;
        }
    }

    /// The size `pass` cuts its windows at: its own, except that `tail_inputs`' first window of
    /// every input deletion is skipped when `tail_all` was rejected (it holds those deletions):
    /// it starts at half of them, and with one opportunity it has nothing left to judge (`None`).
    fn first_size(&self, pass: &Pass) -> Option<Option<usize>> {
        if pass.kind != OpportunityKind::TailInputs
            || pass.size.is_some()
            || !self.tail_all_rejected
        {
            return Some(pass.size);
        }
        (pass.live > 1).then(|| Some(pass.live.div_ceil(2)))
    }

    /// The pass goes on at the size after `size`, or ends after size 1. A main kind's pass that
    /// has accepted nothing and has at least [`DEFER_MIN`] live opportunities is deferred instead
    /// (the last main kind only when the round accepted something): it goes on at the smaller
    /// size after the round's other kinds, if none of them accepts. After size 1, opportunities
    /// shown since (their parent was found needed alone) start the sizes again.
    fn next_size(
        &mut self,
        mut pass: Pass,
        size: usize,
        workshop: &mut Workshop<'_>,
    ) -> anyhow::Result<()> {
        if size <= 1 {
            if self.revealed(&pass, workshop)? {
                pass.size = None;
                pass.windows = None;
                self.pass = Some(pass);
            } else {
                self.end_pass(&pass);
            }
            return Ok(());
        }
        // A batching kind with few live opportunities judges them one by one.
        pass.size = Some(match pass.kind.batches() && pass.live <= BATCH_MAX {
            true => 1,
            false => smaller(size),
        });
        pass.windows = None;
        // Something can still unblock it: a later main kind in this round, (once the round
        // accepted nothing) the other deferred kinds' smaller sizes, or, for the last main kind,
        // the next round that an accept earlier in this round starts.
        let later = pass.resumed
            || self.accepted_in_round
            || OpportunityKind::ALL
                .get(self.kind + 1)
                .is_some_and(|k| self.runs_now(*k));
        if !pass.accepted && !pass.kind.is_tail() && pass.live >= DEFER_MIN && later {
            self.end_pass(&pass);
            if let Some(size) = pass.size {
                self.resume_size.insert(pass.kind, size);
            }
            pass.resumed = true;
            self.deferred.push_back(pass);
        } else {
            self.pass = Some(pass);
        }
        Ok(())
    }

    /// The opportunities of `gathered` still to try, with their fingerprints: not found
    /// uninteresting alone, and shown: without a parent, or with one found needed alone
    /// ([`Gathered::parent`]; a fold is tried before the folds inside what it removes).
    fn live(&self, gathered: &dyn Gathered) -> Vec<(usize, Option<u64>)> {
        let prints: Vec<Option<u64>> = (0..gathered.len())
            .map(|i| gathered.fingerprint(i))
            .collect();
        let needed = |f: Option<u64>| f.is_some_and(|f| self.failed.contains(&f));
        (0..gathered.len())
            .filter(|&i| !needed(prints[i]))
            .filter(|&i| {
                gathered.parent(i).is_none_or(|p| {
                    prints
                        .get(p)
                        .copied()
                        .flatten()
                        .is_none_or(|f| self.failed.contains(&f))
                })
            })
            .map(|i| (i, prints[i]))
            .collect()
    }

    /// Some opportunity was shown after `pass` cut its windows of one.
    fn revealed(&self, pass: &Pass, workshop: &mut Workshop<'_>) -> anyhow::Result<bool> {
        let gathered = workshop.gather(&self.text, pass.kind)?;
        Ok(self
            .live(&*gathered)
            .iter()
            .any(|(_, f)| f.is_some_and(|f| !pass.singles.contains(&f))))
    }

    /// The pass is over: the search goes on with the next kind (a resumed pass was not the
    /// current kind's).
    fn end_pass(&mut self, pass: &Pass) {
        self.failed_before.insert(
            pass.kind,
            (self.failed.clone(), self.accepts, self.value_accepts),
        );
        if !pass.resumed {
            self.kind += 1;
        }
    }

    /// Make `c` the current text; the pass goes on at the same window size on it.
    fn accept(&mut self, mut pass: Pass, c: Candidate) -> Step {
        let before = self.text.bytes.len();
        self.history.insert(c.text.hash);
        self.accepts += 1;
        if c.kind == OpportunityKind::Fuzz {
            self.value_accepts += 1;
        }
        self.text = c.text;
        pass.applied.extend(c.prints.iter().copied());
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

    /// Whether `kind` is a main kind the rounds run now: once the structure reached its fixpoint
    /// ([`Inputs::Last`]), fuzz reduction is the only one left.
    fn runs_now(&self, kind: OpportunityKind) -> bool {
        !kind.is_tail() && (!self.inputs_phase || kind == OpportunityKind::Fuzz)
    }

    /// Start the next kind, the next round, the tail, or end the search.
    fn start_pass(&mut self) {
        let kinds = OpportunityKind::ALL;
        loop {
            let fuzz_at = kinds.iter().position(|k| *k == OpportunityKind::Fuzz);
            let main_done = kinds.get(self.kind).is_none_or(|k| !self.runs_now(*k));
            if self.inputs_last && !self.inputs_phase && Some(self.kind) == fuzz_at {
                self.kind += 1;
                continue;
            }
            if main_done && !self.in_tail && self.inputs_phase {
                if self.accepted_in_round {
                    self.accepted_in_round = false;
                    self.kind = fuzz_at.unwrap_or(0);
                    continue;
                }
                self.in_tail = true;
                self.kind = kinds
                    .iter()
                    .position(|k| k.is_tail())
                    .unwrap_or(kinds.len());
            }
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
                    self.resume_size.remove(&pass.kind);
                    self.failed = self.failed_of(pass.kind);
                    self.pass = Some(pass);
                    return;
                }
                if self.inputs_last && !self.inputs_phase {
                    self.inputs_phase = true;
                    self.kind = fuzz_at.unwrap_or(0);
                    continue;
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
                size: self.resume_size.remove(&kind),
                windows: None,
                visited: HashSet::new(),
                visited_size: 0,
                pending: None,
                winner: None,
                live: 0,
                accepted: false,
                resumed: false,
                singles: HashSet::new(),
                batch: Vec::new(),
                merging: false,
                rejected: Vec::new(),
                applied: HashSet::new(),
                live_prints: HashSet::new(),
            });
            return;
        }
    }

    /// What `kind`'s search starts with as found uninteresting: what its last pass found, if
    /// no fuzz reduction was accepted since (it changes the values the test computes, so any
    /// verdict may change; measured: kept across one, a recursion fold that had become possible
    /// was missed), and for fuzz reduction itself only if nothing was accepted since (its
    /// verdicts depend on every value the other kinds change).
    fn failed_of(&self, kind: OpportunityKind) -> Learned<u64> {
        match self.failed_before.get(&kind) {
            Some((failed, at, values)) if *values == self.value_accepts => {
                if kind != OpportunityKind::Fuzz || *at == self.accepts {
                    failed.clone()
                } else {
                    Learned::default()
                }
            }
            _ => Learned::default(),
        }
    }

    /// The next candidate to judge, past accepts; `None` at the end (or when the text cannot
    /// be read).
    pub(super) fn advance(&mut self, workshop: &mut Workshop<'_>) -> Option<Candidate> {
        loop {
            match self.next(workshop) {
                Ok(Step::Judge(c)) => return Some(c),
                Ok(Step::Accepted { .. }) => {}
                Ok(Step::Done) | Err(_) => return None,
            }
        }
    }

    /// Move what this state learned into its shared sets.
    pub(super) fn settle(&mut self) {
        self.failed.settle();
        self.history.settle();
        self.beliefs.settle();
    }

    /// The chance that `c` is interesting, for speculation ([`Beliefs::chance`]).
    pub(super) fn chance(&self, c: &Candidate) -> f64 {
        self.beliefs
            .chance(c.kind, &c.prints, c.size.saturating_sub(c.prints.len()))
            .clamp(0.02, 0.98)
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
