//! `mfppr inspect` through the binary: golden JSON reports for fixture tests
//! (`tests/golden/inspect/*.json`, `MFPPR_BLESS=1` rewrites them) and one-line errors on bad input.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{assert_golden, bin, root};

fn inspect(args: &[&str], file: &Path) -> Output {
    Command::new(bin())
        .arg("inspect")
        .arg(file)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

#[test]
fn json_reports_of_fixture_tests_match_their_goldens() {
    for name in ["iset_pass_tiny", "iset_merge_small_a", "iset_bound_small_b"] {
        let file = root().join("fixtures/tests").join(format!("{name}.cpp"));
        let out = inspect(&["--json", "-I", "fixtures/iset/spec"], &file);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The file name is printed as given; make it stable.
        let canonical = root().canonicalize().unwrap();
        let text = String::from_utf8(out.stdout)
            .unwrap()
            .replace(&canonical.display().to_string(), "<repo>")
            .replace(&root().display().to_string(), "<repo>");
        let golden = root()
            .join("tests/golden/inspect")
            .join(format!("{name}.json"));
        assert_golden(&golden, text.as_bytes());
    }
}

#[test]
fn the_summary_shows_variants_chains_regions_and_opportunities() {
    let file = root().join("fixtures/tests/iset_pass_tiny.cpp");
    let out = inspect(&["-I", "fixtures/iset/spec"], &file);
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "variant r_0 (reference)",
        "└ subtract_by_unite_0_4  [relations::subtract]",
        "└ subtract_by_unite_0_6  [relations::subtract]",
        "set_term_14",
        "opportunities:",
        "check    metalib::checks::check_card",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

/// Bad input: one `error:` line naming what is missing, exit 1, never a panic.
fn assert_one_line_error(bytes: &[u8], expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.cpp");
    std::fs::write(&file, bytes).unwrap();
    let out = inspect(&[], &file);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(expect), "{expect:?} in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_inputs_get_one_line_errors() {
    assert_one_line_error(b"", "empty");
    assert_one_line_error(b"\x00\xff\xfe\x01binary\x80", "not UTF-8");
    assert_one_line_error(b"this is not C++ at all", "no `main`");
    assert_one_line_error(b"int f() { return 1; }\n", "no `main`");
    assert_one_line_error(
        b"int main() { int x = 1; return x; }\n",
        "no metamorphic variants",
    );
    assert_one_line_error(
        b"int main() {\n// Meta test 0\nint r_0 = f(1);\n{\n",
        "the `{` at line 1 is never closed",
    );
    // The imbalance is named where it starts, not at the end of the file.
    assert_one_line_error(
        b"int g() {\n  return 1;\n\nint f(int x) {\n  // }\n  return x; /* { */\n}\n\
          int main() {\n// Meta test 0\nint r_0 = f(1);\n}\n",
        "the `{` at line 1 is never closed",
    );
    assert_one_line_error(
        b"int f(int x) {\n  return x;\n}\n}\nint main() {\n// Meta test 0\nint r_0 = f(1);\n}\n",
        "the `}` at line 4 closes nothing",
    );
    assert_one_line_error(b"int main() {\n// Meta test 1\nint r_1 = f(1);\n}\n", "r_0");
}

#[test]
fn unreadable_paths_and_missing_spec_headers_are_errors() {
    let out = inspect(&[], Path::new("/nonexistent/t.cpp"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("cannot read /nonexistent/t.cpp"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.cpp");
    std::fs::copy(root().join("fixtures/tests/iset_pass_tiny.cpp"), &file).unwrap();
    let out = inspect(&["-I", dir.path().to_str().unwrap()], &file);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("meta_spec_iset.hpp"),
        "names a missing header: {err}"
    );
    let out = inspect(&["-I", "/nonexistent-dir"], &file);
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent-dir"));
}

#[test]
fn a_ten_megabyte_test_is_read() {
    // 10 MB of transplanted instances, each called once, plus a small main.
    let mut text = String::from("#include <cassert>\n");
    let mut n = 0;
    while text.len() < 10_000_000 {
        let callee = if n == 0 {
            "metalib::relations::id::base(c, a)".to_string()
        } else {
            format!("id_chain_0_{}(c, a)", n - 1)
        };
        text.push_str(&format!(
            "    fuzz::T\n    id_chain_0_{n}(fuzz::C c, fuzz::T a)\n    {{\n        a = {callee};\n        return a;\n    }}\n"
        ));
        n += 1;
    }
    text.push_str(&format!(
        "int\nmain()\n{{\n    fuzz::C fctx;\n    fuzz::T output_var_0;\n\n// Meta test 0\nclass fuzz::T r_0 = id_chain_0_{}(fctx, output_var_0);\n\n// Meta test 1\nclass fuzz::T r_1 = metalib::relations::id::base(fctx, output_var_0);\nmetalib::checks::check_eq(r_1, r_0);\n}}\n",
        n - 1
    ));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.cpp");
    std::fs::write(&file, &text).unwrap();
    let out = inspect(&["--json"], &file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["instances"], n);
    assert_eq!(report["summary"]["instance_to_instance_calls"], n - 1);
}

/// The README's exit-code table is the one `--help` prints (one source: `error::EXIT_CODES`).
#[test]
fn readme_exit_codes_match_help() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    assert!(
        readme.contains(&mfppr::cli::exit_codes_markdown()),
        "README.md's exit-code table differs from error::EXIT_CODES:\n{}",
        mfppr::cli::exit_codes_markdown()
    );
    let help = common::mfppr(&common::root(), &["reduce", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains(&mfppr::error::exit_codes_help()));
}
