//! What the probes' log says (read by [`super::probe_log`]): which run of the instrumented
//! test failed and how, and the library operation whose value is wrong.
//!
//! A call that throws or dies is the culprit of its run before any value. Otherwise each pair of
//! values of one probed call that differ (the call's own and another way's, or two other ways')
//! says that one of the two computations applied a faulty operation; with one fault, the culprit
//! is an operation that one side of *every* such pair computes with: the intersection, over the
//! differing pairs, of the operations either side computes with (an instance call computes with
//! everything it reaches). Where several operations remain, those that the most differing pairs
//! apply on one side only are kept, then those that the fewest pairs of agreeing values both
//! computed with (agreement at other operands clears an operation only weakly: a fault may fire
//! for some operand shapes only). When the differing pairs share no operation (two faults in one
//! run), only the pairs with the call's own value count; when those share none either, the
//! reading is `undecided` (the value knockouts of `super` may then tell the faults apart). A call
//! whose own value is built only from probed calls that each agree with their other ways at their
//! own operands is right, and the other way it differs from names the culprit, even by an
//! operation both apply (a fault that fires for some operands only). Only
//! the pairs inside the calls the failure comes from count, when the log shows them: the calls
//! outside any probe (the variants' steps) whose value differs from every other way, and the
//! probed calls inside them; a wrong value that only another way computed (a second fault that
//! an alternative reached) is left out. A run that fails in a check although every value
//! compared agrees names the check's own calls (`in CHECK`): the values it was given are right.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::instrument::Site;
use super::probe_log::{
    depths, failure_of, record_site, runs_of, same, subtree, ways_of, ProcessLog,
};

/// The evidence for a culprit call.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Evidence {
    /// The function the call is in.
    pub place: String,
    /// The call as written.
    pub call: String,
    /// Its MR family.
    pub family: String,
    /// How it is wrong.
    pub how: String,
    /// Its operands' values, as printed (those the library can print), in argument order.
    #[serde(default)]
    pub operands: Vec<String>,
    /// The values: the call's own (`call`), then each other way's (`family::mr`), as printed.
    pub values: Vec<(String, String)>,
    /// The other ways its value differs from.
    pub differs_from: Vec<String>,
    /// Whether a difference of its values was told by their printed forms: no check of the
    /// test compares values of their type (issue 62).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_printed_form: bool,
    /// What decided the culprit when the values and the value knockouts are both read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// What the log of one instrumented run says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// The program's own failure: the failing check, the uncaught exception or the signal.
    pub failure: Option<String>,
    /// The culprit's library operations, sorted; empty when none could be named.
    pub culprit: Vec<String>,
    /// Why the culprit is the culprit.
    pub evidence: Option<Evidence>,
    /// Why no culprit, when none.
    pub undecided: Option<String>,
}

/// Read `log` (the lines of every run of the instrumented test) against its `sites`.
pub(super) fn read(log: &str, sites: &[Site]) -> Reading {
    read_with(log, sites, None)
}

/// Read `log` as [`read`] does, the search for the deepest wrong call starting at record `at`
/// (the wrong value the failure needs, as a value knockout showed) instead of the first wrong
/// variant step.
pub(super) fn read_at(log: &str, sites: &[Site], at: usize) -> Reading {
    read_with(log, sites, Some(at))
}

/// A record of the failed run whose value differs from every other way it was compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wrong {
    /// The record.
    pub seq: usize,
    /// Its probed call.
    pub site: usize,
    /// The other way that agrees with most of the others (1, 2, …).
    pub way: usize,
    /// Whether a knockout of it can tell anything: not for a variant step that differs from
    /// only one other way (the check compares the steps, so replacing one by another way
    /// removes the failure whichever of the two was wrong).
    pub telling: bool,
}

/// The wrong records of the failed run, deepest first (but a record shown by one other way that
/// computes with an operation the record does not, inside a call shown wrong by two other ways
/// or more that depends on that operation, comes after that call: the other way may be the
/// wrong one, and replacing a right value can take a fault's trigger away), then those shown
/// wrong by two other ways or more (or by one that computes with no library operation, see
/// [`shows_wrong`]) before those shown by one (a single other way that differs may be the wrong
/// one: `one::one_by_div` computes with a faulty `/`), then the latest first: the values a
/// knockout may replace; last of all, a record shown by one other way inside a call its own
/// other ways do not show wrong (its difference did not reach that call: `one::base` against a
/// `one_by_div` whose `/` is faulty, inside a `neg_by_sub_times_two` that agrees with
/// `neg_by_sub_zero`). A record is wrong at its own operands, so replacing a later one asks
/// whether the failure needs that call's own value; replacing an earlier one also changes the
/// operands of the calls after it, and a fault that fires for some operand shapes only
/// (`mod(x, 1)`) goes with them.
pub(super) fn wrong_records(log: &str, sites: &[Site]) -> Vec<Wrong> {
    let runs = runs_of(log);
    let Some(run) = failed_run(&runs, sites) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &(seq, site) in &run.records {
        let Some(s) = sites.get(site) else {
            continue;
        };
        let Some(ways) = wrong_against(run, seq, s) else {
            continue;
        };
        let agreeing = |k: usize| {
            ways.iter()
                .filter(|&&o| o != k && same(run, seq, k, o) == Some(true))
                .count()
        };
        if let Some(k) = ways
            .iter()
            .copied()
            .max_by_key(|&k| (agreeing(k), std::cmp::Reverse(k)))
        {
            out.push((
                shows_wrong(s, &ways),
                out.len(),
                Wrong {
                    seq,
                    site,
                    way: k,
                    telling: ways.len() > 1 || !run.top.contains(&seq),
                },
            ));
        }
    }
    let parent: BTreeMap<usize, usize> = run
        .inside
        .iter()
        .flat_map(|(&outer, inner)| inner.iter().map(move |&i| (i, outer)))
        .collect();
    // The records whose calls enclose record `seq`'s, innermost first.
    let ancestors = |seq: usize| {
        let parent = &parent;
        let mut at = seq;
        std::iter::from_fn(move || {
            at = *parent.get(&at)?;
            Some(at)
        })
    };
    let shown_at: BTreeMap<usize, BTreeSet<String>> = out
        .iter()
        .filter(|&&(shown, _, _)| shown)
        .map(|&(_, _, w)| (w.seq, sites[w.site].reach.iter().cloned().collect()))
        .collect();
    let depth = depths(run);
    let depth_of = |seq: usize| depth.get(&seq).copied().unwrap_or(0);
    // A record shown by one other way that computes with an operation the record does not
    // and the enclosing shown call depends on is knocked out after that call.
    let after = |w: &Wrong| {
        let s = &sites[w.site];
        let extra: BTreeSet<String> = ops_of(s, w.way)
            .difference(&ops_of(s, 0))
            .cloned()
            .collect();
        ancestors(w.seq).find(|outer| {
            shown_at
                .get(outer)
                .is_some_and(|reach| !extra.is_disjoint(reach))
        })
    };
    // A record shown by one other way, inside a call whose value its other ways do not show
    // wrong, is knocked out last: its difference did not reach that call, so replacing it can
    // take the failure away only by making the call wrong (two faults that cancel).
    let masked = |w: &Wrong| {
        ancestors(w.seq)
            .find_map(|outer| {
                let s = record_site(run, sites, outer)?;
                let (differ, agree) = ways_of(run, outer, s);
                (!differ.is_empty() || !agree.is_empty())
                    .then(|| !agree.is_empty() && wrong_against(run, outer, s).is_none())
            })
            .unwrap_or(false)
    };
    out.sort_by_cached_key(|&(shown, at, w)| {
        let (depth, shown) = match after(&w).filter(|_| !shown) {
            Some(outer) => (depth_of(outer), false),
            None => (depth_of(w.seq), shown),
        };
        let last = !shown && masked(&w);
        (
            last,
            std::cmp::Reverse(depth),
            !shown,
            std::cmp::Reverse(at),
        )
    });
    out.into_iter().map(|(_, _, w)| w).collect()
}

/// In the failed run of `log`, the position of the check statement the program failed in,
/// among the test's check statements in text order; `None` when it did not fail in a check.
pub(super) fn failed_check(log: &str, sites: &[Site]) -> Option<usize> {
    let runs = runs_of(log);
    let run = failed_run(&runs, sites)?;
    let check = run.last_check.as_ref()?;
    (failure_of(run).as_ref() == Some(check)).then(|| run.checks - 1)
}

/// The run whose failure is read: the first that did not exit, else the first with differing
/// values.
fn failed_run<'r>(runs: &'r [ProcessLog], sites: &[Site]) -> Option<&'r ProcessLog> {
    let failed = runs.iter().find(|r| !r.exited);
    failed.or_else(|| runs.iter().find(|r| !pairs(r, sites).0.is_empty()))
}

fn read_with(log: &str, sites: &[Site], at: Option<usize>) -> Reading {
    let runs = runs_of(log);
    if runs.is_empty() {
        return undecided("the instrumented test wrote no probe log (did the check run it?)");
    }
    let Some(run) = failed_run(&runs, sites) else {
        return undecided("the instrumented test did not fail, and every probed value agrees");
    };
    let failure = failure_of(run);
    let died = run.exception.is_some() || run.signal.is_some();
    if let Some(s) = run
        .pending
        .last()
        .filter(|_| died)
        .and_then(|&i| sites.get(i))
    {
        let how = match &run.exception {
            Some(e) => format!("it throws {e}"),
            None => "the program dies in it".to_string(),
        };
        return named(failure, s, s.ops.clone(), how, Vec::new(), Vec::new());
    }
    let (differing, agreeing) = pairs(run, sites);
    if differing.is_empty() {
        if let Some(reading) = in_the_check(run, &agreeing) {
            return reading;
        }
    }
    let Suspects {
        differing,
        culprit,
        built_right,
    } = suspects(run, sites, differing, at);
    if culprit.is_empty() {
        let why = if differing.is_empty() {
            "every probed call agrees with the other ways the spec computes it"
        } else {
            "the values that differ share no library operation (more than one fault?)"
        };
        return Reading {
            failure,
            undecided: Some(why.to_string()),
            ..Reading::default()
        };
    }
    let culprit = least_cleared(most_apart(culprit, &differing), &agreeing);
    let own = |p: &&Pair| p.i == 0 && culprit.iter().any(|c| sites[p.site].reach.contains(c));
    let Some(first) = differing
        .iter()
        .filter(own)
        .min_by_key(|p| sites[p.site].reach.len())
        .or(differing.first())
    else {
        return Reading {
            failure,
            undecided: Some("no value the failure comes from differs from another".to_string()),
            ..Reading::default()
        };
    };
    let s = &sites[first.site];
    let differs: Vec<String> = differing
        .iter()
        .filter(|p| p.seq == first.seq && p.i == first.i)
        .map(|p| name_of(s, p.j))
        .collect();
    let mut how = format!(
        "{} differs from {}; each of the run's {} differing pairs of values involves {}",
        name_of(s, first.i),
        differs.join(", "),
        differing.len(),
        culprit.join(" or ")
    );
    if built_right {
        how.push_str(
            "; the call's value is built from values that each agree with the spec's other \
             ways at their own operands, so the other way is the wrong one",
        );
    }
    let values = shown_values(run, first.seq, s);
    let by_printed_form = differing
        .iter()
        .any(|p| p.seq == first.seq && run.printed.contains(&(p.seq, p.i, p.j)));
    let mut reading = named(failure, s, culprit, how, values, differs);
    if let Some(e) = &mut reading.evidence {
        e.by_printed_form = by_printed_form;
        e.operands = run
            .operands
            .range((first.seq, 0)..(first.seq + 1, 0))
            .map(|((_, k), v)| format!("a{k} = {v}"))
            .collect();
    }
    reading
}

/// The culprit named `in CHECK` when the run failed in a check although every value probed agrees
/// (some pair compared, none differing): the values the check was given are right, so the
/// wrong step is in the check's own library calls (a Z3 model evaluation), or in the check
/// itself (a spec bug). `None` when the run did not fail in a check or nothing was compared.
fn in_the_check(run: &ProcessLog, agreeing: &[BTreeSet<String>]) -> Option<Reading> {
    let check = run.last_check.as_ref()?;
    if agreeing.is_empty() || failure_of(run).as_ref() != Some(check) {
        return None;
    }
    let how = format!(
        "every probed value agrees with the other ways the spec computes it ({} pairs), yet \
         `{check}` fails: the wrong step is in the check's own library calls, or in the check \
         itself (a spec bug)",
        agreeing.len()
    );
    Some(Reading {
        failure: Some(check.clone()),
        culprit: vec![format!("in {check}")],
        evidence: Some(Evidence {
            place: "main".to_string(),
            call: check.clone(),
            family: "the spec's check".to_string(),
            how,
            ..Evidence::default()
        }),
        undecided: None,
    })
}

fn undecided(why: &str) -> Reading {
    Reading {
        undecided: Some(why.to_string()),
        ..Reading::default()
    }
}

fn named(
    failure: Option<String>,
    s: &Site,
    culprit: Vec<String>,
    how: String,
    values: Vec<(String, String)>,
    differs_from: Vec<String>,
) -> Reading {
    Reading {
        failure,
        culprit,
        evidence: Some(Evidence {
            place: s.place.clone(),
            call: s.call.clone(),
            family: s.family.clone(),
            how,
            operands: Vec::new(),
            values,
            differs_from,
            ..Evidence::default()
        }),
        undecided: None,
    }
}

/// Two values of one probed call compared: record `seq` of `site`, values `i` < `j` (0: the
/// call's own), and the operations either side computes with.
struct Pair {
    seq: usize,
    site: usize,
    i: usize,
    j: usize,
    ops: BTreeSet<String>,
    /// The operations one side computes with and the other does not.
    apart: BTreeSet<String>,
}

/// The run's pairs of values that differ, in record order, and the operations both sides of
/// each pair that agrees compute with.
fn pairs(run: &ProcessLog, sites: &[Site]) -> (Vec<Pair>, Vec<BTreeSet<String>>) {
    let mut differing = Vec::new();
    let mut agreeing = Vec::new();
    for &(seq, site) in &run.records {
        let Some(s) = sites.get(site) else {
            continue;
        };
        for i in 0..=s.alternatives.len() {
            for j in i + 1..=s.alternatives.len() {
                let (a, b) = (ops_of(s, i), ops_of(s, j));
                match run.same.get(&(seq, i, j)) {
                    Some(0) => differing.push(Pair {
                        seq,
                        site,
                        i,
                        j,
                        ops: a.union(&b).cloned().collect(),
                        apart: a.symmetric_difference(&b).cloned().collect(),
                    }),
                    Some(1) => agreeing.push(a.intersection(&b).cloned().collect()),
                    _ => {}
                }
            }
        }
    }
    (differing, agreeing)
}

/// The operations value `k` of site `s` computes with: the call's own (`0`: all it reaches) or
/// its other way `k`'s.
fn ops_of(s: &Site, k: usize) -> BTreeSet<String> {
    match k {
        0 => s.reach.iter().cloned().collect(),
        _ => s.alternatives[k - 1].ops.iter().cloned().collect(),
    }
}

/// The differing pairs that count and the operations they suspect ([`suspects`]).
struct Suspects {
    differing: Vec<Pair>,
    culprit: BTreeSet<String>,
    /// Whether the call's own value was shown right ([`built_right`]), the culprit its other
    /// way's.
    built_right: bool,
}

/// The differing pairs that count and the operations they suspect: inside the deepest call the
/// failure plainly comes from ([`descend`]), the pairs with that subtree's own values and the
/// operations they share among that call's suspects, but the operation of a call inside it
/// that computes with one operation only and gave a right value at its own operands (see
/// [`right_at`]; a right value of several operations may be two faults that cancel, as in
/// `-(-x)`), unless none would be left: then, when the call's value is built from right values
/// only, the operations of the other ways it differs from ([`built_right`]), else all of them
/// (when another way agrees with that call's wrong value, the pairs with its own value and the
/// operations that split its ways, see [`split`]); else every pair and the operations they all
/// share (those with a call's own value, when all share none).
fn suspects(
    run: &ProcessLog,
    sites: &[Site],
    differing: Vec<Pair>,
    from: Option<usize>,
) -> Suspects {
    let plain = |differing, culprit| Suspects {
        differing,
        culprit,
        built_right: false,
    };
    match descend(run, sites, from) {
        Some((at, suspects)) => {
            let within = subtree(run, at);
            if let Some((_, split)) = record_site(run, sites, at).and_then(|s| split(run, at, s)) {
                let own = differing
                    .into_iter()
                    .filter(|p| p.i == 0 && p.seq == at)
                    .collect();
                return plain(own, split);
            }
            let own: Vec<Pair> = differing
                .into_iter()
                .filter(|p| p.i == 0 && within.contains(&p.seq) && !outvoted(run, sites, p))
                .filter(|p| p.seq == at || counts_against(run, sites, p))
                .collect();
            let shared_here: BTreeSet<String> = shared(own.iter())
                .intersection(&suspects)
                .cloned()
                .collect();
            let culprit = if shared_here.is_empty() {
                suspects
            } else {
                shared_here
            };
            let right: BTreeSet<String> = within
                .iter()
                .filter(|&&seq| seq != at)
                .filter_map(|&seq| Some((seq, record_site(run, sites, seq)?)))
                .filter(|&(seq, s)| s.reach.len() == 1 && right_at(run, seq, s))
                .flat_map(|(_, s)| s.reach.iter().cloned())
                .collect();
            let left: BTreeSet<String> = culprit.difference(&right).cloned().collect();
            if !left.is_empty() {
                return plain(own, left);
            }
            match built_right(run, sites, at, &within, &right) {
                Some(wrong_way) => Suspects {
                    differing: own,
                    culprit: wrong_way,
                    built_right: true,
                },
                None => plain(own, culprit),
            }
        }
        None => {
            let mut culprit = shared(differing.iter());
            if culprit.is_empty() {
                culprit = shared(differing.iter().filter(|p| p.i == 0));
            }
            plain(differing, culprit)
        }
    }
}

/// When record `at`'s own value (its call's records `within`) is built from right values only,
/// the operations every other way it differs from computes with: its own body makes no library
/// call outside a probed call, each operation it reaches is in `right` (a call of that operation
/// alone gave a right value at its own operands inside it), and every probed call inside it
/// agrees with each of its other ways.
/// Then the call's value is right at its operands, and the other way that differs from it is the
/// wrong one, whatever operations both apply (isl's `s1 ∪ (s2 ∪ s3)` by De Morgan, each step
/// confirmed, against `unite_assoc::base_front`'s `(s1 ∪ s2) ∪ s3`, which a faulty union of an
/// empty set gets wrong). `None` otherwise, or when those ways share no operation.
fn built_right(
    run: &ProcessLog,
    sites: &[Site],
    at: usize,
    within: &BTreeSet<usize>,
    right: &BTreeSet<String>,
) -> Option<BTreeSet<String>> {
    let s = record_site(run, sites, at)?;
    let inner_agree = within.iter().copied().filter(|&seq| seq != at).all(|seq| {
        record_site(run, sites, seq).is_some_and(|inner| {
            let (differ, agree) = ways_of(run, seq, inner);
            differ.is_empty() && !agree.is_empty()
        })
    });
    let (differ, _) = ways_of(run, at, s);
    if !s.ops.is_empty()
        || !inner_agree
        || differ.is_empty()
        || !s.reach.iter().all(|op| right.contains(op))
    {
        return None;
    }
    let wrong_way = differ
        .iter()
        .map(|&k| ops_of(s, k))
        .reduce(|a, b| a.intersection(&b).cloned().collect())?;
    (!wrong_way.is_empty()).then_some(wrong_way)
}

/// Whether the other way of `pair` (a call's own value against another way's) is the odd one
/// out: it differs from every other value of the call, those agree among themselves, and they
/// share no library operation (agreement among ways that all apply one operation says nothing
/// of it). Such a difference comes from that other way's computation (a second fault it
/// reached), not from the call's.
fn outvoted(run: &ProcessLog, sites: &[Site], pair: &Pair) -> bool {
    let Some(s) = sites.get(pair.site) else {
        return false;
    };
    let others: Vec<usize> = (0..=s.alternatives.len())
        .filter(|&k| k != pair.j && same(run, pair.seq, pair.j, k).is_some())
        .collect();
    let independent = others
        .iter()
        .map(|&k| ops_of(s, k))
        .reduce(|a, b| a.intersection(&b).cloned().collect())
        .is_some_and(|common| common.is_empty());
    others.len() > 1
        && independent
        && others
            .iter()
            .all(|&k| same(run, pair.seq, pair.j, k) == Some(false))
        && others.iter().all(|&a| {
            others
                .iter()
                .all(|&b| a >= b || same(run, pair.seq, a, b) != Some(false))
        })
}

/// The deepest call the failure comes from, and the operations it is suspected of: a variant
/// step (a record made outside any probe) whose value differs from every other way while those
/// agree among themselves (the first whose wrongness is shown: by two other ways or more, or by
/// a call inside it wrong as below and shown so; a step, or a call inside it, that differs from
/// its one other way proves no more against itself than against that way, often the other step
/// the check compares it with); then, inside it, the first record that is wrong the same way and
/// whose other ways avoid the suspects (one other way that computes with a suspect proves
/// nothing), one shown by two other ways or more before one shown by a single way, and so on
/// down. A call's suspects are all the operations its value depends on: an
/// other way that computes with one of them at other operands does not clear it, as a fault may
/// fire for some operand shapes only. With `from`, the search starts at that record instead (the
/// wrong value a value knockout showed the failure needs). `None` when no step is wrong so
/// plainly.
fn descend(
    run: &ProcessLog,
    sites: &[Site],
    from: Option<usize>,
) -> Option<(usize, BTreeSet<String>)> {
    let site_of: BTreeMap<usize, &Site> = run
        .records
        .iter()
        .filter_map(|&(seq, site)| Some((seq, sites.get(site)?)))
        .collect();
    let wrong = |seq: usize, suspects: Option<&BTreeSet<String>>| -> bool {
        let Some(s) = site_of.get(&seq) else {
            return false;
        };
        let Some(ways) = wrong_against(run, seq, s) else {
            return false;
        };
        let agree = ways.iter().all(|&a| {
            ways.iter()
                .all(|&b| a >= b || same(run, seq, a, b) != Some(false))
        });
        agree && !suspects.is_some_and(|suspects| proves_nothing(s, &ways, suspects))
    };
    let suspects_of =
        |seq: usize| -> BTreeSet<String> { site_of[&seq].reach.iter().cloned().collect() };
    let mut at = match from {
        Some(seq) => seq,
        None => {
            let steps: Vec<usize> = run
                .top
                .iter()
                .copied()
                .filter(|&seq| wrong(seq, None))
                .collect();
            let shown = |seq: usize| {
                let suspects = suspects_of(seq);
                strongly_wrong(run, seq, site_of[&seq])
                    || subtree(run, seq).iter().any(|&inner| {
                        inner != seq
                            && wrong(inner, Some(&suspects))
                            && strongly_wrong(run, inner, site_of[&inner])
                    })
            };
            steps
                .iter()
                .copied()
                .find(|&seq| shown(seq))
                .or(steps.first().copied())?
        }
    };
    let mut suspects = suspects_of(at);
    loop {
        let within = subtree(run, at);
        let inner: Vec<usize> = run
            .records
            .iter()
            .map(|&(seq, _)| seq)
            .filter(|&seq| seq != at && within.contains(&seq) && wrong(seq, Some(&suspects)))
            .collect();
        let inner = inner
            .iter()
            .copied()
            .find(|&seq| strongly_wrong(run, seq, site_of[&seq]))
            .or(inner.first().copied());
        match inner {
            Some(seq) => {
                at = seq;
                suspects = suspects_of(seq);
            }
            None => return Some((at, suspects)),
        }
    }
}

/// The other ways of record `seq` (of site `s`) its own value differs from, when they show it
/// wrong: when it differs from every way it was compared with (and there is at least one), or
/// when they [`split`] its ways; `None` otherwise.
fn wrong_against(run: &ProcessLog, seq: usize, s: &Site) -> Option<Vec<usize>> {
    let (differ, agree) = ways_of(run, seq, s);
    if agree.is_empty() {
        return (!differ.is_empty()).then_some(differ);
    }
    split(run, seq, s).map(|(differ, _)| differ)
}

/// When the ways of record `seq` (of site `s`) split by operation: its own value and one other
/// way or more agree, two other ways or more agree against them, and some operations are
/// computed with by every value on the first side and by none on the second (a faulty
/// `mod(x, 1)` inside a zero generator agrees with `zero::zero_by_mod`; `zero::base` and
/// `zero::zero_by_div` agree against both, and only `mod` tells the sides apart). Agreement
/// between two ways that both apply an operation says nothing of it; the ways on the second
/// side must not share an operation the call does not compute with, or their agreement could
/// come from a fault of their own. Returns the second side and those operations.
fn split(run: &ProcessLog, seq: usize, s: &Site) -> Option<(Vec<usize>, BTreeSet<String>)> {
    let (differ, agree) = ways_of(run, seq, s);
    let common = |ways: &[usize]| {
        ways.iter()
            .map(|&k| ops_of(s, k))
            .reduce(|a, b| a.intersection(&b).cloned().collect())
            .unwrap_or_default()
    };
    let own = ops_of(s, 0);
    let against: BTreeSet<String> = differ.iter().flat_map(|&k| ops_of(s, k)).collect();
    let ops: BTreeSet<String> = common(&agree)
        .intersection(&own)
        .filter(|op| !against.contains(*op))
        .cloned()
        .collect();
    let agreeing = differ.iter().all(|&a| {
        differ
            .iter()
            .all(|&b| a >= b || same(run, seq, a, b) == Some(true))
    });
    (!agree.is_empty()
        && differ.len() > 1
        && agreeing
        && common(&differ).is_subset(&own)
        && !ops.is_empty())
    .then_some((differ, ops))
}

/// Whether record `seq` (of site `s`) gave a right value at the operands of this run: it agrees
/// with more of the other ways it was compared with than it differs from, they do not show it
/// wrong ([`wrong_against`]), and each way it differs from computes with an operation the call
/// does not (the difference may come from there).
fn right_at(run: &ProcessLog, seq: usize, s: &Site) -> bool {
    let (differ, agree) = ways_of(run, seq, s);
    agree.len() > differ.len()
        && wrong_against(run, seq, s).is_none()
        && differ.iter().all(|&k| !adds_no_operation(s, k))
}

/// Whether other way `k` of site `s` computes with no operation the call does not: a
/// difference between them comes from the call's own operations, at one side's operands.
fn adds_no_operation(s: &Site, k: usize) -> bool {
    ops_of(s, k).is_subset(&ops_of(s, 0))
}

/// Whether `pair` (a call's own value against another way's) counts against the call's
/// operations: the call is wrong against its ways ([`wrong_against`]), or the other way computes
/// with nothing the call does not. A call whose value agrees with other ways and differs from
/// one that computes with more (Z3's `1 == 0` against `0 == 1 - 0`, which a faulty `0 == b` gets
/// wrong) is not evidence against its operation.
fn counts_against(run: &ProcessLog, sites: &[Site], pair: &Pair) -> bool {
    let Some(s) = sites.get(pair.site) else {
        return false;
    };
    wrong_against(run, pair.seq, s).is_some() || adds_no_operation(s, pair.j)
}

/// Whether `ways` (the other ways a record of site `s` is wrong against) show it wrong by
/// more than one difference: two ways or more, or one that computes with no library operation
/// (`identity::base`, which returns its argument, or a C++ `if`), which no library fault can
/// make wrong.
fn shows_wrong(s: &Site, ways: &[usize]) -> bool {
    ways.len() > 1
        || ways
            .iter()
            .any(|&k| s.alternatives.get(k - 1).is_some_and(|a| a.ops.is_empty()))
}

/// Whether record `seq` (of site `s`) is wrong and [`shows_wrong`] says so.
fn strongly_wrong(run: &ProcessLog, seq: usize, s: &Site) -> bool {
    wrong_against(run, seq, s).is_some_and(|ways| shows_wrong(s, &ways))
}

/// Whether `ways` (the other ways that show a record of site `s` wrong) are one other way only,
/// one that computes with an operation of `suspects` (those an enclosing wrong call's value
/// depends on): that difference proves nothing about the record, as the other way may be the
/// wrong one.
fn proves_nothing(s: &Site, ways: &[usize], suspects: &BTreeSet<String>) -> bool {
    matches!(ways, [one] if !ops_of(s, *one).is_disjoint(suspects))
}

/// The operations every one of `pairs` involves.
fn shared<'a>(mut pairs: impl Iterator<Item = &'a Pair>) -> BTreeSet<String> {
    let Some(first) = pairs.next() else {
        return BTreeSet::new();
    };
    pairs.fold(first.ops.clone(), |acc, p| {
        acc.intersection(&p.ops).cloned().collect()
    })
}

/// Of `culprit`, the operations that the most differing pairs compute with on one side only
/// (an operation both sides apply is less likely the one that made them differ).
fn most_apart(culprit: BTreeSet<String>, differing: &[Pair]) -> BTreeSet<String> {
    let apart = |op: &String| differing.iter().filter(|p| p.apart.contains(op)).count();
    let most = culprit.iter().map(apart).max().unwrap_or(0);
    culprit.into_iter().filter(|op| apart(op) == most).collect()
}

/// Of `culprit`, the operations that the fewest agreeing pairs both computed with, sorted.
fn least_cleared(culprit: BTreeSet<String>, agreeing: &[BTreeSet<String>]) -> Vec<String> {
    let cleared = |op: &String| agreeing.iter().filter(|a| a.contains(op)).count();
    let least = culprit.iter().map(cleared).min().unwrap_or(0);
    culprit
        .into_iter()
        .filter(|op| cleared(op) == least)
        .collect()
}

/// Name of value `k` of site `s`: `call` or the other way's MR.
fn name_of(s: &Site, k: usize) -> String {
    match k {
        0 => "call".to_string(),
        _ => s
            .alternatives
            .get(k - 1)
            .map_or_else(|| format!("way {k}"), |a| a.mr.clone()),
    }
}

fn shown_values(run: &ProcessLog, seq: usize, s: &Site) -> Vec<(String, String)> {
    (0..=s.alternatives.len())
        .filter_map(|k| Some((name_of(s, k), run.values.get(&(seq, k))?.clone())))
        .collect()
}

#[cfg(test)]
mod tests;
