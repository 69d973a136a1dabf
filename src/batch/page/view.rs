//! The campaign page's model, below its reader ([`super`]) and its writer ([`super::render`],
//! [`super::curve`]): what the page shows, as plain data.

use crate::batch::triage::GroupBy;

/// The outcomes the page counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) reduced: usize,
    pub(super) not_interesting: usize,
    /// Reduced, flagged by the slip check and not repaired.
    pub(super) slipped: usize,
    /// Reduced, its wrong value not localised.
    pub(super) undecided: usize,
    /// The check could not run, the input could not be read, or the task left no result.
    pub(super) failed: usize,
}

/// The code a group shows: its representative's standalone export, else its reduced test.
#[derive(Clone, Debug)]
pub(super) struct Code {
    /// `standalone` or `reduced` (the `data-kind` of the block).
    pub(super) kind: &'static str,
    /// What the code is, and why it is not the standalone export when it is not.
    pub(super) label: String,
    pub(super) text: String,
}

/// A test's reduction curve: `[check runs, bytes]` from its start.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Curve {
    /// Every accepted step, from `stats.json`.
    Steps(Vec<[u64; 2]>),
    /// Only the start and the end are known (a stats file without the curve, or none).
    Ends(Vec<[u64; 2]>),
}

/// One test on the page.
#[derive(Clone, Debug)]
pub(super) struct TestView {
    pub(super) stem: String,
    pub(super) outcome: &'static str,
    pub(super) bytes_before: u64,
    pub(super) bytes_after: u64,
    /// Check runs of the reduction and of triage.
    pub(super) runs: u64,
    /// Why it slipped (reduced tests the slip check flagged and no repair replaced).
    pub(super) slipped: Option<String>,
    /// Why its wrong value is undecided.
    pub(super) undecided: Option<String>,
    /// Why it was not reduced, or what triage noted.
    pub(super) message: Option<String>,
    /// `(label, href)` of its files that exist.
    pub(super) links: Vec<(&'static str, String)>,
    pub(super) curve: Curve,
    /// The evidence `batch explain` prints, one line each.
    pub(super) evidence: Vec<String>,
    /// `(way, value)` of its culprit call: the call's own value, then each other way's.
    pub(super) values: Vec<(String, String)>,
}

/// One group on the page.
#[derive(Clone, Debug)]
pub(super) struct GroupView {
    pub(super) id: usize,
    pub(super) signature: String,
    /// The signature in words: the failure and the library operation whose value is wrong.
    pub(super) words: String,
    pub(super) representative: String,
    pub(super) code: Code,
    pub(super) members: Vec<TestView>,
}

/// The whole page.
#[derive(Clone, Debug)]
pub(super) struct Campaign {
    pub(super) title: String,
    pub(super) group_by: GroupBy,
    pub(super) tests: usize,
    pub(super) counts: Counts,
    pub(super) wall_secs: f64,
    pub(super) check_runs: u64,
    pub(super) groups: Vec<GroupView>,
    pub(super) not_reduced: Vec<TestView>,
}
