//! End-to-end tail passes with real g++ and the bundled `check-failure.py` in differential mode
//! (`REFERENCE_CXXFLAGS` builds without the planted bug, which the candidate must pass): on one
//! small fixture, the tail result is smaller than `--no-tail`'s, still fails with the bug,
//! passes with it off (no slip), is still read by `mfppr inspect`, and the stats count the
//! tail kinds. Skips when g++ or python3 is absent (fails under `MFPPR_REQUIRE_TOOLS=1`).

mod common;

use std::path::Path;
use std::process::Command;

use common::{bin, require_tools, root};
use serde_json::Value;

const NAME: &str = "iset_merge_small_a";
const BUG: &str = "ISET_BUG_MERGE";

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

/// Reduce the fixture copied to `dir` into `out`, with `extra` flags; the `--stats` JSON.
fn reduce(dir: &Path, out: &Path, extra: &[&str]) -> Value {
    let input = dir.join(format!("{NAME}.cpp"));
    let stats = out.with_extension("json");
    let result = Command::new(bin())
        .arg("reduce")
        .arg(&input)
        .arg("--check")
        .arg(root().join("interestingness/check-failure.py"))
        .arg("-I")
        .arg(spec())
        .args(["-j2", "-q", "-o"])
        .arg(out)
        .arg("--stats")
        .arg(&stats)
        .args(extra)
        .env("MFPPR_INCLUDES", spec())
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

#[test]
fn tail_result_is_smaller_slip_free_and_still_an_mfpp_test() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/tests").join(format!("{NAME}.cpp")),
        dir.path().join(format!("{NAME}.cpp")),
    )
    .unwrap();
    let plain = dir.path().join("no_tail.cpp");
    let tailed = dir.path().join("tail.cpp");
    let plain_stats = reduce(dir.path(), &plain, &["--no-tail"]);
    let tail_stats = reduce(dir.path(), &tailed, &[]);
    let (plain_text, tail_text) = (
        std::fs::read_to_string(&plain).unwrap(),
        std::fs::read_to_string(&tailed).unwrap(),
    );
    assert!(
        tail_text.len() < plain_text.len(),
        "tail {} bytes, --no-tail {} bytes:\n{tail_text}",
        tail_text.len(),
        plain_text.len()
    );
    assert!(
        !tail_text.contains("mfr_fuzz_start"),
        "markers gone:\n{tail_text}"
    );
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

    // Per-kind stats: --no-tail never tries a tail kind; the default accepts some.
    let tail_kinds = ["tail_equivalence", "tail_inputs", "tail_text", "tail_tidy"];
    for k in tail_kinds {
        assert_eq!(
            plain_stats["kinds"][k]["candidates"], 0,
            "{k} with --no-tail"
        );
    }
    let accepted: u64 = tail_kinds
        .iter()
        .map(|k| tail_stats["kinds"][k]["accepted"].as_u64().unwrap())
        .sum();
    assert!(accepted > 0);
    let calls = |s: &Value| s["oracle_calls"].as_u64().unwrap();
    eprintln!(
        "{NAME}: --no-tail {} bytes, {} oracle calls; tail {} bytes, {} oracle calls",
        plain_text.len(),
        calls(&plain_stats),
        tail_text.len(),
        calls(&tail_stats)
    );
}
