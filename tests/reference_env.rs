//! End-to-end tests of `REFERENCE_ENV` in the bundled check scripts: a fault switched on and off
//! by an environment variable (as the LD_PRELOAD shims of `scripts/faults/` are) makes the
//! reference run the candidate's own build again in the changed environment. The real
//! `interestingness/check-failure.py` and `crash.py` with the real g++. Skips without
//! g++/python3 (fails under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

use std::process::Command;

use common::{code_and_stderr, require_tools, root};

/// A test whose check fails exactly when `MFPPR_FAULTS` is not empty; with `always` it fails
/// whatever the environment.
fn program(always: bool) -> String {
    format!(
        "#include <cassert>\n#include <cstdlib>\n\
         namespace metalib {{ namespace checks {{\n\
         void check_equal(int a, int b) {{ assert(a == b); }}\n}} }}\n\
         int main() {{\n  const char* f = std::getenv(\"MFPPR_FAULTS\");\n  \
         metalib::checks::check_equal({}, 0);\n}}\n",
        if always { "1" } else { "f && *f ? 1 : 0" }
    )
}

/// Run `script` on `source` with `MFPPR_FAULTS=on` and `REFERENCE_ENV` when given: its exit
/// code and stderr.
fn check(script: &str, source: &str, reference_env: Option<&str>) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let cand = dir.path().join("t.cpp");
    std::fs::write(&cand, source).unwrap();
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("interestingness").join(script))
        .arg(&cand)
        .current_dir(dir.path())
        .env("TMPDIR", dir.path())
        .env("MFPPR_ORIGINAL_DIR", dir.path())
        .env("MFPPR_FAULTS", "on")
        .env("MFPPR_PCH", "0")
        .env_remove("REFERENCE_CXXFLAGS")
        .env_remove("REFERENCE_ENV")
        .env_remove("CXXFLAGS")
        .env_remove("CHECK_NAME");
    if let Some(words) = reference_env {
        cmd.env("REFERENCE_ENV", words);
    }
    code_and_stderr(&cmd.output().unwrap())
}

#[test]
fn reference_env_switches_the_fault_off_for_the_reference_run() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let faulty = program(false);
    // Without REFERENCE_ENV there is no reference run: the failure alone is interesting.
    assert_eq!(check("check-failure.py", &faulty, None).0, 0);
    // The reference run with the fault off passes: interesting.
    let (code, err) = check("check-failure.py", &faulty, Some("MFPPR_FAULTS="));
    assert_eq!(code, 0, "{err}");
    // The reference run with the fault still on fails: a slip, not interesting.
    let (code, err) = check("check-failure.py", &faulty, Some("MFPPR_FAULTS=still"));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("reference build does not pass"), "{err}");
    // A failure that does not depend on the fault is not the library's: not interesting.
    let (code, err) = check("check-failure.py", &program(true), Some("MFPPR_FAULTS="));
    assert_eq!(code, 1, "{err}");
    // crash.py takes the same variable (the failed assert is SIGABRT).
    assert_eq!(check("crash.py", &faulty, Some("MFPPR_FAULTS=")).0, 0);
    assert_eq!(
        check("crash.py", &program(true), Some("MFPPR_FAULTS=")).0,
        1
    );
}

#[test]
fn a_reference_env_word_without_an_equals_sign_is_a_usage_error() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let (code, err) = check("check-failure.py", &program(false), Some("MFPPR_FAULTS"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("REFERENCE_ENV"), "{err}");
}
