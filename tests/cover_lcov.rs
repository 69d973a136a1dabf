//! Differential check against lcov: the same suite and fuzz runs, captured with `lcov --capture`,
//! must give the same new lines as `mfppr cover` on gcov JSON and on text `.gcov` files.
//!
//! lcov 1.x's genhtml has no differential categories (GBC/GIC arrived with lcov 2.0), so the
//! reference is computed from the two tracefiles' `DA:` records: per (SF, line), counts are summed
//! (lcov writes one `DA` per template instantiation), and a line is new when its fuzz sum is > 0
//! and its suite sum is 0 or absent — lcov 2's GBC ∪ GIC. mfppr's `--lcov DIR` tracefiles of each
//! run are checked against lcov's own (the same DA, FNDA and per-line BRDA counts) and fed to
//! `genhtml`, alone and as `genhtml --baseline-file suite.info fuzz.info` (the differential view:
//! lcov ≥ 2.0 labels the new lines GBC/GIC; lcov 1.x, as on Debian 12, shows the change). Skips
//! (and passes) without lcov/genhtml, unless `MFPPR_REQUIRE_TOOLS=1`.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{mfppr, require_tools, run_ok};

fn da_counts(info: &str) -> BTreeMap<(String, u32), u64> {
    let mut out = BTreeMap::new();
    let mut file = String::new();
    for line in info.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = f.to_string();
        } else if let Some(da) = line.strip_prefix("DA:") {
            let mut parts = da.split(',');
            let l: u32 = parts.next().unwrap().parse().unwrap();
            let c: u64 = parts.next().unwrap().parse().unwrap();
            *out.entry((file.clone(), l)).or_insert(0) += c;
        }
    }
    out
}

/// Per (SF, function name): FNDA count.
fn fnda(info: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    let mut file = String::new();
    for line in info.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = f.to_string();
        } else if let Some(rest) = line.strip_prefix("FNDA:") {
            let (count, name) = rest.split_once(',').unwrap();
            *out.entry((file.clone(), name.to_string())).or_insert(0) +=
                count.parse::<u64>().unwrap();
        }
    }
    out
}

/// Per (SF, line): the sum of its BRDA taken counts (`-` is 0).
fn brda_sums(info: &str) -> BTreeMap<(String, u32), u64> {
    let mut out = BTreeMap::new();
    let mut file = String::new();
    for line in info.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = f.to_string();
        } else if let Some(rest) = line.strip_prefix("BRDA:") {
            let parts: Vec<&str> = rest.split(',').collect();
            let taken = parts[3].parse::<u64>().unwrap_or(0);
            *out.entry((file.clone(), parts[0].parse().unwrap()))
                .or_insert(0) += taken;
        }
    }
    out
}

fn only_under<K: Ord + Clone, V: Clone>(
    m: &BTreeMap<(String, K), V>,
    prefix: &str,
) -> BTreeMap<(String, K), V> {
    m.iter()
        .filter(|((f, _), _)| f.starts_with(prefix))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn mfppr_new(root: &Path, suite: &str, fuzz: &str) -> BTreeSet<(String, u32)> {
    let out = mfppr(
        root,
        &[
            "cover",
            "report",
            "--suite",
            suite,
            "--fuzz",
            fuzz,
            "--source-root",
            "src",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut set = BTreeSet::new();
    for f in v["files"].as_array().unwrap() {
        let abs = root.join("src").join(f["path"].as_str().unwrap());
        for l in f["lines"].as_array().unwrap() {
            set.insert((abs.display().to_string(), l.as_u64().unwrap() as u32));
        }
    }
    set
}

#[test]
fn new_lines_match_lcov_tracefiles() {
    if !require_tools(&["g++", "gcov", "lcov", "genhtml"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Canonical, as lcov writes canonical SF paths.
    let root = tmp.path().canonicalize().unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("coverage/src");
    std::fs::create_dir_all(root.join("src")).unwrap();
    for f in ["tiny.hpp", "main.cpp"] {
        std::fs::copy(samples.join(f), root.join("src").join(f)).unwrap();
    }
    for (run, args) in [("suite", &["1", "3"][..]), ("fuzz", &["-2", "200"][..])] {
        let dir = root.join(run);
        std::fs::create_dir_all(&dir).unwrap();
        run_ok(
            &dir,
            "g++",
            &["--coverage", "-O0", "-c", "../src/main.cpp", "-o", "main.o"],
        );
        run_ok(&dir, "g++", &["--coverage", "main.o", "-o", "prog"]);
        run_ok(&dir, "./prog", args);
        run_ok(
            &root,
            "lcov",
            &[
                "--quiet",
                "--capture",
                "--rc",
                "lcov_branch_coverage=1",
                "-d",
                run,
                "-o",
                &format!("{run}.info"),
            ],
        );
        // gcov after lcov: lcov leaves no .gcov files behind, and gcov does not touch .gcda.
        // -b: branch counts, for the BRDA records.
        run_ok(&dir, "gcov", &["-b", "--json-format", "main.gcda"]);
        // Text .gcov files name sources relative to the compile directory: run gcov there, keep
        // the files in text/.
        run_ok(&dir, "gcov", &["main.gcda"]);
        std::fs::create_dir_all(dir.join("text")).unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "gcov") {
                std::fs::rename(&p, dir.join("text").join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    let suite = da_counts(&std::fs::read_to_string(root.join("suite.info")).unwrap());
    let fuzz = da_counts(&std::fs::read_to_string(root.join("fuzz.info")).unwrap());
    let src_prefix = format!("{}/", root.join("src").display());
    let lcov_new: BTreeSet<(String, u32)> = fuzz
        .iter()
        .filter(|(k, &c)| {
            c > 0 && suite.get(*k).copied().unwrap_or(0) == 0 && k.0.starts_with(&src_prefix)
        })
        .map(|(k, _)| k.clone())
        .collect();
    assert!(!lcov_new.is_empty(), "the fuzz run must reach new lines");

    let from_json = mfppr_new(&root, "suite", "fuzz");
    assert_eq!(from_json, lcov_new, "gcov JSON vs lcov");
    // Text .gcov keys stay relative (`../src/tiny.hpp`) without --source-root.
    let out = mfppr(
        &root,
        &[
            "cover",
            "report",
            "--suite",
            "suite/text",
            "--fuzz",
            "fuzz/text",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let from_text: BTreeSet<(String, u32)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap().starts_with("../src/"))
        .flat_map(|f| {
            let abs = root.join(f["path"].as_str().unwrap().trim_start_matches("../"));
            f["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |l| (abs.display().to_string(), l.as_u64().unwrap() as u32))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(from_text, lcov_new, "text .gcov vs lcov");

    // mfppr's tracefiles: each run whole (the gcov JSON alone, not summed with the text .gcov
    // files of the same run), as lcov captured it, and the new lines alone.
    let out = mfppr(
        &root,
        &[
            "cover",
            "report",
            "--suite",
            "suite/main.gcov.json.gz",
            "--fuzz",
            "fuzz/main.gcov.json.gz",
            "--source-root",
            "src",
            "--lcov",
            "lcov",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.contains("genhtml --baseline-file") && note.contains("--branch-coverage"),
        "{note}"
    );
    for run in ["suite", "fuzz"] {
        let lcov_own = std::fs::read_to_string(root.join(format!("{run}.info"))).unwrap();
        let mine = std::fs::read_to_string(root.join(format!("lcov/{run}.info"))).unwrap();
        assert_eq!(
            da_counts(&mine),
            only_under(&da_counts(&lcov_own), &src_prefix),
            "{run}: DA"
        );
        assert_eq!(
            fnda(&mine),
            only_under(&fnda(&lcov_own), &src_prefix),
            "{run}: FNDA"
        );
        let brda = brda_sums(&mine);
        assert!(!brda.is_empty(), "{run}: BRDA records");
        assert_eq!(
            brda,
            only_under(&brda_sums(&lcov_own), &src_prefix),
            "{run}: BRDA"
        );
        run_ok(
            &root,
            "genhtml",
            &[
                "--quiet",
                "--branch-coverage",
                &format!("lcov/{run}.info"),
                "-o",
                &format!("html-{run}"),
            ],
        );
    }
    run_ok(
        &root,
        "genhtml",
        &["--quiet", "lcov/new.info", "-o", "html"],
    );
    assert!(root.join("html/index.html").exists());
    // The differential view (the command mfppr prints), where genhtml has --baseline-file.
    let help = std::process::Command::new("genhtml")
        .arg("--help")
        .output()
        .unwrap();
    if String::from_utf8_lossy(&help.stdout).contains("--baseline-file") {
        run_ok(
            &root,
            "genhtml",
            &[
                "--quiet",
                "--baseline-file",
                "lcov/suite.info",
                "lcov/fuzz.info",
                "--branch-coverage",
                "-o",
                "html-diff",
            ],
        );
        assert!(root.join("html-diff/index.html").exists());
    }
}
