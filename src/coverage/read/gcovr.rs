//! Reader for gcovr JSON reports (`gcovr --json`), identified by their `gcovr/format_version` key.
//!
//! gcovr versions its JSON format independently of its releases. Formats 0.1 to 0.15 are read
//! (real reports of the releases below are in `coverage/gcovr/`); what differs between them, and
//! how it is read:
//!
//! | format | gcovr | difference |
//! |---|---|---|
//! | ≤ 0.5 | 5.x–6.0 | before gcovr 6.0, lines may carry `gcovr/noncode` (left out, as gcovr 6 does) |
//! | 0.6 | 7.0–7.2 | `functions[].name` is the demangled name; `returned_count`; `gcovr/calls` |
//! | 0.10 | 8.0–8.2 | `name` becomes the mangled name and is absent when gcov's text output was read: only `demangled_name` is there; `pos` ranges and line `conditions`/`block_ids`/`function_name` from GCC 14's JSON |
//! | 0.11 | 8.3 | branches get `source_block_id` (`blockno` gone) |
//! | 0.14 | 8.4–8.6 | several entries per line (one per function, e.g. template instantiation): summed; `calls` replaces `gcovr/calls` (`returned` count); `branchno`/`conditionno` |
//! | 0.15 | 8.7+ | as 0.14 for everything read here |
//!
//! Read: `files[].file`; `lines[].line_number/count`, `branches[].count`, `conditions[]` (as in
//! gcov JSON format 2), `gcovr/excluded` and `gcovr/noncode` (such lines are left out);
//! `functions[]`: `demangled_name` or else `name`, the range from `pos` or else the single line
//! `lineno`, `execution_count`. Everything else (calls, decisions, md5, block ids) is accepted and
//! not used. Counts can differ between releases (gcovr 7 adds template instantiation counts to a
//! line's own), which does not matter for new lines (count > 0 against count 0). Other major
//! versions are rejected. File names are relative to the gcovr root, which the report does not
//! record: they are resolved against `--source-root` by the loader.

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::gcov_json::{add_lines, checked_count, checked_line, File};
use crate::coverage::model::{Coverage, Function};
use crate::error::{coded, ExitKind};

/// Highest gcovr 0.x format minor version accepted.
pub const MAX_MINOR: u32 = 15;

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    files: Vec<File<Func>>,
}

#[derive(Deserialize)]
struct Func {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    demangled_name: Option<String>,
    #[serde(default)]
    lineno: Option<i64>,
    #[serde(default)]
    pos: Option<Vec<String>>,
    #[serde(default)]
    execution_count: Option<i64>,
    #[serde(default, rename = "gcovr/excluded")]
    excluded: bool,
}

/// Is `doc` a gcovr JSON report?
pub fn is_gcovr_json(doc: &Value) -> bool {
    doc.get("gcovr/format_version").is_some()
}

fn supported(version: &str) -> bool {
    match version.split_once('.') {
        Some(("0", minor)) => minor
            .parse::<u32>()
            .is_ok_and(|m| (1..=MAX_MINOR).contains(&m)),
        _ => false,
    }
}

/// Parse one gcovr JSON report read from `origin`. Keys are the file names as written.
pub fn parse(doc: Value, origin: &Path) -> Result<Coverage> {
    let doc = read_doc(doc, origin)?;
    let mut cov = Coverage::default();
    for f in doc.files {
        let key = f.file.clone();
        cov.files.entry(key.clone()).or_default();
        add_lines(&mut cov, &key, &f.file, &f.lines, origin)?;
        for func in f.functions {
            add_function(&mut cov, &key, &f.file, func, origin)?;
        }
    }
    Ok(cov)
}

/// The report, when its format version is one this reader knows.
fn read_doc(doc: Value, origin: &Path) -> Result<Doc> {
    let version = match doc.get("gcovr/format_version") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    if !supported(&version) {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: unsupported gcovr/format_version {version:?} (mfppr reads gcovr JSON 0.1 to 0.{MAX_MINOR}; re-export with a gcovr 5-8 release or use gcov --json-format)",
                origin.display()
            ),
        ));
    }
    serde_json::from_value(doc).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "{}: not a gcovr JSON report: {e}; re-export it with `gcovr --json`",
                origin.display()
            ),
        )
    })
}

/// Add one function of `file` (under `key`): its range, mangled name and count; a function with
/// no line or one excluded is left out.
fn add_function(
    cov: &mut Coverage,
    key: &str,
    file: &str,
    func: Func,
    origin: &Path,
) -> Result<()> {
    let pos_line =
        |i: usize| -> Option<i64> { func.pos.as_ref()?.get(i)?.split(':').next()?.parse().ok() };
    let Some(start) = pos_line(0).or(func.lineno) else {
        return Ok(());
    };
    let (name, mangled) = match (func.demangled_name, func.name) {
        (Some(d), m) => (d, m),
        (None, Some(n)) => (n, None),
        (None, None) => {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "{}: a function of {} has neither name nor demangled_name; re-export the report with `gcovr --json`",
                    origin.display(),
                    file
                ),
            ))
        }
    };
    let start = checked_line(start, file, origin)?;
    let end = match pos_line(1) {
        Some(e) => checked_line(e, file, origin)?.max(start),
        None => start,
    };
    if func.excluded {
        return Ok(());
    }
    if let Some(m) = mangled.filter(|m| *m != name) {
        let file = cov.files.entry(key.to_string()).or_default();
        file.mangled_names.insert(name.clone(), m);
    }
    if let Some(n) = func.execution_count {
        let n = checked_count(n, start, file, origin)?;
        cov.add_function_count(key, &name, n);
    }
    cov.add_function(
        key,
        Function {
            name,
            start_line: start,
            end_line: end,
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(version: &str) -> Value {
        serde_json::from_str(&format!(
            r#"{{"gcovr/format_version": "{version}", "files": [{{"file": "src/x.hpp",
               "lines": [{{"line_number": 3, "count": 4, "branches": []}},
                         {{"line_number": 5, "count": 0, "branches": [], "gcovr/excluded": true}}],
               "functions": [{{"name": "_Z1fv", "demangled_name": "f()", "lineno": 2,
                               "execution_count": 1, "pos": ["2:1", "7:1"]}}]}}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn reads_lines_functions_and_skips_excluded() {
        let c = parse(doc("0.10"), Path::new("r.json")).unwrap();
        let f = &c.files["src/x.hpp"];
        assert_eq!(f.lines.len(), 1);
        assert_eq!(f.lines[&3], 4);
        assert_eq!(f.functions[0].name, "f()");
        assert_eq!(f.functions[0].end_line, 7);
    }

    #[test]
    fn old_noncode_lines_and_nameless_functions_of_newer_releases() {
        let v05: Value = serde_json::from_str(
            r#"{"gcovr/format_version": "0.5", "files": [{"file": "a.c", "lines": [
                 {"line_number": 1, "count": 0, "branches": [], "gcovr/noncode": true},
                 {"line_number": 2, "count": 3, "branches": [{"count": 1}, {"count": 0}]}],
               "functions": [{"name": "f(int)", "lineno": 2, "execution_count": 3}]}]}"#,
        )
        .unwrap();
        let c = parse(v05, Path::new("r.json")).unwrap();
        let f = &c.files["a.c"];
        assert_eq!(f.lines.keys().copied().collect::<Vec<_>>(), vec![2]);
        assert_eq!(f.branches[&2], vec![1, 0]);
        assert_eq!(f.function_counts["f(int)"], 3);
        assert!(f.mangled_names.is_empty());
        // 8.0-8.3 from gcov text: demangled_name only; from gcov JSON: both names.
        let v10: Value = serde_json::from_str(
            r#"{"gcovr/format_version": "0.11", "files": [{"file": "a.c", "lines": [],
               "functions": [{"demangled_name": "g()", "lineno": 4, "execution_count": 0},
                             {"name": "_Z1hv", "demangled_name": "h()", "lineno": 9,
                              "pos": ["9:1", "12:1"], "execution_count": 2}]}]}"#,
        )
        .unwrap();
        let c = parse(v10, Path::new("r.json")).unwrap();
        let f = &c.files["a.c"];
        let names: Vec<(&str, u32, u32)> = f
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.start_line, f.end_line))
            .collect();
        assert_eq!(names, vec![("g()", 4, 4), ("h()", 9, 12)]);
        assert_eq!(f.mangled_names["h()"], "_Z1hv");
        assert_eq!(f.function_counts["g()"], 0);
    }

    #[test]
    fn rejects_other_versions() {
        for v in ["1.0", "0.99", "abc"] {
            let e = parse(doc(v), Path::new("r.json")).unwrap_err();
            assert!(
                format!("{e:#}").contains("unsupported gcovr/format_version"),
                "{v}"
            );
        }
    }
}
