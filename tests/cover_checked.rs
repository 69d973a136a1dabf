//! `cover find --reduce`'s suite tests (issue 30) with real g++ and gcov on a tiny library: a
//! line reached only in the shared input gets a regression check that fails when the library is
//! built with that line computing something else (and the reduced test without the check does
//! not); a metamorphically covered line stays metamorphic; two lines whose reductions give one
//! test share one suite test, whose standalone export compiles and fails alike against the library
//! alone; `OUT/tests/INDEX.md` and the last line count them. Also a type
//! with no printer (executed only, said once with the flag to use) and a printer that prints
//! differently from run to run (no check, said so).

mod common;

use std::path::Path;
use std::process::Output;

use common::{mfppr, require_tools, run_ok, write};

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

const SPEC: &str = r#"#pragma once
#include <cstdlib>
#include <unistd.h>
#include "lib.h"
namespace fuzz {
inline void mfr_fuzz_start(const char*) {}
inline void mfr_fuzz_end(const char*) {}
}
namespace metalib {
namespace checks {
inline void check_equal(int a, int b) { if (a != b) std::exit(1); }
}
namespace relations { namespace identity {
inline int base(int a) { return a; }
} }
}
inline int mfr_int() { return -1; }
inline int noisy(int) { return (int) getpid(); }
"#;

const SUITE: &str = r#"#include "lib.h"
int main() { return twice(3) + neg(1) + half(4) == 7 ? 0 : 1; }
"#;

/// Only r_1 runs line 4 (`twice(-1)`); every side runs lines 10 and 11, in the input.
const TEST: &str = r#"#include "spec.h"
int main() {
    fuzz::mfr_fuzz_start("v");
    int v = half(11);
    fuzz::mfr_fuzz_end("v");
    int output_var_0 = v;

// Meta test 0
int r_0 = twice(output_var_0);
r_0 = neg(neg(r_0));

// Meta test 1
int r_1 = neg(output_var_0);
r_1 = neg(twice(r_1)) + twice(-1) + 2;
metalib::checks::check_equal(r_1, r_0);

// Meta test 2
int r_2 = twice(neg(neg(output_var_0)));
metalib::checks::check_equal(r_2, r_0);

return 0;
}
"#;

/// Build `test` with coverage in `dir` against `includes`, run it, gcov it.
fn covered(dir: &Path, test: &Path, includes: &[&Path]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut args: Vec<String> = FLAGS.split(' ').map(String::from).collect();
    args.extend(["-DEXECUTE=1".into(), "--coverage".into()]);
    for d in includes {
        args.extend(["-I".into(), d.to_string_lossy().into_owned()]);
    }
    args.extend([test.to_string_lossy().into_owned(), "-o".into(), "t".into()]);
    run_ok(
        dir,
        "g++",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    run_ok(dir, "./t", &[]);
    let gcdas: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".gcda"))
        .collect();
    let mut args = vec!["--json-format"];
    args.extend(gcdas.iter().map(String::as_str));
    run_ok(dir, "gcov", &args);
}

/// The library, spec, suite and fuzz coverage in `w`; the `--run` command.
fn setup(w: &Path, test: &str) -> String {
    let (lib, spec) = (w.join("lib"), w.join("spec"));
    write(&lib.join("lib.h"), LIB);
    write(&spec.join("spec.h"), SPEC);
    write(&w.join("suite.cpp"), SUITE);
    write(&w.join("corpus/t.cpp"), test);
    covered(&w.join("suite/s"), &w.join("suite.cpp"), &[&lib]);
    covered(&w.join("fuzz/t"), &w.join("corpus/t.cpp"), &[&spec, &lib]);
    format!(
        "g++ {FLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" -I {} {{test}} -o t && ./t",
        spec.display()
    )
}

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
    mfppr(w, &args)
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
    std::fs::create_dir_all(dir).unwrap();
    let mut args: Vec<String> = FLAGS.split(' ').map(String::from).collect();
    args.push("-DEXECUTE=1".into());
    for d in includes {
        args.extend(["-I".into(), d.to_string_lossy().into_owned()]);
    }
    args.extend([test.to_string_lossy().into_owned(), "-o".into(), "t".into()]);
    run_ok(
        dir,
        "g++",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
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
    let run = setup(w, TEST);
    let out = find(
        w,
        &run,
        &["--metamorphic", "--printer", "int:std::to_string({})"],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("out/summary.json")).unwrap()).unwrap();

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
    let run = setup(w, TEST);
    let out = find(w, &run, &["--points", "lib.h:10"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("out/summary.json")).unwrap()).unwrap();
    let p = point(&summary, "lib_h-L10");
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
    let out = find(
        w,
        &run,
        &[
            "--points",
            "lib.h:10",
            "--printer",
            "int:std::to_string(noisy({}))",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("out/summary.json")).unwrap()).unwrap();
    let p = point(&summary, "lib_h-L10");
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
