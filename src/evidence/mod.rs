//! What a failing result shows, looked into once (issue 58): which relations it needs
//! ([`fold`], design §10.3), which library calls inside them ([`knockouts`]), and which call's
//! value is wrong ([`values`], design §11). The three share one reading of the spec's other ways
//! to compute a call ([`ways`]); each takes a judge and proposes candidate texts, never running a
//! process itself. Which of the original's checks fail, for the search's check cut, is read
//! here too ([`checks`]); both instrumented runs write a log ([`run_log`]). The bug report
//! ([`crate::bug_report`]), campaign triage ([`crate::batch`]) and the slip check use this room's
//! outward types only; what a campaign keeps of them on disk is the journal's own versioned type
//! ([`crate::batch::journal`]).

pub(crate) mod checks;
mod fold;
mod knockouts;
pub(crate) mod run_log;
pub(crate) mod values;
mod ways;

pub(crate) use fold::{blame, calls_of, folded_everywhere, needs, value_triggers, Blame, Triggers};
pub(crate) use knockouts::{Deeper, KnockoutOutcome};
pub(crate) use ways::{library_op, mr_name};
