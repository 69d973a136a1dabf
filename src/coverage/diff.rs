//! New coverage: lines the fuzz run executed that the suite run did not (lcov's GBC ∪ GIC,
//! gfauto's `cov_new`).

use anyhow::Result;
use regex::Regex;
use serde::Serialize;

use super::model::Coverage;
use crate::error::{coded, ExitKind};

/// Path filters on normalised keys (`--include` / `--exclude`).
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Keep a file only if it matches one of these (when non-empty).
    pub include: Vec<Regex>,
    /// Drop a file that matches any of these.
    pub exclude: Vec<Regex>,
}

impl Filters {
    /// Whether `path` passes the filters.
    pub fn accepts(&self, path: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|r| r.is_match(path)))
            && !self.exclude.iter().any(|r| r.is_match(path))
    }
}

/// The new lines of every file, sorted by path then line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NewLines {
    /// Files with at least one new line.
    pub files: Vec<NewFile>,
}

/// New lines of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NewFile {
    /// Normalised path (relative to the source root when one was given).
    pub path: String,
    /// New lines, ascending.
    pub lines: Vec<NewLine>,
}

/// One new line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NewLine {
    /// 1-based line number.
    pub line: u32,
    /// Execution count in the fuzz run.
    pub count: u64,
    /// Enclosing function, when the coverage data names one.
    pub function: Option<String>,
}

impl NewLines {
    /// Total number of new lines.
    pub fn total(&self) -> usize {
        self.files.iter().map(|f| f.lines.len()).sum()
    }
}

/// Lines with count > 0 in `fuzz` and count 0 or absent in `suite`, for files passing `filters`.
///
/// Fails when `suite` and `fuzz` share no source file at all (see [`check_shared_files`]); use
/// [`new_lines_disjoint`] to accept that.
pub fn new_lines(suite: &Coverage, fuzz: &Coverage, filters: &Filters) -> Result<NewLines> {
    check_shared_files(suite, fuzz)?;
    new_lines_disjoint(suite, fuzz, filters)
}

/// Refuse suite and fuzz coverage that share no source file: the paths almost certainly do not
/// match (different build directories, a missing `--source-root`), and every fuzz line would
/// count as new.
pub fn check_shared_files(suite: &Coverage, fuzz: &Coverage) -> Result<()> {
    if !suite.files.is_empty()
        && !fuzz.files.is_empty()
        && !fuzz.files.keys().any(|k| suite.files.contains_key(k))
    {
        let first = |c: &Coverage| c.files.keys().next().cloned().unwrap_or_default();
        return Err(coded(
            ExitKind::Input,
            format!(
                "suite and fuzz coverage share no source file (suite has {} files, e.g. {}; fuzz has {}, e.g. {}): were they built from the same tree? try --source-root, or pass --allow-disjoint if they really are disjoint (every fuzz line then counts as new)",
                suite.files.len(),
                first(suite),
                fuzz.files.len(),
                first(fuzz)
            ),
        ));
    }
    Ok(())
}

/// [`new_lines`] without the shared-file check (`--allow-disjoint`).
pub fn new_lines_disjoint(
    suite: &Coverage,
    fuzz: &Coverage,
    filters: &Filters,
) -> Result<NewLines> {
    if fuzz.files.is_empty() {
        return Err(coded(
            ExitKind::Input,
            "the fuzz coverage names no source file",
        ));
    }
    let mut out = NewLines::default();
    for (path, fc) in &fuzz.files {
        if !filters.accepts(path) {
            continue;
        }
        let before = suite.files.get(path);
        let lines: Vec<NewLine> = fc
            .lines
            .iter()
            .filter(|&(line, &count)| {
                count > 0 && before.and_then(|b| b.lines.get(line)).copied().unwrap_or(0) == 0
            })
            .map(|(&line, &count)| NewLine {
                line,
                count,
                function: fc
                    .function_at(line)
                    .or_else(|| before.and_then(|b| b.function_at(line)))
                    .map(|f| f.name.clone()),
            })
            .collect();
        if !lines.is_empty() {
            out.files.push(NewFile {
                path: path.clone(),
                lines,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cov(entries: &[(&str, u32, u64)]) -> Coverage {
        let mut c = Coverage::default();
        for &(f, l, n) in entries {
            c.add_line(f, l, n);
        }
        c
    }

    #[test]
    fn new_is_fuzz_positive_and_suite_zero_or_absent() {
        let suite = cov(&[("a", 1, 3), ("a", 2, 0), ("a", 4, 1)]);
        let fuzz = cov(&[
            ("a", 1, 1),
            ("a", 2, 5),
            ("a", 3, 1),
            ("a", 4, 0),
            ("b", 9, 2),
        ]);
        let n = new_lines(&suite, &fuzz, &Filters::default()).unwrap();
        let got: Vec<(&str, u32)> = n
            .files
            .iter()
            .flat_map(|f| f.lines.iter().map(move |l| (f.path.as_str(), l.line)))
            .collect();
        assert_eq!(got, vec![("a", 2), ("a", 3), ("b", 9)]);
        let filters = Filters {
            include: vec![],
            exclude: vec![Regex::new("^b$").unwrap()],
        };
        assert_eq!(new_lines(&suite, &fuzz, &filters).unwrap().total(), 2);
    }

    #[test]
    fn no_common_file_is_an_error() {
        let e = new_lines(
            &cov(&[("a", 1, 1)]),
            &cov(&[("b", 1, 1)]),
            &Filters::default(),
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("share no source file"));
        assert!(format!("{e:#}").contains("--allow-disjoint"));
        let all = new_lines_disjoint(
            &cov(&[("a", 1, 1)]),
            &cov(&[("b", 1, 1), ("b", 2, 0)]),
            &Filters::default(),
        )
        .unwrap();
        assert_eq!(all.total(), 1);
    }
}
