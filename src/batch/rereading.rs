//! A finished campaign read again, reducing nothing: `batch collect` (the results of emitted
//! tasks merged into the journal) and `batch retriage` (the journal grouped again).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::campaign::{latest_per_stem, lock_out_dir, RESULT};
use super::journal::{Journal, Outcome, Record};
use super::triage::{self, CampaignSummary};
use super::{journal, tasks};
use crate::error::{coded, ExitKind};
use crate::input::{read_regular, MAX_RECORD_BYTES, MAX_TEST_BYTES};
use crate::oracle::{Expected, ScriptOracle};
use crate::reduce::ReduceOptions;

/// What `--collect` found.
#[derive(Debug)]
pub(crate) struct Collected {
    /// The summary of the journal, with the missing tasks as tests of outcome `missing`.
    pub summary: CampaignSummary,
    /// Stems of the emitted tasks ([`tasks::TaskList`]) with no result, in task-file order.
    pub missing: Vec<String>,
}

/// `--collect`, holding the lock of `out_dir`: merge the per-test `result.json` files under
/// `out_dir` into the journal (those not in it yet) and summarise the whole journal; a task of
/// the last task file emitted for `out_dir` (`OUTDIR/tasks.json`) with no record is counted as
/// `missing` in the summary, never journaled, so that collecting after a rerun finds its result.
pub(crate) fn collect(out_dir: &Path, group_by: triage::GroupBy) -> anyhow::Result<Collected> {
    if !out_dir.is_dir() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{} is not a directory; give the -o of the campaign whose tasks ran",
                out_dir.display()
            ),
        ));
    }
    let _lock = lock_out_dir(out_dir)?;
    let mut journal = Journal::open(out_dir)?;
    let known: HashSet<(String, String)> = journal::read(out_dir)?
        .into_iter()
        .map(|r| (r.stem, r.hash))
        .collect();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(out_dir)
        .with_context(|| format!("cannot list {}", out_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path().join(RESULT)))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    for path in entries {
        let bytes = read_regular(&path, MAX_RECORD_BYTES, "a result")?;
        let record: Record = match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => {
                crate::messages::warn(format!(
                    "{}: not a result ({e}); skipping it",
                    path.display()
                ));
                continue;
            }
        };
        if !known.contains(&(record.stem.clone(), record.hash.clone())) {
            journal.append(&record)?;
        }
    }
    let mut records = latest_per_stem(journal::read(out_dir)?);
    let finished: HashSet<String> = records.iter().map(|r| r.stem.clone()).collect();
    let mut missing = Vec::new();
    for task in tasks::read_manifest(out_dir)?.map_or_else(Vec::new, |m| m.tasks) {
        if !finished.contains(&task.stem) {
            missing.push(task.stem.clone());
            records.push(missing_record(task));
        }
    }
    let summary = triage::summarise(&records, group_by);
    triage::write_summary(out_dir, &summary)?;
    Ok(Collected { summary, missing })
}

/// `batch retriage OUTDIR`: group the finished results journaled in `out_dir` again by `group_by`,
/// reducing nothing, and write the summary (the same bytes as the campaign's own, grouped the
/// same way). A reduced test journaled by an older mfppr (no `signature_from`) gets its library
/// signature from its result now (with `ro`'s include directories and specs); where that cannot
/// be done, a warning says so and the test keeps its MR-family signature.
pub(crate) fn triage_only(
    out_dir: &Path,
    group_by: triage::GroupBy,
    ro: &ReduceOptions,
) -> anyhow::Result<CampaignSummary> {
    if !out_dir.join(journal::JOURNAL).is_file() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{} holds no campaign journal ({}); give the -o of a finished campaign",
                out_dir.display(),
                journal::JOURNAL
            ),
        ));
    }
    let _lock = lock_out_dir(out_dir)?;
    let mut records = latest_per_stem(journal::read(out_dir)?);
    if !ro.check.as_os_str().is_empty() {
        relocalise(out_dir, &mut records, ro)?;
    }
    let older = records
        .iter_mut()
        .filter(|r| r.outcome == Outcome::Reduced && r.sign.signature_from.is_empty())
        .filter(|r| r.triage.value.is_none());
    for r in older {
        let Some(output) = r.output.clone() else {
            continue;
        };
        match read_regular(&output, MAX_TEST_BYTES as u64, "a reduced result") {
            Ok(text) => triage::sign_by_library(r, &output, &text, ro),
            Err(e) => r.message = Some(format!("{e:#}")),
        }
        if r.sign.signature_from != triage::FROM_LIBRARY {
            crate::messages::warn(format!(
                "cannot re-triage {} by its library operations ({}); it keeps its MR-family \
                 signature",
                r.stem,
                r.message.as_deref().unwrap_or_default()
            ));
        }
    }
    let summary = triage::summarise(&records, group_by);
    triage::write_summary(out_dir, &summary)?;
    Ok(summary)
}

/// `retriage --check`: localise the wrong value of every reduced result in `records` again
/// (one instrumented check run each, as the campaign did, with its per-run timeout from the
/// result's stats) and journal the records anew, so that a campaign reduced by an older mfppr,
/// or with another check, is signed by value without reducing it again.
fn relocalise(out_dir: &Path, records: &mut [Record], ro: &ReduceOptions) -> anyhow::Result<()> {
    let mut journal = Journal::open(out_dir)?;
    let reduced = records.iter_mut().filter(|r| r.outcome == Outcome::Reduced);
    for r in reduced {
        if crate::interrupt::requested() {
            return Err(coded(
                ExitKind::Interrupted,
                "interrupted while localising the wrong values; the results localised so far are journaled",
            ));
        }
        let Some(output) = r.output.clone() else {
            continue;
        };
        crate::messages::progress(format!("localising the wrong value of {}", r.stem));
        let text = read_regular(&output, MAX_TEST_BYTES as u64, "a reduced result")?;
        let loaded = crate::loaded::LoadedTest::load(&r.input, text, &ro.spec_paths())?;
        let (oracle, timeout, rule_runs) = judge_of(r, ro, loaded.text())?;
        let before = r.triage.value.as_ref().map_or(0, |v| v.runs);
        let mut own = ro.clone();
        own.input = r.input.clone();
        let compiles = crate::program::compile_probe(&own.include_dirs, &own.input, &own.extra_env);
        let patient = oracle.with_timeout(Some(timeout * crate::evidence::values::PATIENCE));
        let case = crate::case::Case {
            test: &loaded,
            judge: &patient,
            compiles: &compiles,
        };
        let value = super::one::localise(&own, &case);
        r.triage_calls = recount(r, before, value.runs + rule_runs);
        r.triage.value = Some(value.into());
        triage::sign_by_value(r);
        journal.append(r)?;
    }
    Ok(())
}

/// The check `record`'s result is judged with again: `ro`'s script and environment, with the
/// per-run timeout (`--timeout`, else the reduction's) and the exit-status rule the campaign
/// reduced it with (from its stats; a stats file of an older mfppr has none, and then
/// `--interesting-exit auto` derives the rule from one run of `text`, as `reduce` does). Also the
/// timeout and the check runs that took (0 or 1).
fn judge_of(
    record: &Record,
    ro: &ReduceOptions,
    text: &[u8],
) -> anyhow::Result<(ScriptOracle, std::time::Duration, u64)> {
    let (reduced_timeout, status) = reduced_with(record);
    let timeout = ro.timeout.unwrap_or(reduced_timeout);
    let script = ScriptOracle::new(&ro.check, &record.input, ro.extra_env.clone())?;
    let by_default = || script.resolved(Some(timeout), Expected::Zero);
    Ok(match status {
        Some(s) => (
            script.resolved(Some(timeout), Expected::Status(s)),
            timeout,
            0,
        ),
        None if ro.interesting_exit_auto => {
            let rule = crate::judge::CheckRule {
                timeout: Some(timeout),
                expected: None,
                same_status: true,
            };
            let judge = rule.first_run(&script, text)?.judge;
            (judge.unwrap_or_else(by_default), timeout, 1)
        }
        None => (by_default(), timeout, 0),
    })
}

/// The per-run timeout `record`'s reduction used and the exit status it counted as interesting
/// (`None`: exit 0), from its stats; 10 s and exit 0 where they cannot be read.
fn reduced_with(record: &Record) -> (std::time::Duration, Option<i32>) {
    let stats = record
        .stats
        .as_ref()
        .and_then(|p| read_regular(p, MAX_RECORD_BYTES, "a stats file").ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    let secs = stats
        .as_ref()
        .and_then(|v| v.get("timeout_secs").and_then(|t| t.as_f64()));
    let timeout = secs
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero() && d.as_secs() <= 86_400)
        .unwrap_or(std::time::Duration::from_secs(10));
    let status = stats
        .as_ref()
        .and_then(|v| v.get("interesting_status").and_then(|s| s.as_i64()))
        .and_then(|s| i32::try_from(s).ok());
    (timeout, status)
}

/// `record`'s triage check runs with the `before` runs of its last localisation replaced by
/// `runs`; a record whose figures disagree (`before` more than the total, a hand-edited or
/// corrupt journal) keeps what it can and says so, never wrapping around.
fn recount(record: &Record, before: u64, runs: u64) -> u64 {
    match record.triage_calls.checked_sub(before) {
        Some(rest) => rest.saturating_add(runs),
        None => {
            crate::messages::warn(format!(
                "{}: its journaled figures disagree (triage_calls {} < {before} localising \
                 runs); counting this localisation's {runs} runs alone",
                crate::messages::printable(&record.stem),
                record.triage_calls
            ));
            runs
        }
    }
}

/// The summary's record of an emitted task that left no result.
fn missing_record(task: tasks::Task) -> Record {
    let mut record = Record::new(task.input, task.stem, 0, Outcome::Missing);
    record.sign.signature = Outcome::Missing.name().to_string();
    record.message = Some("no result.json: the task did not run, or did not finish".to_string());
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_with_stats(dir: &Path, stats: &str) -> Record {
        let path = dir.join("stats.json");
        std::fs::write(&path, stats).unwrap();
        let mut r = Record::new(dir.join("t.cpp"), "t".into(), 1, Outcome::Reduced);
        r.stats = Some(path);
        r
    }

    #[test]
    fn a_result_is_judged_again_with_the_exit_rule_and_timeout_it_was_reduced_with() {
        let dir = tempfile::tempdir().unwrap();
        let check = dir.path().join("check.sh");
        std::fs::write(&check, "#!/bin/sh\nexit 1\n").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut ro = ReduceOptions::new(PathBuf::new(), PathBuf::new());
        ro.check = check;
        // An MF++R-style campaign (`--interesting-exit auto`, the original exited 1).
        let r = record_with_stats(
            dir.path(),
            r#"{"timeout_secs": 12.5, "interesting_status": 1}"#,
        );
        let (oracle, timeout, runs) = judge_of(&r, &ro, b"").unwrap();
        assert_eq!(runs, 0);
        assert_eq!(oracle.expected(), Expected::Status(1));
        assert_eq!(timeout, std::time::Duration::from_secs_f64(12.5));
        // An older stats file: with --interesting-exit auto the rule comes from one run.
        let old = record_with_stats(dir.path(), r#"{"timeout_secs": 3}"#);
        ro.interesting_exit_auto = true;
        let (oracle, _, runs) = judge_of(&old, &ro, b"int main() {}\n").unwrap();
        assert_eq!(runs, 1);
        assert_eq!(oracle.expected(), Expected::Status(1));
        // The default rule, and figures that cannot be a timeout.
        ro.interesting_exit_auto = false;
        let odd = record_with_stats(dir.path(), r#"{"timeout_secs": -1e300}"#);
        let (oracle, timeout, _) = judge_of(&odd, &ro, b"").unwrap();
        assert_eq!(oracle.expected(), Expected::Zero);
        assert_eq!(timeout, std::time::Duration::from_secs(10));
    }
}
