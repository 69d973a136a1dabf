//! Reader for text `.gcov` files (`gcov` without `--json-format`, also several files concatenated
//! by `gcov --stdout`).
//!
//! Each source line is `   COUNT:  LINE:SOURCE` where COUNT is a number (with a `*` suffix when
//! the line has unexecuted blocks, possibly `-H` human-readable like `1.2k`), `#####` or `=====`
//! (never executed; `=====` for exceptional paths), `$$$$$`/`%%%%%` (same, with `-a`), or `-` (no
//! code). Line 0 carries `Source:`. Template instantiation sections (between `------------------`
//! lines, headed by `NAME:`) repeat lines already summed at top level: they are only used for
//! function ranges, never counted twice.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Result;
use regex::Regex;

use crate::coverage::model::{Coverage, Function};
use crate::error::{coded, ExitKind};

fn line_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^\s*(-?[0-9]+(?:\.[0-9]+)?[kMGTPEZY]?\*?|#####|=====|\$\$\$\$\$|%%%%%|-):\s*([0-9]+):(.*)$")
            .expect("valid regex")
    })
}

/// Does `text` look like a text `.gcov` file?
pub fn looks_like_gcov_text(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| line_re().is_match(l))
}

fn parse_count(raw: &str, line: u32, file: &str, origin: &Path) -> Result<Option<u64>> {
    let raw = raw.trim_end_matches('*');
    match raw {
        "-" => return Ok(None),
        "#####" | "=====" | "$$$$$" | "%%%%%" => return Ok(Some(0)),
        _ => {}
    }
    if raw.starts_with('-') {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: negative execution count {raw} for {file}:{line} (corrupt or mismatched .gcda?); delete the .gcda files, rerun the tests and gcov",
                origin.display()
            ),
        ));
    }
    let (digits, scale) = match raw.chars().last() {
        Some(c @ ('k' | 'M' | 'G' | 'T' | 'P' | 'E' | 'Z' | 'Y')) => {
            let exp = "kMGTPEZY".find(c).unwrap_or(0) as i32 + 1;
            (&raw[..raw.len() - 1], 1000f64.powi(exp))
        }
        _ => (raw, 1.0),
    };
    if scale == 1.0 {
        if let Ok(n) = digits.parse::<u64>() {
            return Ok(Some(n));
        }
    }
    let value: f64 = digits.parse().map_err(|_| {
        coded(
            ExitKind::Input,
            format!(
                "{}: bad execution count {raw:?} at {file}:{line}",
                origin.display()
            ),
        )
    })?;
    Ok(Some((value * scale).round() as u64))
}

/// Parse text gcov output read from `origin`. Keys are the `Source:` names as written (resolved
/// later by the loader).
pub fn parse(text: &str, origin: &Path) -> Result<Coverage> {
    let mut cov = Coverage::default();
    let mut file: Option<String> = None;
    // Instantiation section state: after a dashed line, a `NAME:` line opens a section.
    let mut after_dashes = false;
    let mut section: Option<(String, u32, u32)> = None;
    let flush =
        |cov: &mut Coverage, file: &Option<String>, section: &mut Option<(String, u32, u32)>| {
            if let (Some(f), Some((name, start, end))) = (file, section.take()) {
                if start > 0 {
                    cov.add_function(
                        f,
                        Function {
                            name,
                            start_line: start,
                            end_line: end,
                        },
                    );
                }
            }
        };
    for raw_line in text.lines() {
        if raw_line.starts_with("------------------") {
            flush(&mut cov, &file, &mut section);
            after_dashes = true;
            continue;
        }
        let Some(caps) = line_re().captures(raw_line) else {
            if after_dashes && raw_line.ends_with(':') {
                section = Some((raw_line.trim_end_matches(':').to_string(), 0, 0));
            }
            after_dashes = false;
            continue;
        };
        after_dashes = false;
        let Ok(line_no) = caps[2].parse::<u32>() else {
            continue;
        };
        if line_no == 0 {
            if let Some(src) = caps[3].strip_prefix("Source:") {
                flush(&mut cov, &file, &mut section);
                let src = src.trim().to_string();
                cov.files.entry(src.clone()).or_default();
                file = Some(src);
            }
            continue;
        }
        let Some(f) = file.as_deref() else {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "{}: text gcov line {line_no} before any `0:Source:` header",
                    origin.display()
                ),
            ));
        };
        let count = parse_count(&caps[1], line_no, f, origin)?;
        match (&mut section, count) {
            (Some((_, start, end)), _) => {
                if *start == 0 {
                    *start = line_no;
                }
                *end = (*end).max(line_no);
            }
            (None, Some(count)) => cov.add_line(f, line_no, count),
            (None, None) => {}
        }
    }
    flush(&mut cov, &file, &mut section);
    Ok(cov)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "        -:    0:Source:src/x.hpp
        -:    0:Graph:a.gcno
        -:    0:Runs:1
        -:    1:#pragma once
        2:    2:T f(T x) {
       1*:    3:  if (x) return 1;
    #####:    4:  g();
    =====:    5:  h();
      1.2k:   6:  loop();
        -:    7:}
------------------
int f<int>(int):
        1:    2:T f(T x) {
        1:    3:  if (x) return 1;
    #####:    4:  g();
------------------
double f<double>(double):
        1:    2:T f(T x) {
------------------
        1:    8:int k;
function _Z1gv called 0 returned 0% blocks executed 0%
";

    #[test]
    fn reads_counts_markers_and_skips_instantiation_sections() {
        let c = parse(SAMPLE, Path::new("x.hpp.gcov")).unwrap();
        let f = &c.files["src/x.hpp"];
        let lines: Vec<(u32, u64)> = f.lines.iter().map(|(a, b)| (*a, *b)).collect();
        assert_eq!(
            lines,
            vec![(2, 2), (3, 1), (4, 0), (5, 0), (6, 1200), (8, 1)]
        );
        let names: Vec<&str> = f.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, vec!["int f<int>(int)", "double f<double>(double)"]);
        assert_eq!(f.functions[0].end_line, 4);
        assert!(looks_like_gcov_text(SAMPLE));
        assert!(!looks_like_gcov_text("hello\n"));
    }

    #[test]
    fn negative_counts_are_rejected() {
        let text = "        -:    0:Source:x.c\n       -3:    2:  f();\n";
        let e = parse(text, Path::new("x.c.gcov")).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("x.c.gcov") && msg.contains("negative execution count -3"),
            "{msg}"
        );
    }
}
