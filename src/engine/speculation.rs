//! Speculation: with `jobs` = N, while the search waits for a verdict, the engine follows copies
//! of the search down both verdicts of each candidate whose verdict is not known yet, most likely
//! branch first ([`speculate`], chances from [`super::beliefs`]), and keeps the N most likely
//! candidates running ([`Engine::schedule`]). Runs nothing needs any more are killed (counted as
//! wasted); verdicts of runs that finish early wait for their turn. Speculation stops as soon as a
//! run reports, so a verdict the search waits for is taken in at once.
//!
//! Before the search, [`candidates_ahead`] follows the same speculation from the starting text,
//! so that the caller can judge the likely first candidates while it judges the original, and
//! hand over their verdicts ([`Engine::remember_ahead`]) and the runs still going
//! ([`Engine::adopt`]).

use std::collections::{BinaryHeap, HashSet};
use std::sync::mpsc;

use super::runs::{Flight, RunReport, Runs, StartRun};
use super::search::{Inputs, Search};
use super::workshop::Workshop;
use super::{Candidate, Engine};
use crate::opportunity::{Opportunities, OpportunityKind};
use crate::oracle::Verdict;

/// A speculative continuation of the search: a copy of it fed with assumed verdicts, the
/// candidate it needs next (found when the branch is followed), and the chance that the search
/// gets there.
struct Guess {
    chance: f64,
    /// Tie-break: older branches first.
    order: u64,
    search: Search,
    candidate: Option<Candidate>,
}

impl PartialEq for Guess {
    fn eq(&self, other: &Guess) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Guess {}

impl PartialOrd for Guess {
    fn partial_cmp(&self, other: &Guess) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Guess {
    fn cmp(&self, other: &Guess) -> std::cmp::Ordering {
        self.chance
            .total_cmp(&other.chance)
            .then(other.order.cmp(&self.order))
    }
}

/// At most this many speculative branches are followed per scheduling.
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
/// unknown ones, down both verdicts, most likely branch first, handing every candidate whose verdict
/// is unknown to `speculation` until it has enough or [`SPECULATION_STEPS`] branches were followed.
fn speculate(
    search: &Search,
    first: &Candidate,
    workshop: &mut Workshop<'_>,
    speculation: &mut dyn Speculation,
) -> anyhow::Result<()> {
    let mut branches: BinaryHeap<Guess> = BinaryHeap::new();
    let mut order = 0u64;
    branches.push(Guess {
        chance: 1.0,
        order,
        search: search.clone(),
        candidate: Some(first.clone()),
    });
    let mut expanded = 0;
    while let Some(branch) = branches.pop() {
        if expanded >= SPECULATION_STEPS || speculation.enough() {
            break;
        }
        expanded += 1;
        let Guess {
            chance,
            search: mut copy,
            candidate,
            ..
        } = branch;
        // A copy that cannot go on (e.g. a text that cannot be read) just stops: the search
        // itself will say why if it gets there.
        let Some(candidate) = candidate.or_else(|| copy.advance(workshop)) else {
            continue;
        };
        let mut follow = |mut copy: Search, verdict: Verdict, chance: f64| {
            copy.feed(verdict);
            order += 1;
            branches.push(Guess {
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
    results: &'r mpsc::Receiver<RunReport>,
    /// Reports received while speculating.
    arrived: Vec<RunReport>,
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
        self.news || self.wanted.len() >= self.engine.jobs()
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
    opportunities: &dyn Opportunities,
    start: &[u8],
    inputs: Inputs,
    count: usize,
    on_found: &mut dyn FnMut(OpportunityKind, Vec<u8>),
) -> anyhow::Result<()> {
    if count == 0 {
        return Ok(());
    }
    let mut search = Search::new(start.to_vec(), inputs);
    let mut workshop = Workshop::new(opportunities, true);
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

impl Engine<'_> {
    /// Decide which candidates run now: `c` (the search needs it), then the candidates the
    /// search needs next on its most likely continuations ([`speculate`]), until `jobs` unknown
    /// candidates are found. Runs nothing needs any more are cancelled. Speculation stops early
    /// when a run that is not cancelled reports meanwhile (its verdict may change what is
    /// needed); nothing is cancelled then, and the reports received are returned. Only what runs
    /// depends on timing; what the search decides never does.
    pub(super) fn schedule(
        &mut self,
        search: &Search,
        c: &Candidate,
        workshop: &mut Workshop<'_>,
        flight: &mut Flight<'_>,
    ) -> anyhow::Result<Vec<RunReport>> {
        let Flight {
            runs,
            start,
            results,
        } = flight;
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
        if self.speculates() {
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
}
