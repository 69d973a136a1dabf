//! `--verify-gcov`: confirm with real gcov that a reduced test covers its marker's line in the
//! original (marker-free) library.
//!
//! In a fresh directory: build the test with the `--verify-cmd` template (`{test}`, `{exe}`; the
//! default is g++ with `--coverage` against the original sources), run `{exe}`, run
//! `gcov --json-format --stdout` on every `.gcda` written below that directory, and read the count
//! of the marker's line through the normal coverage reader.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::inject::Marker;
use super::load::{normalise, parse_bytes, LoadOptions};
use super::shell;
use crate::oracle::shell_quote;

/// How to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Build command template with `{test}` and `{exe}`; it must write its `.gcda`/`.gcno` files
    /// below the directory of `{exe}` (g++ does with `--coverage -o {exe}`).
    pub command: String,
    /// The gcov program.
    pub gcov: String,
    /// Absolute source root, to key coverage like the markers.
    pub source_root: PathBuf,
    /// Timeout of each step (build, run, gcov).
    pub timeout: Duration,
}

/// The default `--verify-cmd`: `$CXX` (or g++) with `cxxflags`, `-DEXECUTE=1 --coverage` and
/// `-I` for each include directory, then the original source root.
pub fn default_command(
    cxx: &str,
    cxxflags: &str,
    include_dirs: &[PathBuf],
    source_root: &Path,
) -> String {
    let mut cmd = format!("{cxx} {cxxflags} -DEXECUTE=1 --coverage");
    for d in include_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain([source_root])
    {
        cmd.push_str(&format!(" -I {}", shell_quote(&d.to_string_lossy())));
    }
    cmd.push_str(" {test} -o {exe}");
    cmd
}

/// The outcome of verifying one marker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// The marker's line ran at least once.
    pub verified: bool,
    /// Its count (0 when absent).
    pub count: u64,
    /// Why it is not verified (empty when it is).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

fn failed(note: String) -> Verification {
    Verification {
        verified: false,
        count: 0,
        note,
    }
}

/// Build and run `test` with coverage and read the count of `marker`'s line (see module docs).
pub fn verify(test: &Path, marker: &Marker, opts: &VerifyOptions) -> Result<Verification> {
    let dir = tempfile::Builder::new()
        .prefix("mfppr-verify-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!("cannot create a temporary directory: {e}; check TMPDIR"))?;
    let exe = dir.path().join("test-exe");
    let build = shell::expand(
        &opts.command,
        &[
            ("test", &test.to_string_lossy()),
            ("exe", &exe.to_string_lossy()),
        ],
    );
    let run = shell::run(&build, dir.path(), &[], opts.timeout)?;
    if !run.passed() {
        return Ok(failed(format!(
            "build failed ({}): {}; run `{build}` by hand",
            run.describe(),
            run.last_line()
        )));
    }
    let exe_cmd = shell_quote(&exe.to_string_lossy());
    let ran = shell::run(&exe_cmd, dir.path(), &[], opts.timeout)?;
    let mut gcdas = Vec::new();
    for entry in walkdir::WalkDir::new(dir.path()).sort_by_file_name() {
        let entry = entry?;
        if entry.path().extension().is_some_and(|e| e == "gcda") {
            gcdas.push(shell_quote(&entry.path().to_string_lossy()));
        }
    }
    if gcdas.is_empty() {
        return Ok(failed(format!(
            "no .gcda file after running the test ({}); the build command must use --coverage \
             and write its objects below the directory of {{exe}}",
            ran.describe()
        )));
    }
    let gcov_cmd = format!("{} --json-format --stdout {}", opts.gcov, gcdas.join(" "));
    let gcov = shell::run(&gcov_cmd, dir.path(), &[], opts.timeout)?;
    if !gcov.passed() {
        return Ok(failed(format!(
            "gcov failed ({}): {}; check --gcov",
            gcov.describe(),
            gcov.last_line()
        )));
    }
    let raw = parse_bytes(&gcov.stdout, Path::new("gcov --stdout"))?;
    let cov = normalise(
        raw,
        &LoadOptions {
            source_root: Some(opts.source_root.clone()),
        },
    );
    let count = cov
        .files
        .get(&marker.file)
        .and_then(|f| f.lines.get(&marker.line))
        .copied()
        .unwrap_or(0);
    Ok(if count > 0 {
        Verification {
            verified: true,
            count,
            note: String::new(),
        }
    } else {
        failed(format!(
            "gcov counts {}:{} as not executed (test run: {})",
            marker.file,
            marker.line,
            ran.describe()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_command_builds_with_coverage_against_the_originals() {
        let cmd = default_command(
            "g++",
            "-std=c++17 -O0",
            &[PathBuf::from("/inc dir")],
            Path::new("/lib"),
        );
        assert_eq!(
            cmd,
            "g++ -std=c++17 -O0 -DEXECUTE=1 --coverage -I '/inc dir' -I /lib {test} -o {exe}"
        );
    }
}
