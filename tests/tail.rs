//! End-to-end tail passes with real g++ and the bundled `check-failure.py` in differential mode
//! (`REFERENCE_CXXFLAGS` builds without the planted bug, which the candidate must pass). The
//! input is the committed `--no-tail` result of a small fixture (the four kinds' fixpoint,
//! `fixtures/expected/iset_merge_small_a.no-tail.cpp`), so only the last round and the tail run:
//! the tail result is smaller, costs at most a few oracle runs, still fails with the bug, passes
//! with it off (no slip), is still read by `mfppr inspect`, and the stats count the tail kinds.
//! `--no-tail` is checked with a permissive script (no compiler needed). Skips when g++ or
//! python3 is absent (fails under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{bin, require_tools, root, write};
use serde_json::Value;

const NAME: &str = "iset_merge_small_a";
const BUG: &str = "ISET_BUG_MERGE";
const TAIL_KINDS: [&str; 6] = [
    "tail_all",
    "tail_inputs",
    "tail",
    "tail_equivalence",
    "tail_text",
    "tail_tidy",
];

fn spec() -> std::path::PathBuf {
    root().join("fixtures/iset/spec")
}

/// Run the differential check on `file` with the bug flags `cxxflags`; its exit status.
fn check(file: &Path, cxxflags: &str) -> i32 {
    Command::new(root().join("interestingness/check-failure.py"))
        .arg(file)
        .current_dir(file.parent().unwrap())
        .env("MFPPR_INCLUDES", spec())
        .env("CXXFLAGS", cxxflags)
        .env("REFERENCE_CXXFLAGS", "-std=c++17 -w")
        .env("CHECK_NAME", "check_equal")
        .status()
        .expect("run check-failure.py")
        .code()
        .unwrap_or(-1)
}

/// Reduce `input` into `out` with `script` and `extra` flags; the `--stats` JSON.
fn reduce(input: &Path, out: &Path, script: &Path, extra: &[&str]) -> Value {
    let stats = out.with_extension("json");
    let result = common::mfppr_cached()
        .arg("reduce")
        .arg(input)
        .arg("--check")
        .arg(script)
        .args(["-j2", "-q", "-o"])
        .arg(out)
        .arg("--stats")
        .arg(&stats)
        .args(extra)
        .args(["--", "-I"])
        .arg(spec())
        .env("CXXFLAGS", format!("-std=c++17 -w -D{BUG}"))
        .env("REFERENCE_CXXFLAGS", "-std=c++17 -w")
        .env("CHECK_NAME", "check_equal")
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "reduce {extra:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap()
}

fn tail_candidates(stats: &Value) -> u64 {
    TAIL_KINDS
        .iter()
        .map(|k| stats["kinds"][k]["candidates"].as_u64().unwrap())
        .sum()
}

#[test]
fn tail_on_the_fixpoint_is_cheap_smaller_slip_free_and_still_an_mfpp_test() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(format!("{NAME}.cpp"));
    let plain =
        std::fs::read_to_string(root().join(format!("fixtures/expected/{NAME}.no-tail.cpp")))
            .unwrap();
    std::fs::write(&input, &plain).unwrap();
    let tailed = dir.path().join("tail.cpp");
    let stats = reduce(
        &input,
        &tailed,
        &root().join("interestingness/check-failure.py"),
        &[],
    );
    let tail_text = std::fs::read_to_string(&tailed).unwrap();
    assert!(
        tail_text.len() * 5 < plain.len() * 4,
        "tail {} bytes, --no-tail {} bytes:\n{tail_text}",
        tail_text.len(),
        plain.len()
    );
    for gone in [
        "mfr_fuzz_start",
        "Template initialisation",
        "argc",
        "class iset::Set",
    ] {
        assert!(!tail_text.contains(gone), "{gone} left:\n{tail_text}");
    }
    // Fails with the bug; the check's own reference build (bug off) must pass: no slip.
    assert_eq!(check(&tailed, &format!("-std=c++17 -w -D{BUG}")), 0);
    // With the bug off in both builds there is nothing to find.
    assert_ne!(check(&tailed, "-std=c++17 -w"), 0, "passes without the bug");

    let inspect = Command::new(bin())
        .arg("inspect")
        .arg(&tailed)
        .arg("--json")
        .arg("-I")
        .arg(spec())
        .output()
        .unwrap();
    assert!(
        inspect.status.success(),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let report: Value = serde_json::from_slice(&inspect.stdout).unwrap();
    let variants = report["variants"].as_array().unwrap();
    assert!(variants.iter().any(|v| v["index"] == 0));
    assert!(variants.len() >= 2);

    // The tail's cost: one candidate for the input deletions, one for every value-preserving
    // edit at once (measured: 2; the --no-tail reduction of this fixture takes 30 runs).
    let accepted: u64 = TAIL_KINDS
        .iter()
        .map(|k| stats["kinds"][k]["accepted"].as_u64().unwrap())
        .sum();
    assert!(accepted > 0);
    assert!(tail_candidates(&stats) <= 3, "{stats}");
    eprintln!(
        "{NAME}: --no-tail {} bytes; tail {} bytes, {} tail candidates, {} oracle calls",
        plain.len(),
        tail_text.len(),
        tail_candidates(&stats),
        stats["oracle_calls"]
    );
}

#[test]
fn no_tail_tries_no_tail_kind() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(format!("{NAME}.cpp"));
    std::fs::copy(
        root().join(format!("fixtures/expected/{NAME}.no-tail.cpp")),
        &input,
    )
    .unwrap();
    // Everything is interesting to this script: whatever the passes offer is taken.
    let script = dir.path().join("always.sh");
    write(&script, "#!/bin/sh\nexit 0\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let off = reduce(&input, &dir.path().join("off.cpp"), &script, &["--no-tail"]);
    assert_eq!(tail_candidates(&off), 0, "{off}");
    let on = reduce(&input, &dir.path().join("on.cpp"), &script, &[]);
    assert!(tail_candidates(&on) > 0, "{on}");
}
