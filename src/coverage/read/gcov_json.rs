//! Reader for `gcov --json-format` documents (GCC ≥ 9).
//!
//! `format_version` "1" is written by GCC 9–13 and "2" by GCC ≥ 14; both carry the fields mfppr
//! needs (`files[].file`, `lines[].line_number/count/function_name`,
//! `functions[].name/demangled_name/start_line/end_line/execution_count`), so one reader serves
//! both. Optional per line: `branches[].count` (present with `gcov -b`) and, from format 2,
//! `conditions[]` (`count` outcomes = 2 × terms, `not_covered_true/false` term indices; written
//! with `-fcondition-coverage` and `gcov -g`), `calls[]` and `block_ids` (accepted, not used).
//! Relative file names are resolved against the document's `current_working_directory`.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use crate::coverage::model::{Conditions, Coverage, Function};
use crate::coverage::paths::join_lexically;
use crate::error::{coded, ExitKind};

/// `format_version`s this reader understands.
pub const SUPPORTED_VERSIONS: &[&str] = &["1", "2"];

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    current_working_directory: Option<String>,
    #[serde(default)]
    files: Vec<File<Func>>,
}

/// A source file of a gcov JSON document or a gcovr report, its functions as `F`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "F: Deserialize<'de>"))]
pub(super) struct File<F> {
    pub(super) file: String,
    #[serde(default)]
    pub(super) lines: Vec<Line>,
    #[serde(default)]
    pub(super) functions: Vec<F>,
}

/// A line entry of a gcov JSON document or a gcovr report (the `gcovr/…` keys are gcovr's).
#[derive(Deserialize)]
pub(super) struct Line {
    line_number: i64,
    count: i64,
    #[serde(default)]
    branches: Vec<Branch>,
    #[serde(default)]
    conditions: Vec<Condition>,
    #[serde(default, rename = "gcovr/excluded")]
    excluded: bool,
    #[serde(default, rename = "gcovr/noncode")]
    noncode: bool,
}

#[derive(Deserialize)]
struct Branch {
    count: i64,
}

/// One boolean expression of a line, as gcov (format 2) and gcovr (≥ 8.0) write it.
#[derive(Deserialize)]
struct Condition {
    count: i64,
    #[serde(default)]
    not_covered_true: Vec<i64>,
    #[serde(default)]
    not_covered_false: Vec<i64>,
}

#[derive(Deserialize)]
struct Func {
    name: String,
    #[serde(default)]
    demangled_name: Option<String>,
    start_line: i64,
    end_line: i64,
    #[serde(default)]
    execution_count: Option<i64>,
}

/// Is `doc` a gcov JSON document (as opposed to gcovr's)?
pub fn is_gcov_json(doc: &Value) -> bool {
    doc.get("format_version").is_some() && doc.get("gcovr/format_version").is_none()
}

/// The document, when its format version is one this reader knows.
fn read_doc(doc: Value, origin: &Path) -> Result<Doc> {
    let version = match doc.get("format_version") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => {
            return Err(coded(
                ExitKind::Input,
                format!("{}: gcov JSON without format_version", origin.display()),
            ))
        }
    };
    if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: unsupported gcov JSON format_version {version:?} (mfppr reads \"1\" from GCC 9-13 and \"2\" from GCC 14+)",
                origin.display()
            ),
        ));
    }
    serde_json::from_value(doc).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "{}: not a gcov JSON document: {e}; regenerate it with `gcov --json-format`",
                origin.display()
            ),
        )
    })
}

/// Parse one gcov JSON document read from `origin` (named in errors). Keys of the result are
/// absolute when the document has a `current_working_directory`.
pub fn parse(doc: Value, origin: &Path) -> Result<Coverage> {
    let doc = read_doc(doc, origin)?;
    let cwd = doc.current_working_directory.as_deref().map(Path::new);
    let mut cov = Coverage::default();
    for f in doc.files {
        let key = match cwd {
            Some(cwd) => join_lexically(cwd, Path::new(&f.file)),
            None => join_lexically(Path::new(""), Path::new(&f.file)),
        };
        let key = key.to_string_lossy().into_owned();
        // Make the file known even when it has no executable line.
        cov.files.entry(key.clone()).or_default();
        add_lines(&mut cov, &key, &f.file, &f.lines, origin)?;
        for func in f.functions {
            let start = checked_line(func.start_line, &f.file, origin)?;
            let end = checked_line(func.end_line, &f.file, origin)?.max(start);
            let name = match func.demangled_name {
                Some(d) => {
                    let file = cov.files.entry(key.clone()).or_default();
                    file.mangled_names.insert(d.clone(), func.name);
                    d
                }
                None => func.name,
            };
            if let Some(n) = func.execution_count {
                let n = checked_count(n, start, &f.file, origin)?;
                cov.add_function_count(&key, &name, n);
            }
            cov.add_function(
                &key,
                Function {
                    name,
                    start_line: start,
                    end_line: end,
                },
            );
        }
    }
    Ok(cov)
}

/// Add the line entries of `file` (under `key`; `file` as the document names it, for errors)
/// with their branch counts and condition outcomes, but not those gcovr marks excluded or not
/// code; shared with gcovr's reader.
pub(super) fn add_lines(
    cov: &mut Coverage,
    key: &str,
    file: &str,
    lines: &[Line],
    origin: &Path,
) -> Result<()> {
    for l in lines {
        let line = checked_line(l.line_number, file, origin)?;
        let count = checked_count(l.count, line, file, origin)?;
        if !l.excluded && !l.noncode {
            cov.add_line(key, line, count);
            add_outcomes(cov, key, file, line, l, origin)?;
        }
    }
    Ok(())
}

/// Record the branch counts and condition outcomes of line entry `l` under `key`.
fn add_outcomes(
    cov: &mut Coverage,
    key: &str,
    file: &str,
    line: u32,
    l: &Line,
    origin: &Path,
) -> Result<()> {
    let (branches, conditions) = (&l.branches, &l.conditions);
    if !branches.is_empty() {
        let counts = branches
            .iter()
            .map(|b| checked_count(b.count, line, file, origin))
            .collect::<Result<Vec<u64>>>()?;
        cov.add_branches(key, line, &counts);
    }
    if !conditions.is_empty() {
        let exprs = conditions
            .iter()
            .map(|c| checked_conditions(c, line, file, origin))
            .collect::<Result<Vec<Conditions>>>()?;
        cov.add_conditions(key, line, &exprs);
    }
    Ok(())
}

/// A condition entry as [`Conditions`]: `count` outcomes are `count / 2` terms, each seen true
/// unless listed in `not_covered_true`, and false unless in `not_covered_false`.
fn checked_conditions(c: &Condition, line: u32, file: &str, origin: &Path) -> Result<Conditions> {
    let bad = |what: String| {
        coded(
            ExitKind::Input,
            format!(
                "{}: invalid condition coverage for {file}:{line} ({what}); regenerate it with `gcov --json-format --conditions`",
                origin.display()
            ),
        )
    };
    let terms = u32::try_from(c.count)
        .ok()
        .filter(|n| n % 2 == 0)
        .map(|n| n / 2)
        .ok_or_else(|| {
            bad(format!(
                "count {} is not an even number of outcomes",
                c.count
            ))
        })?;
    let term = |t: &i64| {
        u32::try_from(*t)
            .ok()
            .filter(|&t| t < terms)
            .ok_or_else(|| bad(format!("term {t} outside 0..{terms}")))
    };
    let not_true = c
        .not_covered_true
        .iter()
        .map(term)
        .collect::<Result<BTreeSet<u32>>>()?;
    let not_false = c
        .not_covered_false
        .iter()
        .map(term)
        .collect::<Result<BTreeSet<u32>>>()?;
    Ok(Conditions {
        terms,
        seen_true: (0..terms).filter(|t| !not_true.contains(t)).collect(),
        seen_false: (0..terms).filter(|t| !not_false.contains(t)).collect(),
    })
}

pub(super) fn checked_line(n: i64, file: &str, origin: &Path) -> Result<u32> {
    u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
        coded(
            ExitKind::Input,
            format!(
                "{}: invalid line number {n} for {file}; regenerate the file with gcov",
                origin.display()
            ),
        )
    })
}

pub(super) fn checked_count(count: i64, line: u32, file: &str, origin: &Path) -> Result<u64> {
    u64::try_from(count).map_err(|_| {
        coded(
            ExitKind::Input,
            format!(
                "{}: negative execution count {count} for {file}:{line} (corrupt or mismatched .gcda?); delete the .gcda files, rerun the tests and gcov",
                origin.display()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(version: &str, count: i64) -> Value {
        serde_json::from_str(&format!(
            r#"{{"format_version": "{version}", "gcc_version": "12.2.0",
               "current_working_directory": "/build", "data_file": "a.gcda",
               "files": [{{"file": "src/../x.hpp",
                 "functions": [{{"name": "_Z1fv", "demangled_name": "f()", "start_line": 2,
                   "end_line": 6, "start_column": 1, "end_column": 1, "blocks": 3,
                   "blocks_executed": 3, "execution_count": 1}}],
                 "lines": [
                   {{"line_number": 3, "count": {count}, "unexecuted_block": false, "branches": [],
                     "function_name": "_Z1fv"}},
                   {{"line_number": 3, "count": 2, "unexecuted_block": false, "branches": []}},
                   {{"line_number": 4, "count": 0, "unexecuted_block": true, "branches": []}}]}}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn reads_v1_and_v2_and_sums_repeated_lines() {
        for v in ["1", "2"] {
            let c = parse(doc(v, 5), Path::new("a.json")).unwrap();
            let f = &c.files["/build/x.hpp"];
            assert_eq!(f.lines[&3], 7);
            assert_eq!(f.lines[&4], 0);
            assert_eq!(f.functions[0].name, "f()");
            assert_eq!((f.functions[0].start_line, f.functions[0].end_line), (2, 6));
        }
    }

    #[test]
    fn format_2_conditions_branches_and_calls() {
        let doc: Value = serde_json::from_str(
            r#"{"format_version": "2", "current_working_directory": "/b", "files": [{"file": "x.c",
               "functions": [], "lines": [
                 {"line_number": 5, "count": 4, "block_ids": [3],
                  "branches": [{"count": 1, "throw": false, "fallthrough": true,
                                "source_block_id": 3, "destination_block_id": 4}],
                  "calls": [{"source_block_id": 3, "destination_block_id": 5, "returned": 4}],
                  "conditions": [{"count": 4, "covered": 2, "not_covered_true": [1],
                                  "not_covered_false": [0]}]},
                 {"line_number": 5, "count": 1, "branches": [{"count": 2}],
                  "conditions": [{"count": 4, "covered": 1, "not_covered_true": [0, 1],
                                  "not_covered_false": [1]}]}]}]}"#,
        )
        .unwrap();
        let c = parse(doc, Path::new("a.json")).unwrap();
        let f = &c.files["/b/x.c"];
        assert_eq!(f.lines[&5], 5);
        assert_eq!(f.branches[&5], vec![3]);
        // Two instantiations of `a && b`: term 0 seen true (first), term 0 false (second),
        // term 1 false (first); term 1 never true.
        let cond = &f.conditions[&5][0];
        assert_eq!(cond.terms, 2);
        assert_eq!(cond.seen_true.iter().copied().collect::<Vec<_>>(), vec![0]);
        assert_eq!(
            cond.seen_false.iter().copied().collect::<Vec<_>>(),
            vec![0, 1]
        );
    }

    #[test]
    fn unknown_version_and_negative_counts_are_rejected() {
        let e = parse(doc("3", 1), Path::new("a.json")).unwrap_err();
        assert!(format!("{e:#}").contains("unsupported gcov JSON format_version \"3\""));
        let e = parse(doc("1", -4), Path::new("a.json")).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("a.json") && msg.contains("negative execution count -4"),
            "{msg}"
        );
    }
}
