//! The probes' runtime (`runtime.hpp`) built with the real g++ and run: how it prints a
//! library's values (`<<`, or a `to_str()` member as isl's C++ classes have), when two values
//! count as the same (the spec's own comparison, issue 62), that a failing comparison is recorded
//! and only a failing run compares (a knockout, none); read back through [`super::probe_log`].
//! Skips without g++ (fails under `MFPPR_REQUIRE_TOOLS=1`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::probe_log::{runs_of, ProcessLog};

/// `program` built with the runtime by g++, logging to `probes.log` in the returned directory;
/// the executable's path.
fn built(program: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("runtime.hpp"), include_str!("runtime.hpp")).unwrap();
    let log = dir.path().join("probes.log");
    let source = format!(
        "#define MFPPR_VALUE_LOG {}\n{program}",
        crate::cpp_text::string_literal(log.as_os_str().as_encoded_bytes()),
    );
    std::fs::write(dir.path().join("t.cpp"), source).unwrap();
    let exe = dir.path().join("t");
    let built = Command::new("g++")
        .args(["-std=c++17", "-w", "-o"])
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

/// A program on the runtime: a term type with two printed forms of one value (`(= 1 0)` and
/// `(= 0 1)`), the spec's comparison of terms (`check_same`, which aborts when they differ)
/// and a check that applies to no term (it fails a term against itself); one probed term call,
/// one probed `int` call (no check compares ints), then a failing check.
const TERMS: &str = r#"
#include <algorithm>
#include "runtime.hpp"
#include <ostream>
struct Term { int a, b; bool flipped; };
std::ostream& operator<<(std::ostream& o, const Term& t) {
    return o << "(= " << (t.flipped ? t.b : t.a) << " " << (t.flipped ? t.a : t.b) << ")";
}
void check_same(const Term& x, const Term& y) {
    if (std::min(x.a, x.b) != std::min(y.a, y.b) || std::max(x.a, x.b) != std::max(y.a, y.b))
        std::abort();
}
void check_never(const Term&, const Term&) { std::abort(); }
int main() {
    auto term = [](int a) {
        Term v{a, 0, false};
        return mfppr_value::keep(0, v, std::forward_as_tuple(a),
            [&] { return Term{a, 0, true}; }, [&] { return Term{a + 1, 0, false}; });
    };
    auto number = [](int a) {
        int v = a;
        return mfppr_value::keep(1, v, std::forward_as_tuple(a), [&] { return a; },
            [&] { return a + 1; });
    };
    Term r = term(1);
    number(3);
    auto kept = mfppr_value::compare_later<Term>(
        [&](const auto& x, const auto& y) { check_same(x, y); },
        [&](const auto& x, const auto& y) { check_never(x, y); });
    mfppr_value::at_check("check_same");
    check_same(r, Term{2, 0, false});
}
"#;

/// The run of [`TERMS`] on the runtime, from its probe log; `None` without g++.
fn ran() -> Option<ProcessLog> {
    if !crate::tools::available("g++") {
        return None;
    }
    let (dir, exe) = built(TERMS);
    let run = Command::new(&exe).output().unwrap();
    assert!(!run.status.success(), "the program's own check fails");
    let log = std::fs::read_to_string(dir.path().join("probes.log")).unwrap();
    let mut runs = runs_of(&log);
    assert_eq!(runs.len(), 1, "the comparisons' children log nothing");
    runs.pop()
}

#[test]
fn two_printed_forms_of_one_value_are_the_same_value_and_a_failing_comparison_is_recorded() {
    let Some(run) = ran() else {
        return;
    };
    assert_eq!(run.values[&(0, 0)], "(= 1 0)");
    assert_eq!(run.values[&(0, 1)], "(= 0 1)");
    // `(= 1 0)` and `(= 0 1)`: one value, by the spec's check (the check that applies to no
    // term tells nothing and is not asked).
    assert_eq!(run.same[&(0, 0, 1)], 1);
    // `check_same` aborts for `(= 2 0)`: recorded as a difference, and the run goes on.
    assert_eq!(run.same[&(0, 0, 2)], 0);
    assert_eq!(run.same[&(0, 1, 2)], 0);
    assert!(
        run.printed.iter().all(|&(seq, _, _)| seq == 1),
        "{:?}",
        run.printed
    );
    // No check compares ints: their printed forms do, and the log says so.
    assert_eq!(run.same[&(1, 0, 1)], 1);
    assert_eq!(run.same[&(1, 0, 2)], 0);
    assert!(run.printed.contains(&(1, 0, 2)));
    assert_eq!(run.signal.as_deref(), Some("6"));
}

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

#[test]
fn self_printing_values_are_shown_and_long_ones_compared_whole() {
    if !crate::tools::available("g++") {
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
    if !crate::tools::available("g++") {
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
