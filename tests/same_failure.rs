//! End-to-end tests of `SAME_FAILURE=1` in `interestingness/check-failure.py`: a candidate must
//! fail the check *call* the original fails (the same two values compared), not just a check of
//! the same name, so that a campaign's test cannot slip to another bug that fails the same check
//! between other variants. The real script with the real g++. Skips without g++/python3 (fails
//! under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{code_and_stderr, require_tools, root};

/// A test with two checks of one name: `r_1` and `r_2` against `r_0`; the first failing one is
/// `r_{failing}`'s (none when 0).
fn program(failing: u8) -> String {
    format!(
        "#include <cassert>\n\
         namespace metalib {{ namespace checks {{\n\
         void check_equal(int a, int b) {{ assert(a == b); }}\n}} }}\n\
         int main() {{\n  int r_0 = 0;\n  int r_1 = {};\n  int r_2 = {};\n\
         \x20 metalib::checks::check_equal(r_1, r_0);\n\
         \x20 metalib::checks::check_equal(r_2,   r_0);\n}}\n",
        u8::from(failing == 1),
        u8::from(failing == 2)
    )
}

/// Run check-failure.py with `SAME_FAILURE=1` on `candidate`, the original being `original`:
/// its exit code and stderr.
fn check(dir: &Path, original: &str, candidate: &str) -> (i32, String) {
    let orig = dir.join("original.cpp");
    std::fs::write(&orig, original).unwrap();
    let work = tempfile::tempdir_in(dir).unwrap();
    let cand = work.path().join("t.cpp");
    std::fs::write(&cand, candidate).unwrap();
    let out = Command::new("python3")
        .arg(root().join("interestingness/check-failure.py"))
        .arg(&cand)
        .current_dir(work.path())
        .env("TMPDIR", work.path())
        .env("MFPPR_ORIGINAL", &orig)
        .env("MFPPR_ORIGINAL_DIR", dir)
        .env("MFPPR_PCH", "0")
        .env("SAME_FAILURE", "1")
        .env_remove("MFPPR_CACHE_DIR")
        .env_remove("REFERENCE_CXXFLAGS")
        .env_remove("REFERENCE_ENV")
        .env_remove("CXXFLAGS")
        .env_remove("CHECK_NAME")
        .output()
        .unwrap();
    code_and_stderr(&out)
}

#[test]
fn the_candidate_must_fail_the_check_call_the_original_fails() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The original fails check_equal(r_2, r_0); so does the candidate (spaces do not count).
    let (code, err) = check(dir.path(), &program(2), &program(2));
    assert_eq!(code, 0, "{err}");
    // The candidate fails a check of the same name between other values: another failure.
    let (code, err) = check(dir.path(), &program(2), &program(1));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "check check_equal(r_1, r_0), but the original fails with check check_equal(r_2, r_0)"
        ),
        "{err}"
    );
    // A candidate that passes is not interesting; nor is any when the original passes.
    assert_eq!(check(dir.path(), &program(2), &program(0)).0, 1);
    let (code, err) = check(dir.path(), &program(0), &program(2));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the original does not fail"), "{err}");
    // A check call that is not on a line of its own is not named: the check's name decides.
    let inline = program(1).replace(
        "\n  metalib::checks::check_equal(r_2",
        " metalib::checks::check_equal(r_2",
    );
    let (code, err) = check(dir.path(), &program(2), &inline);
    assert_eq!(code, 0, "{err}");
}
