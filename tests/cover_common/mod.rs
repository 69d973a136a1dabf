//! Helpers shared by the compiler-driven `cover_*` tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Whether `tool` runs (`tool --version`).
pub fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run `cmd` in `dir`, panicking with its output on failure.
pub fn run_ok(dir: &Path, cmd: &str, args: &[&str]) -> Output {
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
pub fn mfppr(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run mfppr")
}

/// Copy `from` into `to` (created).
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
