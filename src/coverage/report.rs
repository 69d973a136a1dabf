//! Reports of new lines: a text table, stable JSON, and an lcov tracefile for `genhtml`.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::diff::{NewFile, NewLines};

/// Compact ascending line numbers into ranges: `[3, 4, 5, 9]` → `"3-5, 9"`.
pub fn compact_ranges(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = lines[i];
        let mut end = start;
        while i + 1 < lines.len() && lines[i + 1] == end + 1 {
            i += 1;
            end = lines[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

/// Lines of `file` grouped by function, in order of first appearance; lines without a known
/// function are grouped under `None`.
fn by_function(file: &NewFile) -> Vec<(Option<&str>, Vec<u32>)> {
    let mut groups: Vec<(Option<&str>, Vec<u32>)> = Vec::new();
    for l in &file.lines {
        let name = l.function.as_deref();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(l.line),
            None => groups.push((name, vec![l.line])),
        }
    }
    groups
}

/// The text table: one row per file and function.
pub fn text_table(new: &NewLines) -> String {
    let mut rows: Vec<[String; 4]> = vec![[
        "FILE".into(),
        "FUNCTION".into(),
        "NEW".into(),
        "LINES".into(),
    ]];
    for f in &new.files {
        for (name, lines) in by_function(f) {
            rows.push([
                f.path.clone(),
                name.unwrap_or("-").to_string(),
                lines.len().to_string(),
                compact_ranges(&lines),
            ]);
        }
    }
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::new();
    for r in &rows {
        let _ = writeln!(out, "{:<w0$}  {:<w1$}  {:>w2$}  {}", r[0], r[1], r[2], r[3]);
    }
    let _ = writeln!(
        out,
        "total: {} new lines in {} files",
        new.total(),
        new.files.len()
    );
    out
}

/// The `--json` report.
#[derive(Debug, Serialize)]
pub struct JsonReport {
    /// Files with new lines, sorted by path.
    pub files: Vec<JsonFile>,
    /// Number of new lines over all files.
    pub total_new_lines: usize,
}

/// One file of the `--json` report.
#[derive(Debug, Serialize)]
pub struct JsonFile {
    /// Normalised path.
    pub path: String,
    /// New lines grouped by function (only lines whose function is known).
    pub functions: Vec<JsonFunction>,
    /// All new lines of the file, ascending.
    pub lines: Vec<u32>,
}

/// One function of the `--json` report.
#[derive(Debug, Serialize)]
pub struct JsonFunction {
    /// Demangled name when known.
    pub name: String,
    /// Its new lines, ascending.
    pub lines: Vec<u32>,
}

/// Build the `--json` report.
pub fn json_report(new: &NewLines) -> JsonReport {
    JsonReport {
        files: new
            .files
            .iter()
            .map(|f| JsonFile {
                path: f.path.clone(),
                functions: by_function(f)
                    .into_iter()
                    .filter_map(|(n, lines)| {
                        n.map(|n| JsonFunction {
                            name: n.to_string(),
                            lines,
                        })
                    })
                    .collect(),
                lines: f.lines.iter().map(|l| l.line).collect(),
            })
            .collect(),
        total_new_lines: new.total(),
    }
}

/// An lcov tracefile holding only the new lines (with their fuzz counts). Relative paths are made
/// absolute against `source_root` so `genhtml` finds the sources.
pub fn lcov_info(new: &NewLines, source_root: Option<&Path>) -> String {
    let mut out = String::from("TN:mfppr_new_lines\n");
    for f in &new.files {
        let path = match source_root {
            Some(root) if !Path::new(&f.path).is_absolute() => root.join(&f.path),
            _ => Path::new(&f.path).to_path_buf(),
        };
        let _ = writeln!(out, "SF:{}", path.display());
        for l in &f.lines {
            let _ = writeln!(out, "DA:{},{}", l.line, l.count);
        }
        let _ = writeln!(
            out,
            "LF:{}\nLH:{}\nend_of_record",
            f.lines.len(),
            f.lines.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::diff::NewLine;
    use super::*;

    fn sample() -> NewLines {
        let l = |line, f: Option<&str>| NewLine {
            line,
            count: 2,
            function: f.map(String::from),
        };
        NewLines {
            files: vec![NewFile {
                path: "src/x.hpp".into(),
                lines: vec![
                    l(3, Some("f()")),
                    l(4, Some("f()")),
                    l(9, None),
                    l(12, Some("g()")),
                ],
            }],
        }
    }

    #[test]
    fn ranges() {
        assert_eq!(compact_ranges(&[3, 4, 5, 9, 11, 12]), "3-5, 9, 11-12");
        assert_eq!(compact_ranges(&[]), "");
    }

    #[test]
    fn table_json_and_lcov() {
        let n = sample();
        let t = text_table(&n);
        assert!(t.contains("src/x.hpp  f()") && t.contains("3-4"), "{t}");
        assert!(t.contains("total: 4 new lines in 1 files"));
        let j = serde_json::to_value(json_report(&n)).unwrap();
        assert_eq!(j["total_new_lines"], 4);
        assert_eq!(
            j["files"][0]["functions"][0]["lines"],
            serde_json::json!([3, 4])
        );
        assert_eq!(j["files"][0]["lines"], serde_json::json!([3, 4, 9, 12]));
        let info = lcov_info(&n, Some(Path::new("/r")));
        assert!(info.contains("SF:/r/src/x.hpp\nDA:3,2\n") && info.ends_with("end_of_record\n"));
    }
}
