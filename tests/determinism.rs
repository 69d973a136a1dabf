//! `-j1`, `-j2` and `-j4` give byte-identical results on real fixture tests: the built binary,
//! real g++, the bundled interestingness scripts in differential mode (`REFERENCE_CXXFLAGS`).
//!
//! Skipped with a message when g++ or python3 is missing. About a minute per fixture on 2 cores.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tools_missing() -> Option<&'static str> {
    for tool in ["g++", "python3"] {
        let found = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(tool);
        }
    }
    None
}

/// Reduce fixture `name` with `jobs` and return the result.
fn reduce(dir: &Path, name: &str, script: &str, bug: &str, jobs: usize) -> Vec<u8> {
    let repo = repo();
    let spec = repo.join("fixtures/iset/spec");
    let input = dir.join(name);
    std::fs::copy(repo.join("fixtures/tests").join(name), &input).unwrap();
    let output = dir.join(format!("j{jobs}.cpp"));
    let out = Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .arg("reduce")
        .arg(&input)
        .arg("--check")
        .arg(repo.join("interestingness").join(script))
        .arg("-I")
        .arg(&spec)
        .args(["-j", &jobs.to_string(), "-q", "-o"])
        .arg(&output)
        .env("MFPPR_INCLUDES", &spec)
        .env("CXXFLAGS", format!("-std=c++17 -w -D{bug}"))
        .env("REFERENCE_CXXFLAGS", "-std=c++17 -w")
        .env("CRASH_PATTERN", "out_of_range")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name} -j{jobs}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&output).unwrap()
}

fn same_result_for_every_job_count(name: &str, script: &str, bug: &str) {
    if let Some(tool) = tools_missing() {
        eprintln!("skipped: {tool} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(repo().join("fixtures/tests").join(name)).unwrap();
    let serial = reduce(dir.path(), name, script, bug, 1);
    assert!(serial.len() < original.len(), "{name}: nothing was reduced");
    for jobs in [2, 4] {
        let parallel = reduce(dir.path(), name, script, bug, jobs);
        assert!(
            parallel == serial,
            "{name}: -j{jobs} differs from -j1\n--- -j1\n{}\n--- -j{jobs}\n{}",
            String::from_utf8_lossy(&serial),
            String::from_utf8_lossy(&parallel)
        );
    }
}

#[test]
fn merge_failure_reduces_identically_with_1_2_and_4_jobs() {
    same_result_for_every_job_count(
        "iset_merge_small_a.cpp",
        "check-failure.py",
        "ISET_BUG_MERGE",
    );
}

#[test]
fn subtract_failure_reduces_identically_with_1_2_and_4_jobs() {
    same_result_for_every_job_count(
        "iset_subtract_small_a.cpp",
        "check-failure.py",
        "ISET_BUG_SUBTRACT",
    );
}

#[test]
fn bound_crash_reduces_identically_with_1_2_and_4_jobs() {
    same_result_for_every_job_count("iset_bound_small_b.cpp", "crash.py", "ISET_BUG_BOUND");
}
