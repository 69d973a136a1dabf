//! Reader for gcovr JSON reports (`gcovr --json`), identified by their `gcovr/format_version` key.
//!
//! gcovr versions its JSON format independently ("0.1" … "0.10" at gcovr 8.x); every 0.x version
//! has `files[].file`, `files[].lines[].line_number/count` and `files[].functions[]` with a
//! `lineno` (and from 0.7/gcovr 8.0 a `pos` range), which is all mfppr reads. Other major
//! versions are rejected. File names are relative to the gcovr root, which the report does not
//! record: they are resolved against `--source-root` by the loader.

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::gcov_json::{checked_count, checked_line};
use super::model::{Coverage, Function};
use crate::error::{coded, ExitKind};

/// Highest gcovr 0.x format minor version accepted.
pub const MAX_MINOR: u32 = 15;

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    files: Vec<File>,
}

#[derive(Deserialize)]
struct File {
    file: String,
    #[serde(default)]
    lines: Vec<Line>,
    #[serde(default)]
    functions: Vec<Func>,
}

#[derive(Deserialize)]
struct Line {
    line_number: i64,
    count: i64,
    #[serde(default, rename = "gcovr/excluded")]
    excluded: bool,
    #[serde(default, rename = "gcovr/noncode")]
    noncode: bool,
}

#[derive(Deserialize)]
struct Func {
    name: String,
    #[serde(default)]
    demangled_name: Option<String>,
    #[serde(default)]
    lineno: Option<i64>,
    #[serde(default)]
    pos: Option<Vec<String>>,
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
    let doc: Doc = serde_json::from_value(doc).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "{}: not a gcovr JSON report: {e}; re-export it with `gcovr --json`",
                origin.display()
            ),
        )
    })?;
    let mut cov = Coverage::default();
    for f in doc.files {
        let key = f.file.clone();
        cov.files.entry(key.clone()).or_default();
        for l in &f.lines {
            let line = checked_line(l.line_number, &f.file, origin)?;
            let count = checked_count(l.count, line, &f.file, origin)?;
            if !l.excluded && !l.noncode {
                cov.add_line(&key, line, count);
            }
        }
        for func in f.functions {
            let pos_line = |i: usize| -> Option<i64> {
                func.pos.as_ref()?.get(i)?.split(':').next()?.parse().ok()
            };
            let Some(start) = pos_line(0).or(func.lineno) else {
                continue;
            };
            let start = checked_line(start, &f.file, origin)?;
            let end = match pos_line(1) {
                Some(e) => checked_line(e, &f.file, origin)?.max(start),
                None => start,
            };
            cov.add_function(
                &key,
                Function {
                    name: func.demangled_name.clone().unwrap_or(func.name.clone()),
                    start_line: start,
                    end_line: end,
                },
            );
        }
    }
    Ok(cov)
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
