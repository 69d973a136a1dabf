//! The cuts before the search (issue 60). The check cut: one run of the original with every
//! check run to its end ([`crate::evidence::checks`]) says which checks fail. The guided first
//! cut (`--guided-cut`): one instrumented run ([`crate::evidence::values::guide`]) says which
//! check failed and which calls the first wrong value is computed in. The candidate that keeps
//! only those ([`MfppOpportunities::guided_cut`]) is judged first, and the search starts from it
//! when it holds. When the run tells nothing (a check that never runs the program writes no log)
//! or the cut does not hold, the search starts from where it was, one or two runs later.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::initial::EarlyCheckCut;
use crate::evidence::values::PATIENCE;
use crate::line_endings::EndingsOracle;
use crate::model::TestModel;
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
    /// The check cut's run says the failure is not in a check (a crash or a hang in what the
    /// test computes): it may be in a computation nothing reads ([`super::unread`]).
    pub(super) elsewhere: bool,
}

/// What a cut is made and judged with.
pub(super) struct Tools<'a> {
    pub(super) mfpp: &'a MfppOpportunities,
    /// The judge the original's run resolved; its run goes through it, more patient.
    pub(super) judge: &'a ScriptOracle,
    /// The search's oracle: the cut is judged through it.
    pub(super) oracle: &'a EndingsOracle<'a, ScriptOracle>,
    /// The search's timeout.
    pub(super) timeout: Duration,
}

impl Tools<'_> {
    /// Say what runs (`what`), and read `text`: its model, and the judge its run goes through.
    fn begin(&self, text: &[u8], what: &str) -> anyhow::Result<(TestModel, ScriptOracle)> {
        crate::messages::progress(format!("mfppr: {what}"));
        let model = self.mfpp.model(text)?;
        Ok((
            model,
            self.judge.with_timeout(Some(self.timeout * PATIENCE)),
        ))
    }
}

/// The guided first cut of `text` (the original, LF line endings): the instrumented run, then
/// the cut.
pub(super) fn first_cut(tools: &Tools<'_>, text: &[u8]) -> anyhow::Result<Cut> {
    let (mfpp, oracle) = (tools.mfpp, tools.oracle);
    let (model, patient) = tools.begin(
        text,
        "guided first cut: running the instrumented original once (which check fails, which \
         value is wrong)",
    )?;
    let guide = crate::evidence::values::guide(text, &model, mfpp.catalogue(), &patient)?;
    let no_cut = |why: String, runs: u64| no_cut("guided first cut", why, runs);
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

/// The check cut of `text` (LF line endings): one run with every check run to its end says which
/// checks fail; the candidate that keeps the reference and the variants of the failing checks,
/// each with only those, is judged. `early`: that run of `text`, begun beside the original's
/// check.
pub(super) fn check_cut(
    tools: &Tools<'_>,
    text: &[u8],
    early: Option<EarlyCheckCut>,
) -> anyhow::Result<Cut> {
    let (mfpp, oracle) = (tools.mfpp, tools.oracle);
    let (model, patient) = tools.begin(
        text,
        match early {
            None => {
                "check cut: running the original once with every check run to its end (which \
                 checks fail)"
            }
            Some(_) => {
                "check cut: waiting for the run of the original with every check run to its end \
                 (begun beside the original's check)"
            }
        },
    )?;
    let no_cut = |why: String| {
        let ran = u64::from(why != crate::evidence::checks::NO_CHECK);
        no_cut("check cut", why, ran)
    };
    let failing = match early {
        Some(early) => {
            let judged = early.wait(&patient)?;
            early.instrumented.failing(judged, &model, &patient)
        }
        None => crate::evidence::checks::failing(text, &model, &patient)?,
    };
    let failing = match failing {
        Ok(failing) => failing,
        Err(none) => {
            return Ok(Cut {
                elsewhere: none.elsewhere,
                ..no_cut(none.why)
            })
        }
    };
    // Which of the failing variants reduces smallest is not known before the search: the cut
    // keeps them all (the checks of the first one's function, the failure the original shows).
    let named: Vec<String> = failing
        .failed
        .iter()
        .map(|&(v, c)| describe(&model, v, c))
        .collect();
    let only_first = match failing.ended {
        true => "",
        false => " (the run did not reach its end: its first failing check only)",
    };
    crate::messages::progress(format!(
        "mfppr: check cut: failing {}{only_first}; the cut keeps {}",
        named.join(", "),
        if named.len() == 1 { "it" } else { "them" }
    ));
    let Some(cut) = mfpp.guided_cut(text, &failing.failed, None) else {
        return Ok(no_cut("it would change nothing".to_string()));
    };
    judge_cut(oracle, text, cut, "check cut")
}

/// A check as the log names it: `r_2 check_is_equal (1234 B)`, the bytes of the variant and
/// its instances.
fn describe(model: &TestModel, v: usize, c: usize) -> String {
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

/// No cut (`what` names it in the log), after `runs` check runs.
fn no_cut(what: &str, why: String, runs: u64) -> Cut {
    crate::messages::progress(format!("mfppr: {what}: none ({why})"));
    Cut {
        text: None,
        rejected: None,
        runs,
        said: format!("no cut: {why}"),
        elsewhere: false,
    }
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
            elsewhere: false,
        }
    } else {
        Cut {
            text: None,
            rejected: Some((cut, verdict)),
            runs: 2,
            said: "rejected".to_string(),
            elsewhere: false,
        }
    })
}
