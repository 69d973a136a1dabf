//! What the campaign tests (`batch_cli`, `batch_slurm`) share: the campaign's options and how
//! to read its summary and results.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::root;

/// The campaign's options after the inputs: the check `check` (`interestingness/check-failure.py`
/// or a [`super::memo_check`] of it, so that a test reducing the campaign again judges only what
/// it did not judge before), spec, environment, jobs; grouped by library (blame's signature, which
/// the tests of the journal and explain read; every result is localised by value whatever the
/// grouping).
pub(crate) fn campaign_args(out: &Path, check: &Path) -> Vec<String> {
    let mut args = check_args(check, &root().join("fixtures/iset/spec"));
    args.extend(
        [
            "-o",
            &out.display().to_string(),
            "-j2",
            "--tests-at-once",
            "2",
            "--no-tail",
            "--group-by",
            "library",
        ]
        .map(String::from),
    );
    args
}

/// The check `check` and its spec directory `spec` with the environment of the planted merge
/// bug, as batch options.
pub(crate) fn check_args(check: &Path, spec: &Path) -> Vec<String> {
    let spec = spec.display().to_string();
    vec![
        "--check".into(),
        check.display().to_string(),
        "-I".into(),
        spec.clone(),
        "--env".into(),
        format!("MFPPR_INCLUDES={spec}"),
        "--env".into(),
        "CXXFLAGS=-std=c++17 -w -DISET_BUG_MERGE".into(),
        "--env".into(),
        "REFERENCE_CXXFLAGS=-std=c++17 -w".into(),
    ]
}

/// (signature, members) of every group of the summary, in order.
pub(crate) fn groups(out: &Path) -> Vec<(String, Vec<String>)> {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    summary["groups"]
        .as_array()
        .unwrap()
        .iter()
        .chain(summary["not_reduced"].as_array().unwrap())
        .map(|g| {
            let members = g["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_string())
                .collect();
            (g["signature"].as_str().unwrap().to_string(), members)
        })
        .collect()
}

pub(crate) fn reduced_bytes(out: &Path, stem: &str) -> Vec<u8> {
    std::fs::read(out.join(stem).join(format!("{stem}.reduced.cpp"))).unwrap()
}

/// Copy the campaign tests `stems` (`fixtures/campaign/<stem>.cpp`) into `dir/in`; that directory.
pub(crate) fn copy_tests(dir: &Path, stems: &[&str]) -> PathBuf {
    let inputs = dir.join("in");
    std::fs::create_dir(&inputs).unwrap();
    for t in stems {
        std::fs::copy(
            root().join("fixtures/campaign").join(format!("{t}.cpp")),
            inputs.join(format!("{t}.cpp")),
        )
        .unwrap();
    }
    inputs
}
