//! One test of a campaign: its reduction into `OUTDIR/<stem>/`, the last check of its result,
//! triage's blame and knockouts, and the slip check ([`super::slips`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;

use super::campaign::{BatchOptions, RESULT};
use super::discover::Test;
use super::journal::{Outcome, Record};
use super::slips;
use super::triage;
use crate::atomic::write_atomic;
use crate::case::Case;
use crate::error::{coded, exit_kind, ExitKind};
use crate::evidence::values::PATIENCE;
use crate::input::MAX_TEST_BYTES;
use crate::judge::{Judge, Judged};
use crate::loaded::LoadedTest;
use crate::lock::{lock_exclusive, LOCK_FILE};
use crate::oracle::{ScriptOracle, Verdict};
use crate::reduce::{reduce, run_cache_dir, ReduceOptions, ReduceOutcome};

/// Reduce one test into `OUTDIR/<stem>/`, holding its lock (`OUTDIR/<stem>/.mfppr.lock`), and
/// describe how it ended; the record is also written to `OUTDIR/<stem>/result.json`. `Err` only
/// when the campaign cannot go on (interrupted, the output directory is not writable, another
/// process reduces the same test); a test that fails is an `Ok` record.
pub(crate) fn run_one(test: &Test, opts: &BatchOptions) -> anyhow::Result<Record> {
    let began = Instant::now();
    let dir = opts.out_dir.join(&test.stem);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the test directory {}", dir.display()))?;
    let _lock = lock_exclusive(
        &dir.join(LOCK_FILE),
        &format!("the test directory {}", dir.display()),
    )?;
    let mut record = Record::new(
        test.input.clone(),
        test.stem.clone(),
        test.bytes,
        Outcome::InputError,
    );
    match crate::input::read_test(&test.input) {
        Ok(text) => {
            record.hash = blake3::hash(&text).to_hex().to_string();
            record.bytes_before = text.len() as u64;
            record.bytes_after = record.bytes_before;
            reduce_into(&mut record, &dir, opts)?;
        }
        Err(e) => {
            record.message = Some(format!("{e:#}"));
        }
    }
    if record.outcome != Outcome::Reduced {
        record.sign.signature = record.outcome.name().to_string();
    }
    record.flags = super::journal::CampaignFlags::of(&opts.reduce);
    record.wall_secs = began.elapsed().as_secs_f64();
    let json = serde_json::to_vec_pretty(&record).context("cannot serialise a result")?;
    let path = dir.join(RESULT);
    write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(record)
}

/// The reduction step of [`run_one`]: fills the outcome, sizes, calls and signature. When the
/// slip check flags the result, the original is reduced again with the result's trigger folded
/// ([`slips::repair_slip`]).
fn reduce_into(record: &mut Record, dir: &Path, opts: &BatchOptions) -> anyhow::Result<()> {
    let output = dir.join(format!("{}.reduced.cpp", record.stem));
    let mut ro = opts.reduce.clone();
    ro.input = record.input.clone();
    ro.resume = opts.resume && output.exists();
    ro.output = Some(output);
    ro.stats = Some(dir.join("stats.json"));
    ro.jobs = opts.jobs_per_test();
    ro.quiet = true;
    // One cache for the reductions, the last checks and blame (precompiled include block, the
    // originals' failures), unless the campaign or the user has one.
    let own_cache = run_cache_dir(&ro)?;
    if let Some(own) = &own_cache {
        ro.cache_dir = Some(own.path().to_path_buf());
    }
    let checks_slips = opts.repair_slips || opts.group_by != triage::GroupBy::Value;
    match reduce_and_triage(record, &ro, &ro.input, opts.group_by, checks_slips)? {
        Some(folded) if opts.repair_slips => {
            let again = |second: &mut Record, ro: &ReduceOptions, original: &Path| {
                reduce_and_triage(second, ro, original, opts.group_by, true)
            };
            slips::repair_slip(record, dir, &ro, &folded, &again)
        }
        _ => Ok(()),
    }
}

/// Reduce `ro.input` into `ro.output`, triage the result into `record` (its wrong value
/// localised; blame and the knockouts only when `group_by` signs by MRs) and, when
/// `checks_slips`, ask the slip check against the campaign's `original` test (it folds blame's
/// triggers, or the MR the wrong value points at when nothing is blamed); returns the folded
/// original when the slip check flags the result.
pub(super) fn reduce_and_triage(
    record: &mut Record,
    ro: &ReduceOptions,
    original: &Path,
    group_by: triage::GroupBy,
    checks_slips: bool,
) -> anyhow::Result<Option<Vec<u8>>> {
    let (Some(output), Some(stats)) = (ro.output.clone(), ro.stats.clone()) else {
        anyhow::bail!("a campaign reduction needs an output and a stats file");
    };
    let Some(outcome) = reduce_or_record(record, ro)? else {
        return Ok(None);
    };
    let reduced = crate::input::read_regular(&output, MAX_TEST_BYTES as u64, "a reduced result")?;
    let (oracle, Judged { verdict, run }) = recheck(ro, &outcome, &reduced)?;
    stop_if_interrupted(&output)?;
    let failure = triage::failure_of(&run.stderr_tail, run.end);
    let interesting = verdict == Verdict::Interesting;
    let blames = group_by != triage::GroupBy::Value;
    let triggers = match (blames, checks_slips) {
        (true, _) => TriggersFrom::Blame,
        (false, true) => TriggersFrom::Value,
        (false, false) => TriggersFrom::Nowhere,
    };
    let found = look_into(
        record,
        ro,
        &reduced,
        &oracle,
        interesting,
        triggers,
        outcome.timeout,
    );
    stop_if_interrupted(&output)?;
    let folded = if checks_slips {
        slips::check_slip(record, original, ro, &oracle, interesting, &found.triggers)
    } else {
        None
    };
    stop_if_interrupted(&output)?;
    record.outcome = Outcome::Reduced;
    record.bytes_after = reduced.len() as u64;
    record.oracle_calls = outcome.stats.oracle_calls;
    let value_runs = record.triage.value.as_ref().map_or(0, |v| v.runs);
    record.triage_calls =
        1 + found.blame_calls + found.knockout_calls + record.slip.slip_check_calls + value_runs;
    record.sign.signature = triage::signature(&failure, &found.suspects, &found.from);
    record.failure = Some(failure);
    found.journal_triage(record);
    triage::sign_by_value(record);
    if blames {
        triage::sign_by_library(record, &output, &reduced, ro);
    }
    record.output = Some(output);
    record.stats = Some(stats);
    Ok(folded)
}

/// Reduce as `ro` says. A reduction that fails is described in `record` (its outcome and
/// message) and gives `None`; only an interrupted one is an `Err`.
fn reduce_or_record(
    record: &mut Record,
    ro: &ReduceOptions,
) -> anyhow::Result<Option<ReduceOutcome>> {
    match reduce(ro) {
        Ok(outcome) => Ok(Some(outcome)),
        Err(e) => {
            record.outcome = match exit_kind(&e) {
                ExitKind::Interrupted => return Err(e),
                ExitKind::NotInteresting => Outcome::NotInteresting,
                ExitKind::Oracle => Outcome::OracleError,
                _ => Outcome::InputError,
            };
            record.message = Some(format!("{e:#}"));
            Ok(None)
        }
    }
}

/// Check the `reduced` result once more for the failure's name, under the reduction's own
/// exit-status rule; returns the oracle (triage runs through it too) and the judged run.
/// `outcome.final_run` (the re-check's last run) is not used instead: the journal counts this
/// run in each test's oracle calls, and dropping it would change them.
fn recheck(
    ro: &ReduceOptions,
    outcome: &ReduceOutcome,
    reduced: &[u8],
) -> anyhow::Result<(ScriptOracle, Judged)> {
    let mut script = ScriptOracle::new(&ro.check, &ro.input, ro.extra_env.clone())?;
    script.set_cache_dir(ro.cache_dir.clone());
    let oracle = script.resolved(Some(outcome.timeout), outcome.expected);
    let judged = oracle.judge(reduced)?;
    Ok((oracle, judged))
}

/// `Err` (interrupted while checking `output`) when an interrupt was requested.
fn stop_if_interrupted(output: &Path) -> anyhow::Result<()> {
    if crate::interrupt::requested() {
        return Err(coded(
            ExitKind::Interrupted,
            format!("interrupted while checking {}", output.display()),
        ));
    }
    Ok(())
}

/// Where a result's triggers come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TriggersFrom {
    /// Blame's innermost suspects.
    Blame,
    /// The MR the wrong value points at ([`crate::evidence::value_triggers`]), only when the slip
    /// check asks (they are journaled as triggers, which a campaign re-grouped by `library`
    /// would sign by as if they were blame's).
    Value,
    /// None: neither blame nor the slip check runs.
    Nowhere,
}

/// Triage's look into the `reduced` result: its MRs and triggers (blamed or pointed at, as
/// `triggers` says), and its wrong value localised into `record` when it is `interesting`; a
/// result that cannot be loaded says why in the record's message.
fn look_into(
    record: &mut Record,
    ro: &ReduceOptions,
    reduced: &[u8],
    oracle: &ScriptOracle,
    interesting: bool,
    triggers: TriggersFrom,
    timeout: std::time::Duration,
) -> Suspects {
    let loaded = LoadedTest::load(&ro.input, reduced.to_vec(), &ro.spec_paths());
    let compiles = crate::program::compile_probe(&ro.include_dirs, &ro.input, &ro.extra_env);
    let case = loaded.as_ref().map(|test| Case {
        test,
        judge: oracle,
        compiles: &compiles,
    });
    let mut found = match &case {
        Ok(case) if triggers == TriggersFrom::Blame => suspects(case, interesting),
        Ok(case) => Ok(unblamed(&case.test.model)),
        Err(e) => Err(anyhow::anyhow!("{e:#}")),
    };
    if let (Ok(case), true) = (&case, interesting) {
        let loaded = case.test;
        let patient = oracle.with_timeout(Some(timeout * PATIENCE));
        let value = localise(ro, &case.judged_by(&patient));
        let pointed = (triggers == TriggersFrom::Value).then_some(&value.evidence);
        if let (Ok(found), Some(Some(evidence))) = (&mut found, pointed) {
            found.triggers = crate::evidence::value_triggers(
                &loaded.model,
                &loaded.catalogue,
                &evidence.place,
                &evidence.call,
            );
        }
        record.triage.value = Some(value.into());
    }
    found.unwrap_or_else(|e| {
        record.message = Some(format!("cannot list the MRs of the result: {e:#}"));
        Suspects::default()
    })
}

/// What triage knows about the MRs of a reduced test.
#[derive(Debug, Default)]
struct Suspects {
    /// The MR families left in it.
    mrs: Vec<String>,
    /// The suspect families.
    suspects: Vec<String>,
    /// The library calls the blamed suspects reach.
    library_calls: Vec<String>,
    /// Where the suspects come from (see [`Record::suspects_from`]).
    from: String,
    /// Check runs of blame.
    blame_calls: u64,
    /// The MR families whose calls the failure needs (see [`crate::evidence::needs`]).
    needs: Vec<String>,
    /// Check runs of those knockouts.
    knockout_calls: u64,
    /// Blame's innermost suspects and the MRs inside them.
    triggers: crate::evidence::Triggers,
}

impl Suspects {
    /// Journal what triage found in `record`.
    fn journal_triage(self, record: &mut Record) {
        record.triage.mrs = self.mrs;
        record.triage.suspects = self.suspects;
        record.triage.library_calls = self.library_calls;
        record.triage.suspects_from = self.from;
        record.triage.blame_calls = self.blame_calls;
        record.triage.needs = self.needs;
        record.triage.knockout_calls = self.knockout_calls;
        record.triage.triggers = self.triggers.mrs;
        record.triage.within_triggers = self.triggers.within;
        record.triage.introduces = self.triggers.introduces;
    }
}

/// The remaining MR families of the reduced text and its suspects: blame's
/// ([`crate::evidence::blame`], one check run per foldable call, one more when there are several)
/// when the result is still interesting and every instance has a base to fold to; otherwise
/// (and when no single fold removes the failure, yet folding all does) the families of the steps
/// where a checked variant differs from the reference. When blame names no trigger (no
/// innermost suspect), the knockouts ([`crate::evidence::needs`]) say which families' calls the
/// failure needs.
fn suspects(case: &Case, interesting: bool) -> anyhow::Result<Suspects> {
    let LoadedTest {
        model, catalogue, ..
    } = case.test;
    let mut found = Suspects {
        mrs: triage::remaining_mrs(model),
        ..Suspects::default()
    };
    let unfoldable = model.instances.iter().find(|i| match (i.kind, &i.family) {
        (Some(kind), Some(family)) => catalogue.base_of(kind, family).is_none(),
        _ => true,
    });
    let why = if !interesting {
        Some("the result was not interesting on its last check".to_string())
    } else if let Some(i) = unfoldable {
        Some(format!(
            "the catalogue has no base MR to fold {} to",
            i.name
        ))
    } else {
        let blame = crate::evidence::blame(case, false)?;
        found.blame_calls = blame.oracle_calls as u64;
        found.triggers = blame.triggers(model);
        let suspect = blame.folds.iter().filter(|f| f.suspect);
        let families: BTreeSet<String> = suspect.clone().map(|f| f.family.clone()).collect();
        let calls: BTreeSet<String> = suspect.flat_map(|f| f.library_ops.clone()).collect();
        if !families.is_empty() {
            found.suspects = families.into_iter().collect();
            found.library_calls = calls.into_iter().collect();
            found.from = "blame".to_string();
            None
        } else if blame.base_operations_implicated {
            found.from = triage::BASE_OPERATIONS.to_string();
            None
        } else {
            Some("no single fold removes the failure".to_string())
        }
    };
    if interesting && found.triggers.mrs.is_empty() {
        let (needs, runs) = crate::evidence::needs(case)?;
        found.knockout_calls = runs as u64;
        found.needs = needs;
    }
    if let Some(why) = why {
        found.suspects = triage::suspect_mrs(model);
        found.from = format!("variants: {why}");
    }
    Ok(found)
}

/// What triage knows of a result's MRs without blame (`--group-by value`): the families left
/// and those of the steps where a checked variant differs from the reference.
fn unblamed(model: &crate::model::TestModel) -> Suspects {
    Suspects {
        mrs: triage::remaining_mrs(model),
        suspects: triage::suspect_mrs(model),
        from: "variants: not blamed (--group-by value)".to_string(),
        ..Suspects::default()
    }
}

/// The result's wrong value ([`crate::evidence::values`]), judged by `case`'s judge (a
/// [`PATIENCE`] times patient one); a localisation that cannot run is undecided with the reason.
pub(super) fn localise(ro: &ReduceOptions, case: &Case) -> crate::evidence::values::Localised {
    let began = std::time::Instant::now();
    let name = ro.input.file_stem().unwrap_or_default().to_string_lossy();
    let found = crate::evidence::values::localise(&name, case);
    let mut found = found.unwrap_or_else(|e| crate::evidence::values::Localised {
        undecided: Some(format!("cannot localise: {e:#}")),
        ..Default::default()
    });
    found.secs = began.elapsed().as_secs_f64();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ScriptOracle;
    use std::path::PathBuf;

    /// The reduced merge fixture, its options with the spec, and an oracle running `script`.
    fn blamed(script: &str) -> (tempfile::TempDir, Suspects) {
        use std::os::unix::fs::PermissionsExt;
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let check = dir.path().join("check.sh");
        std::fs::write(&check, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
        let input = root.join("fixtures/expected/iset_merge_small_b.reduced.cpp");
        let mut ro = ReduceOptions::new(&input, &check);
        ro.include_dirs = vec![root.join("fixtures/iset/spec")];
        let oracle = ScriptOracle::new(&check, &input, Vec::new()).unwrap();
        let text = std::fs::read(&input).unwrap();
        let loaded = LoadedTest::load(&input, text, &ro.spec_paths()).unwrap();
        let compiles = crate::program::compile_probe(&ro.include_dirs, &input, &[]);
        let case = Case {
            test: &loaded,
            judge: &oracle,
            compiles: &compiles,
        };
        let found = suspects(&case, true).unwrap();
        (dir, found)
    }

    #[test]
    fn blame_gives_the_suspect_families_or_base_operations() {
        // The failure needs the shift_by_parts instance: folding it to shift's base removes it.
        let (_dir, found) = blamed(r#"grep -q 'shift_by_parts_1_15(fctx' "$1""#);
        assert_eq!(found.suspects, ["relations::shift"]);
        assert_eq!(found.from, "blame");
        assert_eq!(found.blame_calls, 1, "one site, no fold-all run");
        assert!(found.library_calls.contains(&"iset::unite".to_string()));
        assert!(found.mrs.contains(&"relations::shift".to_string()));
        // A failure no fold removes: the base operations alone.
        let (_dir, found) = blamed("exit 0");
        assert!(found.suspects.is_empty());
        assert_eq!(found.from, triage::BASE_OPERATIONS);
        assert_eq!(
            triage::signature("check_equal", &found.suspects, &found.from),
            "check_equal | base operations"
        );
    }
}
