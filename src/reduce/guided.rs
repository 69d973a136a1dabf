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
    let Some(cut) = mfpp.guided_cut(text, guide.failing_check, guide.keep.as_ref()) else {
        return Ok(no_cut("it would change nothing".to_string(), 1));
    };
    let verdict = oracle.verdict(&cut, &AtomicBool::new(false))?;
    let culprit = match guide.culprit.as_slice() {
        [] => "no culprit named".to_string(),
        ops => format!("culprit {}", ops.join(" or ")),
    };
    let held = verdict == Verdict::Interesting;
    crate::messages::progress(format!(
        "mfppr: guided first cut ({culprit}): {} → {} bytes, {}",
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
