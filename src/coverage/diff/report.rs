//! Reports of new lines: a text table, stable JSON, and lcov tracefiles for `genhtml` — the new
//! lines alone ([`lcov_info`]) and each run whole ([`tracefile`]: DA, FN/FNDA and BRDA records),
//! so that lcov ≥ 2.0's `genhtml --baseline-file suite.info fuzz.info` shows the new lines as its
//! differential categories GBC (the suite ran the line 0 times) and GIC (the suite has no record
//! of it).

use crate::messages::printable;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::new_lines::{Filters, NewFile, NewLines, PartlyNew, PartlyNewLine};
use crate::coverage::model::Coverage;

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

/// The text table: one row per file and function; then, when there are any, the partly new
/// lines, one row each.
pub fn text_table(new: &NewLines, partly: &PartlyNew) -> String {
    let mut rows: Vec<[String; 4]> = vec![[
        "FILE".into(),
        "FUNCTION".into(),
        "NEW".into(),
        "LINES".into(),
    ]];
    for f in &new.files {
        for (name, lines) in by_function(f) {
            rows.push([
                printable(&f.path),
                printable(name.unwrap_or("-")),
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
    if partly.total() > 0 {
        out.push_str(&partly_table(partly));
    }
    out
}

/// What the fuzz run gained on a partly new line: `cond 0.1=true, branch 2`.
fn gained(l: &PartlyNewLine) -> String {
    let conds = l
        .conditions
        .iter()
        .map(|c| format!("cond {}.{}={}", c.expression, c.term, c.value));
    let branches = l.branches.iter().map(|b| format!("branch {b}"));
    conds.chain(branches).collect::<Vec<_>>().join(", ")
}

fn partly_table(partly: &PartlyNew) -> String {
    let mut rows: Vec<[String; 4]> = vec![[
        "FILE".into(),
        "FUNCTION".into(),
        "LINE".into(),
        "ONLY THE FUZZ RUN COVERED".into(),
    ]];
    for f in &partly.files {
        for l in &f.lines {
            rows.push([
                printable(&f.path),
                printable(l.function.as_deref().unwrap_or("-")),
                l.line.to_string(),
                gained(l),
            ]);
        }
    }
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::from(
        "\nlines both runs executed, with conditions or branches only the fuzz run covered:\n",
    );
    for r in &rows {
        let _ = writeln!(out, "{:<w0$}  {:<w1$}  {:>w2$}  {}", r[0], r[1], r[2], r[3]);
    }
    let _ = writeln!(out, "total: {} partly new lines", partly.total());
    out
}

/// The `--json` report.
#[derive(Debug, Serialize)]
pub struct JsonReport {
    /// Files with new lines, sorted by path.
    pub files: Vec<JsonFile>,
    /// Number of new lines over all files.
    pub total_new_lines: usize,
    /// Lines both runs executed where only the fuzz run covered some condition outcomes or
    /// branches (absent when there are none, e.g. without `gcov -b` or `-fcondition-coverage`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partly_new: Vec<super::new_lines::PartlyNewFile>,
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
pub fn json_report(new: &NewLines, partly: &PartlyNew) -> JsonReport {
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
        partly_new: partly.files.clone(),
    }
}

/// The `SF:` path of a coverage key: relative keys are made absolute against `source_root` so
/// `genhtml` finds the sources.
fn sf_path(key: &str, source_root: Option<&Path>) -> PathBuf {
    match source_root {
        Some(root) if !Path::new(key).is_absolute() => root.join(key),
        _ => Path::new(key).to_path_buf(),
    }
}

/// An lcov tracefile holding only the new lines (with their fuzz counts).
pub fn lcov_info(new: &NewLines, source_root: Option<&Path>) -> String {
    let mut out = String::from("TN:mfppr_new_lines\n");
    for f in &new.files {
        let _ = writeln!(out, "SF:{}", sf_path(&f.path, source_root).display());
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

/// A whole run as an lcov tracefile (lcov 1.x and 2.x syntax), for the files passing `filters`:
/// per file `FN:<start>,<name>` (the mangled name when known, as geninfo writes it) and
/// `FNDA:<count>,<name>` when the data has the function's count, `FNF/FNH`; `BRDA:<line>,0,<i>,
/// <count or ->` per branch when the data has branches (`-`: the line never ran), `BRF/BRH`;
/// `DA:<line>,<count>` per executable line, `LF/LH`. `test_name` is the `TN:` (letters, digits
/// and `_`).
pub fn tracefile(
    cov: &Coverage,
    test_name: &str,
    source_root: Option<&Path>,
    filters: &Filters,
) -> String {
    let mut out = String::new();
    for (key, fc) in cov.files.iter().filter(|(k, _)| filters.accepts(k)) {
        if fc.lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "TN:{test_name}");
        let _ = writeln!(out, "SF:{}", sf_path(key, source_root).display());
        // One FN per written name, at its first start line.
        let mut by_name: std::collections::BTreeMap<&str, (u32, Option<u64>)> =
            std::collections::BTreeMap::new();
        for f in &fc.functions {
            let written = fc.mangled_names.get(&f.name).unwrap_or(&f.name);
            let count = fc.function_counts.get(&f.name).copied();
            let e = by_name.entry(written).or_insert((f.start_line, count));
            e.0 = e.0.min(f.start_line);
        }
        let mut funcs: Vec<(u32, &str, Option<u64>)> = by_name
            .into_iter()
            .map(|(name, (start, count))| (start, name, count))
            .collect();
        funcs.sort_unstable();
        for (start, name, _) in &funcs {
            let _ = writeln!(out, "FN:{start},{}", one_line(name));
        }
        for (_, name, count) in &funcs {
            if let Some(c) = count {
                let _ = writeln!(out, "FNDA:{c},{}", one_line(name));
            }
        }
        if !funcs.is_empty() {
            let hit = funcs.iter().filter(|f| f.2.is_some_and(|c| c > 0)).count();
            let _ = writeln!(out, "FNF:{}\nFNH:{hit}", funcs.len());
        }
        let (mut found, mut taken) = (0usize, 0usize);
        for (line, counts) in &fc.branches {
            let ran = fc.lines.get(line).copied().unwrap_or(0) > 0;
            for (i, c) in counts.iter().enumerate() {
                found += 1;
                taken += usize::from(*c > 0);
                let c = if ran { c.to_string() } else { "-".into() };
                let _ = writeln!(out, "BRDA:{line},0,{i},{c}");
            }
        }
        if found > 0 {
            let _ = writeln!(out, "BRF:{found}\nBRH:{taken}");
        }
        for (line, count) in &fc.lines {
            let _ = writeln!(out, "DA:{line},{count}");
        }
        let hit = fc.lines.values().filter(|&&c| c > 0).count();
        let _ = writeln!(out, "LF:{}\nLH:{hit}\nend_of_record", fc.lines.len());
    }
    out
}

/// `--lcov OUT`: into directory `OUT`, `suite.info` and `fuzz.info` (each run whole, see
/// [`tracefile`]) and `new.info` (the new lines), then a note with the `genhtml` command that
/// shows the difference. `OUT` ending in `.info` is the deprecated form of the previous release:
/// the new lines alone, written there, with a warning.
pub fn write_lcov(
    out: &Path,
    suite: &Coverage,
    fuzz: &Coverage,
    new: &NewLines,
    source_root: Option<&Path>,
    filters: &Filters,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let write = |path: &Path, text: String| {
        crate::atomic::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write --lcov {}", path.display()))
    };
    if out.extension().is_some_and(|e| e == "info") && !out.is_dir() {
        crate::messages::warn(format!(
            "--lcov {} (one file) is deprecated: --lcov DIR writes suite.info, fuzz.info and \
             new.info there, for genhtml --baseline-file",
            out.display()
        ));
        return write(out, lcov_info(new, source_root));
    }
    if out.exists() && !out.is_dir() {
        return Err(crate::error::coded(
            crate::error::ExitKind::Usage,
            format!(
                "--lcov {} is a file: give a directory (mfppr writes suite.info, fuzz.info and new.info into it)",
                out.display()
            ),
        ));
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create --lcov {}", out.display()))?;
    let suite_info = tracefile(suite, "suite", source_root, filters);
    let fuzz_info = tracefile(fuzz, "fuzz", source_root, filters);
    let branches = suite_info.contains("\nBRDA:") || fuzz_info.contains("\nBRDA:");
    write(&out.join("suite.info"), suite_info)?;
    write(&out.join("fuzz.info"), fuzz_info)?;
    write(&out.join("new.info"), lcov_info(new, source_root))?;
    let q = |name: &str| crate::oracle::shell_quote(&out.join(name).to_string_lossy());
    crate::messages::note(format!(
        "lcov: wrote suite.info, fuzz.info and new.info to {}; the new lines as lcov 2's GBC/GIC \
         categories: genhtml --baseline-file {} {}{} -o {}",
        out.display(),
        q("suite.info"),
        q("fuzz.info"),
        if branches { " --branch-coverage" } else { "" },
        q("html")
    ));
    Ok(())
}

/// A name on one line (a tracefile record ends at the newline).
fn one_line(name: &str) -> String {
    name.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::super::new_lines::NewLine;
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
        let t = text_table(&n, &PartlyNew::default());
        assert!(t.contains("src/x.hpp  f()") && t.contains("3-4"), "{t}");
        assert!(t.contains("total: 4 new lines in 1 files"));
        let j = serde_json::to_value(json_report(&n, &PartlyNew::default())).unwrap();
        assert!(j.get("partly_new").is_none());
        assert_eq!(j["total_new_lines"], 4);
        assert_eq!(
            j["files"][0]["functions"][0]["lines"],
            serde_json::json!([3, 4])
        );
        assert_eq!(j["files"][0]["lines"], serde_json::json!([3, 4, 9, 12]));
        let info = lcov_info(&n, Some(Path::new("/r")));
        assert!(info.contains("SF:/r/src/x.hpp\nDA:3,2\n") && info.ends_with("end_of_record\n"));
    }

    #[test]
    fn tracefile_has_fn_fnda_brda_where_the_data_has_them() {
        use crate::coverage::model::Function;
        let mut c = Coverage::default();
        for (l, n) in [(2, 1), (3, 1), (4, 0), (9, 5)] {
            c.add_line("src/x.c", l, n);
        }
        c.add_line("other.c", 1, 1);
        c.add_function(
            "src/x.c",
            Function {
                name: "f(int, int)".into(),
                start_line: 2,
                end_line: 5,
            },
        );
        c.add_function(
            "src/x.c",
            Function {
                name: "g".into(),
                start_line: 9,
                end_line: 9,
            },
        );
        c.add_function_count("src/x.c", "f(int, int)", 1);
        c.files
            .get_mut("src/x.c")
            .unwrap()
            .mangled_names
            .insert("f(int, int)".into(), "_Z1fii".into());
        c.add_branches("src/x.c", 3, &[1, 0]);
        c.add_branches("src/x.c", 4, &[0, 0]);
        let only_src = Filters {
            include: vec![regex::Regex::new("^src/").unwrap()],
            exclude: vec![],
        };
        let t = tracefile(&c, "suite", Some(Path::new("/r")), &only_src);
        assert_eq!(
            t,
            "TN:suite\nSF:/r/src/x.c\nFN:2,_Z1fii\nFN:9,g\nFNDA:1,_Z1fii\nFNF:2\nFNH:1\n\
             BRDA:3,0,0,1\nBRDA:3,0,1,0\nBRDA:4,0,0,-\nBRDA:4,0,1,-\nBRF:4\nBRH:1\n\
             DA:2,1\nDA:3,1\nDA:4,0\nDA:9,5\nLF:4\nLH:3\nend_of_record\n"
        );
    }

    #[test]
    fn partly_new_lines_get_their_own_table() {
        use super::super::new_lines::{GainedCondition, PartlyNewFile};
        let partly = PartlyNew {
            files: vec![PartlyNewFile {
                path: "a.c".into(),
                lines: vec![PartlyNewLine {
                    line: 7,
                    function: Some("f".into()),
                    conditions: vec![GainedCondition {
                        expression: 0,
                        term: 1,
                        value: false,
                    }],
                    branches: vec![2],
                }],
            }],
        };
        let t = text_table(&NewLines::default(), &partly);
        assert!(
            t.contains("total: 0 new lines in 0 files\n\nlines both runs executed"),
            "{t}"
        );
        assert!(
            t.contains("a.c   f            7  cond 0.1=false, branch 2\n"),
            "{t}"
        );
        assert!(t.ends_with("total: 1 partly new lines\n"));
        let j = serde_json::to_value(json_report(&NewLines::default(), &partly)).unwrap();
        assert_eq!(
            j["partly_new"][0]["lines"][0]["conditions"][0],
            serde_json::json!({"expression": 0, "term": 1, "value": false})
        );
    }
}
