//! What the failing run already tells the search (issue 60): the original, instrumented as the
//! localiser instruments a result ([`super::open_and_instrument`]) and run once through the check
//! as given, read with the localiser's reader ([`super::decide`]) for the check statement the
//! program failed in and the calls its first wrong value is computed in. The search's guided
//! first cut keeps those and cuts the rest (`crate::passes::MfppOpportunities::guided_cut`).

use std::collections::BTreeSet;

use anyhow::Result;

use super::decide;
use crate::catalogue::Catalogue;
use crate::evidence::run_log;
use crate::judge::Judge;
use crate::model::TestModel;

/// What the original's instrumented run says its failure needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Guide {
    /// The variant (its index) whose check the program failed in, and that check's position
    /// among the variant's checks; `None` when it did not fail in a check.
    pub failing_check: Option<(usize, usize)>,
    /// The instances the first wrong value is computed in: of the probed calls whose own value
    /// differs from every other way (deepest first, as the value knockouts order them), the
    /// first outside the variants the cut removes: its callee, the function it is in, and every
    /// instance that calls that function, directly or not. `None` when no culprit was named or
    /// no call's own value is wrong (nothing may be folded then).
    pub keep: Option<BTreeSet<String>>,
    /// The culprit's library operations, for the log line.
    pub culprit: Vec<String>,
}

/// Why there is no guide when nothing was run: no call of the test has another way to compute.
pub(crate) const NOTHING_TO_PROBE: &str =
    "no call in it that the spec gives another way to compute";

/// Read what `text` (the original, `model` and `catalogue` its reading) tells: one instrumented
/// run through `judge`. `Ok(Err(why))` when it tells nothing: nothing to probe
/// ([`NOTHING_TO_PROBE`]: then nothing ran), no probe log (a check that never runs the program), or
/// a run that did not fail.
pub(crate) fn guide(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    judge: &dyn Judge,
) -> Result<std::result::Result<Guide, String>> {
    let scratch = tempfile::Builder::new().prefix("mfppr-guide-").tempdir()?;
    let log = scratch.path().join("probes.log");
    let Some(instrumented) = super::open_and_instrument(text, model, catalogue, &log)? else {
        return Ok(Err(NOTHING_TO_PROBE.to_string()));
    };
    let logged = run_log::run(&instrumented.text, judge, &log)?;
    super::keep_probes(&instrumented, &logged.lines, "guided-cut");
    if let Some(why) = logged.why_none(judge, "probe log") {
        return Ok(Err(why));
    }
    let lines = String::from_utf8_lossy(&logged.lines);
    let failing_check = decide::failed_check(&lines, &instrumented.sites)
        .and_then(|k| crate::evidence::checks::check_at(model, k));
    let reading = decide::read(&lines, &instrumented.sites);
    if failing_check.is_none() && reading.evidence.is_none() {
        return Ok(Err(
            "the instrumented run neither failed in a check nor named a culprit".to_string(),
        ));
    }
    let kept_variant = |place: &str| match (model.instance(place), failing_check) {
        (Some(i), Some((v, _))) => i.variant == 0 || i.variant == v,
        _ => true,
    };
    let keep = decide::wrong_records(&lines, &instrumented.sites)
        .iter()
        .filter_map(|w| instrumented.sites.get(w.site))
        .find(|s| kept_variant(&s.place))
        .filter(|_| !reading.culprit.is_empty())
        .map(|s| computed_in(model, &s.place, &s.call));
    Ok(Ok(Guide {
        failing_check,
        keep,
        culprit: reading.culprit,
    }))
}

/// The instances a call (`call` as written, in function `place`) is computed in: its callee,
/// `place`, and every instance that calls `place`, directly or not; instance names only.
fn computed_in(model: &TestModel, place: &str, call: &str) -> BTreeSet<String> {
    let mut keep: BTreeSet<String> = BTreeSet::new();
    if model.instance(place).is_some() {
        keep.insert(place.to_string());
    }
    loop {
        let callers: Vec<String> = model
            .instances
            .iter()
            .filter(|i| !keep.contains(&i.name) && i.callees.iter().any(|c| keep.contains(c)))
            .map(|i| i.name.clone())
            .collect();
        if callers.is_empty() {
            break;
        }
        keep.extend(callers);
    }
    let callee = call.split('(').next().unwrap_or_default().trim();
    if model.instance(callee).is_some() {
        keep.insert(callee.to_string());
    }
    keep
}
