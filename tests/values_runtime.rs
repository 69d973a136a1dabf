//! The value probes' runtime (`src/evidence/values/runtime.hpp`) built with the real g++: how it
//! prints a library's values (`<<`, or a `to_str()` member as isl's C++ classes have), when two
//! values count as the same, and that only a failing run compares them (a knockout, none).
//! Skips without g++ (fails under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{require_tools, root};

/// A program that prints what the runtime makes of two long self-printing values that differ
/// only after 200 characters, and of a value it cannot print.
const PROGRAM: &str = r#"
#include <cstdlib>
#include <iostream>
#include "runtime.hpp"
struct Set { std::string s; std::string to_str() const { return s; } };
struct Opaque { int v; };
int main() {
    Set a{std::string(300, 'x') + "a"}, b{std::string(300, 'x') + "b"};
    std::vector<mfppr_value::Check<Set>> checks{
        [](const Set& x, const Set& y) { if (x.s != y.s) std::abort(); }};
    auto fits = [](size_t) { return true; };
    std::cout << mfppr_value::shown(a).size() << " " << mfppr_value::shown(Set{"{ [1] }"})
              << " " << mfppr_value::shown(Opaque{1}) << " "
              << mfppr_value::same(a, a, checks, fits) << " "
              << mfppr_value::same(a, b, checks, fits) << "\n";
}
"#;

/// `program` built with the runtime by g++, logging to `probes.log` in the returned directory;
/// the executable's path.
fn built(program: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = root().join("src/evidence/values/runtime.hpp");
    std::fs::copy(&runtime, dir.path().join("runtime.hpp")).unwrap();
    let log = dir.path().join("probes.log");
    let source = format!("#define MFPPR_VALUE_LOG \"{}\"\n{program}", log.display());
    std::fs::write(dir.path().join("t.cpp"), source).unwrap();
    let exe = dir.path().join("t");
    let built = Command::new("g++")
        .args(["-std=c++17", "-o"])
        .arg(&exe)
        .arg(dir.path().join("t.cpp"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    (dir, exe)
}

#[test]
fn self_printing_values_are_shown_and_long_ones_compared_whole() {
    if !require_tools(&["g++"]) {
        return;
    }
    let (_dir, exe) = built(PROGRAM);
    let ran = Command::new(&exe).output().unwrap();
    assert!(ran.status.success());
    // Cut at 200 characters on the log's line; `to_str()` prints; no way to print is "?"; the
    // same value is the same; two values whose first 200 characters agree are compared whole
    // (by the check, which tells them apart).
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "203 { [1] } ? 1 0\n");
}

/// A program with one probed value (`1`, its other way `2`) kept for a comparison before a check
/// that fails when the program is given an argument.
const FAILING: &str = r#"
#include <cassert>
#include "runtime.hpp"
int main(int argc, char**) {
    int v = mfppr_value::keep(0, 1, std::forward_as_tuple(7), [] { return 2; });
    auto kept = mfppr_value::compare_later<int>([](int x, int y) { assert(x == y); });
    mfppr_value::at_check("check_equal");
    assert(argc == 1);
    return v == 1 ? 0 : 3;
}
"#;

#[test]
fn only_a_failing_run_compares_its_values_and_a_knockout_none() {
    if !require_tools(&["g++"]) {
        return;
    }
    let (dir, exe) = built(FAILING);
    let log = dir.path().join("probes.log");
    let run_with = |exe: &Path, log: &Path, fail: bool, fixes: Option<&str>| {
        let _ = std::fs::remove_file(log);
        let mut cmd = Command::new(exe);
        if fail {
            cmd.arg("fail");
        }
        match fixes {
            Some(f) => cmd.env("MFPPR_VALUE_FIXES", f),
            None => cmd.env_remove("MFPPR_VALUE_FIXES"),
        };
        let status = cmd.output().unwrap().status;
        (status, std::fs::read_to_string(log).unwrap())
    };
    let run = |fail: bool| run_with(&exe, &log, fail, None);
    // The reference run passes: the values are kept, never compared.
    let (status, lines) = run(false);
    assert!(status.success(), "{lines}");
    assert!(
        lines.contains(" kept\n") && !lines.contains(" same "),
        "{lines}"
    );
    // The failing run compares them when its check aborts, after logging the signal (a
    // comparison that crashes again cannot lose the failure).
    let (status, lines) = run(true);
    assert!(!status.success());
    let same = lines
        .find(" same 0 0 1 0\n")
        .unwrap_or_else(|| panic!("{lines}"));
    assert!(same > lines.find(" signal 6\n").unwrap(), "{lines}");
    // A knockout (record 0 by its other way 1, defined in its own text) replaces the value and
    // compares nothing, failing or not.
    let (knocked_dir, knocked) = built(&format!("#define MFPPR_VALUE_FIXES \"0 1\"\n{FAILING}"));
    let knocked_log = knocked_dir.path().join("probes.log");
    let (status, lines) = run_with(&knocked, &knocked_log, false, None);
    assert_eq!(
        status.code(),
        Some(3),
        "the call's value is the other way's: {lines}"
    );
    assert!(lines.contains(" fixed 0 1\n"), "{lines}");
    let (status, lines) = run_with(&knocked, &knocked_log, true, None);
    assert!(!status.success());
    assert!(!lines.contains(" same "), "{lines}");
    // A bundled check that reuses one build passes the text's pairs in the environment: set, even
    // empty, they win over the build's define.
    let (status, lines) = run_with(&exe, &log, false, Some("0 1"));
    assert_eq!(status.code(), Some(3), "{lines}");
    assert!(lines.contains(" fixed 0 1\n"), "{lines}");
    let (status, lines) = run_with(&knocked, &knocked_log, false, Some(""));
    assert!(status.success(), "no knockout: {lines}");
    assert!(!lines.contains(" fixed "), "{lines}");
}
