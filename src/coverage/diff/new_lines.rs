//! New coverage: lines the fuzz run executed that the suite run did not (lcov's GBC ∪ GIC,
//! gfauto's `cov_new`), and lines both ran where the fuzz run covered condition outcomes or
//! branches the suite did not ([`partly_new_lines`], when the data has them).

use anyhow::Result;
use regex::Regex;
use serde::Serialize;

use crate::coverage::model::Coverage;
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

/// Lines both runs executed where the fuzz run covered more: condition outcomes (GCC ≥ 14
/// `-fcondition-coverage`) or branches (`gcov -b`) that the suite never did. Sorted by path, line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PartlyNew {
    /// Files with at least one such line.
    pub files: Vec<PartlyNewFile>,
}

/// The partly new lines of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartlyNewFile {
    /// Normalised path.
    pub path: String,
    /// Its partly new lines, ascending.
    pub lines: Vec<PartlyNewLine>,
}

/// One line both runs executed, and what only the fuzz run covered on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartlyNewLine {
    /// 1-based line number.
    pub line: u32,
    /// Enclosing function, when the coverage data names one.
    pub function: Option<String>,
    /// Condition outcomes only the fuzz run covered.
    pub conditions: Vec<GainedCondition>,
    /// Branches (0-based, in gcov's order) only the fuzz run took.
    pub branches: Vec<usize>,
}

/// One condition outcome: term `term` of boolean expression `expression` (both 0-based, in gcov's
/// order) evaluated to `value`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GainedCondition {
    /// Index of the expression on its line.
    pub expression: usize,
    /// Index of the term in the expression.
    pub term: u32,
    /// The outcome.
    pub value: bool,
}

impl PartlyNew {
    /// Number of partly new lines.
    pub fn total(&self) -> usize {
        self.files.iter().map(|f| f.lines.len()).sum()
    }
}

/// The [`PartlyNew`] lines of files passing `filters`. Only data both runs have is compared: a
/// line whose conditions or branches one run lacks, or whose expression shapes differ (other
/// compiler flags), gains nothing.
pub fn partly_new_lines(suite: &Coverage, fuzz: &Coverage, filters: &Filters) -> PartlyNew {
    let mut out = PartlyNew::default();
    for (path, fc) in &fuzz.files {
        let Some(before) = suite.files.get(path) else {
            continue;
        };
        if !filters.accepts(path) || (fc.conditions.is_empty() && fc.branches.is_empty()) {
            continue;
        }
        let mut lines = Vec::new();
        for (&line, &count) in &fc.lines {
            if count == 0 || before.lines.get(&line).copied().unwrap_or(0) == 0 {
                continue;
            }
            let mut conditions = Vec::new();
            if let (Some(now), Some(was)) = (fc.conditions.get(&line), before.conditions.get(&line))
            {
                for (expression, (n, w)) in now.iter().zip(was).enumerate() {
                    if n.terms == w.terms {
                        conditions.extend(n.gained_over(w).into_iter().map(|(term, value)| {
                            GainedCondition {
                                expression,
                                term,
                                value,
                            }
                        }));
                    }
                }
            }
            let branches: Vec<usize> = match (fc.branches.get(&line), before.branches.get(&line)) {
                (Some(now), Some(was)) if now.len() == was.len() => now
                    .iter()
                    .zip(was)
                    .enumerate()
                    .filter(|(_, (&n, &w))| n > 0 && w == 0)
                    .map(|(i, _)| i)
                    .collect(),
                _ => Vec::new(),
            };
            if !conditions.is_empty() || !branches.is_empty() {
                lines.push(PartlyNewLine {
                    line,
                    function: fc.function_at(line).map(|f| f.name.clone()),
                    conditions,
                    branches,
                });
            }
        }
        if !lines.is_empty() {
            out.files.push(PartlyNewFile {
                path: path.clone(),
                lines,
            });
        }
    }
    out
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
    fn partly_new_needs_both_runs_on_the_line_and_compares_like_with_like() {
        use crate::coverage::model::Conditions;
        let cond = |terms: u32, t: &[u32], f: &[u32]| Conditions {
            terms,
            seen_true: t.iter().copied().collect(),
            seen_false: f.iter().copied().collect(),
        };
        let mut suite = cov(&[("a", 1, 2), ("a", 2, 2), ("a", 3, 0), ("a", 4, 1)]);
        let mut fuzz = cov(&[("a", 1, 1), ("a", 2, 1), ("a", 3, 1), ("a", 4, 1)]);
        // Line 1: the suite saw term 1 only true; the fuzz run also false, and term 0 true.
        suite.add_conditions("a", 1, &[cond(2, &[1], &[0, 1])]);
        fuzz.add_conditions("a", 1, &[cond(2, &[0], &[1])]);
        // Line 2: branch 1 is new; line 3 is a new line, not a partly new one.
        suite.add_branches("a", 2, &[3, 0]);
        fuzz.add_branches("a", 2, &[1, 4]);
        suite.add_branches("a", 3, &[0, 0]);
        fuzz.add_branches("a", 3, &[1, 0]);
        // Line 4: other shapes (another build): nothing is compared.
        suite.add_conditions("a", 4, &[cond(1, &[], &[])]);
        fuzz.add_conditions("a", 4, &[cond(2, &[0, 1], &[0, 1])]);
        suite.add_branches("a", 4, &[0]);
        fuzz.add_branches("a", 4, &[1, 1]);
        let p = partly_new_lines(&suite, &fuzz, &Filters::default());
        assert_eq!(p.total(), 2);
        let l = &p.files[0].lines;
        assert_eq!(l[0].line, 1);
        assert_eq!(
            l[0].conditions,
            vec![GainedCondition {
                expression: 0,
                term: 0,
                value: true
            }]
        );
        assert!(l[0].branches.is_empty());
        assert_eq!((l[1].line, l[1].branches.clone()), (2, vec![1]));
        let only_b = Filters {
            include: vec![Regex::new("^b$").unwrap()],
            exclude: vec![],
        };
        assert_eq!(partly_new_lines(&suite, &fuzz, &only_b).total(), 0);
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
