//! `--verify-gcov`: confirm with real gcov that a reduced test covers its marker's line in the
//! original (marker-free) library.
//!
//! In a fresh directory: build the test with the `--verify-cmd` template (`{test}`, `{exe}`; the
//! default is g++ with `--coverage` against the original sources), run `{exe}`, run
//! `gcov --json-format --stdout` on every `.gcda` written below that directory, and read the count
//! of the marker's line through the normal coverage reader. Both steps get the `--env`
//! variables.
//!
//! A separately built library (`--gcov-objdir DIR`, the directories of its `.gcno` files): the
//! run gets `GCOV_PREFIX=<fresh dir>/gcda` and `GCOV_PREFIX_STRIP=0` (unless `--env` sets
//! `GCOV_PREFIX`), so the library's counts of this one run land in the fresh directory and the
//! user's build keeps its own `.gcda` files; each `.gcda` gets its `.gcno` copied beside it (from
//! the path it stands for, or by name from the object directories) before gcov reads it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::shell;
use crate::coverage::inject::Marker;
use crate::coverage::model::Coverage;
use crate::coverage::read::load::{normalise, parse_bytes, LoadOptions};
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
    /// Directories of the library's `.gcno` files (`--gcov-objdir`).
    pub objdirs: Vec<PathBuf>,
    /// Extra environment of the build and the run (`--env K=V`).
    pub env: Vec<(String, String)>,
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

/// Copy the `.gcno` of `gcda` beside it when missing: from the path the `.gcda` stands for below
/// `prefix` (`GCOV_PREFIX_STRIP=0`), else the first file of that name in `objdirs`.
fn place_gcno(gcda: &Path, prefix: &Path, objdirs: &[PathBuf]) -> Result<()> {
    let gcno = gcda.with_extension("gcno");
    if gcno.exists() {
        return Ok(());
    }
    let original = gcda
        .strip_prefix(prefix)
        .ok()
        .map(|rel| Path::new("/").join(rel).with_extension("gcno"))
        .filter(|p| p.exists());
    let by_name = || {
        let name = gcno.file_name()?;
        objdirs
            .iter()
            .flat_map(|d| walkdir::WalkDir::new(d).sort_by_file_name())
            .filter_map(|e| e.ok())
            .find(|e| e.file_name() == name)
            .map(|e| e.path().to_path_buf())
    };
    if let Some(from) = original.or_else(by_name) {
        std::fs::copy(&from, &gcno).map_err(|e| {
            anyhow::anyhow!("cannot copy {} to {}: {e}", from.display(), gcno.display())
        })?;
    }
    Ok(())
}

/// What one coverage build and run of a test gave.
#[derive(Clone, Debug)]
pub struct CoveredRun {
    /// The coverage of the source root's files (keyed like the markers), or why there is none.
    pub coverage: std::result::Result<Coverage, String>,
    /// The test's run passed (exit 0, in time).
    pub run_passed: bool,
    /// How the test's run ended, in words.
    pub run: String,
}

/// Build `test` with the verify command, run it and read gcov's counts (see module docs); the
/// counts are read whenever `.gcda` files were written, also after a failing run.
pub fn covered_run(test: &Path, opts: &VerifyOptions) -> Result<CoveredRun> {
    let dir = tempfile::Builder::new()
        .prefix("mfppr-verify-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!("cannot create a temporary directory: {e}; check TMPDIR"))?;
    let exe = dir.path().join("test-exe");
    let env: Vec<(&str, &Path)> = opts
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), Path::new(v)))
        .collect();
    if let Err(why) = build(test, &exe, dir.path(), &env, opts)? {
        return Ok(CoveredRun {
            coverage: Err(why),
            run_passed: false,
            run: "not run".to_string(),
        });
    }
    let prefix = dir.path().join("gcda");
    let user_prefix = opts
        .env
        .iter()
        .find(|(k, _)| k == "GCOV_PREFIX")
        .map(|(_, v)| PathBuf::from(v));
    let mut run_env = env.clone();
    if user_prefix.is_none() && !opts.objdirs.is_empty() {
        run_env.push(("GCOV_PREFIX", prefix.as_path()));
        run_env.push(("GCOV_PREFIX_STRIP", Path::new("0")));
    }
    let exe_cmd = shell_quote(&exe.to_string_lossy());
    let ran = shell::run(&exe_cmd, dir.path(), &run_env, opts.timeout)?;
    let mut roots = vec![dir.path().to_path_buf()];
    roots.extend(user_prefix.clone());
    let prefix_used = user_prefix.as_deref().unwrap_or(&prefix);
    let gcdas = collect_gcdas(&roots, prefix_used, &opts.objdirs)?;
    let coverage = if gcdas.is_empty() {
        Err(format!(
            "no .gcda file after running the test ({}); the build command must use --coverage \
             and write its objects below the directory of {{exe}}, or the library's objects \
             must be in a --gcov-objdir",
            ran.describe()
        ))
    } else {
        read_gcov(&gcdas, dir.path(), opts)?
    };
    Ok(CoveredRun {
        coverage,
        run_passed: ran.passed(),
        run: ran.describe(),
    })
}

/// Build `test` into `exe` with the verify command, in `dir`; `Err` says why it failed.
fn build(
    test: &Path,
    exe: &Path,
    dir: &Path,
    env: &[(&str, &Path)],
    opts: &VerifyOptions,
) -> Result<std::result::Result<(), String>> {
    let build = shell::expand(
        &opts.command,
        &[
            ("test", &test.to_string_lossy()),
            ("exe", &exe.to_string_lossy()),
        ],
    );
    let run = shell::run(&build, dir, env, opts.timeout)?;
    Ok(if run.passed() {
        Ok(())
    } else {
        Err(format!(
            "build failed ({}): {}; run `{build}` by hand",
            run.describe(),
            run.last_line()
        ))
    })
}

/// The `.gcda` files below `roots` (shell-quoted, in name order), each with its `.gcno` put
/// beside it from `objdirs`.
fn collect_gcdas(roots: &[PathBuf], prefix: &Path, objdirs: &[PathBuf]) -> Result<Vec<String>> {
    let mut gcdas = Vec::new();
    for root in roots {
        for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
            let entry = entry?;
            if entry.path().extension().is_some_and(|e| e == "gcda") {
                place_gcno(entry.path(), prefix, objdirs)?;
                gcdas.push(shell_quote(&entry.path().to_string_lossy()));
            }
        }
    }
    Ok(gcdas)
}

/// Run gcov on `gcdas` in `dir` and read its JSON; `Err` says why gcov failed.
fn read_gcov(
    gcdas: &[String],
    dir: &Path,
    opts: &VerifyOptions,
) -> Result<std::result::Result<Coverage, String>> {
    let gcov_cmd = format!("{} --json-format --stdout {}", opts.gcov, gcdas.join(" "));
    let gcov = shell::run(&gcov_cmd, dir, &[], opts.timeout)?;
    if !gcov.passed() {
        return Ok(Err(format!(
            "gcov failed ({}): {}; check --gcov",
            gcov.describe(),
            gcov.last_line()
        )));
    }
    let raw = parse_bytes(&gcov.stdout, Path::new("gcov --stdout"))?;
    Ok(Ok(normalise(
        raw,
        &LoadOptions {
            source_root: Some(opts.source_root.clone()),
        },
    )))
}

/// The count of `marker`'s line in a test's coverage run (see module docs).
pub fn verification(run: &CoveredRun, marker: &Marker) -> Verification {
    let cov = match &run.coverage {
        Ok(cov) => cov,
        Err(note) => return failed(note.clone()),
    };
    let count = cov
        .files
        .get(&marker.file)
        .and_then(|f| f.lines.get(&marker.line))
        .copied()
        .unwrap_or(0);
    if count > 0 {
        Verification {
            verified: true,
            count,
            note: String::new(),
        }
    } else {
        failed(format!(
            "gcov counts {}:{} as not executed (test run: {})",
            marker.file, marker.line, run.run
        ))
    }
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
