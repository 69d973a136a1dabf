//! The campaign page (issue 61: `batch run|collect|retriage --html FILE`, `batch page OUTDIR -o
//! FILE`): the bugs of a finished campaign in one self-contained HTML file, written from the
//! journal and the files of its test directories alone (no check runs), so that the same journal
//! gives the same bytes whichever command writes it.
//!
//! Owns the page's model ([`view::Campaign`]: the summary's counts, one [`view::GroupView`] per group, largest
//! first, with its signature in words, its representative's code and each member's evidence,
//! links and reduction curve; the tests not reduced with why), reading what the test directories
//! hold (`<stem>.standalone.cpp`, `stats.json`'s curve), the page's target and its atomic write.
//! [`render`] turns the model into HTML with the escaping and links of [`crate::html`].

mod curve;
mod render;
mod view;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::journal::{Outcome, Record};
use super::triage::{self, explain, GroupBy};
use crate::atomic::write_atomic;
use crate::html::{self, PageTarget};
use crate::reduce::ReduceOptions;
use view::{Campaign, Code, Counts, Curve, GroupView, TestView};

/// What the page's target must not be (see [`crate::html::target`]), for the page at `path` of
/// the campaign in `out_dir` whose inputs are `inputs`, named by `flag`.
pub(crate) fn target(
    path: &Path,
    flag: &'static str,
    out_dir: &Path,
    inputs: &[PathBuf],
) -> Result<PathBuf> {
    let (trees, files): (Vec<&PathBuf>, Vec<&PathBuf>) = inputs.iter().partition(|p| p.is_dir());
    html::check_target(&PageTarget {
        path: path.to_path_buf(),
        flag,
        inputs: files.into_iter().cloned().collect(),
        trees: trees.into_iter().map(|t| ("INPUT", t.clone())).collect(),
        outputs: Vec::new(),
        out_dir: Some(out_dir.to_path_buf()),
        out_dir_files: "OUTDIR, where the campaign writes its own files (results.jsonl, \
                        summary.json, a directory per test)",
    })
}

/// Write the page of the campaign in `out_dir` to `path` (checked with [`target`]): its latest
/// record per test, grouped as its `summary.json` says; `ro` gives the spec a standalone export
/// is built with when a test directory holds none.
pub(crate) fn write(out_dir: &Path, path: &Path, ro: &ReduceOptions) -> Result<()> {
    // Canonical, so that every command that writes the page names the same files.
    let out_dir = std::fs::canonicalize(out_dir)
        .with_context(|| format!("cannot resolve the campaign {}", out_dir.display()))?;
    let (by, records) = explain::load(&out_dir)?;
    let dir = html::page_dir(path)?;
    let page = campaign(&out_dir, &dir, by, &records, ro);
    let text = render::page(&page);
    write_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write the campaign page {}", path.display()))?;
    crate::messages::note(format!(
        "page: wrote {} ({} groups, {} tests, {} KB)",
        path.display(),
        page.groups.len(),
        page.tests,
        text.len().div_ceil(1024)
    ));
    Ok(())
}

/// The page's model of `records` grouped by `by`; links relative to the page's directory `dir`.
fn campaign(
    out_dir: &Path,
    dir: &Path,
    by: GroupBy,
    records: &[Record],
    ro: &ReduceOptions,
) -> Campaign {
    let summary = triage::summarise(records, by);
    let by_stem: BTreeMap<&str, &Record> = records.iter().map(|r| (r.stem.as_str(), r)).collect();
    let find = |stem: &str| by_stem.get(stem).copied();
    let view = |r: &Record| test_view(r, out_dir, dir);
    let groups = summary
        .groups
        .iter()
        .map(|g| {
            let members: Vec<&Record> = g.members.iter().filter_map(|m| find(m)).collect();
            GroupView {
                id: g.id,
                signature: g.signature.clone(),
                words: words(&members, by),
                representative: g.representative.stem.clone(),
                code: code(out_dir, &g.representative, ro),
                members: members.iter().map(|r| view(r)).collect(),
            }
        })
        .collect();
    let not_reduced = records
        .iter()
        .filter(|r| r.outcome != Outcome::Reduced)
        .map(view)
        .collect();
    let name = out_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Campaign {
        title: format!("mfppr campaign {name}"),
        group_by: by,
        tests: records.len(),
        counts: counts(records),
        wall_secs: records.iter().map(|r| r.wall_secs).sum(),
        check_runs: records
            .iter()
            .map(|r| r.oracle_calls + r.triage_calls)
            .sum(),
        groups,
        not_reduced,
    }
}

fn counts(records: &[Record]) -> Counts {
    let mut c = Counts::default();
    for r in records {
        match r.outcome {
            Outcome::Reduced => c.reduced += 1,
            Outcome::NotInteresting => c.not_interesting += 1,
            Outcome::OracleError | Outcome::InputError | Outcome::Missing => c.failed += 1,
        }
        c.slipped += usize::from(slipped(r).is_some());
        c.undecided += usize::from(undecided(r).is_some());
    }
    c
}

/// Why `r` slipped: the slip check flagged it and no repair replaced it.
fn slipped(r: &Record) -> Option<String> {
    (r.outcome == Outcome::Reduced && r.slip.slip_suspect == Some(true) && !r.slip.slip_repaired)
        .then(|| {
            let why = "the original still fails with the result's trigger folded away: the \
                       reduction may have slipped to another bug";
            match &r.message {
                Some(m) => format!("{why} ({m})"),
                None => why.to_string(),
            }
        })
}

/// Why `r`'s wrong value is undecided (a reduced test whose localisation named no culprit).
fn undecided(r: &Record) -> Option<String> {
    let v = r.triage.value.as_ref()?;
    (r.outcome == Outcome::Reduced && v.culprit.is_empty()).then(|| {
        v.undecided
            .clone()
            .unwrap_or_else(|| "no culprit named".to_string())
    })
}

/// The group's signature in words: the failure and the library operation whose value is wrong
/// (by value), else what `batch explain`'s `why:` line says.
fn words(members: &[&Record], by: GroupBy) -> String {
    if by != GroupBy::Value {
        let shared = explain::shared_ops(members);
        let why = explain::why(members, &shared);
        let why = why.trim_end();
        return why.strip_prefix("why: ").unwrap_or(why).to_string();
    }
    let Some(r) = members.first() else {
        return String::new();
    };
    let failure = r
        .triage
        .value
        .as_ref()
        .and_then(|v| v.failure.clone())
        .or_else(|| r.failure.clone())
        .unwrap_or_else(|| "an unnamed failure".to_string());
    let culprits: BTreeSet<&str> = members
        .iter()
        .filter_map(|m| m.triage.value.as_ref())
        .flat_map(|v| v.culprit.iter().map(String::as_str))
        .collect();
    match (undecided(r), culprits.is_empty()) {
        (Some(why), true) => format!("fails with `{failure}`; the wrong value is undecided: {why}"),
        _ => format!(
            "fails with `{failure}`; the library operation whose value is wrong: {}",
            culprits.into_iter().collect::<Vec<_>>().join(" or ")
        ),
    }
}

/// Where `r`'s file `name` lies in this campaign's directory (the journal's paths are those of
/// the machine that ran it).
fn test_file(out_dir: &Path, r: &Record, name: &str) -> PathBuf {
    out_dir.join(&r.stem).join(name)
}

/// The file name of `r`'s reduced test.
fn reduced_name(r: &Record) -> String {
    r.output
        .as_ref()
        .and_then(|o| o.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{}.reduced.cpp", r.stem))
}

fn test_view(r: &Record, out_dir: &Path, dir: &Path) -> TestView {
    let mut links = Vec::new();
    let files = [
        ("reduced", reduced_name(r)),
        ("standalone", format!("{}.standalone.cpp", r.stem)),
        ("report", super::campaign::RESULT.to_string()),
        ("stats", "stats.json".to_string()),
    ];
    for (label, name) in files {
        if r.outcome == Outcome::Reduced || label == "report" {
            if let Some(href) = html::link(&test_file(out_dir, r, &name), dir) {
                links.push((label, href));
            }
        }
    }
    if let Some(href) = html::link(&r.input, dir) {
        links.push(("original", href));
    }
    let (evidence, values) = evidence(r);
    TestView {
        stem: r.stem.clone(),
        outcome: r.outcome.name(),
        bytes_before: r.bytes_before,
        bytes_after: r.bytes_after,
        runs: r.oracle_calls + r.triage_calls,
        slipped: slipped(r),
        undecided: undecided(r),
        message: r.message.clone(),
        links,
        curve: read_curve(&test_file(out_dir, r, "stats.json"), r),
        evidence,
        values,
    }
}

/// The evidence of `r` that `batch explain` prints: its culprit call, how it is wrong and at
/// which operands, what the spec could not check, the calls probed, the MR families left and
/// where its library signature comes from; and the values at the culprit call.
fn evidence(r: &Record) -> (Vec<String>, Vec<(String, String)>) {
    let mut lines = Vec::new();
    let mut values = Vec::new();
    if r.outcome != Outcome::Reduced {
        return (lines, values);
    }
    match &r.triage.value {
        None => lines.push("not localised (a journal of an older mfppr)".to_string()),
        Some(v) => {
            if let Some(e) = &v.evidence {
                lines.push(format!(
                    "culprit: {} in `{}` ({}), in {}",
                    v.culprit.join(" or "),
                    e.call,
                    e.family,
                    e.place
                ));
                lines.push(e.how.clone());
                if !e.operands.is_empty() {
                    lines.push(format!("at the operands {}", e.operands.join(", ")));
                }
                values.clone_from(&e.values);
            }
            lines.extend(explain::unchecked_line(&v.unchecked));
            lines.push(format!(
                "{} calls probed, {} check run(s)",
                v.probes, v.runs
            ));
        }
    }
    lines.push(format!("MR families left: {}", r.triage.mrs.join(" ")));
    if !r.sign.signature_from.is_empty() {
        lines.push(format!(
            "library signature from {}: {}",
            r.sign.signature_from,
            r.sign.library_ops.join(" ")
        ));
    }
    (lines, values)
}

/// The reduction curve of `r` from its stats file: every step when the file holds the curve,
/// else its start and end (the journal's sizes and check runs).
fn read_curve(stats: &Path, r: &Record) -> Curve {
    let ends = vec![[0, r.bytes_before], [r.oracle_calls, r.bytes_after]];
    if r.outcome != Outcome::Reduced {
        return Curve::Ends(ends);
    }
    let steps = crate::input::read_regular(stats, crate::input::MAX_RECORD_BYTES, "a stats file")
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| serde_json::from_value::<Vec<[u64; 2]>>(v.get("curve")?.clone()).ok());
    match steps {
        Some(mut steps) => {
            steps.insert(0, [0, r.bytes_before]);
            steps.push([r.oracle_calls, r.bytes_after]);
            Curve::Steps(steps)
        }
        None => Curve::Ends(ends),
    }
}

/// The code of a group's representative: the standalone export its test directory holds, else
/// one built now from its reduced test (no check runs), else the reduced test itself with why.
fn code(out_dir: &Path, rep: &triage::Representative, ro: &ReduceOptions) -> Code {
    let name = rep.path.file_name().unwrap_or_default();
    let dir = out_dir.join(&rep.stem);
    let saved = dir.join(format!("{}.standalone.cpp", rep.stem));
    let test_bytes = crate::input::MAX_TEST_BYTES as u64;
    if let Ok(bytes) = crate::input::read_regular(&saved, test_bytes, "a standalone export") {
        return Code {
            kind: "standalone",
            label: format!("standalone export ({}.standalone.cpp)", rep.stem),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        };
    }
    let reduced = match dir.join(name) {
        p if p.is_file() => p,
        _ => rep.path.clone(),
    };
    match explain::standalone_export(&reduced, ro) {
        Ok(text) => Code {
            kind: "standalone",
            label: format!(
                "standalone export of {} (built from its reduced test)",
                rep.stem
            ),
            text,
        },
        Err(e) => Code {
            kind: "reduced",
            label: format!(
                "reduced test of {} (no standalone export: {})",
                rep.stem,
                in_outdir(&format!("{e:#}"), out_dir)
            ),
            text: crate::input::read_regular(&reduced, test_bytes, "a reduced result")
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_else(|e| in_outdir(&format!("{e:#}"), out_dir)),
        },
    }
}

/// `message` with the campaign's directory named `OUTDIR`, so that the page does not depend on
/// where the campaign lies.
fn in_outdir(message: &str, out_dir: &Path) -> String {
    message.replace(&format!("{}/", out_dir.display()), "OUTDIR/")
}

#[cfg(test)]
mod tests;
