//! Comparing and reporting: the new and partly new lines of a fuzz run against a suite run
//! ([`new_lines`]), and their text table, JSON and lcov tracefiles ([`report`]). Works on the
//! [`Coverage`](super::model::Coverage) model alone: reads no coverage file, edits no source and
//! runs nothing.

use std::path::PathBuf;

pub mod new_lines;
pub mod report;

/// The new lines, and the absolute source root they are relative to (when one was given).
#[derive(Clone, Debug)]
pub struct NewLinesReport {
    /// Lines the fuzz run reached and the suite did not.
    pub new: new_lines::NewLines,
    /// Lines both reached where the fuzz run covered more conditions or branches.
    pub partly: new_lines::PartlyNew,
    /// Absolute `--source-root`.
    pub source_root: Option<PathBuf>,
}

impl NewLinesReport {
    /// The report as a text table.
    pub fn table(&self) -> String {
        report::text_table(&self.new, &self.partly)
    }

    /// The report as stable JSON.
    pub fn json(&self) -> report::JsonReport {
        report::json_report(&self.new, &self.partly)
    }
}
