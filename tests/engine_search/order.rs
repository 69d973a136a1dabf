//! The order of the main kinds: fuzz reduction before recursion (issue 60), and with
//! `Inputs::Last` no recursion after the inputs were reduced.

use std::collections::BTreeSet;

use mfppr::engine::Inputs;
use mfppr::opportunity::OpportunityKind;

use super::{join, lines_of, reduce, reduce_inputs, set, LineReduction, Rule};

#[test]
fn recursion_judges_after_fuzz_reduction_so_the_next_round_keeps_its_verdicts() {
    // Every `r` line is needed; `f0` goes. Fuzz reduction runs before recursion, so the accepted
    // fuzz edit does not make the next round judge the `r` lines again (it would, after them:
    // it changes the values the test computes).
    let r_lines: BTreeSet<String> = (0..4).map(|i| format!("r{i}")).collect();
    let mut lines: Vec<String> = r_lines.iter().cloned().collect();
    lines.push("f0".to_string());
    let out = reduce(&join(&lines), Rule::Keeps(r_lines.clone()), 1, true, 0);
    let kept: Vec<String> = r_lines.into_iter().collect();
    assert_eq!(out.result, join(&kept));
    // Windows of two, then the four single lines, once.
    assert_eq!(out.stats.kinds[&OpportunityKind::Recursion].candidates, 6);
    assert_eq!(out.stats.kinds[&OpportunityKind::Fuzz].accepted, 1);
}

/// With `Inputs::Last`, recursion (the main kind after fuzz reduction in the search order) does
/// not run again after the inputs were reduced: `r1`, which only `f1`'s removal lets go, stays.
#[test]
fn with_inputs_last_recursion_does_not_run_after_fuzz_reduction() {
    let text = join(&["r1", "r2", "f1", "f2"].map(String::from));
    let rule = Rule::Locked(set(&["r2", "f2"]), "f1".into(), set(&["r1"]));
    for jobs in [1, 3] {
        let out = reduce_inputs(
            &LineReduction,
            &text,
            rule.clone(),
            (jobs, true, 2),
            Inputs::Last,
        );
        assert_eq!(
            out.result,
            join(&["r1", "r2", "f2"].map(String::from)),
            "-j{jobs}"
        );
        if jobs > 1 {
            continue; // speculation may judge a candidate early, guessing verdicts
        }
        let fuzz = out
            .calls
            .iter()
            .position(|c| !lines_of(c).contains(&"f1".into()));
        assert!(
            out.calls[fuzz.unwrap()..]
                .iter()
                .all(|c| lines_of(c).contains(&"r1".into())),
            "a recursion candidate after fuzz reduction"
        );
    }
}

/// A candidate that applies every edit of a rejected one, and more, is not judged: `{f0, f1, f2}`
/// and `{f0, f1}` are rejected, `f0` and `f2` go in since, so `f1` alone (which adds nothing to
/// what failed) is taken as needed without a run — in every round, as an edit found needed is.
#[test]
fn a_window_that_holds_what_is_left_of_a_rejected_one_is_not_judged() {
    let lines: Vec<String> = (0..5).map(|i| format!("f{i}")).collect();
    let rule = Rule::Keeps(set(&["f1"]));
    let out = reduce(&join(&lines), rule.clone(), 1, true, 0);
    assert_eq!(out.result, join(&["f1".to_string()]));
    // [f0 f1 f2] no, [f3 f4] yes, [f0 f1] no, [f2] yes, [f0] yes; `f1` alone (the empty text)
    // never.
    assert_eq!(out.calls.len(), 5, "{:?}", out.calls);
    assert!(out.calls.iter().all(|c| !c.is_empty()));
    for jobs in [2, 4] {
        let other = reduce(&join(&lines), rule.clone(), jobs, true, 1);
        assert_eq!(other.result, out.result, "-j{jobs}");
        assert_eq!(other.accepted, out.accepted, "-j{jobs}");
    }
}
