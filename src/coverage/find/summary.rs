//! The result of `cover find`: one [`Point`] per marker and the [`FindSummary`] written to
//! `OUT/summary.json`, with its table and its one-line count.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use super::reach::TestFile;
use crate::atomic::write_atomic;

/// One coverage point (marker) and what became of it.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Marker id.
    pub id: String,
    /// Library file key.
    pub file: String,
    /// The marker's line.
    pub line: u32,
    /// Every new line the marker stands for.
    pub lines: Vec<u32>,
    /// How many passing tests reach it.
    pub reached_by: usize,
    /// The chosen (smallest) test, when reached.
    pub source_test: Option<TestFile>,
    /// The reduced test, when the reduction succeeded.
    pub reduced: Option<PathBuf>,
    /// The marker whose reduced test (of the same source test, reaching this marker too) this
    /// point took as it is instead of reducing again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_from: Option<String>,
    /// Its size.
    pub bytes_after: Option<u64>,
    /// gcov's verdict, when asked for.
    pub verified: Option<bool>,
    /// With `--metamorphic`: `metamorphic (pair r_0/r_k)` or `executed only` for the source
    /// test's isolated variants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metamorphic: Option<String>,
    /// With `--metamorphic`: why the source test was chosen among those reaching the marker.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub chosen_because: String,
    /// With `--metamorphic`, for a metamorphic point: the pair (`r_0/r_k`) the reduction keeps
    /// the marker in (its oracle asks that exactly one side reaches it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mc_pair: Option<String>,
    /// For a reduced metamorphic point: gcov finds the line on exactly one side of `mc_pair` in
    /// the reduced test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mc_kept: Option<bool>,
    /// After the reductions: how a check sees the line in its suite test (`checked (metamorphic,
    /// pair r_0/r_k)`, `checked (value)`, `checked (value): regression check (current
    /// behaviour)`, `executed only`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Why: the statement reaching the line and what a changed value did.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub check_reason: String,
    /// The suite test (`OUT/tests/<id>.cpp`) that covers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite_test: Option<PathBuf>,
    /// What went wrong, if anything.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// The counts of the suite tests (after the reductions).
#[derive(Clone, Debug, Serialize)]
pub struct SuiteCounts {
    /// Tests kept in `OUT/tests/`.
    pub tests: usize,
    /// Reached markers a metamorphic check sees.
    pub metamorphic: usize,
    /// Reached markers a value check (an assertion, or a regression check) sees.
    pub value: usize,
    /// Reached markers no check sees.
    pub executed_only: usize,
}

/// The pipeline's result, also written as `OUT/summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct FindSummary {
    /// New lines found by the diff.
    pub new_lines: usize,
    /// Markers injected.
    pub markers: usize,
    /// Tests run.
    pub tests: usize,
    /// Markers reached by at least one passing test.
    pub reached: usize,
    /// Markers with a reduced test.
    pub reduced: usize,
    /// Reduced tests that gcov confirms.
    pub verified: usize,
    /// With `--metamorphic`: reached markers whose line is in the source test's MC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metamorphic: Option<usize>,
    /// After the reductions: the suite tests and how their checks see the reached markers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteCounts>,
    /// Per marker.
    pub points: Vec<Point>,
}

impl FindSummary {
    pub(super) fn recount(&mut self) {
        self.reached = self
            .points
            .iter()
            .filter(|p| p.source_test.is_some())
            .count();
        self.reduced = self.points.iter().filter(|p| p.reduced.is_some()).count();
        self.verified = self
            .points
            .iter()
            .filter(|p| p.verified == Some(true))
            .count();
        if self.metamorphic.is_some() {
            self.metamorphic = Some(
                self.points
                    .iter()
                    .filter(|p| {
                        p.metamorphic
                            .as_deref()
                            .is_some_and(|m| m.starts_with("metamorphic"))
                    })
                    .count(),
            );
        }
    }

    /// The one-line result: after the reductions `cover: P new lines, R reached, T tests, C
    /// checked (M metamorphic, V value), E executed only`; before (or without `--reduce`) `cover:
    /// P new lines, R reached, D reduced, V verified`, and `, M metamorphic` with `--metamorphic`.
    pub fn last_line(&self) -> String {
        if let Some(s) = &self.suite {
            return format!(
                "cover: {} new lines, {} reached, {} tests, {} checked ({} metamorphic, {} value), \
                 {} executed only",
                self.new_lines,
                self.reached,
                s.tests,
                s.metamorphic + s.value,
                s.metamorphic,
                s.value,
                s.executed_only
            );
        }
        let mut line = format!(
            "cover: {} new lines, {} reached, {} reduced, {} verified",
            self.new_lines, self.reached, self.reduced, self.verified
        );
        if let Some(m) = self.metamorphic {
            line.push_str(&format!(", {m} metamorphic"));
        }
        line
    }

    /// The table: point, file:line, source test, tests reaching it, bytes before → after, verified,
    /// and with `--metamorphic` the verdict on metamorphic coverage (`, kept` or `, lost`: whether
    /// gcov still finds a metamorphic point on exactly one side of its pair after the reduction).
    pub fn table(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|p| {
                let (test, bytes) = match &p.source_test {
                    None => ("(not reached)".to_string(), "-".to_string()),
                    Some(t) => (
                        t.name.clone(),
                        match p.bytes_after {
                            Some(after) => format!("{} -> {after}", t.bytes),
                            None => t.bytes.to_string(),
                        },
                    ),
                };
                let verified = match p.verified {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                };
                let mut row = vec![
                    p.id.clone(),
                    format!("{}:{}", p.file, p.line),
                    test,
                    p.reached_by.to_string(),
                    bytes,
                    verified.to_string(),
                ];
                if self.metamorphic.is_some() {
                    let mut verdict = p.metamorphic.clone().unwrap_or_else(|| "-".into());
                    match p.mc_kept {
                        Some(true) => verdict.push_str(", kept"),
                        Some(false) => verdict.push_str(", lost"),
                        None => {}
                    }
                    row.push(verdict);
                }
                if self.suite.is_some() {
                    row.push(p.check.clone().unwrap_or_else(|| "-".into()));
                }
                row
            })
            .collect();
        let mut header: Vec<String> = [
            "POINT",
            "FILE:LINE",
            "SOURCE TEST",
            "TESTS",
            "BYTES",
            "VERIFIED",
        ]
        .map(String::from)
        .to_vec();
        if self.metamorphic.is_some() {
            header.push("METAMORPHIC".into());
        }
        if self.suite.is_some() {
            header.push("CHECK".into());
        }
        let mut widths: Vec<usize> = header.iter().map(String::len).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.len());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&header).chain(&rows) {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, &w)| format!("{c:<w$}"))
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        out
    }

    pub(super) fn write(&self, out: &Path) -> Result<()> {
        let path = out.join("summary.json");
        let mut json = serde_json::to_vec_pretty(self).context("cannot serialise the summary")?;
        json.push(b'\n');
        write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_last_line() {
        let point = |id: &str, reached: bool, after: Option<u64>, verified: Option<bool>| Point {
            id: id.into(),
            file: "iset.h".into(),
            line: 12,
            lines: vec![12],
            reached_by: usize::from(reached),
            source_test: reached.then(|| TestFile {
                name: "seed-2.cpp".into(),
                path: "/c/seed-2.cpp".into(),
                bytes: 3945,
            }),
            reduced: after.map(|_| PathBuf::from("/o/P1.cpp")),
            started_from: None,
            bytes_after: after,
            verified,
            metamorphic: None,
            chosen_because: String::new(),
            mc_pair: None,
            mc_kept: None,
            check: None,
            check_reason: String::new(),
            suite_test: None,
            note: String::new(),
        };
        let mut s = FindSummary {
            new_lines: 14,
            markers: 3,
            tests: 8,
            reached: 0,
            reduced: 0,
            verified: 0,
            metamorphic: None,
            suite: None,
            points: vec![
                point("P1", true, Some(1004), Some(true)),
                point("P2", true, None, None),
                point("P3", false, None, None),
            ],
        };
        s.recount();
        assert_eq!(
            s.last_line(),
            "cover: 14 new lines, 2 reached, 1 reduced, 1 verified"
        );
        let table = s.table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "POINT  FILE:LINE  SOURCE TEST    TESTS  BYTES         VERIFIED"
        );
        assert_eq!(
            lines[1],
            "P1     iset.h:12  seed-2.cpp     1      3945 -> 1004  yes"
        );
        assert_eq!(
            lines[2],
            "P2     iset.h:12  seed-2.cpp     1      3945          -"
        );
        assert_eq!(
            lines[3],
            "P3     iset.h:12  (not reached)  0      -             -"
        );
    }
}
