//! Comparing and reporting: the new and partly new lines of a fuzz run against a suite run
//! ([`new_lines`]), and their text table, JSON and lcov tracefiles ([`report`]). Works on the
//! [`Coverage`](super::model::Coverage) model alone: reads no coverage file, edits no source and
//! runs nothing.

pub mod new_lines;
pub mod report;
