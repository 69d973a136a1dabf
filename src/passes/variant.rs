//! Variant elimination (design §4.1): delete a whole non-reference variant with its checks, then,
//! unless `--keep-checks`, single checks. `r_0` never goes; the window invariants in the parent
//! module keep one non-reference variant with a check unless `--drop-oracle`.

use crate::edit::Edit;
use crate::model::TestModel;

use super::{lines, Effect, Opportunity, PassOptions};

/// Variant elimination (never `r_0`), then, unless `--keep-checks`, single checks.
pub(super) fn variant_ops(
    text: &[u8],
    model: &TestModel,
    options: &PassOptions,
) -> Vec<Opportunity> {
    // A variant no check reads any more first: removing it keeps the oracle whatever else a
    // window removes, so those go in one window instead of being split by windows that would
    // remove the last checked variant (and are skipped).
    let mut variants: Vec<_> = model.variants.iter().filter(|v| v.index != 0).collect();
    variants.sort_by_key(|v| !v.checks.is_empty());
    let mut ops: Vec<Opportunity> = variants
        .into_iter()
        .map(|v| Opportunity {
            description: format!("remove variant {}", v.name),
            edits: vec![Edit::delete(lines(text, &v.span()))],
            effect: Effect::RemoveVariant(v.index),
        })
        .collect();
    if !options.keep_checks {
        for v in model.variants.iter().filter(|v| v.index != 0) {
            for (c, check) in v.checks.iter().enumerate() {
                ops.push(Opportunity {
                    description: format!("remove check {} of {}", check.name, v.name),
                    edits: vec![Edit::delete(lines(text, &check.span))],
                    effect: Effect::RemoveCheck {
                        variant: v.index,
                        check: c,
                    },
                });
            }
        }
    }
    ops
}
