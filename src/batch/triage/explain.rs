//! `mfppr batch explain GROUP -o OUTDIR`: why the members of one group of a finished campaign
//! were grouped. Reads the journal and the summary's `group_by`, groups again exactly as the
//! summary did, and prints the group's signature, the library operations every member calls,
//! each member with what its own signature adds (a member merged into a smaller signature's group
//! calls more), and the representative's standalone export (built now, as triage built it).

use crate::messages::printable;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use super::super::journal::{self, Record};
use super::group_by::GroupBy;
use super::{self as triage};
use crate::error::{coded, ExitKind};
use crate::export::Standalone;
use crate::reduce::ReduceOptions;

/// The explanation of group `id` of the campaign in `out_dir` (see the module docs).
pub(crate) fn explain(out_dir: &Path, id: usize, ro: &ReduceOptions) -> Result<String> {
    let (by, records) = load(out_dir)?;
    let summary = triage::summarise(&records, by);
    let Some(group) = summary.groups.iter().find(|g| g.id == id) else {
        return Err(coded(
            ExitKind::Usage,
            format!(
                "{} has {} group(s) of reduced tests; explain takes 1 to {}",
                out_dir.display(),
                summary.groups.len(),
                summary.groups.len().max(1)
            ),
        ));
    };
    let members: Vec<&Record> = group
        .members
        .iter()
        .filter_map(|m| records.iter().find(|r| &r.stem == m))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "group {id}: {} test(s), grouped by {} — signature `{}`",
        group.size,
        format!("{by:?}").to_lowercase(),
        printable(&group.signature)
    );
    if by == GroupBy::Value {
        for r in &members {
            out.push_str(&member_value(r));
        }
        return Ok(out + &representative(group, ro));
    }
    let shared = shared_ops(&members);
    out.push_str(&why(&members, &shared));
    let _ = writeln!(
        out,
        "members (signature from, bytes after, operations beyond those):"
    );
    for r in &members {
        out.push_str(&member_row(r, &shared));
    }
    Ok(out + &representative(group, ro))
}

/// The group's representative and its standalone export.
fn representative(group: &triage::Group, ro: &ReduceOptions) -> String {
    let rep = &group.representative;
    format!(
        "representative: {} ({}, {} bytes); its standalone export:\n{}",
        printable(&rep.stem),
        crate::messages::printable_path(&rep.path),
        rep.bytes,
        standalone(&rep.path, ro)
    )
}

/// One member's wrong value: the culprit call, how it is wrong, its value and the other ways'
/// at the same operands; or why none was named; then the MR families left in it, as context.
fn member_value(r: &Record) -> String {
    let mut out = format!("{} ({} bytes):\n", printable(&r.stem), r.bytes_after);
    match &r.triage.value {
        None => out.push_str("  not localised (a journal of an older mfppr)\n"),
        Some(v) => {
            let failure = v.failure.as_deref().or(r.failure.as_deref());
            if let Some(failure) = failure {
                let _ = writeln!(
                    out,
                    "  fails in `{}` (a {})",
                    printable(failure),
                    triage::failure_class(failure)
                );
            }
            if let Some(why) = &v.undecided {
                let _ = writeln!(out, "  undecided: {}", printable(why));
            }
            if let Some(e) = &v.evidence {
                let _ = writeln!(
                    out,
                    "  culprit: {} in `{}` ({}), in {}",
                    v.culprit.join(" or "),
                    e.call,
                    e.family,
                    e.place
                );
                let _ = writeln!(out, "  {}", e.how);
                if !e.operands.is_empty() {
                    let _ = writeln!(
                        out,
                        "  at the operands {}",
                        printable(&e.operands.join(", "))
                    );
                }
                for (by, value) in &e.values {
                    let _ = writeln!(out, "    {by:<40} = {}", printable(value));
                }
                if e.by_printed_form {
                    out.push_str(
                        "  (values compared by their printed forms: no check of the test \
                         compares values of their type)\n",
                    );
                }
                if let Some(by) = &e.decided_by {
                    let _ = writeln!(out, "  decided by {}", printable(by));
                }
            }
            if let Some(line) = unchecked_line(&v.unchecked) {
                let _ = writeln!(out, "  {line}");
            }
            let _ = writeln!(out, "  {} calls probed, {} check run(s)", v.probes, v.runs);
            if v.log_cut {
                let _ = writeln!(
                    out,
                    "  (the probe log passed {} MiB and was read to there only)",
                    crate::evidence::run_log::MAX_LOG >> 20
                );
            }
        }
    }
    let _ = writeln!(out, "  MR families left: {}", r.triage.mrs.join(" "));
    out
}

/// What the spec could not check of a culprit ([`crate::batch::value_record::ValueRecord::unchecked`]):
/// whether the operations are a gap in the spec rather than several bugs.
pub(crate) fn unchecked_line(ops: &[String]) -> Option<String> {
    match ops {
        [] => None,
        [op] => Some(format!(
            "no probed call computes {op} alone another way: it is named from the wrong call \
             that computes with it, not shown wrong by itself"
        )),
        _ => Some(format!(
            "no probed call computes {} alone another way: the values cannot tell them apart \
             (a gap in the spec, not several bugs; an MR that computes one of them another way \
             would)",
            ops.join(" or ")
        )),
    }
}

/// What the campaign's summary grouped by, and its latest record per test.
pub(crate) fn load(out_dir: &Path) -> Result<(GroupBy, Vec<Record>)> {
    let summary_path = out_dir.join("summary.json");
    let text =
        crate::input::read_regular(&summary_path, crate::input::MAX_RECORD_BYTES, "a summary")
            .map_err(|e| {
                coded(
                    ExitKind::Input,
                    format!(
                        "cannot read {}: {e}; give the -o of a finished campaign",
                        summary_path.display()
                    ),
                )
            })?;
    let json: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "{} is not a campaign summary ({e}); run `mfppr batch retriage {}` to \
                 write it again",
                summary_path.display(),
                out_dir.display()
            ),
        )
    })?;
    let by = match json["group_by"].as_str() {
        Some("mrs") => GroupBy::Mrs,
        Some("value") => GroupBy::Value,
        _ => GroupBy::Library,
    };
    Ok((
        by,
        crate::batch::campaign::latest_per_stem(journal::read(out_dir)?),
    ))
}

/// The `why:` line: the members' failures and the operations they all call (the MRs that
/// trigger the failure, when blame's innermost suspects signed every member; the MR families
/// whose calls they all need, when the knockouts did).
pub(crate) fn why(members: &[&Record], shared: &BTreeSet<String>) -> String {
    let failures: BTreeSet<&str> = members
        .iter()
        .filter_map(|r| r.failure.as_deref())
        .collect();
    let all_from = |from: &str| members.iter().all(|r| r.sign.signature_from == from);
    let joined = shared.iter().cloned().collect::<Vec<_>>().join(" ");
    let brought = shared_brought(members);
    format!(
        "why: every member fails with {} and {}\n",
        failures
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if all_from(triage::FROM_TRIGGERS) && shared.is_empty() && !brought.is_empty() {
            format!(
                "is triggered by an MR that brings {} into the computation (each member's \
                 trigger below)",
                brought.into_iter().collect::<Vec<_>>().join(" ")
            )
        } else if shared.is_empty() {
            "shares no library operation (their signatures come from MR families or are equal)"
                .to_string()
        } else if all_from(triage::FROM_TRIGGERS) {
            format!(
                "calls the MR {joined} as the innermost call whose folding to its family's base \
                 makes the failure go away, or inside that call"
            )
        } else if all_from(triage::FROM_KNOCKOUTS) {
            format!(
                "needs the calls of the MR families {joined} (each computed by another MR of its \
                 family, the failure goes away)"
            )
        } else {
            format!("calls the library operations {joined}")
        }
    )
}

/// What every member's trigger MRs bring into the computation (see [`Record::introduces`]).
fn shared_brought(members: &[&Record]) -> BTreeSet<String> {
    let mut sets = members.iter().map(|r| {
        r.triage
            .introduces
            .values()
            .flatten()
            .cloned()
            .collect::<BTreeSet<String>>()
    });
    let first = sets.next().unwrap_or_default();
    sets.fold(first, |acc, s| acc.intersection(&s).cloned().collect())
}

/// One member: its stem, where its signature comes from, its size, the operations it adds.
fn member_row(r: &Record, shared: &BTreeSet<String>) -> String {
    let extra: Vec<&str> = r
        .sign
        .library_ops
        .iter()
        .filter(|op| !shared.contains(*op))
        .map(String::as_str)
        .collect();
    format!(
        "  {:<24} {:<8} {:>6}  {}\n",
        printable(&r.stem),
        if r.sign.signature_from.is_empty() {
            "-"
        } else {
            &r.sign.signature_from
        },
        r.bytes_after,
        if extra.is_empty() {
            "-".to_string()
        } else {
            format!("+{}", extra.join(" +"))
        }
    )
}

/// The library operations every member calls (none when a member has none).
pub(crate) fn shared_ops(members: &[&Record]) -> BTreeSet<String> {
    let mut sets = members.iter().map(|r| {
        r.sign
            .library_ops
            .iter()
            .cloned()
            .collect::<BTreeSet<String>>()
    });
    let first = sets.next().unwrap_or_default();
    sets.fold(first, |acc, s| acc.intersection(&s).cloned().collect())
}

/// The standalone export of `path`, formatted, or why there is none.
fn standalone(path: &Path, ro: &ReduceOptions) -> String {
    standalone_export(path, ro)
        .unwrap_or_else(|e| format!("(none: {e:#}; give the campaign's -I flags after --)\n"))
}

/// The standalone export of the reduced test at `path`, built with `ro`'s spec (as triage
/// built it) and formatted.
pub(crate) fn standalone_export(path: &Path, ro: &ReduceOptions) -> Result<String> {
    let text = crate::input::read_regular(
        path,
        crate::input::MAX_TEST_BYTES as u64,
        "a reduced result",
    )?;
    let sa = Standalone::build(path, &text, &ro.include_dirs, &ro.specs)?;
    Ok(crate::export::format(&sa.render(&[])).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::journal::Outcome;

    #[test]
    fn shared_operations_are_those_every_member_calls() {
        let rec = |ops: &[&str]| {
            let mut r = Record::new("/t.cpp".into(), "t".into(), 1, Outcome::Reduced);
            r.sign.library_ops = ops.iter().map(|s| s.to_string()).collect();
            r
        };
        let (a, b) = (rec(&["Z3_mk_add", "Z3_mk_div"]), rec(&["Z3_mk_div"]));
        assert_eq!(
            shared_ops(&[&a, &b]).into_iter().collect::<Vec<_>>(),
            vec!["Z3_mk_div"]
        );
        assert!(shared_ops(&[]).is_empty());
    }

    #[test]
    fn a_member_shows_the_culprit_operations_the_spec_could_not_check() {
        let mut r = Record::new("/t.cpp".into(), "t".into(), 1, Outcome::Reduced);
        r.triage.value = Some(crate::batch::value_record::ValueRecord {
            culprit: vec!["z3::ite".into(), "z3::operator/(x,y)".into()],
            unchecked: vec!["z3::ite".into(), "z3::operator/(x,y)".into()],
            ..Default::default()
        });
        let shown = member_value(&r);
        assert!(
            shown.contains(
                "no probed call computes z3::ite or z3::operator/(x,y) alone another way: the \
                 values cannot tell them apart (a gap in the spec"
            ),
            "{shown}"
        );
        r.triage.value.as_mut().unwrap().unchecked.clear();
        assert!(!member_value(&r).contains("no probed call"));
    }

    #[test]
    fn a_member_shows_the_check_that_caught_it_though_the_signature_does_not() {
        let mut r = Record::new("/t.cpp".into(), "t".into(), 1, Outcome::Reduced);
        r.triage.value = Some(crate::batch::value_record::ValueRecord {
            failure: Some("check_exprs_are_zero".into()),
            culprit: vec!["z3::mod".into()],
            ..Default::default()
        });
        assert!(member_value(&r).contains("  fails in `check_exprs_are_zero` (a wrong value)\n"));
        assert_eq!(
            triage::value_signature(&r).as_deref(),
            Some("wrong value | z3::mod")
        );
    }
}
