//! `cover find --metamorphic` with real g++ and gcov on the fixture iset library (header-only:
//! coverage comes from compiling the test): a differential check of mfppr's metamorphic coverage
//! against single-variant tests cut by hand here (by their `// Meta test` blocks, not by mfppr's
//! spans) and gcov run here; and the bad inputs of the analysis on a tiny library — a variant that
//! fails alone (coverage still read), one that aborts alone (no gcov data: its pair is left out,
//! said so), and a test with a single variant (MC empty, said so).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{mfppr, require_tools, root, run_ok, write};
use mfppr::coverage::metamorphic::analyse;
use mfppr::coverage::verify::{default_command, VerifyOptions};

const FLAGS: &str = "-std=c++17 -O0 -w";

/// The test's lines without the `// Meta test k` blocks (to the first blank line) not in `keep`,
/// and without checks when `keep` is not 0.
fn only_variant(text: &str, keep: usize) -> String {
    let mut out = String::new();
    let mut block: Option<usize> = None;
    for line in text.lines() {
        if let Some(k) = line.strip_prefix("// Meta test ") {
            block = Some(k.trim().parse().unwrap());
        } else if line.trim().is_empty() {
            block = None;
        }
        let dropped =
            block.is_some_and(|k| k != keep) || (keep != 0 && line.contains("metalib::checks::"));
        if !dropped {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Build `test` with coverage in `dir`, run it, and read the executed lines of the files under
/// `lib` (as `file:line`, relative to `lib`) from gcov's JSON, also written to `dir/t.gcov.json`.
fn executed_lines(dir: &Path, test: &Path, lib: &Path) -> BTreeSet<String> {
    std::fs::create_dir_all(dir).unwrap();
    let args = format!(
        "{FLAGS} -DEXECUTE=1 --coverage -I {} {} -o t",
        lib.display(),
        test.display()
    );
    run_ok(dir, "g++", &args.split(' ').collect::<Vec<_>>());
    run_ok(dir, "./t", &[]);
    let gcdas: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gcda"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["--json-format", "--stdout"];
    args.extend(gcdas.iter().map(String::as_str));
    let out = run_ok(dir, "gcov", &args);
    std::fs::write(dir.join("t.gcov.json"), &out.stdout).unwrap();
    let mut lines = BTreeSet::new();
    for doc in String::from_utf8(out.stdout).unwrap().lines() {
        let json: serde_json::Value = serde_json::from_str(doc).unwrap();
        for file in json["files"].as_array().unwrap() {
            let name = Path::new(file["file"].as_str().unwrap());
            let Ok(rel) = name.strip_prefix(lib) else {
                continue;
            };
            for l in file["lines"].as_array().unwrap() {
                if l["count"].as_u64().unwrap() > 0 {
                    lines.insert(format!("{}:{}", rel.display(), l["line_number"]));
                }
            }
        }
    }
    lines
}

#[test]
fn metamorphic_coverage_matches_single_variant_builds_by_hand() {
    if !require_tools(&["g++", "gcov"]) {
        return;
    }
    let lib = root().join("fixtures/iset/spec");
    let test_src = root().join("fixtures/tests/iset_pass_tiny.cpp");
    let text = std::fs::read_to_string(&test_src).unwrap();
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let corpus = w.join("corpus/tiny.cpp");
    write(&corpus, &text);
    // Suite and fuzz coverage: the fixture's basic suite test, and the MF++ test itself.
    for (dir, src) in [
        ("suite", root().join("fixtures/iset/suite/basic.cpp")),
        ("fuzz", corpus.clone()),
    ] {
        executed_lines(&w.join(dir), &src, &lib);
    }
    // By hand: the pair (r_0, r_1) of the test, each side alone.
    let r0 = w.join("hand/r0.cpp");
    let r1 = w.join("hand/r1.cpp");
    write(&r0, &only_variant(&text, 0));
    write(&r1, &only_variant(&text, 1));
    assert!(!std::fs::read_to_string(&r1).unwrap().contains(" r_0"));
    let a = executed_lines(&w.join("hand/b0"), &r0, &lib);
    let b = executed_lines(&w.join("hand/b1"), &r1, &lib);
    let hand: BTreeSet<String> = a.symmetric_difference(&b).cloned().collect();
    assert!(!hand.is_empty(), "the two variants run the same lines");

    let run = format!("g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {{test}} -o t && ./t");
    let lib_s = lib.to_string_lossy();
    let out = mfppr(
        w,
        &[
            "cover",
            "find",
            "--suite",
            "suite",
            "--fuzz",
            "fuzz",
            "--source-root",
            &lib_s,
            "--include",
            r"iset\.h$",
            "--corpus",
            "corpus",
            "--run",
            &run,
            "--cxxflags",
            FLAGS,
            "--metamorphic",
            "--out",
            "out",
            "-j",
            "2",
            "-q",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("out/metamorphic.json")).unwrap()).unwrap();
    let analysis = &json[0]["analysis"];
    assert_eq!(analysis["pairs"].as_array().unwrap().len(), 1, "{json:#}");
    assert_eq!(analysis["pairs"][0]["pair"], "r_0/r_1");
    let got: BTreeSet<String> = analysis["pairs"][0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, hand, "mfppr's MC differs from the hand-built one");

    // Each reached point is judged by the hand-made MC of iset.h.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("out/summary.json")).unwrap()).unwrap();
    let (mut metamorphic, mut executed_only) = (0, 0);
    for p in summary["points"].as_array().unwrap() {
        let Some(verdict) = p["metamorphic"].as_str() else {
            assert!(p["source_test"].is_null(), "reached but not judged: {p}");
            continue;
        };
        let in_mc = p["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| hand.contains(&format!("{}:{}", p["file"].as_str().unwrap(), l)));
        if in_mc {
            metamorphic += 1;
            assert_eq!(verdict, "metamorphic (pair r_0/r_1)", "{p}");
        } else {
            executed_only += 1;
            assert_eq!(verdict, "executed only", "{p}");
        }
    }
    // The fixture test shows both kinds.
    assert!(metamorphic > 0 && executed_only > 0, "{stdout}");
    assert_eq!(summary["metamorphic"], metamorphic);
    let last = stdout.lines().last().unwrap();
    assert!(
        last.starts_with("cover: ") && last.ends_with(&format!(", {metamorphic} metamorphic")),
        "{last}"
    );
    assert!(stdout.contains("METAMORPHIC"), "{stdout}");
}

const TINY_LIB: &str = r#"#pragma once
#include <cstdlib>
namespace metalib { namespace checks {
inline void check_equal(int a, int b) { if (a != b) std::exit(1); }
} }
inline int twice(int x) {
  if (x < 0)
    return -2 * -x;
  return 2 * x;
}
inline int failing(int x) {
  if (x > 3)
    std::exit(3);
  return x;
}
inline int aborting(int x) {
  if (x > 3)
    std::abort();
  return x;
}
"#;

const TINY_TEST: &str = r#"#include "tiny.h"
int main() {
    int output_var_0 = 5;

// Meta test 0
int r_0 = twice(output_var_0);

// Meta test 1
int r_1 = failing(output_var_0);
metalib::checks::check_equal(r_1, r_0);

// Meta test 2
int r_2 = aborting(output_var_0);
metalib::checks::check_equal(r_2, r_0);

return 0;
}
"#;

fn tiny_options(lib: &Path) -> VerifyOptions {
    VerifyOptions {
        command: default_command("g++", FLAGS, &[], lib),
        gcov: "gcov".into(),
        source_root: lib.to_path_buf(),
        timeout: Duration::from_secs(60),
        objdirs: Vec::new(),
        env: Vec::new(),
    }
}

#[test]
fn a_variant_failing_alone_counts_one_aborting_alone_is_left_out_with_a_note() {
    if !require_tools(&["g++", "gcov"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let lib = d.path().join("lib");
    write(&lib.join("tiny.h"), TINY_LIB);
    let test = d.path().join("t.cpp");
    write(&test, TINY_TEST);
    let work: PathBuf = d.path().join("mc");
    std::fs::create_dir_all(&work).unwrap();
    let mc = analyse(&test, &work, &tiny_options(&lib)).unwrap();
    assert_eq!(mc.variants.len(), 3);
    assert!(
        mc.variants[1].note.contains("failed alone"),
        "{:?}",
        mc.variants[1]
    );
    assert!(mc.variants[1].executed > 0);
    assert_eq!(mc.variants[2].executed, 0);
    assert_eq!(mc.pairs.len(), 1, "{mc:?}");
    assert_eq!(mc.pairs[0].pair, "r_0/r_1");
    // r_0 runs twice (lines 7 and 9 of tiny.h), r_1 runs failing up to exit (12, 13).
    let lines: BTreeSet<&str> = mc.pairs[0].lines.iter().map(String::as_str).collect();
    assert!(
        lines.contains("tiny.h:9") && lines.contains("tiny.h:13"),
        "{lines:?}"
    );
    assert!(
        mc.notes
            .iter()
            .any(|n| n.contains("pair r_0/r_2 left out") && n.contains(".gcda")),
        "{:?}",
        mc.notes
    );
}

#[test]
fn a_single_variant_test_has_an_empty_mc_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    let lib = d.path().join("lib");
    write(&lib.join("tiny.h"), TINY_LIB);
    let test = d.path().join("t.cpp");
    write(&test, &only_variant(TINY_TEST, 0));
    // No pair: nothing is built, so no tool is needed.
    let mc = analyse(&test, d.path(), &tiny_options(&lib)).unwrap();
    assert!(mc.pairs.is_empty() && mc.variants.is_empty() && mc.mc_lines == 0);
    assert_eq!(mc.notes, ["1 variant(s), no checked pair: MC is empty"]);
}
