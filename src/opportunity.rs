//! The contract between the passes (pure: text in, candidate texts out) and the engine (search
//! order, oracle runs, parallelism, cache, stats).
//!
//! The engine never looks inside a test: it asks an [`Opportunities`] for the opportunities of an
//! [`OpportunityKind`] in the current text, then for the candidate built from a window of them.

use std::ops::Range;

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
}

impl OpportunityKind {
    /// Every kind, in search order.
    pub const ALL: [OpportunityKind; 4] = [
        OpportunityKind::Variant,
        OpportunityKind::Sequence,
        OpportunityKind::Recursion,
        OpportunityKind::Fuzz,
    ];

    /// Stable name used in progress lines and `--stats` JSON.
    pub fn name(self) -> &'static str {
        match self {
            OpportunityKind::Variant => "variant",
            OpportunityKind::Sequence => "sequence",
            OpportunityKind::Recursion => "recursion",
            OpportunityKind::Fuzz => "fuzz",
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
        text: &'a [u8],
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

    /// The candidate made of the opportunities `window` (indices into `0..len()`), with the sweep
    /// applied. `None` when the window yields no valid change (e.g. the edits leave the text as it
    /// is, or would break an invariant such as "keep one non-reference variant").
    fn candidate(&self, window: Range<usize>) -> Option<Vec<u8>>;

    /// One-line description of opportunity `i`, for progress and stats.
    fn describe(&self, i: usize) -> String;
}
