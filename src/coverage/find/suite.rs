//! Tests worth adding to the library's suite (issue 30): after the reductions, every distinct
//! reduced test is analysed by [`super::checked`] (which markers it reaches and how each is
//! checked, regression checks added where a printer allows), then as few of them are kept as
//! give every reached marker the best verdict any of them gives it ([`choose`]). Each kept test
//! is written to `OUT/tests/<first marker>.cpp` with a comment listing the lines it covers and
//! their checks, with its standalone export beside it (`<first marker>.standalone.cpp`: the
//! spec's declarations pulled in, the library's headers included; kept only when it passes with
//! the `--run` command and still reaches every line listed), and `OUT/tests/INDEX.md` lists them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::checked::{self, Checked, CheckedBy, MarkerCheck, Runner};
use super::options::PipelineOptions;
use super::reach::{self, TestFile};
use super::summary::{FindSummary, SuiteCounts};
use crate::atomic::write_atomic;
use crate::coverage::inject::Marker;
use crate::messages::{note, progress, warn};

/// One reduced test, as read from `OUT/<id>.cpp`.
struct Distinct {
    /// The first marker whose reduction gave it.
    id: String,
    /// Its source test's name.
    source: String,
    /// `OUT/<id>.cpp`.
    path: PathBuf,
    text: Vec<u8>,
}

/// The reduced tests of `summary`, one per distinct text, in point order.
fn distinct(summary: &FindSummary) -> Result<Vec<Distinct>> {
    let mut out: Vec<Distinct> = Vec::new();
    for p in &summary.points {
        let Some(path) = &p.reduced else { continue };
        let text =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        if !out.iter().any(|d| d.text == text) {
            out.push(Distinct {
                id: p.id.clone(),
                source: p
                    .source_test
                    .as_ref()
                    .map(|t| t.name.clone())
                    .unwrap_or_default(),
                path: path.clone(),
                text,
            });
        }
    }
    Ok(out)
}

/// The tests to keep: indices into `analyses` with the markers each is kept for. A marker's best
/// verdict is the best any test gives it; greedily, the test giving the most markers not yet
/// assigned their best verdict (then the most reached, then the smallest, then the first) is kept,
/// until every reached marker is assigned.
pub fn choose(analyses: &[Option<Checked>]) -> Vec<(usize, Vec<MarkerCheck>)> {
    let mut best: BTreeMap<&str, u8> = BTreeMap::new();
    for c in analyses.iter().flatten() {
        for m in &c.markers {
            let r = best.entry(m.marker.as_str()).or_insert(0);
            *r = (*r).max(m.verdict.rank());
        }
    }
    let mut left: BTreeSet<&str> = best.keys().copied().collect();
    let mut kept = Vec::new();
    while !left.is_empty() {
        let score = |c: &Checked| {
            let fresh: Vec<&MarkerCheck> = c
                .markers
                .iter()
                .filter(|m| left.contains(m.marker.as_str()))
                .collect();
            let at_best = fresh
                .iter()
                .filter(|m| m.verdict.rank() == best[m.marker.as_str()])
                .count();
            (at_best, fresh.len(), std::cmp::Reverse(c.text.len()))
        };
        let pick = analyses
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().map(|c| (i, c)))
            .filter(|(i, _)| !kept.iter().any(|(k, _)| k == i))
            .map(|(i, c)| (score(c), std::cmp::Reverse(i), i))
            .max();
        let Some(((at_best, _, _), _, i)) = pick else {
            break;
        };
        if at_best == 0 {
            break;
        }
        let c = analyses[i].as_ref().expect("picked an analysed test");
        let mine: Vec<MarkerCheck> = c
            .markers
            .iter()
            .filter(|m| {
                left.contains(m.marker.as_str()) && m.verdict.rank() == best[m.marker.as_str()]
            })
            .cloned()
            .collect();
        for m in &mine {
            left.remove(m.marker.as_str());
        }
        kept.push((i, mine));
    }
    kept
}

/// The comment heading a kept test.
fn heading(source: &str, marks: &[MarkerCheck], markers: &BTreeMap<&str, &Marker>) -> String {
    let mut s =
        format!("// mfppr cover: a test for new lines of the library (reduced from {source}).\n");
    for m in marks {
        let place = markers
            .get(m.marker.as_str())
            .map(|k| format!("{}:{}", k.file, k.line))
            .unwrap_or_default();
        let _ = writeln!(s, "//   {place} ({}): {}", m.marker, m.verdict.label());
    }
    s
}

/// The analysis of every distinct reduced test, `-j N` at once; `None` (with a warning) for a
/// test that could not be analysed.
fn analyse_all(
    opts: &PipelineOptions,
    tests: &[Distinct],
    known: &BTreeSet<String>,
) -> Result<Vec<Option<Checked>>> {
    let generators = spec_generators(opts, tests);
    let runner = Runner {
        run: &opts.run,
        injected: &opts.injected,
        known,
        timeout: opts.run_timeout,
        printers: &opts.printers,
        generators: &generators,
    };
    let results = crate::pool::map(opts.jobs, "mfppr-checked", tests, |d| {
        let dir = tempfile::Builder::new()
            .prefix("mfppr-checked-")
            .tempdir()
            .context("cannot create a temporary directory; check TMPDIR and free space")?;
        Ok(checked::analyse(&d.text, dir.path(), &runner).map_err(|e| format!("{e:#}")))
    })?;
    let mut unprinted = BTreeSet::new();
    let out = tests
        .iter()
        .zip(results)
        .map(|(d, r)| match r {
            Ok(c) => {
                note(format!(
                    "check {}: {} marker(s), {} run(s)",
                    d.id,
                    c.markers.len(),
                    c.runs
                ));
                unprinted.extend(c.unprinted.iter().cloned());
                Some(c)
            }
            Err(e) => {
                warn(format!("check {}: not analysed: {e}", d.id));
                None
            }
        })
        .collect();
    for ty in unprinted {
        note(format!(
            "check: no printer for {ty}, so its values get no regression check; declare one with \
             --printer '{ty}:EXPR' ({{}} is the value)"
        ));
    }
    Ok(out)
}

/// The include directories of the tests: the marked tree, `-I` dirs, the original library.
fn include_dirs(opts: &PipelineOptions) -> Vec<PathBuf> {
    let mut include: Vec<PathBuf> = vec![opts.injected.clone()];
    if let Some(step) = &opts.reduce {
        include.extend(step.include_dirs.iter().cloned());
        include.push(step.source_root.clone());
    }
    include
}

/// The spec's generators, read with the first test's includes (none, said in a note, when its
/// spec cannot be read).
fn spec_generators(opts: &PipelineOptions, tests: &[Distinct]) -> Vec<checked::Generator> {
    let Some(d) = tests.first() else {
        return Vec::new();
    };
    match crate::catalogue::Catalogue::load(&d.path, &d.text, &include_dirs(opts), &[]) {
        Ok(c) => checked::generators(&c),
        Err(e) => {
            note(format!(
                "check: the spec's generators cannot be read ({e:#}); values are replaced by \
                 other variables only"
            ));
            Vec::new()
        }
    }
}

/// Analyse, choose and write the suite tests (module docs); record each point's verdict and test.
pub fn check_points(opts: &PipelineOptions, summary: &mut FindSummary) -> Result<()> {
    let tests = distinct(summary)?;
    progress(format!(
        "check: how the checks see the new lines, in {} distinct reduced test(s) (-j {})",
        tests.len(),
        opts.jobs
    ));
    let known: BTreeSet<String> = opts.markers.iter().map(|m| m.id.clone()).collect();
    let analyses = analyse_all(opts, &tests, &known)?;
    let order: BTreeMap<&str, usize> = opts
        .markers
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    let mut kept = choose(&analyses);
    for (_, marks) in &mut kept {
        marks.sort_by_key(|m| order.get(m.marker.as_str()).copied());
    }
    let dir = opts.out.join("tests");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let markers: BTreeMap<&str, &Marker> =
        opts.markers.iter().map(|m| (m.id.as_str(), m)).collect();
    let mut index = String::from(
        "# Tests for new lines\n\nWritten by `mfppr cover find`: each test covers the lines listed, \
         with the check that sees them; the standalone export compiles against the library alone.\n\n\
         | test | lines | check | bytes | standalone |\n|---|---|---|---|---|\n",
    );
    let mut assigned: BTreeMap<String, (MarkerCheck, PathBuf)> = BTreeMap::new();
    for (i, marks) in &kept {
        let d = &tests[*i];
        let c = analyses[*i].as_ref().expect("kept tests were analysed");
        let name = format!("{}.cpp", marks[0].marker);
        let path = dir.join(&name);
        let mut text = heading(&d.source, marks, &markers).into_bytes();
        text.extend_from_slice(&c.text);
        write_atomic(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        let alone = standalone(opts, &path, &text, marks, &known)?;
        write_index_row(&mut index, &name, marks, &markers, text.len(), &alone);
        for m in marks {
            assigned.insert(m.marker.clone(), (m.clone(), path.clone()));
        }
    }
    write_atomic(&dir.join("INDEX.md"), index.as_bytes())
        .with_context(|| format!("cannot write {}", dir.join("INDEX.md").display()))?;
    record(summary, assigned, kept.len());
    Ok(())
}

fn write_index_row(
    index: &mut String,
    name: &str,
    marks: &[MarkerCheck],
    markers: &BTreeMap<&str, &Marker>,
    bytes: usize,
    alone: &std::result::Result<(String, usize), String>,
) {
    let lines: Vec<String> = marks
        .iter()
        .filter_map(|m| markers.get(m.marker.as_str()))
        .map(|k| format!("{}:{}", k.file, k.line))
        .collect();
    let mut checks: Vec<String> = marks.iter().map(|m| m.verdict.label()).collect();
    checks.dedup();
    let alone = match alone {
        Ok((file, bytes)) => format!("[{file}]({file}), {bytes} bytes"),
        Err(why) => format!("none: {why}"),
    };
    let _ = writeln!(
        index,
        "| [{name}]({name}) | {} | {} | {bytes} | {alone} |",
        lines.join(", "),
        checks.join("; ")
    );
}

/// Write the standalone export of the kept test `path` (bytes `text`) beside it when it passes
/// with the `--run` command and reaches every marker of `marks`; its file name and size, or why
/// there is none (said in a note).
fn standalone(
    opts: &PipelineOptions,
    path: &Path,
    text: &[u8],
    marks: &[MarkerCheck],
    known: &BTreeSet<String>,
) -> Result<std::result::Result<(String, usize), String>> {
    let include = include_dirs(opts);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = format!("{stem}.standalone.cpp");
    let out = path.with_file_name(&file);
    let why = match crate::export::Standalone::build(path, text, &include, &[]) {
        Err(e) => format!("cannot export: {e:#}"),
        Ok(sa) => {
            let (export, _) = crate::export::format(&sa.render(&[]));
            write_atomic(&out, export.as_bytes())
                .with_context(|| format!("cannot write {}", out.display()))?;
            let t = TestFile {
                name: file.clone(),
                path: out.clone(),
                bytes: export.len() as u64,
            };
            let run = reach::run_test(&t, &opts.run, &opts.injected, known, opts.run_timeout)?;
            let missing: Vec<&str> = marks
                .iter()
                .map(|m| m.marker.as_str())
                .filter(|m| !run.markers.iter().any(|r| r == m))
                .collect();
            if run.passed() && missing.is_empty() {
                return Ok(Ok((file, export.len())));
            }
            let _ = std::fs::remove_file(&out);
            if run.passed() {
                format!("the export does not reach {}", missing.join(", "))
            } else {
                format!("the export does not pass: {}", run.note)
            }
        }
    };
    note(format!("check {stem}: no standalone export: {why}"));
    Ok(Err(why))
}

/// Give each point its verdict and test, and count them.
fn record(
    summary: &mut FindSummary,
    mut assigned: BTreeMap<String, (MarkerCheck, PathBuf)>,
    tests: usize,
) {
    for p in &mut summary.points {
        if p.source_test.is_none() {
            continue;
        }
        match assigned.remove(&p.id) {
            Some((m, path)) => {
                p.check = Some(m.verdict.label());
                p.check_reason = format!("{}: {}", m.statement, m.reason);
                p.suite_test = Some(path);
            }
            None => {
                p.check = Some(CheckedBy::ExecutedOnly.label());
                p.check_reason = if p.reduced.is_some() {
                    "its reduced test was not analysed or does not reach it when run".into()
                } else {
                    "not reduced".into()
                };
            }
        }
    }
    let count = |f: &dyn Fn(&str) -> bool| {
        summary
            .points
            .iter()
            .filter(|p| p.check.as_deref().is_some_and(f))
            .count()
    };
    summary.suite = Some(SuiteCounts {
        tests,
        metamorphic: count(&|c| c.starts_with("checked (metamorphic")),
        value: count(&|c| c.starts_with("checked (value")),
        executed_only: count(&|c| c == "executed only"),
    });
    note(format!(
        "check: {} test(s) for {} reached marker(s) in {}",
        tests,
        summary.reached,
        Path::new("tests").display()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(markers: &[(&str, CheckedBy)], bytes: usize) -> Option<Checked> {
        Some(Checked {
            text: vec![b' '; bytes],
            markers: markers
                .iter()
                .map(|(m, v)| MarkerCheck {
                    marker: m.to_string(),
                    verdict: v.clone(),
                    statement: String::new(),
                    reason: String::new(),
                })
                .collect(),
            runs: 0,
            unprinted: BTreeSet::new(),
        })
    }

    #[test]
    fn one_test_per_best_verdict_and_duplicates_merge() {
        let meta = CheckedBy::Metamorphic {
            pair: "r_0/r_1".into(),
        };
        let value = CheckedBy::Value { regression: true };
        let analyses = vec![
            // Reaches A, B, C: executed only for A, value for B and C.
            checked(
                &[
                    ("A", CheckedBy::ExecutedOnly),
                    ("B", value.clone()),
                    ("C", value.clone()),
                ],
                500,
            ),
            // Checks A metamorphically.
            checked(&[("A", meta.clone())], 900),
            // Not analysed.
            None,
            // Same as the first but larger: never needed.
            checked(&[("B", value.clone()), ("C", value.clone())], 800),
        ];
        let kept = choose(&analyses);
        let got: Vec<(usize, Vec<String>)> = kept
            .iter()
            .map(|(i, ms)| (*i, ms.iter().map(|m| m.marker.clone()).collect()))
            .collect();
        assert_eq!(
            got,
            vec![(0, vec!["B".into(), "C".into()]), (1, vec!["A".into()])]
        );
        assert_eq!(kept[1].1[0].verdict, meta);
        assert!(choose(&[None]).is_empty());
    }
}
