//! The tail passes (design §4.6, §10.1): run once the four main kinds are at their fixpoint,
//! they edit only what keeps every variant computing, from the same inputs, values the spec
//! declares equivalent — so the oracle can judge them like any candidate without letting the
//! reduction slip. Never an edit of other statements of MR bodies, of checks or of steps.
//!
//! There are six tail kinds: `tail_all` (the input deletions and the combined candidate at
//! once), `tail_inputs`, `tail` (the combined candidate), `tail_text`, `tail_tidy` and
//! `tail_equivalence`. Their edits come from one file per pass: `equivalence`
//! (identity-family MR calls, wrapper instances), `inputs` (what `main` computes before the
//! first variant: deletions for `tail_inputs`, moved values for `tail_equivalence`), `text`
//! (preprocessor lines, comments, fuzz-region markers) and `tidy` (indentation, `class`
//! spelling, unused `main` parameters).
//!
//! This module owns what they share: the dispatch, the combined candidates of
//! [`OpportunityKind::Tail`] ([`combined`]) and [`OpportunityKind::TailAll`]
//! ([`combined_with_inputs`]) and two model helpers; their byte scanners are in
//! [`super::scan`].

use crate::catalogue::Catalogue;
use crate::document::Span;
use crate::model::TestModel;
use crate::opportunity::{Gathered, Opportunities, OpportunityKind};

use super::Opportunity;

mod equivalence;
mod inputs;
mod text;
mod tidy;

/// The opportunities of the tail kind `kind`, in enumeration order (none for another kind).
pub(super) fn tail_ops(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    kind: OpportunityKind,
) -> Vec<Opportunity> {
    match kind {
        OpportunityKind::TailEquivalence => {
            let mut ops = equivalence::equivalence_ops(text, model, catalogue);
            ops.extend(inputs::move_ops(text, model));
            ops
        }
        OpportunityKind::TailInputs => inputs::input_ops(text, model),
        OpportunityKind::TailText => text::text_ops(text, model, catalogue),
        OpportunityKind::TailTidy => tidy::tidy_ops(text, model),
        _ => Vec::new(),
    }
}

/// The tail kinds whose edits [`combined`] applies, in this order: those that keep every value
/// the test computes (not the input deletions, which the oracle often rejects).
const COMBINED: [OpportunityKind; 3] = [
    OpportunityKind::TailEquivalence,
    OpportunityKind::TailText,
    OpportunityKind::TailTidy,
];

/// How often [`combined`] takes all of one kind's opportunities again on its own result (a
/// wrapper that forwards to a wrapper, a declaration read only by a deleted statement).
const COMBINED_PASSES: usize = 4;

/// A gathering of one prepared candidate (or none): what [`OpportunityKind::Tail`] offers.
#[derive(Default)]
pub(super) struct Combined {
    candidate: Option<Vec<u8>>,
    description: String,
}

impl Gathered for Combined {
    fn len(&self) -> usize {
        usize::from(self.candidate.is_some())
    }

    fn candidate(&self, window: &[usize]) -> Option<Vec<u8>> {
        (window == [0]).then(|| self.candidate.clone()).flatten()
    }

    fn describe(&self, _: usize) -> String {
        self.description.clone()
    }
}

/// The candidate made of every opportunity of each [`COMBINED`] kind, in that order, each kind
/// gathered (by `opportunities`) on the previous kind's result and taken whole until it offers
/// nothing new; `None` when that leaves `text` as it is. These edits keep the test's meaning,
/// so this one candidate usually replaces a search per kind.
pub(super) fn combined(text: &[u8], opportunities: &dyn Opportunities) -> Option<Combined> {
    let mut current = text.to_vec();
    let mut taken: Vec<String> = Vec::new();
    for kind in COMBINED {
        let mut count = 0;
        for _ in 0..COMBINED_PASSES {
            let next = match opportunities.gather(&current, kind) {
                Ok(g) if !g.is_empty() => g
                    .candidate(&(0..g.len()).collect::<Vec<_>>())
                    .map(|c| (c, g.len())),
                _ => None,
            };
            let Some((next, n)) = next.filter(|(c, _)| *c != current) else {
                break;
            };
            current = next;
            count += n;
        }
        if count > 0 {
            taken.push(format!("{count} {}", kind.name()));
        }
    }
    (current != text).then(|| Combined {
        candidate: Some(current),
        description: format!("every tail edit at once: {}", taken.join(", ")),
    })
}

/// The candidate of [`OpportunityKind::TailAll`]: every input deletion of
/// [`OpportunityKind::TailInputs`] at once, then [`combined`] on that result; `None` when no
/// input can go, or when the combined edits add nothing (the deletions alone are `tail_inputs`'
/// first window).
pub(super) fn combined_with_inputs(
    text: &[u8],
    opportunities: &dyn Opportunities,
) -> Option<Combined> {
    let inputs = opportunities
        .gather(text, OpportunityKind::TailInputs)
        .ok()?;
    let n = inputs.len();
    let deleted = inputs.candidate(&(0..n).collect::<Vec<_>>())?;
    let both = combined(&deleted, opportunities)?;
    let deletions = match n {
        1 => "1 input deletion".to_string(),
        n => format!("{n} input deletions"),
    };
    Some(Combined {
        candidate: both.candidate,
        description: format!("{deletions}, then {}", both.description),
    })
}

/// Where the statements of `main` that come before the first variant end.
fn first_variant_start(model: &TestModel) -> usize {
    model
        .variants
        .iter()
        .map(|v| v.span().start)
        .min()
        .unwrap_or(model.main_body.end)
}

/// Whether `span` lies inside `outer`.
fn within(span: &Span, outer: &Span) -> bool {
    span.start >= outer.start && span.end <= outer.end
}
