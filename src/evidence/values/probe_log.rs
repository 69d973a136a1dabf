//! The probes' log (see `runtime.hpp` for its lines) read into plain data: one [`ProcessLog`] per
//! process, in the order they started, with its records (which probed call, made inside which),
//! the values and operands each record printed, the comparisons of its values by way (by the
//! test's checks, or by the printed forms where no check compares their type), the check
//! it was in and how it ended; and the plain questions asked of that data (do two values of a
//! record agree, which records a call made, how deep). What the data says, the culprit, is
//! [`super::decide`]'s.

use std::collections::{BTreeMap, BTreeSet};

use super::instrument::Site;

/// One process's lines: its records, the values and comparisons its probes wrote, and how it
/// ended.
#[derive(Default)]
pub(super) struct ProcessLog {
    /// The probed calls entered and not yet left, outermost first.
    pub pending: Vec<usize>,
    /// The records made inside each pending probe so far (parallel to `pending`).
    open: Vec<Vec<usize>>,
    /// The records made inside the probe that left last.
    left: Vec<usize>,
    /// The records made inside each record's call.
    pub inside: BTreeMap<usize, Vec<usize>>,
    /// The records made outside any probe, in order.
    pub top: Vec<usize>,
    /// Every record, in order: its number and its probed call (site).
    pub records: Vec<(usize, usize)>,
    /// The values as printed, by record and way (0: the call's own).
    pub values: BTreeMap<(usize, usize), String>,
    /// The operands as printed, by record and argument.
    pub operands: BTreeMap<(usize, usize), String>,
    /// The comparisons, by record and ways `i` < `j`: 1 agree, 0 differ, else not told.
    pub same: BTreeMap<(usize, usize, usize), u8>,
    /// The comparisons told by the values' printed forms (no check of the test compares values
    /// of their type), by record and ways.
    pub printed: BTreeSet<(usize, usize, usize)>,
    /// The last check the program entered.
    pub last_check: Option<String>,
    /// How many check statements the program entered (the last one is the `checks`-th of the
    /// test's, in text order: `main` runs straight through).
    pub checks: usize,
    /// The uncaught exception, if any.
    pub exception: Option<String>,
    /// The signal the program died of, if any.
    pub signal: Option<String>,
    /// Whether the program exited.
    pub exited: bool,
}

/// The runs in the log, by process, in the order they started.
pub(super) fn runs_of(log: &str) -> Vec<ProcessLog> {
    let mut order: Vec<&str> = Vec::new();
    let mut runs: BTreeMap<&str, ProcessLog> = BTreeMap::new();
    for line in log.lines() {
        let mut words = line.splitn(3, ' ');
        let (Some(pid), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let rest = words.next().unwrap_or("");
        if !runs.contains_key(pid) {
            order.push(pid);
        }
        let run = runs.entry(pid).or_default();
        let nums: Vec<usize> = rest.split(' ').filter_map(|w| w.parse().ok()).collect();
        match (what, nums.as_slice()) {
            ("enter", [site]) => {
                run.pending.push(*site);
                run.open.push(Vec::new());
            }
            ("leave", [site]) => {
                if let Some(i) = run.pending.iter().rposition(|s| s == site) {
                    run.pending.truncate(i);
                    run.left = run.open.drain(i..).next().unwrap_or_default();
                }
            }
            ("record", [seq, site]) => {
                run.records.push((*seq, *site));
                run.inside.insert(*seq, std::mem::take(&mut run.left));
                match run.open.last_mut() {
                    Some(frame) => frame.push(*seq),
                    None => run.top.push(*seq),
                }
            }
            ("same", [seq, i, j, s]) => {
                run.same.insert((*seq, *i, *j), *s as u8);
                if rest.ends_with(" printed") {
                    run.printed.insert((*seq, *i, *j));
                }
            }
            ("value" | "operand", _) => {
                let mut w = rest.splitn(3, ' ');
                if let (Some(Ok(seq)), Some(Ok(k))) = (
                    w.next().map(str::parse::<usize>),
                    w.next().map(str::parse::<usize>),
                ) {
                    let into = match what {
                        "value" => &mut run.values,
                        _ => &mut run.operands,
                    };
                    into.insert((seq, k), w.next().unwrap_or("").to_string());
                }
            }
            ("check", _) => {
                run.last_check = Some(rest.to_string());
                run.checks += 1;
            }
            ("exception", _) => run.exception = Some(rest.to_string()),
            ("signal", _) => run.signal = Some(rest.to_string()),
            ("exit", _) => run.exited = true,
            _ => {}
        }
    }
    order.into_iter().filter_map(|p| runs.remove(p)).collect()
}

/// The run's own failure: an uncaught exception, else the check it aborted in, else the signal.
pub(super) fn failure_of(run: &ProcessLog) -> Option<String> {
    if let Some(e) = &run.exception {
        return Some(format!("exception {e}"));
    }
    match (&run.signal, &run.last_check) {
        (Some(sig), Some(check)) if sig == "6" && run.pending.is_empty() => Some(check.clone()),
        (Some(sig), _) => Some(format!("signal {sig}")),
        (None, _) if !run.exited => Some("killed".to_string()),
        _ => None,
    }
}

/// The other ways of record `seq` its own value differs from, and those it agrees with.
pub(super) fn ways_of(run: &ProcessLog, seq: usize, s: &Site) -> (Vec<usize>, Vec<usize>) {
    (1..=s.alternatives.len())
        .filter(|&k| same(run, seq, 0, k).is_some())
        .partition(|&k| same(run, seq, 0, k) == Some(false))
}

/// The site of record `seq`.
pub(super) fn record_site<'s>(run: &ProcessLog, sites: &'s [Site], seq: usize) -> Option<&'s Site> {
    let &(_, site) = run.records.iter().find(|&&(s, _)| s == seq)?;
    sites.get(site)
}

/// Whether values `i` and `j` of record `seq` agree (`Some(true)`), differ, or could not be told.
pub(super) fn same(run: &ProcessLog, seq: usize, i: usize, j: usize) -> Option<bool> {
    match run.same.get(&(seq, i.min(j), i.max(j))) {
        Some(1) => Some(true),
        Some(0) => Some(false),
        _ => None,
    }
}

/// Record `seq` and every record made inside its call.
pub(super) fn subtree(run: &ProcessLog, seq: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut queue = vec![seq];
    while let Some(s) = queue.pop() {
        if out.insert(s) {
            queue.extend(run.inside.get(&s).into_iter().flatten());
        }
    }
    out
}

/// How many probed calls each record's call is made inside.
pub(super) fn depths(run: &ProcessLog) -> BTreeMap<usize, usize> {
    let mut depth = BTreeMap::new();
    let mut stack: Vec<(usize, usize)> = run.top.iter().map(|&seq| (seq, 0)).collect();
    while let Some((seq, d)) = stack.pop() {
        if depth.insert(seq, d).is_none() {
            stack.extend(
                run.inside
                    .get(&seq)
                    .into_iter()
                    .flatten()
                    .map(|&i| (i, d + 1)),
            );
        }
    }
    depth
}
