//! Helpers shared by the compiler-driven `cover_*` tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Whether `tool` runs (`tool --version`).
pub(crate) fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// True when every tool runs; otherwise skip (false) with a note, or fail when
/// `MFPPR_REQUIRE_TOOLS` is set (CI must not pass by skipping).
pub(crate) fn tools_or_skip(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("MFPPR_REQUIRE_TOOLS").is_none(),
        "MFPPR_REQUIRE_TOOLS is set but {missing:?} cannot be run"
    );
    eprintln!("skipping: {missing:?} not installed (scripts/setup installs them)");
    false
}

/// Run `cmd` in `dir`, panicking with its output on failure.
pub(crate) fn run_ok(dir: &Path, cmd: &str, args: &[&str]) -> Output {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed in {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run the built `mfppr` with `args` in `dir`.
pub(crate) fn mfppr(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run mfppr")
}

/// Write `text` to `path`, creating its directory.
pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
