//! The value probes' runtime (`src/blame/values/runtime.hpp`) built with the real g++: how it
//! prints a library's values (`<<`, or a `to_str()` member as isl's C++ classes have) and when two
//! values count as the same. Skips without g++ (fails under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

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
    auto check = [](const Set& x, const Set& y) { if (x.s != y.s) std::abort(); };
    std::cout << mfppr_value::shown(a).size() << " " << mfppr_value::shown(Set{"{ [1] }"})
              << " " << mfppr_value::shown(Opaque{1}) << " " << mfppr_value::same(a, a, check)
              << " " << mfppr_value::same(a, b, check) << "\n";
}
"#;

#[test]
fn self_printing_values_are_shown_and_long_ones_compared_whole() {
    if !require_tools(&["g++"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let runtime = root().join("src/blame/values/runtime.hpp");
    std::fs::copy(&runtime, dir.path().join("runtime.hpp")).unwrap();
    let log = dir.path().join("probes.log");
    let source = format!("#define MFPPR_VALUE_LOG \"{}\"\n{PROGRAM}", log.display());
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
    let ran = Command::new(&exe).output().unwrap();
    assert!(ran.status.success());
    // Cut at 200 characters on the log's line; `to_str()` prints; no way to print is "?"; the
    // same value is the same; two values whose first 200 characters agree are compared whole
    // (by the check, which tells them apart).
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "203 { [1] } ? 1 0\n");
}
