//! For unit tests only: whether an external tool the test needs is installed. A test skips
//! without it, unless `MFPPR_REQUIRE_TOOLS=1` (set by `.ci/run`) says a skip is a failure. The
//! one place in `src` that reads that variable (`tests/common` is the integration tests' one).

/// Whether `tool --version` runs; panics when it does not and `MFPPR_REQUIRE_TOOLS=1`.
pub(crate) fn available(tool: &str) -> bool {
    let ran = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok();
    assert!(
        ran || std::env::var("MFPPR_REQUIRE_TOOLS").as_deref() != Ok("1"),
        "{tool} is required (MFPPR_REQUIRE_TOOLS=1)"
    );
    if !ran {
        eprintln!("skipping: {tool} is not installed");
    }
    ran
}
