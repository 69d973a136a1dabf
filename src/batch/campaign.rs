//! What every part of a campaign shares, below them all: its options ([`BatchOptions`]), the
//! per-test result file's name, the campaign directory's lock and the latest record per test.
//! The campaign's parts (the per-test step, the rereading commands, the task files, triage) take
//! these from here, never from the campaign's runner ([`super`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::journal::Record;
use super::triage;
use crate::lock::{lock_exclusive, Lock, LOCK_FILE};
use crate::reduce::ReduceOptions;

/// The per-test result file of a test's directory (written by every run of a test).
pub(crate) const RESULT: &str = "result.json";

/// The record of the last `batch emit` inside the campaign's output directory.
pub(crate) const MANIFEST: &str = "tasks.json";

/// Everything a campaign needs to know.
#[derive(Clone, Debug)]
pub(crate) struct BatchOptions {
    /// The options every test is reduced with; `input`, `output`, `stats`, `jobs`, `resume` and
    /// `quiet` are set per test.
    pub reduce: ReduceOptions,
    /// The campaign's output directory.
    pub out_dir: PathBuf,
    /// Check runs at once, shared by the tests in flight.
    pub jobs: usize,
    /// Tests reduced at once.
    pub tests_at_once: usize,
    /// Skip finished tests and continue unfinished ones from their best result.
    pub resume: bool,
    /// No progress lines.
    pub quiet: bool,
    /// What the triage groups by.
    pub group_by: triage::GroupBy,
    /// Reduce the original again, with the result's trigger folded, when the slip check flags a
    /// result ([`slips::repair_slip`]); the default (`--keep-slips` turns it off). Grouped by
    /// value, the slip check itself runs only then.
    pub repair_slips: bool,
}

impl BatchOptions {
    /// Check runs at once for one test: `jobs / tests_at_once`, at least 1.
    pub(crate) fn jobs_per_test(&self) -> usize {
        (self.jobs / self.tests_at_once.max(1)).max(1)
    }
}

/// Create `out_dir` if missing and lock it for this process (see [`crate::lock`]): a second run
/// on the same campaign is refused while this one holds the lock.
pub(crate) fn lock_out_dir(out_dir: &Path) -> anyhow::Result<Lock> {
    std::fs::create_dir_all(out_dir).with_context(|| {
        format!(
            "cannot create the output directory {}; check -o",
            out_dir.display()
        )
    })?;
    lock_exclusive(
        &out_dir.join(LOCK_FILE),
        &format!("the output directory {}", out_dir.display()),
    )
}

/// The latest record per stem, in stem order.
pub(crate) fn latest_per_stem(records: Vec<Record>) -> Vec<Record> {
    let mut by_stem = BTreeMap::new();
    for r in records {
        by_stem.insert(r.stem.clone(), r);
    }
    by_stem.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_shared_by_the_tests_in_flight() {
        let mut opts = BatchOptions {
            reduce: ReduceOptions::new("t.cpp", "c.py"),
            out_dir: PathBuf::from("o"),
            jobs: 8,
            tests_at_once: 3,
            resume: false,
            quiet: true,
            group_by: triage::GroupBy::Library,
            repair_slips: true,
        };
        assert_eq!(opts.jobs_per_test(), 2);
        opts.tests_at_once = 16;
        assert_eq!(opts.jobs_per_test(), 1);
    }
}
