//! Sequence shortening (design §4.2): delete step position `j` from every variant. When step 0
//! goes, the first remaining step is rewritten into the declaration ([`redeclare`]).

use crate::edit::Edit;
use crate::model::TestModel;

use super::{is_input_var, lines, slice, Effect, Opportunity};

/// Sequence shortening: step position j in every variant.
pub(super) fn sequence_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let n = model.step_count();
    if n < 2 {
        return Vec::new();
    }
    let aligned = model.variants.iter().all(|v| v.steps.len() == n);
    if !aligned {
        return Vec::new();
    }
    (0..n)
        .filter(|&j| {
            // Step 0 can go only when it names a metamorphic input for the next step to take.
            j > 0
                || model.variants[0]
                    .steps
                    .first()
                    .is_some_and(|s| s.args.iter().any(|a| is_input_var(slice(text, a))))
        })
        .map(|j| Opportunity {
            description: format!("remove step {j} from every variant"),
            edits: model
                .variants
                .iter()
                .map(|v| Edit::delete(lines(text, &v.steps[j].span)))
                .collect(),
            effect: Effect::RemoveStep(j),
        })
        .collect()
}

/// When step 0 goes (with the steps `removed`), the first remaining step becomes the
/// declaration: `<T> r_i = CALL;` with its use of `r_i` replaced by the metamorphic input step 0
/// used (identical in all variants).
pub(super) fn redeclare(text: &[u8], model: &TestModel, removed: &[usize]) -> Option<Vec<Edit>> {
    let first = (0..model.step_count()).find(|j| !removed.contains(j))?;
    let mut edits = Vec::new();
    for v in &model.variants {
        let step0 = v.steps.first()?;
        let input = step0
            .args
            .iter()
            .map(|a| slice(text, a))
            .find(|a| is_input_var(a))?;
        let head = slice(text, step0.decl_head.as_ref()?);
        let step = v.steps.get(first)?;
        let call = &step.call_span;
        let mut call_text = String::new();
        let mut pos = call.start;
        let stmt = model.main_stmts.iter().find(|s| s.span == step.span)?;
        for (name, span) in &stmt.idents {
            if name == &v.name && span.start >= call.start && span.end <= call.end {
                call_text.push_str(slice(text, &(pos..span.start)));
                call_text.push_str(input);
                pos = span.end;
            }
        }
        call_text.push_str(slice(text, &(pos..call.end)));
        edits.push(Edit::replace(
            step.span.clone(),
            format!("{head} = {call_text};"),
        ));
    }
    Some(edits)
}
