//! Slips between bugs in a campaign: a reduction that keeps a failure, but through another bug
//! than its original's (every bug fails the same check, so the check cannot tell). The slip
//! check ([`check_slip`]) folds the result's trigger MRs away in the original (blame's, or those
//! its wrong value points at: [`crate::evidence::value_triggers`]); when that still
//! fails, the original is reduced again from that folded text ([`repair_slip`]), and the second
//! result replaces the first only when the original's failure needs what the second's does;
//! a second result not kept has its triggers folded away too for one more try.
//!
//! Owns `OUTDIR/<stem>/<stem>.unslipped.cpp` (the folded original a kept second result comes
//! from) and the second reduction's files while it runs; runs checks only through the oracle and
//! the reduction it is given.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::journal::{Outcome, Record};
use crate::atomic::write_atomic;
use crate::document::Document;
use crate::evidence::{calls_of, folded_everywhere};
use crate::judge::Judge;
use crate::loaded::LoadedTest;
use crate::model::TestModel;
use crate::reduce::ReduceOptions;

/// When triage named a trigger of the (still interesting) result (blame's, or the MR its wrong
/// value points at), ask the slip check
/// ([`slip_suspect`]) and journal its answer; a check that cannot run says why in the message.
/// Returns the folded original when the check flags the result (it still fails).
pub(super) fn check_slip(
    record: &mut Record,
    original: &Path,
    ro: &ReduceOptions,
    judge: &dyn Judge,
    interesting: bool,
    triggers: &crate::evidence::Triggers,
) -> Option<Vec<u8>> {
    if !interesting || triggers.mrs.is_empty() {
        return None;
    }
    let mrs = folded_mrs(&triggers.mrs, &triggers.within);
    match slip_suspect(original, ro, judge, &mrs) {
        Ok(Some((slip, folded))) => {
            record.slip.slip_suspect = Some(slip);
            record.slip.slip_check_calls = 1;
            slip.then_some(folded)
        }
        Ok(None) => None,
        Err(e) => {
            record.note(format!("no slip check: {e:#}"));
            None
        }
    }
}

/// The MRs the slip check folds for a result: its triggers and the MRs called inside them (the
/// confound check of a second result folds the same set).
fn folded_mrs(triggers: &[String], within: &[String]) -> Vec<String> {
    triggers.iter().chain(within).cloned().collect()
}

/// Whether the `original` still fails with every call of `mrs` folded to its base (one check
/// run), and that folded original; `None` when it has no such call.
fn slip_suspect(
    original: &Path,
    ro: &ReduceOptions,
    judge: &dyn Judge,
    mrs: &[String],
) -> anyhow::Result<Option<(bool, Vec<u8>)>> {
    let Some(folded) = FoldableOriginal::load(original, ro)?.folded(mrs) else {
        return Ok(None);
    };
    Ok(Some((judge.judge(&folded)?.interesting(), folded)))
}

/// A campaign's original test, read once ([`LoadedTest`]), as the slip check folds it.
struct FoldableOriginal(LoadedTest);

impl FoldableOriginal {
    fn load(path: &Path, ro: &ReduceOptions) -> anyhow::Result<FoldableOriginal> {
        Ok(FoldableOriginal(LoadedTest::read(path, &ro.spec_paths())?))
    }

    /// The text with every call of `mrs` folded to its family's base and swept
    /// ([`folded_everywhere`]); `None` when it has no such call.
    fn folded(&self, mrs: &[String]) -> Option<Vec<u8>> {
        let LoadedTest {
            model, catalogue, ..
        } = &self.0;
        folded_everywhere(self.0.text(), model, catalogue, mrs)
    }

    /// Whether folding the MRs `second` everywhere also takes calls of the MRs `first` with it
    /// (they sit inside the instances the folds leave uncalled): then the original passing
    /// without `second` says nothing about which of the two failures is the original's.
    fn folds_away(&self, first: &[String], second: &[String]) -> anyhow::Result<bool> {
        let Some(folded) = self.folded(second) else {
            return Ok(false);
        };
        let LoadedTest {
            model, catalogue, ..
        } = &self.0;
        let after = TestModel::build(&Document::parse(folded)?, catalogue)?;
        Ok(calls_of(&after, catalogue, first) < calls_of(model, catalogue, first))
    }
}

/// How many times a flagged test is reduced again: a repair whose result is not kept folds that
/// result's triggers away too and tries once more (on the real campaign the first repair of
/// `z3_7` slipped to a third bug; the second found its own: docs/results/triage.md).
pub(super) const MAX_REPAIRS: usize = 2;

/// Reduce `folded` (the original with the flagged result's trigger MRs folded, which still
/// fails) as the test instead, into `<stem>.unslipped.reduced.cpp`, and ask the slip check of
/// that second result against the original. Only when the original *passes* with the second
/// result's triggers folded (its failure needs what the second result's does), and those folds
/// leave every call of the first result's triggers in place ([`FoldableOriginal::folds_away`]), does
/// the second result replace the first (`record.slip_repaired`). Otherwise the folds may have
/// opened a way to another bug, or taken the first result's way with them: its files go, and the
/// original is reduced once more with that result's triggers folded as well, up to
/// [`MAX_REPAIRS`] times, while such a folded original still differs. When none is kept, the
/// first result stays, with a note. The journal counts every reduction's runs.
pub(super) fn repair_slip(
    record: &mut Record,
    dir: &Path,
    ro: &ReduceOptions,
    folded: &[u8],
    reduce_again: &ReduceAgain<'_>,
) -> anyhow::Result<()> {
    let original = match FoldableOriginal::load(&record.input, ro) {
        Ok(original) => original,
        Err(e) => {
            record.note(format!("no slip repair: {e:#}"));
            return Ok(());
        }
    };
    let input = dir.join(format!("{}.unslipped.cpp", record.stem));
    let mut refused = Vec::new();
    let again = Again {
        dir,
        ro,
        input: &input,
        reduce_again,
    };
    match repairs(record, &original, &again, folded, &mut refused) {
        Ok(Some(second)) => return adopt(record, second, &refused, dir, ro),
        Ok(None) => {}
        Err(e) => {
            discard(record, dir, ro);
            let _ = again.held(record, Held::Drop);
            let _ = std::fs::remove_file(&input);
            return Err(e);
        }
    }
    let _ = std::fs::remove_file(&input);
    record.note(format!(
        "the reduction of the folded original was not kept: {}",
        refused.join("; then ")
    ));
    Ok(())
}

/// The reductions of [`repair_slip`]: the first second result to keep, or `None`, with why
/// each one before it was not kept in `refused` (their runs are added to `record`'s). A second
/// result refused only because folding its triggers also folds calls of the first's
/// ([`Refusal::held`]) is held aside: when the original with both results' triggers folded
/// passes (the next reduction's first run), it is kept after all.
fn repairs(
    record: &mut Record,
    original: &FoldableOriginal,
    again: &Again,
    folded: &[u8],
    refused: &mut Vec<String>,
) -> anyhow::Result<Option<Record>> {
    let mut folds = folded_mrs(&record.triage.triggers, &record.triage.within_triggers);
    let mut folded = folded.to_vec();
    let mut held: Option<Record> = None;
    for _ in 0..MAX_REPAIRS {
        let mut second = again.reduce(record, &folded)?;
        if second.outcome == Outcome::NotInteresting {
            second.oracle_calls = 1; // the run that found the folded original passing
            if let Some(mut kept) = held.take() {
                again.held(record, Held::Restore)?;
                refused.pop();
                kept.oracle_calls += second.oracle_calls;
                kept.note(
                    "kept although folding its triggers in the original also folds calls of the \
                     first result's: the original with both results' triggers folded passes"
                        .to_string(),
                );
                return Ok(Some(kept));
            }
        }
        if let Some(dropped) = held.take() {
            count_refused(record, &dropped);
            again.held(record, Held::Drop)?;
        }
        let Some(refusal) = not_kept(record, &second, original) else {
            return Ok(Some(second));
        };
        refused.push(refusal.why);
        if refusal.held {
            again.held(record, Held::Keep)?;
            held = Some(second.clone());
        } else {
            count_refused(record, &second);
            discard(record, again.dir, again.ro);
        }
        if second.outcome != Outcome::Reduced {
            break;
        }
        let before = folds.len();
        for mr in folded_mrs(&second.triage.triggers, &second.triage.within_triggers) {
            if !folds.contains(&mr) {
                folds.push(mr);
            }
        }
        match original.folded(&folds) {
            Some(more) if folds.len() > before && more != folded => folded = more,
            _ => break,
        }
    }
    if let Some(dropped) = held {
        count_refused(record, &dropped);
        again.held(record, Held::Drop)?;
    }
    Ok(None)
}

/// Add the runs of a `second` result that is not kept to `record`'s.
fn count_refused(record: &mut Record, second: &Record) {
    record.oracle_calls += second.oracle_calls;
    record.slip.repair_calls += second.oracle_calls;
    record.triage_calls += second.triage_calls;
}

/// What becomes of a held second result's files ([`Again::held`]).
enum Held {
    /// Set them aside (`<file>.held`), out of the next reduction's way.
    Keep,
    /// Put them back, to be kept.
    Restore,
    /// Remove them.
    Drop,
}

/// Where a repair's reduction of test `stem` writes its result and its stats.
fn second_files(dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{stem}.unslipped.reduced.cpp")),
        dir.join("unslipped-stats.json"),
    )
}

/// The repair's result, origin and stats files, and where each goes when it is kept.
fn moves(record: &Record, dir: &Path, ro: &ReduceOptions) -> Vec<(PathBuf, PathBuf)> {
    let (second, stats) = second_files(dir, &record.stem);
    let pairs = [
        (
            Some(crate::reduce::origin_path(&second)),
            ro.output.as_deref().map(crate::reduce::origin_path),
        ),
        (Some(second), ro.output.clone()),
        (Some(stats), ro.stats.clone()),
    ];
    pairs
        .into_iter()
        .filter_map(|(from, to)| from.zip(to))
        .collect()
}

/// Remove the files of a repair that is not kept.
fn discard(record: &Record, dir: &Path, ro: &ReduceOptions) {
    for (from, _) in moves(record, dir, ro) {
        let _ = std::fs::remove_file(from);
    }
}

/// Where and how a repair reduces the folded original again: the test's directory, the
/// reduction's options, the folded original's path (`<stem>.unslipped.cpp`) and the campaign's
/// grouping (the second result is triaged as the first was).
struct Again<'a> {
    dir: &'a Path,
    ro: &'a ReduceOptions,
    input: &'a Path,
    reduce_again: &'a ReduceAgain<'a>,
}

/// How the caller reduces and triages a test again, with the slip check, into a record
/// (`record`, the options with the second input and outputs, the first original): the campaign's
/// one-test path, passed in so that the slip repair does not reach back into it.
pub(super) type ReduceAgain<'f> =
    dyn Fn(&mut Record, &ReduceOptions, &Path) -> anyhow::Result<Option<Vec<u8>>> + 'f;

impl Again<'_> {
    /// Set a second result's files aside, put them back or remove them ([`Held`]).
    fn held(&self, record: &Record, what: Held) -> anyhow::Result<()> {
        for (file, _) in moves(record, self.dir, self.ro) {
            let aside = PathBuf::from(format!("{}.held", file.display()));
            let (from, to) = match what {
                Held::Keep => (&file, &aside),
                Held::Restore => (&aside, &file),
                Held::Drop => {
                    let _ = std::fs::remove_file(&aside);
                    continue;
                }
            };
            if from.exists() {
                std::fs::rename(from, to).with_context(|| {
                    format!("cannot move {} to {}", from.display(), to.display())
                })?;
            }
        }
        Ok(())
    }

    /// Write `folded` to the input and reduce and triage it as the test, with the slip check
    /// against `record`'s original.
    fn reduce(&self, record: &Record, folded: &[u8]) -> anyhow::Result<Record> {
        let input = self.input;
        write_atomic(input, folded).with_context(|| format!("cannot write {}", input.display()))?;
        let mut again = self.ro.clone();
        again.input = input.to_path_buf();
        let (output, stats) = second_files(self.dir, &record.stem);
        again.output = Some(output);
        again.stats = Some(stats);
        again.resume = false;
        let mut second = record.clone();
        second.slip.slip_suspect = None;
        second.slip.slip_check_calls = 0;
        second.slip.repair_calls = 0;
        second.oracle_calls = 0;
        second.triage_calls = 0;
        second.message = None;
        (self.reduce_again)(&mut second, &again, &record.input)?;
        Ok(second)
    }
}

/// Keep the `second` result: its files take the first's places and its record `record`'s, with
/// every reduction's runs counted and why the `refused` repairs before it were not kept.
fn adopt(
    record: &mut Record,
    mut second: Record,
    refused: &[String],
    dir: &Path,
    ro: &ReduceOptions,
) -> anyhow::Result<()> {
    for (from, to) in moves(record, dir, ro)
        .into_iter()
        .filter(|(from, _)| from.exists())
    {
        std::fs::rename(&from, &to)
            .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
    }
    second.output.clone_from(&ro.output);
    second.stats.clone_from(&ro.stats);
    second.slip.repair_calls = record.slip.repair_calls + second.oracle_calls;
    second.oracle_calls += record.oracle_calls;
    second.triage_calls += record.triage_calls;
    second.slip.slip_suspect = record.slip.slip_suspect;
    second.slip.slip_check_calls += record.slip.slip_check_calls;
    second.slip.slip_repaired = true;
    if let Some(earlier) = record.message.take() {
        second.note(earlier);
    }
    if !refused.is_empty() {
        second.note(format!(
            "kept the reduction of the original with the triggers of {} earlier results folded \
             (not kept: {})",
            refused.len() + 1,
            refused.join("; then ")
        ));
    }
    *record = second;
    Ok(())
}

/// Why a second result is not kept.
struct Refusal {
    why: String,
    /// Only because folding its triggers in the original also folds calls of the first
    /// result's: it is kept when the original with both folded passes ([`repairs`]).
    held: bool,
}

/// Why the `second` result (of the folded original) does not replace the first (`record`'s), or
/// `None` when it does.
fn not_kept(record: &Record, second: &Record, original: &FoldableOriginal) -> Option<Refusal> {
    let refused = |why: String| Some(Refusal { why, held: false });
    match (second.outcome, second.slip.slip_suspect) {
        (Outcome::Reduced, Some(false)) => {}
        (Outcome::Reduced, Some(true)) => {
            return refused("the original fails without its trigger too".into());
        }
        (Outcome::Reduced, None) => return refused("no slip check could ask about it".into()),
        (Outcome::NotInteresting, _) => {
            return refused("the original with those triggers folded as well passes".into());
        }
        _ => return refused(second.message.clone().unwrap_or_default()),
    }
    let folded = folded_mrs(&second.triage.triggers, &second.triage.within_triggers);
    match original.folds_away(&record.triage.triggers, &folded) {
        Ok(false) => None,
        Ok(true) => Some(Refusal {
            why: format!(
                "folding {} in the original also folds calls of {}",
                second.triage.triggers.join(" "),
                record.triage.triggers.join(" ")
            ),
            held: true,
        }),
        Err(e) => refused(format!("cannot compare the two results' triggers: {e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{discover, run_one, triage, BatchOptions};
    use super::*;
    use std::path::PathBuf;

    /// Campaign test `t_iset_19` batched with a grep check that fails through its
    /// `compl_by_subtract` call (B) with `also` present, or through its `compl_by_clip` call (A)
    /// once its `unite_by_subtract` call is gone. The original fails through B; the first
    /// reduction drops `unite_by_subtract` and keeps A: a slip the slip check flags, since the
    /// original with A folded still fails through B.
    fn batched(also: &str, repair_slips: bool) -> (tempfile::TempDir, Record, String) {
        batched_with(also, "", repair_slips)
    }

    /// [`batched`] with one more way to fail: `third`, a line of the check script.
    fn batched_with(
        also: &str,
        third: &str,
        repair_slips: bool,
    ) -> (tempfile::TempDir, Record, String) {
        let b = format!(
            "grep -q 'compl_by_subtract_1_5(fctx' \"$1\" && grep -qF '{also}' \"$1\" && exit 0"
        );
        let a = "grep -q 'compl_by_clip_0_1(fctx' \"$1\" && ! grep -q 'unite_by_subtract_1_0(fctx' \"$1\"";
        batched_script(&format!("{b}\n{third}\n{a}\n"), repair_slips)
    }

    /// Campaign test `t_iset_19` batched with the check script whose lines (after `#!/bin/sh`)
    /// are `lines`.
    fn batched_script(lines: &str, repair_slips: bool) -> (tempfile::TempDir, Record, String) {
        use std::os::unix::fs::PermissionsExt;
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let check = dir.path().join("check.sh");
        std::fs::write(&check, format!("#!/bin/sh\n{lines}")).unwrap();
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::copy(root.join("fixtures/campaign/t_iset_19.cpp"), &input).unwrap();
        let mut reduce = ReduceOptions::new(&input, &check);
        reduce.include_dirs = vec![root.join("fixtures/iset/spec")];
        reduce.inputs = crate::engine::Inputs::Last;
        let opts = BatchOptions {
            reduce,
            out_dir: dir.path().join("out"),
            jobs: 1,
            tests_at_once: 1,
            resume: false,
            quiet: true,
            group_by: triage::GroupBy::Library,
            repair_slips,
        };
        let test = discover(&[input]).unwrap().remove(0);
        let record = run_one(&test, &opts).unwrap();
        let result = std::fs::read_to_string(record.output.as_ref().unwrap()).unwrap();
        (dir, record, result)
    }

    /// The files of test `t`'s directory whose name holds `unslipped`.
    fn unslipped_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join("out/t"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("unslipped"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_flagged_slip_is_reduced_again_and_kept_when_the_original_needs_its_trigger() {
        // B with the base call of variant 0's first step, which the first reduction drops.
        let also = "r_0 = metalib::relations::unite::base(fctx";
        let (dir, record, result) = batched(also, true);
        assert_eq!(record.outcome, Outcome::Reduced);
        assert_eq!(record.slip.slip_suspect, Some(true));
        assert!(record.slip.slip_repaired, "{:?}", record.message);
        assert_eq!(record.triage.triggers, ["complement::compl_by_subtract"]);
        assert!(result.contains("compl_by_subtract_1_5(fctx"), "{result}");
        assert!(!result.contains("compl_by_clip_0_1"), "{result}");
        let test_dir = dir.path().join("out/t");
        let folded = std::fs::read_to_string(test_dir.join("t.unslipped.cpp")).unwrap();
        assert!(!folded.contains("compl_by_clip_0_1"), "swept: {folded}");
        let origin = std::fs::read_to_string(test_dir.join("t.reduced.cpp.mfppr-origin")).unwrap();
        assert!(origin.contains("t.unslipped.cpp"), "{origin}");
        assert_eq!(unslipped_files(dir.path()), ["t.unslipped.cpp"]);

        let (_dir, kept, result) = batched(also, false);
        assert_eq!(kept.slip.slip_suspect, Some(true));
        assert!(!kept.slip.slip_repaired);
        assert_eq!(kept.triage.triggers, ["complement::compl_by_clip"]);
        assert!(result.contains("compl_by_clip_0_1(fctx"), "{result}");
        assert!(
            record.oracle_calls > kept.oracle_calls,
            "both reductions count"
        );
        assert!(record.slip.repair_calls > 0 && record.slip.repair_calls < record.oracle_calls);
        assert_eq!(kept.slip.repair_calls, 0);
    }

    #[test]
    fn a_repair_that_slips_too_is_followed_by_one_with_its_triggers_folded_as_well() {
        // C: through `unite_by_subtract` once neither `compl_by_clip` nor `compl_by_subtract`
        // is called. The first repair (A folded) drops `compl_by_subtract` and fails through C;
        // the original still fails with C's trigger folded (through A), so that result is not
        // kept. The second repair folds A and C and finds B.
        let also = "r_0 = metalib::relations::unite::base(fctx";
        let third = "grep -q 'unite_by_subtract_1_0(fctx' \"$1\" && \
                     ! grep -q 'compl_by_clip_0_1(fctx' \"$1\" && \
                     ! grep -q 'compl_by_subtract_1_5(fctx' \"$1\" && exit 0";
        let (dir, record, result) = batched_with(also, third, true);
        assert_eq!(record.slip.slip_suspect, Some(true));
        assert!(record.slip.slip_repaired, "{:?}", record.message);
        assert_eq!(record.triage.triggers, ["complement::compl_by_subtract"]);
        assert!(result.contains("compl_by_subtract_1_5(fctx"), "{result}");
        assert!(result.contains(also), "{result}");
        let note = record.message.clone().unwrap_or_default();
        assert!(note.contains("2 earlier results"), "{note}");
        let folded = std::fs::read_to_string(dir.path().join("out/t/t.unslipped.cpp")).unwrap();
        assert!(!folded.contains("unite_by_subtract_1_0(fctx"), "{folded}");
        assert_eq!(unslipped_files(dir.path()), ["t.unslipped.cpp"]);
    }

    #[test]
    fn a_second_result_whose_folds_take_the_first_trigger_with_them_is_held_until_both_folded_pass()
    {
        // A: through `intersect_comm` once `unite_by_subtract` is gone; B: through
        // `compl_by_clip`, which calls `intersect_comm`, with variant 0's first step. The first
        // result takes A (trigger `intersect_comm`); the original with it folded still fails
        // through B, and the repair's result takes B (trigger `compl_by_clip`). Folding that in
        // the original takes the `intersect_comm` call with it, so the original passing says
        // nothing alone; the original with both folded passes too, so the repair is kept.
        let lines = "grep -q 'compl_by_clip_0_1(fctx' \"$1\" && \
                     grep -qF 'r_0 = metalib::relations::unite::base(fctx' \"$1\" && exit 0\n\
                     grep -q 'intersect_comm_0_2(ctx' \"$1\" && \
                     ! grep -q 'unite_by_subtract_1_0(fctx' \"$1\"\n";
        let (dir, record, result) = batched_script(lines, true);
        assert_eq!(record.slip.slip_suspect, Some(true), "{:?}", record.message);
        assert!(record.slip.slip_repaired, "{:?}", record.message);
        assert_eq!(record.triage.triggers, ["complement::compl_by_clip"]);
        assert!(result.contains("compl_by_clip_0_1(fctx"), "{result}");
        let note = record.message.clone().unwrap_or_default();
        assert!(
            note.contains("the original with both results' triggers folded passes"),
            "{note}"
        );
        assert_eq!(unslipped_files(dir.path()), ["t.unslipped.cpp"]);
    }

    #[test]
    fn a_second_result_whose_trigger_the_original_does_not_need_is_not_kept() {
        // B with `unite_by_subtract`: the second result needs both calls, and the original with
        // both folded fails through A again, so the first result stays.
        let (dir, record, result) = batched("unite_by_subtract_1_0(fctx", true);
        assert_eq!(record.slip.slip_suspect, Some(true));
        assert!(!record.slip.slip_repaired);
        assert_eq!(record.triage.triggers, ["complement::compl_by_clip"]);
        assert!(result.contains("compl_by_clip_0_1(fctx"), "{result}");
        let note = record.message.unwrap_or_default();
        assert!(note.contains("was not kept"), "{note}");
        assert!(unslipped_files(dir.path()).is_empty());
    }

    #[test]
    fn folding_an_outer_mr_away_takes_the_calls_inside_it() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let path = root.join("fixtures/campaign/t_iset_19.cpp");
        let mut ro = ReduceOptions::new(&path, "c.py");
        ro.include_dirs = vec![root.join("fixtures/iset/spec")];
        let original = FoldableOriginal::load(&path, &ro).unwrap();
        let folds_away = |first: &[String], second: &[String]| original.folds_away(first, second);
        let mrs = |m: &str| vec![m.to_string()];
        let clip = mrs("complement::compl_by_clip");
        // compl_by_clip_0_1 calls intersect_comm_0_2: folding it leaves that instance uncalled.
        assert!(folds_away(&mrs("intersect::intersect_comm"), &clip).unwrap());
        assert!(!folds_away(&mrs("complement::compl_by_subtract"), &clip).unwrap());
        assert!(!folds_away(&clip, &mrs("shift::no_such_mr")).unwrap());
    }
}
