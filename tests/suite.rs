//! Every integration test in one binary: `cargo test --release` links it once, and libtest
//! spreads all of its tests over one pool of threads, so no core idles while a file's last long
//! test finishes (one binary per file left a core idle about a third of the time here).
//! Each module is one file in `tests/`; `common` holds the helpers they share.
//! Run one file's tests with a filter: `cargo test --release --test suite -- reduce_fixtures::`.

mod common;

mod batch_cli;
mod batch_hostile;
mod batch_page;
mod batch_slurm;
mod campaign;
mod checks_cli;
mod conformance;
mod cover_checked;
mod cover_clib;
mod cover_e2e;
mod cover_hostile;
mod cover_html;
mod cover_interrupt;
mod cover_lcov;
mod cover_mc;
mod cover_pipeline;
mod cover_samples;
mod engine_script;
mod engine_search;
mod export;
mod flags;
mod inspect_cli;
mod pch;
mod reader_props;
mod reduce_cli;
mod reduce_fixtures;
mod reference_env;
mod report;
mod safety;
mod same_failure;
mod tail;
mod z3;

/// With `autotests = false`, a file in `tests/` that is not a module here would never run: every
/// one must be.
#[test]
fn every_test_file_is_a_module_of_the_suite() {
    let dir = common::root().join("tests");
    let suite = std::fs::read_to_string(dir.join("suite.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_module =
            path.extension().is_some_and(|e| e == "rs") || path.join("mod.rs").is_file();
        if is_module && stem != "suite" && !suite.contains(&format!("\nmod {stem};\n")) {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/ files not in tests/suite.rs: {missing:?}"
    );
}
