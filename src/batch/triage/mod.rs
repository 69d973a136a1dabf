//! Triage of a campaign: the signature of a reduced test, groups of tests with the same signature,
//! `OUTDIR/summary.json` and the printed table.
//!
//! By default (`--group-by value`) a result is signed by the class of its failure (wrong value,
//! crash, hang, exception: not the check that caught it) and the library operation whose value
//! is wrong ([`value_signature`], from the value localiser). With `--group-by library`
//! a result is signed by what triggers its failure: blame's
//! innermost suspects ([`crate::evidence::Blame::triggers`]), one of them or of the MRs inside them
//! chosen over the whole campaign ([`trigger_keys`]), and trigger groups whose MRs bring the same
//! operations merged ([`merge_by_what_triggers_bring`]). Where blame names no trigger, the MR
//! families whose calls the failure needs (the knockouts, [`crate::evidence::needs`]) sign it, else the
//! library operations of its standalone export; those groups merge into subsets
//! ([`merge_into_subsets`]). With `--group-by mrs` the signature is the failing check, exception
//! or signal (read from the stderr tail of the check's run on the reduced test) and the sorted
//! suspect MR families of the reduced test (design §11): blame's suspects (design §10.3, the
//! families of the MR calls whose folding to the family's base makes the failure go away), or
//! `base operations` when the failure survives folding every MR. Where blame cannot decide (the
//! result no longer interesting, an instance without a base MR, no single fold that matters), the
//! families of the steps where a checked variant differs from the reference stand in
//! ([`suspect_mrs`]). Tests that were not reduced are grouped by outcome.

pub(crate) mod explain;
mod group_by;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::journal::{Outcome, Record};
use crate::atomic::write_atomic;
use crate::export::Standalone;
use crate::messages::printable;
use crate::model::{parse_qualified_mr, Instance, Step, TestModel};
use crate::oracle::RunEnd;
use crate::reduce::ReduceOptions;
pub(crate) use group_by::GroupBy;

/// The summary's file name inside the batch output directory.
pub(crate) const SUMMARY: &str = "summary.json";

/// The patterns [`failure_of`] reads a failure with, compiled once: a `metalib::checks` check,
/// an uncaught exception, a signal, an exit status.
static FAILURE_PATTERNS: std::sync::LazyLock<[regex::Regex; 4]> = std::sync::LazyLock::new(|| {
    [
        r"metalib::checks::(\w+)",
        r"instance of '([^']+)'|\bexception ([\w:]+)",
        r"signal (\d+)",
        r"status (\d+)",
    ]
    .map(|p| regex::Regex::new(p).expect("valid regex"))
});

/// What failed, from the check's stderr tail: the `metalib::checks` check named there, else the
/// uncaught exception, else the signal, else how the check script ended.
pub(crate) fn failure_of(stderr_tail: &str, end: RunEnd) -> String {
    let [check, exception, signal, status] = &*FAILURE_PATTERNS;
    if let Some(c) = check.captures(stderr_tail) {
        return c[1].to_string();
    }
    if let Some(c) = exception.captures(stderr_tail) {
        let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
        return format!("exception {name}");
    }
    if let Some(c) = signal.captures(stderr_tail) {
        return format!("signal {}", &c[1]);
    }
    let crashed = status
        .captures_iter(stderr_tail)
        .filter_map(|c| c[1].parse::<i32>().ok())
        .find(|s| (129..160).contains(s));
    match crashed {
        Some(s) => format!("signal {}", s - 128),
        None => end.to_string(),
    }
}

/// The MR family (`relations::shift`) a step calls: a qualified spec MR, or an instance (by its
/// family, else its MR name), else the callee itself.
fn step_family(model: &TestModel, step: &Step) -> String {
    if let Some((kind, family, _)) = parse_qualified_mr(&step.callee) {
        return format!("{}::{family}", kind.namespace());
    }
    match model.instance(&step.callee) {
        Some(i) => instance_family(i),
        None => step.callee.clone(),
    }
}

fn instance_family(instance: &Instance) -> String {
    match (&instance.kind, &instance.family) {
        (Some(kind), Some(family)) => format!("{}::{family}", kind.namespace()),
        _ => instance.mr.clone(),
    }
}

/// The sorted MR families of the steps and instances left in `model`.
pub(crate) fn remaining_mrs(model: &TestModel) -> Vec<String> {
    let steps = model.variants.iter().flat_map(|v| &v.steps);
    let mut mrs: BTreeSet<String> = steps.map(|s| step_family(model, s)).collect();
    mrs.extend(model.instances.iter().map(instance_family));
    mrs.into_iter().collect()
}

/// The suspect MR families of a reduced test where blame cannot decide: the families of the
/// steps where a checked variant differs from the reference `r_0` (another callee at the same
/// position); all remaining families when no step differs.
pub(crate) fn suspect_mrs(model: &TestModel) -> Vec<String> {
    let reference = model.variants.iter().find(|v| v.index == 0);
    let mut suspects = BTreeSet::new();
    for variant in model.variants.iter().filter(|v| v.index != 0) {
        for (i, step) in variant.steps.iter().enumerate() {
            let same = reference
                .and_then(|r| r.steps.get(i))
                .is_some_and(|r| r.callee == step.callee);
            if !same {
                suspects.insert(step_family(model, step));
            }
        }
    }
    if suspects.is_empty() {
        return remaining_mrs(model);
    }
    suspects.into_iter().collect()
}

/// [`Record::suspects_from`] when the failure survives folding every MR to its base.
pub(crate) const BASE_OPERATIONS: &str = "blame: base operations";

/// The triage signature of a reduced test: the failure, then its suspect MR families, or `base
/// operations` when blame found that the library's base operations alone fail.
pub(crate) fn signature(failure: &str, suspects: &[String], from: &str) -> String {
    if from == BASE_OPERATIONS {
        return format!("{failure} | base operations");
    }
    format!("{failure} | {}", suspects.join(" "))
}

/// [`Record::signature_from`] of a library signature.
pub(crate) const FROM_LIBRARY: &str = "library";
/// [`Record::signature_from`] of a signature from the knockouts ([`Record::needs`]).
pub(crate) const FROM_KNOCKOUTS: &str = "knockouts";
/// [`Record::signature_from`] of a signature from blame's innermost suspects
/// ([`Record::triggers`]).
pub(crate) const FROM_TRIGGERS: &str = "triggers";
/// The words between the failure and the trigger in a trigger signature.
const TRIGGERED_BY: &str = "triggered by";

/// Fill the library signature of the reduced `record` (its failure, suspects, blame and knockouts
/// already known; result `text` at `path`). When blame found innermost suspects, the failure and
/// their MRs (`signature_from: triggers`); else, when a knockout decided, the failure and the
/// families whose calls the failure needs (`signature_from: knockouts`). Otherwise the failure and the
/// library operations its standalone export calls, only those the blamed MR calls reach when
/// blame localised the failure (an MR family whose folding removes it); when the export cannot be
/// built, its MR-family signature stands in (`signature_from: mrs`) and the message says why.
pub(crate) fn sign_by_library(record: &mut Record, path: &Path, text: &[u8], ro: &ReduceOptions) {
    if sign_by_triggers(record) || sign_by_knockouts(record) {
        return;
    }
    let failure = record.failure.clone().unwrap_or_default();
    let ops = Standalone::build(path, text, &ro.include_dirs, &ro.specs)
        .and_then(|sa| crate::export::library_operations(&sa));
    match ops {
        Ok(mut ops) => {
            if record.triage.suspects_from == "blame" {
                ops.retain(|op| record.triage.library_calls.contains(op));
            }
            record.sign.library_signature = format!("{failure} | {}", ops.join(" "));
            record.sign.library_ops = ops;
            record.sign.signature_from = FROM_LIBRARY.to_string();
        }
        Err(e) => {
            record.sign.library_signature = record.sign.signature.clone();
            record.sign.library_ops = Vec::new();
            record.sign.signature_from = "mrs".to_string();
            record.note(format!(
                "no standalone export, so no library signature: {e:#}"
            ));
        }
    }
}

/// The class of a failure (a check's name, `exception NAME`, `signal N`, `killed`, or how the
/// check script ended), as the value signature reads it: `exception`, `crash` (a signal),
/// `hang` (killed, timed out), else `wrong value` (a check that failed). Which check caught a
/// wrong value is a property of the test, not of the bug (issue 62): one faulty operation
/// caught by `check_expr_same_sat` in one test and by `check_exprs_are_zero` in another is one
/// bug.
pub(crate) fn failure_class(failure: &str) -> &'static str {
    if failure.starts_with("exception") {
        "exception"
    } else if failure.starts_with("signal") || failure.starts_with("killed by signal") {
        "crash"
    } else if failure == "killed" || failure == "timed out" {
        "hang"
    } else {
        "wrong value"
    }
}

/// The failure the value signature of `record` is read from: the program's own (from the
/// probes' log), else the check's.
fn value_failure(record: &Record) -> &str {
    let own = record
        .triage
        .value
        .as_ref()
        .and_then(|v| v.failure.as_deref());
    own.or(record.failure.as_deref()).unwrap_or_default()
}

/// The value signature of `record` (`None` when it was not localised): the class of its
/// failure ([`failure_class`]) and the culprit's library operations; an undecided result is
/// signed by its own name, so that it stays alone. Computed from the localised value whenever
/// the campaign is grouped, so a journal written before issue 62 (signed by the failing
/// check) groups the same way as a new one.
pub(crate) fn value_signature(record: &Record) -> Option<String> {
    let value = record.triage.value.as_ref()?;
    let class = failure_class(value_failure(record));
    Some(if value.culprit.is_empty() {
        format!("{class} | undecided: {}", record.stem)
    } else {
        format!("{class} | {}", value.culprit.join(" "))
    })
}

/// Fill the value signature of the reduced `record` from its localised wrong value (see
/// [`value_signature`]).
pub(crate) fn sign_by_value(record: &mut Record) {
    if let Some(signature) = value_signature(record) {
        record.sign.value_signature = signature;
    }
}

/// When blame found innermost suspects (`record.triggers` is not empty), sign `record` by the
/// failure and those MRs; its library operations stand for the MRs it may be grouped by (its
/// triggers and the MRs called inside them, see [`trigger_keys`]).
fn sign_by_triggers(record: &mut Record) -> bool {
    if record.triage.triggers.is_empty() {
        return false;
    }
    let failure = record.failure.as_deref().unwrap_or_default();
    record.sign.library_signature = format!(
        "{failure} | {TRIGGERED_BY} {}",
        record.triage.triggers.join(" ")
    );
    let mrs: BTreeSet<&String> = record
        .triage
        .triggers
        .iter()
        .chain(&record.triage.within_triggers)
        .collect();
    record.sign.library_ops = mrs.into_iter().cloned().collect();
    record.sign.signature_from = FROM_TRIGGERS.to_string();
    true
}

/// The key of each trigger-signed record (by stem): its failure and one MR, of its triggers and
/// the MRs called inside them, the one that alone triggers the most results of the campaign (a
/// single innermost suspect with no foldable call inside it), then one of its own triggers, then
/// the first by name. A result whose suspect holds the MR that alone triggers other results joins
/// their group: with several bugs in the library, folding that inner call can change a value so
/// that it reaches another bug, and blame then finds only the outer call needed. An outer MR is
/// never counted, however often it is found so: it is the inner call's evidence that decides. The
/// keys depend only on the set of records.
fn trigger_keys<'a>(records: &[&'a Record]) -> BTreeMap<&'a str, (String, &'a str)> {
    let signed: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.sign.signature_from == FROM_TRIGGERS)
        .collect();
    let mut count: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for r in &signed {
        if let ([t], []) = (
            r.triage.triggers.as_slice(),
            r.triage.within_triggers.as_slice(),
        ) {
            *count
                .entry((r.failure.as_deref().unwrap_or_default(), t))
                .or_default() += 1;
        }
    }
    let mut keys = BTreeMap::new();
    for r in signed {
        let failure = r.failure.as_deref().unwrap_or_default();
        let chosen = r
            .triage
            .triggers
            .iter()
            .chain(&r.triage.within_triggers)
            .max_by_key(|m| {
                (
                    count.get(&(failure, m.as_str())).copied().unwrap_or(0),
                    r.triage.triggers.contains(m),
                    std::cmp::Reverse(m.as_str()),
                )
            });
        if let Some(m) = chosen {
            let key = format!("{failure} | {TRIGGERED_BY} {m}");
            keys.insert(r.stem.as_str(), (key, m.as_str()));
        }
    }
    keys
}

/// Merge each trigger group into the trigger group (same failure) whose MR brings a non-empty
/// subset of what its own MR brings into the computation (the families whose placeholders it
/// calls, the library operations it calls itself; see [`Record::introduces`]): the most specific
/// such group, then the most members, then the signature. Two relations that bring the same
/// operations reach the same library calls with their own operands: `intersect_by_subtract` and
/// `compl_by_subtract` both bring `subtract`, and trigger one subtraction bug. A trigger that
/// brings nothing stays alone. Groups are visited fewest operations first, then most members.
fn merge_by_what_triggers_bring(
    by_signature: &mut BTreeMap<&str, Vec<&Record>>,
    triggered: &BTreeMap<&str, (String, &str)>,
) {
    let brings = |sig: &str, members: &[&Record]| -> Option<BTreeSet<String>> {
        let r = members.first()?;
        let (key, mr) = triggered.get(r.stem.as_str())?;
        (key == sig).then_some(())?;
        let ops = r.triage.introduces.get(*mr)?;
        (!ops.is_empty()).then(|| ops.iter().cloned().collect())
    };
    let trigger_groups: Vec<Mergeable> = by_signature
        .iter()
        .filter_map(|(sig, m)| {
            let ops = brings(sig, m)?;
            Some((*sig, m[0].failure.clone().unwrap_or_default(), ops))
        })
        .collect();
    merge_subsets(by_signature, &trigger_groups, true);
}

/// A group that may be merged: its signature, failure and operations.
type Mergeable<'a> = (&'a str, String, BTreeSet<String>);

/// Merge each of `groups` into another of them with the same failure whose non-empty operations
/// are a subset of its own (a proper one unless `equal_too`): the most specific, then the most
/// members, then the signature. Groups are visited fewest operations first, then most members,
/// so a group is merged into one that stays; the result depends only on the set of signatures.
fn merge_subsets<'a>(
    by_signature: &mut BTreeMap<&'a str, Vec<&Record>>,
    groups: &[Mergeable<'a>],
    equal_too: bool,
) {
    let size = |sig: &str| by_signature.get(sig).map_or(0, Vec::len);
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| {
        (
            groups[i].2.len(),
            std::cmp::Reverse(size(groups[i].0)),
            groups[i].0,
        )
    });
    let mut roots: Vec<usize> = Vec::new();
    let mut moves: Vec<(&str, &str)> = Vec::new();
    for i in order {
        let (sig, failure, ops) = &groups[i];
        let target = roots
            .iter()
            .filter(|&&j| {
                let (_, f, o) = &groups[j];
                f == failure
                    && !o.is_empty()
                    && (equal_too || o.len() < ops.len())
                    && o.is_subset(ops)
            })
            .min_by_key(|&&j| {
                let (s, _, o) = &groups[j];
                (std::cmp::Reverse(o.len()), std::cmp::Reverse(size(s)), *s)
            });
        match target {
            Some(&j) => moves.push((*sig, groups[j].0)),
            None => roots.push(i),
        }
    }
    for (from, to) in moves {
        let members = by_signature.remove(from).unwrap_or_default();
        by_signature.entry(to).or_default().extend(members);
    }
}

/// When a knockout decided (`record.needs` is not empty), sign `record` by the failure and the
/// families whose calls it needs, and say so.
fn sign_by_knockouts(record: &mut Record) -> bool {
    if record.triage.needs.is_empty() {
        return false;
    }
    let failure = record.failure.as_deref().unwrap_or_default();
    record.sign.library_signature = format!("{failure} | needs {}", record.triage.needs.join(" "));
    record.sign.library_ops = record.triage.needs.clone();
    record.sign.signature_from = FROM_KNOCKOUTS.to_string();
    true
}

/// The signature `record` is grouped by: its value signature (computed now, see
/// [`value_signature`]), its library signature (when it has one), else its MR-family one.
pub(crate) fn key(record: &Record, by: GroupBy) -> String {
    match by {
        GroupBy::Value => value_signature(record),
        GroupBy::Library if !record.sign.library_signature.is_empty() => {
            Some(record.sign.library_signature.clone())
        }
        _ => None,
    }
    .unwrap_or_else(|| record.sign.signature.clone())
}

/// The smallest test of a group.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub(crate) struct Representative {
    /// Its directory name under the output directory.
    pub stem: String,
    /// The reduced test (or the input when not reduced).
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
}

/// Tests with the same signature.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub(crate) struct Group {
    /// 1-based, in table order (largest group first).
    pub id: usize,
    /// The shared signature.
    pub signature: String,
    /// Number of tests.
    pub size: usize,
    /// The smallest result.
    pub representative: Representative,
    /// Outcomes of the members.
    pub outcomes: BTreeMap<String, usize>,
    /// Stems of the members, sorted.
    pub members: Vec<String>,
}

/// `OUTDIR/summary.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub(crate) struct CampaignSummary {
    /// Finished tests.
    pub tests: usize,
    /// What the groups are grouped by.
    pub group_by: String,
    /// Tests per outcome.
    pub outcomes: BTreeMap<String, usize>,
    /// Groups of reduced tests, largest first (the bugs found).
    pub groups: Vec<Group>,
    /// Tests that were not reduced, grouped by outcome.
    pub not_reduced: Vec<Group>,
}

/// Group `records` (one per test) by their signature of `by`.
pub(crate) fn summarise(records: &[Record], by: GroupBy) -> CampaignSummary {
    let mut outcomes = BTreeMap::new();
    for r in records {
        *outcomes.entry(r.outcome.name().to_string()).or_insert(0) += 1;
    }
    let (reduced, other): (Vec<&Record>, Vec<&Record>) =
        records.iter().partition(|r| r.outcome == Outcome::Reduced);
    CampaignSummary {
        tests: records.len(),
        group_by: format!("{by:?}").to_lowercase(),
        outcomes,
        groups: groups(&reduced, by),
        not_reduced: groups(&other, GroupBy::Mrs),
    }
}

fn groups(records: &[&Record], by: GroupBy) -> Vec<Group> {
    let triggered = if by == GroupBy::Library {
        trigger_keys(records)
    } else {
        BTreeMap::new()
    };
    let keys: Vec<String> = records
        .iter()
        .map(|r| {
            triggered
                .get(r.stem.as_str())
                .map_or_else(|| key(r, by), |(k, _)| k.clone())
        })
        .collect();
    let mut by_signature: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for (r, k) in records.iter().zip(&keys) {
        by_signature.entry(k).or_default().push(r);
    }
    merge_by_what_triggers_bring(&mut by_signature, &triggered);
    if by == GroupBy::Library {
        merge_into_subsets(&mut by_signature);
    }
    if by == GroupBy::Value {
        merge_value_subsets(&mut by_signature);
    }
    let mut groups: Vec<Group> = by_signature
        .into_iter()
        .map(|(signature, members)| {
            let smallest = members
                .iter()
                .min_by(|a, b| (a.bytes_after, &a.stem).cmp(&(b.bytes_after, &b.stem)))
                .expect("a group has members");
            let mut outcomes = BTreeMap::new();
            for m in &members {
                *outcomes.entry(m.outcome.name().to_string()).or_insert(0) += 1;
            }
            let mut stems: Vec<String> = members.iter().map(|m| m.stem.clone()).collect();
            stems.sort();
            Group {
                id: 0,
                signature: signature.to_string(),
                size: members.len(),
                representative: Representative {
                    stem: smallest.stem.clone(),
                    path: smallest.output.clone().unwrap_or(smallest.input.clone()),
                    bytes: smallest.bytes_after,
                },
                outcomes,
                members: stems,
            }
        })
        .collect();
    groups.sort_by(|a, b| b.size.cmp(&a.size).then(a.signature.cmp(&b.signature)));
    for (i, g) in groups.iter_mut().enumerate() {
        g.id = i + 1;
    }
    groups
}

/// Merge each group of library signatures into the group (same failure) whose library operations
/// are a non-empty proper subset of its own: the most specific such group (the most operations),
/// then the most members, then the signature. Taking the fewest operations instead let a
/// one-operation group swallow every signature that holds that operation: on the real Z3
/// campaign, `needs add` took the `needs add sub zero` of the `Z3_mk_sub` fault away from
/// `needs sub zero`. Groups are visited fewest operations first, so a group is merged into one
/// that stays; the result depends only on the set of signatures, never on the order tests
/// finished.
fn merge_into_subsets(by_signature: &mut BTreeMap<&str, Vec<&Record>>) {
    let library: Vec<Mergeable> = by_signature
        .iter()
        .filter(|(_, m)| {
            [FROM_LIBRARY, FROM_KNOCKOUTS].contains(&m[0].sign.signature_from.as_str())
        })
        .map(|(sig, m)| {
            let ops = m[0].sign.library_ops.iter().cloned().collect();
            (*sig, m[0].failure.clone().unwrap_or_default(), ops)
        })
        .collect();
    merge_subsets(by_signature, &library, false);
}

/// Merge each value group into the value group (same failure class) whose culprit operations are a
/// non-empty proper subset of its own (see [`merge_subsets`]): a result whose evidence could not
/// tell an operation from the others it was computed with joins the group that names it alone.
fn merge_value_subsets(by_signature: &mut BTreeMap<&str, Vec<&Record>>) {
    let named: Vec<Mergeable> = by_signature
        .iter()
        .filter_map(|(sig, m)| {
            let value = m[0].triage.value.as_ref()?;
            let class = failure_class(value_failure(m[0])).to_string();
            let ops = value.culprit.iter().cloned().collect();
            Some((*sig, class, ops))
        })
        .collect();
    merge_subsets(by_signature, &named, false);
}

/// Write `summary` as `dir/summary.json`.
pub(crate) fn write_summary(dir: &Path, summary: &CampaignSummary) -> anyhow::Result<()> {
    let path = dir.join(SUMMARY);
    let json = serde_json::to_vec_pretty(summary).context("cannot serialise the summary")?;
    write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))
}

/// The table printed at the end of a batch.
pub(crate) fn render(summary: &CampaignSummary) -> String {
    let mut out = format!(
        "{} tests: {}\n",
        summary.tests,
        summary
            .outcomes
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str(&format!(
        "{:<6} {:>5}  {:<24} {:>7}  signature\n",
        "group", "size", "smallest", "bytes"
    ));
    let rows = summary.groups.iter().map(|g| (g.id.to_string(), g));
    let others = summary.not_reduced.iter().map(|g| ("-".to_string(), g));
    for (id, g) in rows.chain(others) {
        out.push_str(&format!(
            "{id:<6} {:>5}  {:<24} {:>7}  {}\n",
            g.size,
            printable(&g.representative.stem),
            g.representative.bytes,
            printable(&g.signature)
        ));
    }
    out
}

#[cfg(test)]
mod tests;
