//! `--find`: which generated tests reach which markers, and the smallest test per marker.
//!
//! Tests come from a corpus directory or from a generator command run once per seed. Each test
//! is built and run by the user's `--run` command (with `MFPPR_INJECTED` naming the marked copy of
//! the library) in a fresh directory; every `MFPPR-COV <id> ` line it prints on stderr or stdout
//! counts as reaching marker `<id>`. Runs go in parallel on `-j N` threads (`crate::pool::map`);
//! the results are ordered by test name, so nothing depends on N.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use super::shell;
use crate::error::{coded, ExitKind};

/// The environment variable naming the injected tree for `--run` commands.
pub const INJECTED_ENV: &str = "MFPPR_INJECTED";

/// A test to run: a unique name (for ordering and reports), its absolute path and size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestFile {
    /// Path relative to the corpus directory (or the generated file's name).
    pub name: String,
    /// Absolute path.
    pub path: PathBuf,
    /// Size in bytes.
    pub bytes: u64,
}

/// What one run of one test showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestRun {
    /// The test.
    #[serde(flatten)]
    pub test: TestFile,
    /// Exit status of the `--run` command; `None` when it timed out.
    pub status: Option<i32>,
    /// Marker ids reached (known ids only), sorted.
    pub markers: Vec<String>,
    /// The last line of its output when the run did not pass, else empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl TestRun {
    /// True when the `--run` command exited 0 (only such tests are chosen: the reduction's oracle
    /// asks the reduced test to pass).
    pub fn passed(&self) -> bool {
        self.status == Some(0)
    }
}

/// The result of [`find`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct Found {
    /// Every run, by test name.
    pub runs: Vec<TestRun>,
    /// Marker id → the smallest passing test that reaches it.
    pub chosen: BTreeMap<String, TestFile>,
    /// Marker id → how many passing tests reach it.
    pub reached_by: BTreeMap<String, usize>,
}

/// Every C++ source file under `dir` (`.cpp`, `.cc`, `.cxx`, `.C`), by name.
pub fn corpus(dir: &Path) -> Result<Vec<TestFile>> {
    let root = crate::coverage::paths::absolute(dir);
    if !root.is_dir() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "--corpus {} is not a directory; give the directory of generated tests",
                dir.display()
            ),
        ));
    }
    let mut tests = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.with_context(|| format!("cannot walk {}", root.display()))?;
        let is_cpp = entry
            .path()
            .extension()
            .is_some_and(|e| ["cpp", "cc", "cxx", "C"].iter().any(|x| e == *x));
        if entry.file_type().is_file() && is_cpp {
            let name = crate::coverage::paths::relative_to(entry.path(), &root).unwrap_or_default();
            tests.push(test_file(name, entry.into_path())?);
        }
    }
    if tests.is_empty() {
        return Err(coded(
            ExitKind::Input,
            format!("--corpus {}: no .cpp/.cc/.cxx files found", root.display()),
        ));
    }
    Ok(tests)
}

fn test_file(name: String, path: PathBuf) -> Result<TestFile> {
    let bytes = std::fs::metadata(&path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    Ok(TestFile { name, path, bytes })
}

/// Run `template` (with `{seed}` and `{out}`) for seeds `1..=budget` on `jobs` threads, writing
/// `dir/seed-<n>.cpp`. Seeds whose command fails or writes nothing are reported on stderr and
/// skipped; it is an error when none works.
pub fn generate(
    template: &str,
    budget: u32,
    dir: &Path,
    timeout: Duration,
    jobs: usize,
) -> Result<Vec<TestFile>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let width = budget.to_string().len();
    let results = crate::pool::map(jobs, "mfppr-generate", 1..=budget, |seed| {
        let out = dir.join(format!("seed-{seed:0width$}.cpp"));
        let cmd = shell::expand(
            template,
            &[("seed", &seed.to_string()), ("out", &out.to_string_lossy())],
        );
        let run = shell::run(&cmd, dir, &[], timeout)?;
        Ok((seed, out, run))
    })?;
    let mut tests = Vec::new();
    let mut first_failure = None;
    for (seed, out, run) in results {
        if run.passed() && out.is_file() {
            let name = out
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            tests.push(test_file(name, out)?);
        } else {
            let why = format!("{}: {}", run.describe(), run.last_line());
            crate::messages::warn(format!("generate: seed {seed} gave no test ({why})"));
            first_failure.get_or_insert(why);
        }
    }
    if tests.is_empty() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "--generate made no test for seeds 1..={budget} (first failure: {}); check the \
                 command by hand with {{seed}} = 1",
                first_failure.unwrap_or_default()
            ),
        ));
    }
    Ok(tests)
}

/// The marker ids in `output` (lines `MFPPR-COV <id> …`), restricted to `known`.
pub fn markers_in(output: &[u8], known: &BTreeSet<String>) -> BTreeSet<String> {
    String::from_utf8_lossy(output)
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("MFPPR-COV ")?;
            let (id, _) = rest.split_once(' ')?;
            known.get(id).cloned()
        })
        .collect()
}

/// Run `run_template` on every test on `jobs` threads (in a fresh directory each, with
/// [`INJECTED_ENV`] = `injected`), and choose the smallest passing test per marker.
pub fn find(
    tests: &[TestFile],
    run_template: &str,
    injected: &Path,
    known: &BTreeSet<String>,
    timeout: Duration,
    jobs: usize,
) -> Result<Found> {
    let mut runs = crate::pool::map(jobs, "mfppr-find", tests, |t| {
        run_test(t, run_template, injected, known, timeout)
    })?;
    runs.sort_by(|a, b| a.test.name.cmp(&b.test.name));
    let (chosen, reached_by) = choose(&runs);
    Ok(Found {
        runs,
        chosen,
        reached_by,
    })
}

/// Run `template` on one test (see [`find`]).
pub fn run_test(
    t: &TestFile,
    template: &str,
    injected: &Path,
    known: &BTreeSet<String>,
    timeout: Duration,
) -> Result<TestRun> {
    let dir = tempfile::Builder::new()
        .prefix("mfppr-run-")
        .tempdir()
        .context("cannot create a temporary directory; check TMPDIR and free space")?;
    let cmd = shell::expand(template, &[("test", &t.path.to_string_lossy())]);
    let run = shell::run(&cmd, dir.path(), &[(INJECTED_ENV, injected)], timeout)?;
    let mut markers = markers_in(&run.stderr, known);
    markers.extend(markers_in(&run.stdout, known));
    let note = if run.passed() {
        String::new()
    } else {
        format!("{}: {}", run.describe(), run.last_line())
    };
    Ok(TestRun {
        test: t.clone(),
        status: run.status,
        markers: markers.into_iter().collect(),
        note,
    })
}

/// Per marker, the smallest passing test reaching it (bytes, then name) and how many do.
pub fn choose(runs: &[TestRun]) -> (BTreeMap<String, TestFile>, BTreeMap<String, usize>) {
    let mut chosen: BTreeMap<String, TestFile> = BTreeMap::new();
    let mut reached_by: BTreeMap<String, usize> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.passed()) {
        for m in &r.markers {
            *reached_by.entry(m.clone()).or_default() += 1;
            let better = chosen
                .get(m)
                .is_none_or(|c| (r.test.bytes, &r.test.name) < (c.bytes, &c.name));
            if better {
                chosen.insert(m.clone(), r.test.clone());
            }
        }
    }
    (chosen, reached_by)
}

/// Per marker, the passing tests reaching it, smallest first (bytes, then name): the tests
/// [`choose`] picks from, in its order.
pub fn reaching(runs: &[TestRun]) -> BTreeMap<String, Vec<TestFile>> {
    let mut by_marker: BTreeMap<String, Vec<TestFile>> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.passed()) {
        for m in &r.markers {
            by_marker.entry(m.clone()).or_default().push(r.test.clone());
        }
    }
    for tests in by_marker.values_mut() {
        tests.sort_by(|a, b| (a.bytes, &a.name).cmp(&(b.bytes, &b.name)));
    }
    by_marker
}

/// What metamorphic coverage says about one test and one marker (`--metamorphic`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McView {
    /// The test is not analysed yet.
    Unknown,
    /// Its analysis failed (it counts as not holding the marker).
    Failed,
    /// The checked pairs whose MC holds the marker's line (`r_0/r_k`); empty: executed only.
    Pairs(Vec<String>),
}

/// The test chosen for a marker by metamorphic coverage, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McChoice {
    /// The chosen test.
    pub test: TestFile,
    /// The pairs whose MC holds the marker in it (empty: executed only).
    pub pairs: Vec<String>,
    /// Why it was chosen, in words.
    pub reason: String,
}

/// `--find --metamorphic`: among `candidates` (the tests reaching a marker, smallest first), the
/// first of the `limit` smallest whose MC holds the marker, else the smallest. `Err(test)` when
/// that depends on a test not analysed yet: analyse it and ask again. The choice depends only on
/// the analyses, never on the order they were made in.
pub fn mc_choice(
    candidates: &[TestFile],
    limit: usize,
    view: impl Fn(&TestFile) -> McView,
) -> std::result::Result<McChoice, &TestFile> {
    let considered = &candidates[..candidates.len().min(limit.max(1))];
    let mut failed = 0;
    for (i, t) in considered.iter().enumerate() {
        match view(t) {
            McView::Unknown => return Err(t),
            McView::Failed => failed += 1,
            McView::Pairs(pairs) if pairs.is_empty() => {}
            McView::Pairs(pairs) => {
                let reason = if i == 0 {
                    "the smallest test reaching it".to_string()
                } else {
                    format!(
                        "not the smallest: the {i} smaller test(s) reaching it do not have it in \
                         their MC{} (smallest: {}, {} bytes)",
                        if failed == 0 {
                            String::new()
                        } else {
                            format!(", {failed} of them not analysed")
                        },
                        candidates[0].name,
                        candidates[0].bytes
                    )
                };
                return Ok(McChoice {
                    test: t.clone(),
                    pairs,
                    reason,
                });
            }
        }
    }
    let scope = if considered.len() == candidates.len() {
        format!("the {} test(s) reaching it", candidates.len())
    } else {
        format!(
            "the {} smallest of the {} tests reaching it (--mc-tests {})",
            considered.len(),
            candidates.len(),
            considered.len()
        )
    };
    let failed = if failed > 0 {
        format!(", {failed} of them not analysed")
    } else {
        String::new()
    };
    Ok(McChoice {
        test: candidates[0].clone(),
        pairs: Vec::new(),
        reason: format!("the smallest test reaching it; none of {scope} has it in its MC{failed}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, bytes: u64, status: Option<i32>, markers: &[&str]) -> TestRun {
        TestRun {
            test: TestFile {
                name: name.into(),
                path: PathBuf::from("/c").join(name),
                bytes,
            },
            status,
            markers: markers.iter().map(|m| m.to_string()).collect(),
            note: String::new(),
        }
    }

    #[test]
    fn markers_are_parsed_from_output_lines() {
        let known: BTreeSet<String> = ["P1", "P2", "P10"].iter().map(|s| s.to_string()).collect();
        let out = b"noise\nMFPPR-COV P1 iset.h:3\n  MFPPR-COV P10 iset.h:9\nMFPPR-COV P1 x\n\
                    MFPPR-COV P7 unknown.h:1\nMFPPR-COV P2\nxMFPPR-COV P2 y\n";
        let got: Vec<String> = markers_in(out, &known).into_iter().collect();
        assert_eq!(got, vec!["P1", "P10"]);
    }

    #[test]
    fn smallest_passing_test_wins_ties_by_name_in_any_order() {
        let runs = vec![
            run("b.cpp", 10, Some(0), &["P1", "P2"]),
            run("a.cpp", 10, Some(0), &["P2"]),
            run("c.cpp", 5, Some(1), &["P1", "P2"]),
            run("d.cpp", 5, None, &["P3"]),
            run("e.cpp", 7, Some(0), &["P1"]),
        ];
        let (chosen, by) = choose(&runs);
        assert_eq!(chosen["P1"].name, "e.cpp");
        assert_eq!(chosen["P2"].name, "a.cpp");
        assert!(
            !chosen.contains_key("P3"),
            "failing and timed-out runs never count"
        );
        assert_eq!(by["P1"], 2);
        let mut reversed = runs.clone();
        reversed.reverse();
        assert_eq!(choose(&reversed).0, chosen);
    }

    #[test]
    fn metamorphic_choice_takes_the_smallest_test_holding_the_marker_in_its_mc() {
        let runs = vec![
            run("c.cpp", 30, Some(0), &["P1"]),
            run("b.cpp", 20, Some(0), &["P1", "P2"]),
            run("a.cpp", 10, Some(0), &["P1", "P2"]),
            run("d.cpp", 5, Some(1), &["P1"]),
        ];
        let reaching = reaching(&runs);
        let names =
            |m: &str| -> Vec<&str> { reaching[m].iter().map(|t| t.name.as_str()).collect() };
        assert_eq!(
            names("P1"),
            ["a.cpp", "b.cpp", "c.cpp"],
            "failing runs never count"
        );
        assert_eq!(names("P2"), ["a.cpp", "b.cpp"]);
        let p1 = &reaching["P1"];
        // Nothing analysed: the smallest is asked for first, then the next one.
        assert_eq!(
            mc_choice(p1, 5, |_| McView::Unknown).unwrap_err().name,
            "a.cpp"
        );
        let only_a = |t: &TestFile| match t.name.as_str() {
            "a.cpp" => McView::Pairs(vec![]),
            _ => McView::Unknown,
        };
        assert_eq!(mc_choice(p1, 5, only_a).unwrap_err().name, "b.cpp");
        // b holds it (c is never needed): b, with the reason naming the smallest.
        let view = |t: &TestFile| match t.name.as_str() {
            "a.cpp" => McView::Pairs(vec![]),
            "b.cpp" => McView::Pairs(vec!["r_0/r_2".into()]),
            _ => McView::Unknown,
        };
        let choice = mc_choice(p1, 5, view).unwrap();
        assert_eq!(choice.test.name, "b.cpp");
        assert_eq!(choice.pairs, ["r_0/r_2"]);
        assert!(
            choice.reason.contains("1 smaller test(s)"),
            "{}",
            choice.reason
        );
        assert!(
            choice.reason.contains("a.cpp, 10 bytes"),
            "{}",
            choice.reason
        );
        // The smallest holding it needs no other analysis.
        let a_holds = |t: &TestFile| match t.name.as_str() {
            "a.cpp" => McView::Pairs(vec!["r_0/r_1".into()]),
            _ => McView::Unknown,
        };
        let choice = mc_choice(p1, 5, a_holds).unwrap();
        assert_eq!(
            (choice.test.name.as_str(), choice.reason.as_str()),
            ("a.cpp", "the smallest test reaching it")
        );
        // --mc-tests 1: only a is looked at; a failed analysis holds nothing.
        let choice = mc_choice(p1, 1, only_a).unwrap();
        assert!(choice.pairs.is_empty() && choice.test.name == "a.cpp");
        assert!(
            choice.reason.contains("(--mc-tests 1)"),
            "{}",
            choice.reason
        );
        let failed = |t: &TestFile| match t.name.as_str() {
            "a.cpp" => McView::Failed,
            _ => McView::Pairs(vec![]),
        };
        let choice = mc_choice(p1, 5, failed).unwrap();
        assert_eq!(choice.test.name, "a.cpp");
        assert!(choice.pairs.is_empty());
        assert!(
            choice.reason.contains("none of the 3 test(s) reaching it")
                && choice.reason.contains("1 of them not analysed"),
            "{}",
            choice.reason
        );
    }

    #[test]
    fn find_and_generate_run_commands_in_parallel_with_the_same_result() {
        let dir = tempfile::tempdir().unwrap();
        let gen_dir = dir.path().join("gen");
        let known: BTreeSet<String> = ["P1", "P2"].iter().map(|s| s.to_string()).collect();
        // The "test" is a shell script naming the markers it reaches; seed 3 fails.
        let gen = "if [ {seed} = 3 ]; then exit 1; fi; \
                   printf 'echo MFPPR-COV P%s x >&2\\n# %*s\\n' $(( {seed} % 2 + 1 )) {seed} '' > {out}";
        let mut results = Vec::new();
        for jobs in [1, 3] {
            let out = gen_dir.join(jobs.to_string());
            let tests = generate(gen, 4, &out, Duration::from_secs(20), jobs).unwrap();
            let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, vec!["seed-1.cpp", "seed-2.cpp", "seed-4.cpp"]);
            let found = find(
                &tests,
                "test -d \"$MFPPR_INJECTED\" && sh {test}",
                dir.path(),
                &known,
                Duration::from_secs(20),
                jobs,
            )
            .unwrap();
            let chosen: Vec<(String, String)> = found
                .chosen
                .iter()
                .map(|(m, t)| (m.clone(), t.name.clone()))
                .collect();
            results.push(chosen);
        }
        assert_eq!(
            results[0],
            vec![
                ("P1".to_string(), "seed-2.cpp".to_string()),
                ("P2".to_string(), "seed-1.cpp".to_string())
            ]
        );
        assert_eq!(results[0], results[1]);
    }
}
