//! The guided first cut (issue 60): before the search, one instrumented run of the original
//! ([`crate::evidence::values::guide`]) says which check failed and which calls the first wrong
//! value is computed in; the candidate that keeps only those
//! ([`MfppOpportunities::guided_cut`]) is judged first, and the search starts from it when it
//! holds. When the run tells nothing (a check that never runs the program writes no probe log)
//! or the cut does not hold, the search starts from the original, one or two runs later.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::evidence::values::PATIENCE;
use crate::line_endings::EndingsOracle;
use crate::oracle::{Oracle, ScriptOracle, Verdict};
use crate::passes::MfppOpportunities;

/// How the guided first cut ended.
pub(super) struct Cut {
    /// The cut, when it holds.
    pub(super) text: Option<Vec<u8>>,
    /// A cut that did not hold, with its verdict (the search must not judge it again).
    pub(super) rejected: Option<(Vec<u8>, Verdict)>,
    /// Check runs made: the instrumented run, and the cut's.
    pub(super) runs: u64,
    /// What happened, for `--stats` (`held`, `rejected`, `no cut: WHY`).
    pub(super) said: String,
}

/// The guided first cut of `text` (the original, LF line endings): the instrumented run through
/// `judge` (the judge the original's run resolved, more patient), then the cut through
/// `oracle`, the search's.
pub(super) fn first_cut(
    mfpp: &MfppOpportunities,
    text: &[u8],
    judge: &ScriptOracle,
    oracle: &EndingsOracle<'_, ScriptOracle>,
    timeout: Duration,
) -> anyhow::Result<Cut> {
    crate::messages::progress(
        "mfppr: guided first cut: running the instrumented original once (which check fails, \
         which value is wrong)",
    );
    let model = mfpp.model(text)?;
    let patient = judge.with_timeout(Some(timeout * PATIENCE));
    let guide = crate::evidence::values::guide(text, &model, mfpp.catalogue(), &patient)?;
    let no_cut = |why: String, runs: u64| {
        crate::messages::progress(format!("mfppr: guided first cut: none ({why})"));
        Cut {
            text: None,
            rejected: None,
            runs,
            said: format!("no cut: {why}"),
        }
    };
    let guide = match guide {
        Ok(guide) => guide,
        Err(why) => {
            let ran = u64::from(why != crate::evidence::values::NOTHING_TO_PROBE);
            return Ok(no_cut(why, ran));
        }
    };
    let Some(cut) = mfpp.guided_cut(text, guide.failing_check.as_slice(), guide.keep.as_ref())
    else {
        return Ok(no_cut("it would change nothing".to_string(), 1));
    };
    let culprit = match guide.culprit.as_slice() {
        [] => "no culprit named".to_string(),
        ops => format!("culprit {}", ops.join(" or ")),
    };
    judge_cut(oracle, text, cut, &format!("guided first cut ({culprit})"))
}

/// The check cut of `text` (the original, LF line endings): one run through `judge` with every
/// check run to its end says which checks fail; the candidate that keeps the reference and the
/// variants of the failing checks, each with only those, is judged through `oracle`.
pub(super) fn check_cut(
    mfpp: &MfppOpportunities,
    text: &[u8],
    judge: &ScriptOracle,
    oracle: &EndingsOracle<'_, ScriptOracle>,
    timeout: Duration,
) -> anyhow::Result<Cut> {
    crate::messages::progress(
        "mfppr: check cut: running the original once with every check run to its end (which \
         checks fail)",
    );
    let model = mfpp.model(text)?;
    let patient = judge.with_timeout(Some(timeout * PATIENCE));
    let no_cut = |why: String| {
        crate::messages::progress(format!("mfppr: check cut: none ({why})"));
        Cut {
            text: None,
            rejected: None,
            runs: 1,
            said: format!("no cut: {why}"),
        }
    };
    let failing = match crate::evidence::values::failing_checks(text, &model, &patient)? {
        Ok(failing) => failing,
        Err(why) => return Ok(no_cut(why)),
    };
    // Which of the failing variants reduces smallest is not known before the search: the cut
    // keeps them all (the checks of the first one's function, the failure the original shows).
    let named: Vec<String> = failing
        .iter()
        .map(|&(v, c)| describe(&model, v, c))
        .collect();
    crate::messages::progress(format!(
        "mfppr: check cut: failing {}; the cut keeps them",
        named.join(", ")
    ));
    let Some(cut) = mfpp.guided_cut(text, &failing, None) else {
        return Ok(no_cut("it would change nothing".to_string()));
    };
    judge_cut(oracle, text, cut, "check cut")
}

/// A check as the log names it: `r_2 check_is_equal (1234 B)`, the bytes of the variant and
/// its instances.
fn describe(model: &crate::model::TestModel, v: usize, c: usize) -> String {
    let Some(variant) = model.variants.iter().find(|x| x.index == v) else {
        return String::new();
    };
    let own: usize = model
        .instances
        .iter()
        .filter(|i| i.variant == v)
        .map(|i| i.span.len())
        .sum::<usize>()
        + variant.span().len();
    let check = variant.checks.get(c).map_or("", |c| c.name.as_str());
    format!("{} {check} ({own} B)", variant.name)
}

/// Judge `cut` of `text` through `oracle` (`what` names it in the log): the search starts from
/// it when it holds.
fn judge_cut(
    oracle: &EndingsOracle<'_, ScriptOracle>,
    text: &[u8],
    cut: Vec<u8>,
    what: &str,
) -> anyhow::Result<Cut> {
    let verdict = oracle.verdict(&cut, &AtomicBool::new(false))?;
    let held = verdict == Verdict::Interesting;
    crate::messages::progress(format!(
        "mfppr: {what}: {} → {} bytes, {}",
        text.len(),
        cut.len(),
        if held {
            "holds; the search starts from it"
        } else {
            "does not hold; the search starts from the original"
        }
    ));
    Ok(if held {
        Cut {
            text: Some(cut),
            rejected: None,
            runs: 2,
            said: "held".to_string(),
        }
    } else {
        Cut {
            text: None,
            rejected: Some((cut, verdict)),
            runs: 2,
            said: "rejected".to_string(),
        }
    })
}
