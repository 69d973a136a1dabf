//! `cover find --metamorphic` with real g++ and gcov on the fixture iset library (header-only:
//! coverage comes from compiling the test): a differential check of mfppr's metamorphic coverage
//! against single-variant tests cut by hand here (by their `// Meta test` blocks, not by mfppr's
//! spans) and gcov run here, and the reduction of a metamorphic point, whose result gcov (on
//! hand-cut variants) still finds on exactly one side of its pair. On a tiny library of its own:
//! `--find` choosing a larger test whose MC holds a marker over the smallest, which only executes
//! it, and reducing it with the marker kept metamorphic (checked the same way) where a plain
//! reduction of the same test simplifies the input until both sides run it; the oracle of such
//! a reduction on candidates where both sides, neither side, one side or no `r_k` reach the
//! marker; and the bad inputs of the analysis — a variant that fails alone (coverage still read),
//! one that aborts alone (no gcov data: its pair is left out, said so), and a test with a single
//! variant (MC empty, said so).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::{bin, build_test, mfppr, require_tools, root, run_ok, write, SPEC_TEST, TINY_SPEC};
use mfppr::coverage::find::metamorphic::analyse;
use mfppr::coverage::find::verify::{default_command, VerifyOptions};

const FLAGS: &str = "-std=c++17 -O0 -w";

/// `mfppr cover find` in `w` on the coverage in `w/suite` and `w/fuzz` of the library `lib`
/// (`--source-root`), with the tests of `corpus` run by `run` and the fixture's flags, into
/// `out` (`-j 2`); `extra` adds options.
fn cover_find(w: &Path, lib: &str, corpus: &str, run: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "cover",
        "find",
        "--suite",
        "suite",
        "--fuzz",
        "fuzz",
        "--source-root",
        lib,
        "--corpus",
        corpus,
        "--run",
        run,
        "--cxxflags",
        FLAGS,
        "--out",
        out,
        "-j",
        "2",
    ];
    args.extend_from_slice(extra);
    mfppr(w, &args)
}

/// The test's lines without the `// Meta test k` blocks not in `keep` (a block runs to the first
/// blank line or line without `r_`), and without checks when `keep` is not 0.
fn only_variant(text: &str, keep: usize) -> String {
    let mut out = String::new();
    let mut block: Option<usize> = None;
    for line in text.lines() {
        if let Some(k) = line.trim_start().strip_prefix("// Meta test ") {
            block = Some(k.trim().parse().unwrap());
        } else if line.trim().is_empty() || !line.contains("r_") {
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

/// Build `test` with coverage in `dir` (`-I` each of `includes`, then `lib`), run it (any exit
/// status), and read the executed lines of the files under `lib` (as `file:line`, relative to
/// `lib`) from gcov's JSON, also written to `dir/t.gcov.json`.
fn executed_lines(dir: &Path, test: &Path, includes: &[&Path], lib: &Path) -> BTreeSet<String> {
    let all: Vec<&Path> = includes.iter().copied().chain([lib]).collect();
    build_test(dir, test, &all, FLAGS, &["--coverage"]);
    std::process::Command::new("./t")
        .current_dir(dir)
        .output()
        .unwrap();
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
        executed_lines(&w.join(dir), &src, &[], &lib);
    }
    // By hand: the pair (r_0, r_1) of the test, each side alone.
    let r0 = w.join("hand/r0.cpp");
    let r1 = w.join("hand/r1.cpp");
    write(&r0, &only_variant(&text, 0));
    write(&r1, &only_variant(&text, 1));
    assert!(!std::fs::read_to_string(&r1).unwrap().contains(" r_0"));
    let a = executed_lines(&w.join("hand/b0"), &r0, &[], &lib);
    let b = executed_lines(&w.join("hand/b1"), &r1, &[], &lib);
    let hand: BTreeSet<String> = a.symmetric_difference(&b).cloned().collect();
    assert!(!hand.is_empty(), "the two variants run the same lines");

    let run = format!("g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {{test}} -o t && ./t");
    let lib_s = lib.to_string_lossy();
    let out = cover_find(
        w,
        &lib_s,
        "corpus",
        &run,
        "out",
        &["--include", r"iset\.h$", "--metamorphic", "-q"],
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

/// Which sides of the pair `(r_0, r_k)` of `test` run `line` (`file:line` under `lib`), each
/// side cut by hand ([`only_variant`]) into `dir` and built with gcov there.
fn sides_running(
    dir: &Path,
    test: &Path,
    k: usize,
    includes: &[&Path],
    lib: &Path,
    line: &str,
) -> [bool; 2] {
    let text = std::fs::read_to_string(test).unwrap();
    [0, k].map(|side| {
        let cut = dir.join(format!("r{side}/t.cpp"));
        write(&cut, &only_variant(&text, side));
        executed_lines(&dir.join(format!("r{side}")), &cut, includes, lib).contains(line)
    })
}

fn summary_point<'a>(summary: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    summary["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no point {id}: {summary:#}"))
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn on_the_fixture_library_a_metamorphic_point_stays_metamorphic_after_its_reduction() {
    if !require_tools(&["g++", "gcov", "python3"]) {
        return;
    }
    let lib = root().join("fixtures/iset/spec");
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let corpus = w.join("corpus/tiny.cpp");
    std::fs::create_dir_all(corpus.parent().unwrap()).unwrap();
    std::fs::copy(root().join("fixtures/tests/iset_pass_tiny.cpp"), &corpus).unwrap();
    for (dir, src) in [
        ("suite", root().join("fixtures/iset/suite/basic.cpp")),
        ("fuzz", corpus.clone()),
    ] {
        executed_lines(&w.join(dir), &src, &[], &lib);
    }
    let run = format!("g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {{test}} -o t && ./t");
    let lib_s = lib.to_string_lossy();
    // iset.h:226, the early return of `complement`: r_1 of the tiny test runs it, r_0 does not.
    let out = cover_find(
        w,
        &lib_s,
        "corpus",
        &run,
        "out",
        &[
            "--include",
            r"iset\.h$",
            "--points",
            "iset.h:226",
            "--metamorphic",
            "--reduce",
            "--verify-gcov",
            "-q",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = read_json(&w.join("out/summary.json"));
    let p = summary_point(&summary, "iset_h-L226");
    assert_eq!(p["metamorphic"], "metamorphic (pair r_0/r_1)", "{p}");
    assert_eq!(p["mc_pair"], "r_0/r_1");
    assert_eq!(p["mc_kept"], true);
    assert_eq!(p["verified"], true);
    let reduced = w.join("out/iset_h-L226.cpp");
    assert!(p["bytes_after"].as_u64().unwrap() < p["source_test"]["bytes"].as_u64().unwrap());
    assert!(
        stdout.contains("metamorphic (pair r_0/r_1), kept"),
        "{stdout}"
    );
    // gcov on the reduced test's sides, cut by hand: exactly one runs the line.
    let sides = sides_running(&w.join("hand"), &reduced, 1, &[], &lib, "iset.h:226");
    assert!(
        sides[0] != sides[1],
        "sides {sides:?} of\n{}",
        read(&reduced)
    );
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The library: the new lines are `twice`'s negative branch (line 4) and `half`'s odd one (10).
const MC_LIB: &str = r#"#pragma once
inline int twice(int x) {
  if (x < 0)
    return -2 * -x;
  return 2 * x;
}
inline int neg(int x) { return -x; }
inline int half(int x) {
  if (x % 2 != 0)
    return (x - 1) / 2;
  return x / 2;
}
"#;

const MC_SUITE: &str = r#"#include "lib.h"
int main() { return twice(3) + neg(1) + half(4) == 7 ? 0 : 1; }
"#;

/// The smallest test reaching line 4: both sides run it (executed only).
const MC_SMALL: &str = r#"#include "spec.h"
int main() {
    int output_var_0 = -5;

// Meta test 0
int r_0 = twice(output_var_0);

// Meta test 1
int r_1 = twice(output_var_0);
metalib::checks::check_equal(r_1, r_0);

return 0;
}
"#;

/// The tiny library in `w/lib`, its spec in `w/spec`, the corpus in `w/corpus`.
fn mc_library(w: &Path) -> (PathBuf, PathBuf) {
    let (lib, spec) = (w.join("lib"), w.join("spec"));
    write(&lib.join("lib.h"), MC_LIB);
    write(&spec.join("spec.h"), TINY_SPEC);
    write(&w.join("corpus/a_small.cpp"), MC_SMALL);
    write(&w.join("corpus/b_large.cpp"), SPEC_TEST);
    (lib, spec)
}

#[test]
fn find_prefers_a_test_whose_mc_holds_the_marker_and_its_reduction_keeps_it_there() {
    if !require_tools(&["g++", "gcov", "python3"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let (lib, spec) = mc_library(w);
    write(&w.join("suite.cpp"), MC_SUITE);
    executed_lines(&w.join("suite"), &w.join("suite.cpp"), &[], &lib);
    for t in ["a_small", "b_large"] {
        let src = w.join(format!("corpus/{t}.cpp"));
        executed_lines(&w.join("fuzz").join(t), &src, &[&spec], &lib);
    }
    let run = format!(
        "g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" -I {} {{test}} -o t && ./t",
        spec.display()
    );
    let out = cover_find(
        w,
        "lib",
        "corpus",
        &run,
        "out",
        &["-I", "spec", "--metamorphic", "--reduce", "--verify-gcov"],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");

    // Without --metamorphic the smallest test is chosen (find.json)...
    let found = read_json(&w.join("out/find.json"));
    assert_eq!(found["chosen"]["lib_h-L4"]["name"], "a_small.cpp");
    // ...with it, the larger one whose pair r_0/r_1 holds line 4, and why.
    let summary = read_json(&w.join("out/summary.json"));
    let p4 = summary_point(&summary, "lib_h-L4");
    assert_eq!(p4["source_test"]["name"], "b_large.cpp", "{p4}");
    assert_eq!(p4["metamorphic"], "metamorphic (pair r_0/r_1)");
    let why = p4["chosen_because"].as_str().unwrap();
    assert!(
        why.contains("not the smallest") && why.contains("a_small.cpp"),
        "{why}"
    );
    assert!(
        stderr.contains("metamorphic lib_h-L4: b_large.cpp"),
        "{stderr}"
    );
    assert_eq!(p4["mc_kept"], true);
    assert_eq!(p4["verified"], true);
    // Line 10 runs in the input, on every side of every test: executed only.
    let p10 = summary_point(&summary, "lib_h-L10");
    assert_eq!(p10["metamorphic"], "executed only");
    assert!(p10["mc_pair"].is_null() && p10["mc_kept"].is_null());
    assert!(p10["chosen_because"]
        .as_str()
        .unwrap()
        .contains("none of the 1 test(s) reaching it"));
    let last = stdout.lines().last().unwrap();
    assert_eq!(
        last,
        "cover: 2 new lines, 2 reached, 1 tests, 1 checked (1 metamorphic, 0 value), 1 executed only"
    );

    // mfppr's MC of the larger test against one cut and built by hand.
    let large = w.join("corpus/b_large.cpp");
    let text = read(&large);
    let side = |k: usize| {
        let cut = w.join(format!("hand/r{k}.cpp"));
        write(&cut, &only_variant(&text, k));
        executed_lines(&w.join(format!("hand/b{k}")), &cut, &[&spec], &lib)
    };
    let (r0, r1, r2) = (side(0), side(1), side(2));
    let json = read_json(&w.join("out/metamorphic.json"));
    let analysis = &json
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "b_large.cpp")
        .unwrap()["analysis"];
    for (i, hand) in [(0, &r1), (1, &r2)] {
        let got: BTreeSet<String> = analysis["pairs"][i]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
        let want: BTreeSet<String> = r0.symmetric_difference(hand).cloned().collect();
        assert_eq!(got, want, "pair {i}");
    }
    assert!(r1.contains("lib.h:4") && !r0.contains("lib.h:4"));

    // The reduced test still runs line 4 on exactly one side of r_0/r_1 (gcov, cut by hand).
    let reduced = w.join("out/lib_h-L4.cpp");
    let sides = sides_running(&w.join("kept"), &reduced, 1, &[&spec], &lib, "lib.h:4");
    assert!(
        sides[0] != sides[1],
        "sides {sides:?} of\n{}",
        read(&reduced)
    );

    // Without --metamorphic, the same test reduced toward the same marker takes the reducer's
    // simplest input (mfr_int(), -1), with which r_0 runs line 4 too: it is executed only.
    write(&w.join("large/b_large.cpp"), SPEC_TEST);
    let out = cover_find(
        w,
        "lib",
        "large",
        &run,
        "plain",
        &["-I", "spec", "--points", "lib.h:4", "--reduce", "-q"],
    );
    assert!(out.status.success(), "{out:?}");
    let plain = w.join("plain/lib_h-L4.cpp");
    let sides = sides_running(&w.join("lost"), &plain, 1, &[&spec], &lib, "lib.h:4");
    assert_eq!(sides, [true, true], "{}", read(&plain));
}

/// The library with a marker before line 4, as `cover inject` writes it.
const MC_MARKED: &str = r#"#pragma once
#include <cstdio>
inline int twice(int x) {
  if (x < 0)
    { fprintf(stderr, "MFPPR-COV T4 lib.h:4\n"); return -2 * -x; }
  return 2 * x;
}
inline int neg(int x) { return -x; }
"#;

#[test]
fn the_metamorphic_oracle_takes_a_candidate_only_when_one_side_of_the_pair_reaches_the_marker() {
    // Not listed in the help: only the oracle calls it.
    let help = mfppr(Path::new("."), &["cover", "--help"]);
    assert!(!String::from_utf8_lossy(&help.stdout).contains("isolate"));
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    write(&w.join("marked/lib.h"), MC_MARKED);
    write(&w.join("spec/spec.h"), TINY_SPEC);
    let check = mfppr::checks::resolve(Path::new("builtin:coverage-marker")).unwrap();
    let variant = |k: usize, expr: &str| {
        let check = if k == 0 {
            String::new()
        } else {
            format!("metalib::checks::check_equal(r_{k}, r_0);\n")
        };
        format!("// Meta test {k}\nint r_{k} = {expr};\n{check}\n")
    };
    let test = |input: &str, variants: &[&str]| {
        let body: String = variants
            .iter()
            .enumerate()
            .map(|(k, e)| variant(k, e))
            .collect();
        format!(
            "#include \"spec.h\"\nint main() {{\n    int output_var_0 = {input};\n\n{body}return 0;\n}}\n"
        )
    };
    // (test, MC_PAIR, exit status, what the oracle says)
    let cases = [
        (
            test(
                "5",
                &["twice(output_var_0)", "neg(twice(neg(output_var_0)))"],
            ),
            "1",
            0,
            "by r_1 alone",
        ),
        (
            test("-5", &["twice(output_var_0)", "twice(output_var_0)"]),
            "1",
            1,
            "both sides",
        ),
        (
            // Only r_1's check runs it: the whole test reaches it, neither side alone.
            test("5", &["twice(output_var_0)", "twice(output_var_0)"]).replace(
                "check_equal(r_1, r_0)",
                "check_equal(r_1 + twice(-1), r_0 + twice(-1))",
            ),
            "1",
            1,
            "neither side",
        ),
        (
            test(
                "5",
                &["twice(output_var_0)", "neg(twice(neg(output_var_0)))"],
            ),
            "2",
            1,
            "no variant r_2",
        ),
        (
            test(
                "5",
                &["twice(output_var_0)", "neg(twice(neg(output_var_0)))"],
            ),
            "r_1",
            2,
            "MC_PAIR must be",
        ),
    ];
    // The oracle on `text` in `dir`, with `MC_PAIR=pair` when given.
    let judge = |dir: &str, text: &str, pair: Option<&str>| {
        let cwd = w.join(dir);
        let candidate = cwd.join("t.cpp");
        write(&candidate, text);
        let mut cmd = std::process::Command::new(check.script());
        cmd.arg(&candidate)
            .current_dir(&cwd)
            .env("MARKER_ID", "T4")
            .env(
                "MFPPR_INCLUDES",
                format!(
                    "{}:{}",
                    w.join("marked").display(),
                    w.join("spec").display()
                ),
            )
            .env("CXXFLAGS", FLAGS)
            .env_remove("MFPPR_RUN");
        match pair {
            Some(pair) => cmd.env("MC_PAIR", pair).env("MFPPR_EXE", bin()),
            None => cmd.env_remove("MC_PAIR"),
        };
        cmd.output().unwrap()
    };
    for (i, (text, pair, status, says)) in cases.iter().enumerate() {
        let out = judge(&format!("case{i}"), text, Some(pair));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(*status),
            "case {i}: {stderr}\n{text}"
        );
        assert!(stderr.contains(says), "case {i}: {stderr}");
    }
    // Without MC_PAIR the plain oracle takes the candidate both sides reach.
    let out = judge("plain", &cases[1].0, None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
