//! Metamorphic coverage (design §13, `cover find --metamorphic`): which library lines a test's
//! checks validate, not just execute.
//!
//! For a test, each variant is isolated by variant elimination on the spans of
//! [`crate::model::TestModel`]: the test with only `r_0` (every other variant deleted), and for
//! each checked pair `(r_0, r_k)` — `r_k` with at least one check — the test with only `r_k`,
//! its checks deleted too (alone it has nothing to compare with). Each isolated test is written
//! to the analysis directory, built and run with the `--verify-gcov` build
//! ([`super::verify::covered_run`]) and its library line coverage read. The MC of a pair is the
//! symmetric difference of the lines `r_0` and `r_k` execute alone; the test's MC is the union
//! over its checked pairs. A variant that fails alone still counts when gcov data was written;
//! one without coverage drops its pair, with a note, and the others go on.
//!
//! [`analyse_pairs`] limits the analysis to some pairs (a reduced test, for the pair its
//! reduction kept); [`isolate_files`] only writes the isolated tests — the hidden
//! `mfppr cover isolate`, which the reduction oracle of a metamorphic point calls on every
//! candidate, so that it splits candidates exactly as mfppr reads them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use super::verify::{covered_run, VerifyOptions};
use crate::catalogue::Catalogue;
use crate::coverage::model::Coverage;
use crate::document::Document;
use crate::edit::{self, Edit};
use crate::line_endings::LineEndings;
use crate::model::TestModel;

/// A library line: file key (as the markers key it) and 1-based line.
pub type Line = (String, u32);

/// One isolated variant and what its coverage run gave.
#[derive(Clone, Debug, Serialize)]
pub struct VariantRun {
    /// `r_<k>`.
    pub variant: String,
    /// The isolated test.
    pub file: PathBuf,
    /// Library lines it executes (none when its coverage could not be read).
    pub executed: usize,
    /// How its run ended, or why it has no coverage.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The executed lines, when read.
    #[serde(skip)]
    pub lines: Option<BTreeSet<Line>>,
}

/// One checked pair `(r_0, r_k)` and its metamorphic coverage.
#[derive(Clone, Debug, Serialize)]
pub struct PairMc {
    /// `r_0/r_<k>`.
    pub pair: String,
    /// `k`.
    #[serde(skip)]
    pub k: usize,
    /// The symmetric difference, as `file:line`.
    pub lines: Vec<String>,
    /// The same lines, for look-ups.
    #[serde(skip)]
    pub set: BTreeSet<Line>,
}

/// The metamorphic coverage of one test.
#[derive(Clone, Debug, Serialize)]
pub struct TestMc {
    /// The test analysed.
    pub test: PathBuf,
    /// Its isolated variants, `r_0` first.
    pub variants: Vec<VariantRun>,
    /// Its checked pairs with coverage on both sides.
    pub pairs: Vec<PairMc>,
    /// Size of the union over the pairs.
    pub mc_lines: usize,
    /// What limited the analysis (a single variant, a pair without coverage, …).
    pub notes: Vec<String>,
    /// Wall time of the analysis.
    pub seconds: f64,
}

impl TestMc {
    /// The pairs whose MC holds one of `lines` of `file`, by `k`.
    pub fn pairs_covering(&self, file: &str, lines: &[u32]) -> Vec<&PairMc> {
        self.pairs
            .iter()
            .filter(|p| {
                lines
                    .iter()
                    .any(|&l| p.set.contains(&(file.to_string(), l)))
            })
            .collect()
    }

    /// The test's MC: the union over its checked pairs.
    pub fn union(&self) -> BTreeSet<Line> {
        self.pairs
            .iter()
            .flat_map(|p| p.set.iter().cloned())
            .collect()
    }
}

/// The indices `k ≥ 1` of the variants with at least one check: the pairs `(r_0, r_k)`.
pub fn checked_pairs(model: &TestModel) -> Vec<usize> {
    model
        .variants
        .iter()
        .filter(|v| v.index != 0 && !v.checks.is_empty())
        .map(|v| v.index)
        .collect()
}

/// `text` with only variant `keep` left: every other variant deleted with its checks, and the
/// checks of `keep` deleted too.
pub fn isolate(text: &[u8], model: &TestModel, keep: usize) -> Vec<u8> {
    let mut edits: Vec<Edit> = Vec::new();
    for v in &model.variants {
        if v.index == keep {
            edits.extend(v.checks.iter().map(|c| Edit::delete(c.span.clone())));
        } else {
            edits.push(Edit::delete(v.span()));
        }
    }
    edit::apply(text, &edits)
}

/// The library lines `cov` counts as executed.
fn executed(cov: &Coverage) -> BTreeSet<Line> {
    cov.files
        .iter()
        .flat_map(|(file, f)| {
            f.lines
                .iter()
                .filter(|(_, &n)| n > 0)
                .map(move |(&l, _)| (file.clone(), l))
        })
        .collect()
}

/// A test read for variant elimination.
struct ReadTest {
    text: Vec<u8>,
    endings: LineEndings,
    model: TestModel,
}

fn parse(test: &Path) -> Result<ReadTest> {
    let raw = crate::input::read_test(test)?;
    crate::input::check_text(&raw)?;
    let endings = LineEndings::of(&raw);
    let text = endings.to_internal(&raw);
    let doc = Document::parse(text.clone())?;
    let model = TestModel::build(&doc, &Catalogue::default())
        .with_context(|| format!("{}: not an MF++ test", test.display()))?;
    Ok(ReadTest {
        text,
        endings,
        model,
    })
}

/// `dir/<stem>.r_<k>.<ext>`: where the test with only `r_k` goes.
fn isolated_path(test: &Path, dir: &Path, k: usize) -> PathBuf {
    let stem = test
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "test".into());
    let ext = test
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cpp".into());
    dir.join(format!("{stem}.r_{k}.{ext}"))
}

impl ReadTest {
    /// Write the test with only `r_k` ([`isolate`]) to `dir`; its path.
    fn write_isolated(&self, test: &Path, dir: &Path, k: usize) -> Result<PathBuf> {
        let file = isolated_path(test, dir, k);
        let isolated = self.endings.to_file(&isolate(&self.text, &self.model, k));
        std::fs::write(&file, isolated)
            .with_context(|| format!("cannot write {}", file.display()))?;
        Ok(file)
    }
}

/// Write `test` once per variant `k` of `keep`, with only `r_k` left ([`isolate`]), into `dir`
/// as `<stem>.r_<k>.<ext>`; the paths, in the order of `keep`. An error when `test` is not an
/// MF++ test or has no `r_k` for one of them (the reduction oracle of `find --metamorphic` calls
/// this through `mfppr cover isolate` on every candidate, so a candidate that lost a side of its
/// pair is refused here).
pub fn isolate_files(test: &Path, keep: &[usize], dir: &Path) -> Result<Vec<PathBuf>> {
    let parsed = parse(test)?;
    keep.iter()
        .map(|&k| {
            if !parsed.model.variants.iter().any(|v| v.index == k) {
                anyhow::bail!("{}: no variant r_{k}", test.display());
            }
            parsed.write_isolated(test, dir, k)
        })
        .collect()
}

/// Analyse `test` (see the module docs), writing its isolated variants into `dir` (exists).
pub fn analyse(test: &Path, dir: &Path, opts: &VerifyOptions) -> Result<TestMc> {
    analyse_pairs(test, dir, opts, None)
}

/// [`analyse`], for the checked pairs `(r_0, r_k)` with `k` in `only` when given (a `k` that is
/// not a checked pair of the test gets a note).
pub fn analyse_pairs(
    test: &Path,
    dir: &Path,
    opts: &VerifyOptions,
    only: Option<&[usize]>,
) -> Result<TestMc> {
    let started = Instant::now();
    let parsed = parse(test)?;
    let mut notes = Vec::new();
    let pairs = selected_pairs(&parsed.model, only, &mut notes);
    let mut variants = Vec::new();
    if !pairs.is_empty() {
        for k in std::iter::once(0).chain(pairs.iter().copied()) {
            let file = parsed.write_isolated(test, dir, k)?;
            variants.push(run_variant(file, k, opts)?);
        }
    }
    let pair_mcs = pair_mcs(&variants, &pairs, &mut notes);
    let mut mc = TestMc {
        test: test.to_path_buf(),
        variants,
        pairs: pair_mcs,
        mc_lines: 0,
        notes,
        seconds: 0.0,
    };
    mc.mc_lines = mc.union().len();
    mc.seconds = started.elapsed().as_secs_f64();
    Ok(mc)
}

/// The checked pairs to analyse: all of `model`'s, or those with `k` in `only`; `notes` says why
/// there is none, or which of `only` is not a checked pair.
fn selected_pairs(
    model: &TestModel,
    only: Option<&[usize]>,
    notes: &mut Vec<String>,
) -> Vec<usize> {
    let mut pairs = checked_pairs(model);
    if model.variants.len() < 2 {
        notes.push(format!(
            "{} variant(s), no checked pair: MC is empty",
            model.variants.len()
        ));
    } else if pairs.is_empty() {
        notes.push("no variant has a check, no checked pair: MC is empty".to_string());
    }
    if let Some(only) = only {
        for k in only.iter().filter(|k| !pairs.contains(k)) {
            notes.push(format!(
                "pair r_0/r_{k} is not in the test (no r_{k}, or r_{k} has no check)"
            ));
        }
        pairs.retain(|k| only.contains(k));
    }
    pairs
}

/// Build and run the isolated variant `r_k` (written to `file`) under gcov: the lines it executes,
/// or why there are none.
fn run_variant(file: PathBuf, k: usize, opts: &VerifyOptions) -> Result<VariantRun> {
    let run = covered_run(&file, opts)?;
    let (lines, note) = match run.coverage {
        Ok(cov) => {
            let note = if run.run_passed {
                String::new()
            } else {
                format!("failed alone ({}); coverage read from its .gcda", run.run)
            };
            (Some(executed(&cov)), note)
        }
        Err(why) => (None, why),
    };
    Ok(VariantRun {
        variant: format!("r_{k}"),
        file,
        executed: lines.as_ref().map_or(0, BTreeSet::len),
        note,
        lines,
    })
}

/// The MC of each pair `(r_0, r_k)`, `k` in `pairs`: the symmetric difference of the lines each
/// side executes alone; a pair with a side without coverage is left out, with a note.
fn pair_mcs(variants: &[VariantRun], pairs: &[usize], notes: &mut Vec<String>) -> Vec<PairMc> {
    let by_name: BTreeMap<&str, &VariantRun> =
        variants.iter().map(|v| (v.variant.as_str(), v)).collect();
    let mut pair_mcs = Vec::new();
    let Some(r0) = by_name.get("r_0") else {
        return pair_mcs;
    };
    for k in pairs {
        let name = format!("r_{k}");
        let side = |v: &VariantRun| v.lines.clone().ok_or(v.note.clone());
        match (side(r0), side(by_name[name.as_str()])) {
            (Ok(a), Ok(b)) => {
                let set: BTreeSet<Line> = a.symmetric_difference(&b).cloned().collect();
                pair_mcs.push(PairMc {
                    pair: format!("r_0/{name}"),
                    k: *k,
                    lines: set.iter().map(|(f, l)| format!("{f}:{l}")).collect(),
                    set,
                });
            }
            (Err(why), _) => notes.push(format!("pair r_0/{name} left out: r_0 alone: {why}")),
            (_, Err(why)) => notes.push(format!("pair r_0/{name} left out: {name} alone: {why}")),
        }
    }
    pair_mcs
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: &str = "#include \"spec.hpp\"\nint main() {\n    int output_var_0 = 1;\n\
// Meta test 0\nint r_0 = f_0_0(output_var_0);\n\n\
// Meta test 1\nint r_1 = g_1_0(output_var_0);\nmetalib::checks::check_equal(r_1, r_0);\n\n\
// Meta test 2\nint r_2 = h_2_0(output_var_0);\n}\n";

    fn model(text: &str) -> TestModel {
        let doc = Document::parse(text.as_bytes().to_vec()).unwrap();
        TestModel::build(&doc, &Catalogue::default()).unwrap()
    }

    #[test]
    fn isolated_files_are_named_by_variant_and_a_missing_variant_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let test = dir.path().join("t.cc");
        std::fs::write(&test, TEST.replace('\n', "\r\n")).unwrap();
        let files = isolate_files(&test, &[1, 0], dir.path()).unwrap();
        assert_eq!(
            files,
            [dir.path().join("t.r_1.cc"), dir.path().join("t.r_0.cc")]
        );
        let r1 = std::fs::read_to_string(&files[0]).unwrap();
        assert!(r1.contains("int r_1 = g_1_0(output_var_0);\r\n") && !r1.contains("check"));
        let err = isolate_files(&test, &[0, 3], dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("no variant r_3"), "{err:#}");
        std::fs::write(&test, "int main() {}\n").unwrap();
        assert!(isolate_files(&test, &[0], dir.path()).is_err());
    }

    #[test]
    fn isolates_each_variant_and_drops_its_checks() {
        let m = model(TEST);
        assert_eq!(checked_pairs(&m), vec![1]);
        let only0 = String::from_utf8(isolate(TEST.as_bytes(), &m, 0)).unwrap();
        assert!(only0.contains("r_0 = f_0_0"));
        assert!(!only0.contains("r_1") && !only0.contains("r_2") && !only0.contains("check"));
        let only1 = String::from_utf8(isolate(TEST.as_bytes(), &m, 1)).unwrap();
        assert!(only1.contains("int r_1 = g_1_0(output_var_0);"));
        assert!(
            !only1.contains(" r_0") && !only1.contains("r_2") && !only1.contains("check"),
            "{only1}"
        );
        assert!(only1.contains("int output_var_0 = 1;"));
    }
}
