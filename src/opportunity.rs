//! The contract between the passes (pure: text in, candidate texts out) and the engine (search
//! order, oracle runs, parallelism, cache, stats).
//!
//! The engine never looks inside a test: it asks an [`Opportunities`] for the opportunities of an
//! [`OpportunityKind`] in the current text, then for the candidate built from a window of them.

use serde::Serialize;

/// An opportunity kind, in the order the search visits them (design §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpportunityKind {
    /// Delete a whole non-reference variant with its checks.
    Variant,
    /// Delete one step position from every variant.
    Sequence,
    /// Fold a call to a transplanted instance to a base MR, or hoist a same-family callee.
    Recursion,
    /// Reduce fuzz-region instructions (reduction functions, hoisting).
    Fuzz,
    /// Tail: one candidate with every input deletion of [`OpportunityKind::TailInputs`] at once
    /// and then the edits of the combined [`OpportunityKind::Tail`] candidate on that result:
    /// where the oracle takes both (most real MF++ tests), one oracle run instead of two; where
    /// it does not, the two kinds after it search as before. Nothing when no input can go.
    TailAll,
    /// Tail: delete inputs shared by all variants.
    TailInputs,
    /// Tail: one candidate with the edits of the three tail kinds below (equivalences first),
    /// each kind's on the previous one's result (they keep the test's meaning, so together they
    /// are usually accepted in one oracle run); those kinds then try what it did not take.
    Tail,
    /// Tail: delete unused `#include`s and `#define`s, comments and fuzz-region markers.
    TailText,
    /// Tail: tidy (indentation, `class T` spelling, unused `main` parameters).
    TailTidy,
    /// Tail: inline wrapper instances, turn identity-family MR calls into their argument, move
    /// single-use input values into their reader.
    TailEquivalence,
}

impl OpportunityKind {
    /// Every kind, in search order: the four main kinds (design §4.1–§4.4; fuzz reduction before
    /// recursion, so recursion's verdicts are found on the reduced inputs and the next round
    /// keeps them), then the six tail kinds (§4.6).
    pub const ALL: [OpportunityKind; 10] = [
        OpportunityKind::Variant,
        OpportunityKind::Sequence,
        OpportunityKind::Fuzz,
        OpportunityKind::Recursion,
        OpportunityKind::TailAll,
        OpportunityKind::TailInputs,
        OpportunityKind::Tail,
        OpportunityKind::TailText,
        OpportunityKind::TailTidy,
        OpportunityKind::TailEquivalence,
    ];

    /// A tail kind: tried once, after the four kinds before it reached their fixpoint, and
    /// gathered only when the tail passes are on.
    pub fn is_tail(self) -> bool {
        matches!(
            self,
            OpportunityKind::TailAll
                | OpportunityKind::TailInputs
                | OpportunityKind::Tail
                | OpportunityKind::TailEquivalence
                | OpportunityKind::TailText
                | OpportunityKind::TailTidy
        )
    }

    /// A kind whose edits keep the test's meaning and seldom depend on each other (the kinds of
    /// the combined [`OpportunityKind::Tail`] candidate): once a window of a few of them is
    /// rejected, each is judged alone on the same text and the interesting ones are merged.
    pub fn batches(self) -> bool {
        matches!(
            self,
            OpportunityKind::TailEquivalence
                | OpportunityKind::TailText
                | OpportunityKind::TailTidy
        )
    }

    /// Stable name used in progress lines and `--stats` JSON.
    pub fn name(self) -> &'static str {
        match self {
            OpportunityKind::Variant => "variant",
            OpportunityKind::Sequence => "sequence",
            OpportunityKind::Recursion => "recursion",
            OpportunityKind::Fuzz => "fuzz",
            OpportunityKind::TailAll => "tail_all",
            OpportunityKind::TailInputs => "tail_inputs",
            OpportunityKind::Tail => "tail",
            OpportunityKind::TailEquivalence => "tail_equivalence",
            OpportunityKind::TailText => "tail_text",
            OpportunityKind::TailTidy => "tail_tidy",
        }
    }
}

/// Pure producer of candidates. Implementations must not run processes or touch files.
pub trait Opportunities: Sync {
    /// Read `text` and list the opportunities of `kind` in it.
    ///
    /// An `Err` means the text cannot be read as a test at all (the engine stops).
    fn gather<'a>(
        &'a self,
        text: &[u8],
        kind: OpportunityKind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>>;
}

/// The opportunities of one kind in one text, ready to be turned into candidates.
pub trait Gathered: Sync {
    /// Number of opportunities, in enumeration order.
    fn len(&self) -> usize;

    /// True when there is nothing to try.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The candidate made of the opportunities `window` (indices into `0..len()`, increasing),
    /// with the sweep applied. `None` when the window yields no valid change (e.g. the edits leave
    /// the text as it is, or would break an invariant such as "keep one non-reference variant").
    fn candidate(&self, window: &[usize]) -> Option<Vec<u8>>;

    /// One-line description of opportunity `i`, for progress and stats.
    fn describe(&self, i: usize) -> String;

    /// A fingerprint of opportunity `i`: what it changes (its edits and the lines they touch,
    /// whitespace aside), so that the same opportunity in a text changed elsewhere has the same
    /// fingerprint. The engine skips an opportunity whose fingerprint was found uninteresting
    /// before (edit caching); `None` (the default) is never skipped.
    fn fingerprint(&self, _i: usize) -> Option<u64> {
        None
    }

    /// The opportunity whose edit removes opportunity `i` along with what it touches (a fold
    /// of the call of the instance `i` is in). The engine offers `i` only once that one was
    /// found needed alone (issue 60: hierarchical search); `None` (the default): always.
    fn parent(&self, _i: usize) -> Option<usize> {
        None
    }
}
