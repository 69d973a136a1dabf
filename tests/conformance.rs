//! Conformance with real MF++ output: `inspect --json` must agree with the structure manifests of
//! `../shared/mfpp-corpus/` and of the bundled fixture corpus. It skips (with a message) what is
//! absent (fails under `MFPPR_REQUIRE_TOOLS=1`); never copies the shared files into the repository.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, root, shared};
use serde_json::Value;

const FIELDS: [&str; 10] = [
    "variants",
    "steps_per_variant",
    "checks_per_variant",
    "instances",
    "instances_per_variant",
    "instance_to_instance_calls",
    "step_to_instance_calls",
    "fuzz_regions",
    "fuzz_regions_in_main",
    "input_blocks",
];

fn inspect(file: &Path, includes: &[PathBuf]) -> Value {
    let mut cmd = Command::new(bin());
    cmd.arg("inspect").arg(file).arg("--json");
    for i in includes {
        cmd.arg("-I").arg(i);
    }
    let out = cmd.output().expect("run mfppr");
    assert!(
        out.status.success(),
        "inspect {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON")
}

/// Compare every manifest entry with `inspect --json`; returns the mismatches.
fn check_manifest(dir: &Path, includes: &[PathBuf]) -> Vec<String> {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("manifest is JSON");
    let entries = manifest
        .as_array()
        .cloned()
        .or_else(|| manifest.get("tests").and_then(|t| t.as_array()).cloned())
        .expect("manifest is a list of files");
    let mut problems = Vec::new();
    for entry in &entries {
        let file = entry["file"].as_str().expect("file name");
        let report = inspect(&dir.join(file), includes);
        for field in FIELDS {
            let Some(expected) = entry.get(field) else {
                continue;
            };
            let got = &report["summary"][field];
            if got != expected {
                problems.push(format!("{file}: {field}: expected {expected}, got {got}"));
            }
        }
    }
    assert!(!entries.is_empty(), "empty manifest in {}", dir.display());
    problems
}

#[test]
fn agrees_with_the_real_mfpp_corpus_manifest() {
    let Some(dir) = shared("mfpp-corpus") else {
        return;
    };
    let problems = check_manifest(&dir, &[]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn reads_the_shared_bigint_examples() {
    let Some(dir) = shared("examples") else {
        return;
    };
    let spec = dir.join("bigint-spec");
    let r = inspect(&dir.join("t_bigint_452.cpp"), std::slice::from_ref(&spec));
    assert_eq!(r["summary"]["variants"], 3);
    assert_eq!(r["summary"]["instances"], 11);
    assert_eq!(r["summary"]["instance_to_instance_calls"], 6);
    assert_eq!(r["summary"]["fuzz_regions"], 2);
    assert_eq!(r["summary"]["input_blocks"], 2);
    let fams: Vec<&str> = r["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["family"].as_str().unwrap_or("?"))
        .collect();
    assert!(!fams.contains(&"?"), "every family resolved: {fams:?}");
    let fz = inspect(&dir.join("t_bigint_fz_4.cpp"), &[spec]);
    let in_instances = fz["fuzz_regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["function"] != "main")
        .count();
    assert!(in_instances >= 1, "a region inside an instance");
}

#[test]
fn agrees_with_the_fixture_manifest() {
    let dir = root().join("fixtures/tests");
    assert!(
        dir.join("manifest.json").is_file(),
        "fixtures/tests/manifest.json is part of the repository"
    );
    let problems = check_manifest(&dir, &[root().join("fixtures/iset/spec")]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
