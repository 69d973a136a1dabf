//! `cover find --reduce`'s suite tests (issue 30) with real g++ and gcov. On the fixture library,
//! a `dilate` line that the demo's seed 7 runs only in its input gets a regression check that a
//! build of the library with that line changed fails. On a tiny library: a
//! line reached only in the shared input gets a regression check that fails when the library is
//! built with that line computing something else (and the reduced test without the check does
//! not); a metamorphically covered line stays metamorphic; two lines whose reductions give one
//! test share one suite test, whose standalone export compiles and fails alike against the library
//! alone; `OUT/tests/INDEX.md` and the last line count them. Also a type
//! with no printer (executed only, said once with the flag to use) and a printer that prints
//! differently from run to run (no check, said so).

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{
    bin, build_test, covered_build, require_tools, root, run_ok, write, SPEC_TEST, TINY_SPEC,
};

const FLAGS: &str = "-std=c++17 -O0 -w";

/// New lines: `twice`'s negative branch (4) and `half`'s odd branch (10, 11).
const LIB: &str = r#"#pragma once
inline int twice(int x) {
  if (x < 0)
    return -2 * -x;
  return 2 * x;
}
inline int neg(int x) { return -x; }
inline int half(int x) {
  if (x % 2 != 0) {
    int y = x - 1;
    return y / 2;
  }
  return x / 2;
}
"#;

/// The tiny spec, and a printer whose output changes from run to run.
fn spec_text() -> String {
    TINY_SPEC.replace(
        "#include <cstdlib>\n",
        "#include <cstdlib>\n#include <unistd.h>\n",
    ) + "inline int noisy(int) { return (int) getpid(); }\n"
}

const SUITE: &str = r#"#include "lib.h"
int main() { return twice(3) + neg(1) + half(4) == 7 ? 0 : 1; }
"#;

/// The library, spec, suite and fuzz coverage in `w`; the `--run` command.
fn setup(w: &Path, test: &str) -> String {
    let (lib, spec) = (w.join("lib"), w.join("spec"));
    write(&lib.join("lib.h"), LIB);
    write(&spec.join("spec.h"), &spec_text());
    write(&w.join("suite.cpp"), SUITE);
    write(&w.join("corpus/t.cpp"), test);
    covered_build(&w.join("suite/s"), &w.join("suite.cpp"), &[&lib], FLAGS);
    covered_build(
        &w.join("fuzz/t"),
        &w.join("corpus/t.cpp"),
        &[&spec, &lib],
        FLAGS,
    );
    format!(
        "g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" -I {} {{test}} -o t && ./t",
        spec.display()
    )
}

/// `mfppr cover find … --reduce` on the tiny library in `w`, which must succeed.
fn find(w: &Path, run: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "cover",
        "find",
        "--suite",
        "suite",
        "--fuzz",
        "fuzz",
        "--source-root",
        "lib",
        "--corpus",
        "corpus",
        "--run",
        run,
        "--cxxflags",
        FLAGS,
        "-I",
        "spec",
        "--reduce",
        "--out",
        "out",
        "-j",
        "2",
    ];
    args.extend_from_slice(extra);
    run_ok(w, bin().to_str().unwrap(), &args)
}

fn summary(w: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(w.join("out/summary.json")).unwrap()).unwrap()
}

fn point<'a>(summary: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    summary["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no point {id}: {summary:#}"))
}

/// Build `test` against `includes` in `dir` and run it: its exit status and stderr.
fn build_and_run(dir: &Path, test: &Path, includes: &[&Path]) -> (bool, String) {
    build_test(dir, test, includes, FLAGS, &[]);
    let out = std::process::Command::new("./t")
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn input_lines_get_a_regression_check_that_a_changed_library_fails() {
    if !require_tools(&["g++", "gcov", "python3"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let run = setup(w, SPEC_TEST);
    let out = find(
        w,
        &run,
        &["--metamorphic", "--printer", "int:std::to_string({})"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = summary(w);

    // Line 4 is metamorphic and stays so: a changed r_1 fails the check of r_0/r_1.
    let p4 = point(&summary, "lib_h-L4");
    assert_eq!(p4["check"], "checked (metamorphic, pair r_0/r_1)", "{p4}");
    // Lines 10 and 11 run only in the input: one regression check of `v`, one test for both.
    let (p10, p11) = (point(&summary, "lib_h-L10"), point(&summary, "lib_h-L11"));
    for p in [p10, p11] {
        assert_eq!(
            p["check"], "checked (value): regression check (current behaviour)",
            "{p}"
        );
        assert!(p["check_reason"].as_str().unwrap().contains("half("), "{p}");
    }
    assert_eq!(p10["suite_test"], p11["suite_test"]);
    // The test reduced for line 4 reaches lines 10 and 11 too: they take it as it is, with no
    // second reduction.
    let reduced4 = std::fs::read(w.join("out/lib_h-L4.cpp")).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for id in ["lib_h-L10", "lib_h-L11"] {
        assert_eq!(point(&summary, id)["started_from"], "lib_h-L4");
        assert_eq!(
            std::fs::read(w.join(format!("out/{id}.cpp"))).unwrap(),
            reduced4
        );
        assert!(
            stderr.contains(&format!(
                "reduce {id}: lib_h-L4's reduced test reaches it already; taken as it is"
            )),
            "{stderr}"
        );
    }
    let test10 = std::path::PathBuf::from(p10["suite_test"].as_str().unwrap());
    assert_eq!(test10.parent().unwrap(), w.join("out/tests"));
    let text = std::fs::read_to_string(&test10).unwrap();
    assert!(
        text.contains("assert(std::string(std::to_string(")
            && text.contains("// regression check (current behaviour)"),
        "{text}"
    );
    assert!(
        text.contains("//   lib.h:10 (lib_h-L10): checked (value)"),
        "{text}"
    );
    assert!(
        text.contains("//   lib.h:11 (lib_h-L11): checked (value)"),
        "{text}"
    );

    // The counts: as many tests as distinct files, every reached marker checked.
    let suite = &summary["suite"];
    let files: Vec<String> = std::fs::read_dir(w.join("out/tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".cpp") && !n.ends_with(".standalone.cpp"))
        .collect();
    assert_eq!(suite["tests"].as_u64().unwrap() as usize, files.len());
    assert!(files.len() <= 2, "{files:?}");
    assert_eq!(
        stdout.lines().last().unwrap(),
        format!(
            "cover: 3 new lines, 3 reached, {} tests, 3 checked (1 metamorphic, 2 value), 0 executed only",
            files.len()
        )
    );
    let index = std::fs::read_to_string(w.join("out/tests/INDEX.md")).unwrap();
    assert!(
        index.lines().any(|l| l.contains("lib.h:10, lib.h:11 |")
            && l.contains("checked (value): regression check (current behaviour)")),
        "{index}"
    );

    // Differentially: the library with line 11 computing something else. The suite test fails
    // in its regression check; the reduced test without it passes there; both pass on the
    // library as it is.
    let changed = w.join("changed");
    write(
        &changed.join("lib.h"),
        &LIB.replace("return y / 2;", "return y / 2 + 1;"),
    );
    let (spec, lib) = (w.join("spec"), w.join("lib"));
    let (ok, err) = build_and_run(&w.join("b1"), &test10, &[&spec, &changed]);
    assert!(!ok && err.contains("Assertion"), "{err}");
    let (ok, err) = build_and_run(&w.join("b2"), &test10, &[&spec, &lib]);
    assert!(ok, "{err}");
    // Its standalone export compiles against the library alone, passes there, and its
    // regression check fails on the changed library too.
    let alone = test10.with_file_name(format!(
        "{}.standalone.cpp",
        test10.file_stem().unwrap().to_string_lossy()
    ));
    let text = std::fs::read_to_string(&alone).unwrap();
    assert!(
        !text.contains("spec.h") && text.contains("#include \"lib.h\""),
        "{text}"
    );
    assert!(text.contains("regression check"), "{text}");
    assert!(index.contains(".standalone.cpp"), "{index}");
    let (ok, err) = build_and_run(&w.join("b4"), &alone, &[&lib]);
    assert!(ok, "{err}");
    let (ok, err) = build_and_run(&w.join("b5"), &alone, &[&changed]);
    assert!(!ok && err.contains("Assertion"), "{err}");
    let reduced = w.join("out/lib_h-L11.cpp");
    let (ok, err) = build_and_run(&w.join("b3"), &reduced, &[&spec, &changed]);
    assert!(ok, "the reduced test already checked line 11: {err}");
}

#[test]
fn no_printer_or_a_noisy_printer_leaves_the_line_executed_only_and_says_why() {
    if !require_tools(&["g++", "gcov", "python3"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let run = setup(w, SPEC_TEST);
    let out = find(w, &run, &["--points", "lib.h:10"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let p = point(&summary(w), "lib_h-L10").clone();
    assert_eq!(p["check"], "executed only", "{p}");
    assert!(
        p["check_reason"]
            .as_str()
            .unwrap()
            .contains("no printer for int (declare one: --printer 'int:EXPR')"),
        "{p}"
    );
    assert_eq!(
        stderr.matches("no printer for int, so").count(),
        1,
        "{stderr}"
    );

    // A printer whose output changes from run to run gives no check.
    std::fs::remove_dir_all(w.join("out")).unwrap();
    find(
        w,
        &run,
        &[
            "--points",
            "lib.h:10",
            "--printer",
            "int:std::to_string(noisy({}))",
        ],
    );
    let p = point(&summary(w), "lib_h-L10").clone();
    assert_eq!(p["check"], "executed only", "{p}");
    assert!(
        p["check_reason"]
            .as_str()
            .unwrap()
            .contains("prints differently from run to run"),
        "{p}"
    );
    let text = std::fs::read_to_string(w.join("out/tests/lib_h-L10.cpp")).unwrap();
    assert!(!text.contains("regression check"), "{text}");
}

#[test]
fn on_the_fixture_library_an_input_line_gets_a_regression_check_that_a_changed_build_fails() {
    if !require_tools(&["g++", "gcov", "python3"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let spec = root().join("fixtures/iset/spec");
    // The demo's seed 7: `dilate` runs only in its input, `set_term_11 = iset::dilate(…)`.
    let gen = root().join("scripts/gen-mfpp");
    let template = root().join("fixtures/iset/template_checked_input.cpp");
    std::fs::create_dir_all(w.join("corpus")).unwrap();
    run_ok(
        w,
        "python3",
        &[
            gen.to_str().unwrap(),
            "--spec-dir",
            spec.to_str().unwrap(),
            "--template",
            template.to_str().unwrap(),
            "--inputs",
            "1",
            "--tests",
            "2",
            "--test-size",
            "2",
            "--test-depth",
            "1",
            "--seed",
            "7",
            "-o",
            "corpus/seed-7.cpp",
        ],
    );
    covered_build(
        &w.join("suite/basic"),
        &root().join("fixtures/iset/suite/basic.cpp"),
        &[&spec],
        FLAGS,
    );
    covered_build(
        &w.join("fuzz/seed-7"),
        &w.join("corpus/seed-7.cpp"),
        &[&spec],
        FLAGS,
    );
    let run = format!("g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {{test}} -o t && ./t");
    run_ok(
        w,
        bin().to_str().unwrap(),
        &[
            "cover",
            "find",
            "--suite",
            "suite",
            "--fuzz",
            "fuzz",
            "--source-root",
            spec.to_str().unwrap(),
            "--include",
            "iset\\.h$",
            "--points",
            "iset.h:248",
            "--corpus",
            "corpus",
            "--run",
            &run,
            "--cxxflags",
            FLAGS,
            "--reduce",
            "--printer",
            "fuzz::set_term:iset::to_string({})",
            "--printer",
            "iset::Set:iset::to_string({})",
            "--out",
            "out",
            "-j",
            "2",
        ],
    );
    let summary = summary(w);
    let p = point(&summary, "iset_h-L248");
    assert_eq!(
        p["check"], "checked (value): regression check (current behaviour)",
        "{p}"
    );
    assert!(
        p["check_reason"]
            .as_str()
            .unwrap()
            .contains("iset::dilate("),
        "{p}"
    );
    let test = std::path::PathBuf::from(p["suite_test"].as_str().unwrap());
    // A build of the fixture library where line 248 grows intervals by one more on the right:
    // the suite test fails in its regression check; on the library as it is, it passes.
    let changed = w.join("changed");
    for e in std::fs::read_dir(&spec).unwrap() {
        let e = e.unwrap();
        std::fs::create_dir_all(&changed).unwrap();
        std::fs::copy(e.path(), changed.join(e.file_name())).unwrap();
    }
    let header = std::fs::read_to_string(spec.join("iset.h")).unwrap();
    let line = "v.push_back({iv.lo - (long) r, iv.hi + (long) r});";
    assert!(header.contains(line));
    write(
        &changed.join("iset.h"),
        &header.replace(
            line,
            "v.push_back({iv.lo - (long) r, iv.hi + (long) r + 1});",
        ),
    );
    let (ok, err) = build_and_run(&w.join("b1"), &test, &[&changed]);
    assert!(!ok && err.contains("Assertion"), "{err}");
    let (ok, err) = build_and_run(&w.join("b2"), &test, &[&spec]);
    assert!(ok, "{err}");
}
