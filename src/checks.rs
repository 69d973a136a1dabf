//! The built-in checks, and the one place a `--check` argument becomes a script to run.
//!
//! The scripts of `interestingness/` (and `_mfppr_check.py`, which they import from their own
//! directory) are compiled into the binary, so an installed `mfppr` needs no repository:
//! `--check builtin:NAME` names one of [`BUILTINS`]. [`resolve`] writes all of them, once per
//! run, into a private temporary directory, which goes when the returned [`Check`] is dropped (on
//! every path: errors and Ctrl-C end a run by returning, so the drop runs). Any other `--check`
//! is a path, used as given.
//!
//! A built-in check is the same script as its file in `interestingness/`, byte for byte, so it
//! gives the same verdicts; its temporary path never reaches a result: what is shown (progress,
//! the reproduction command) and what a task file of `batch emit` holds is
//! `builtin:NAME` ([`builtin_at`]), which the process running the task resolves itself.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

use crate::error::{coded, ExitKind};

/// How `--check` names a built-in check: `builtin:NAME`.
pub const PREFIX: &str = "builtin:";

/// One script compiled into the binary.
#[derive(Debug)]
pub struct Builtin {
    /// The name after `builtin:`.
    pub name: &'static str,
    /// Its file name in `interestingness/` (and in the directory it is written to).
    pub file: &'static str,
    /// The script.
    pub text: &'static str,
}

impl Builtin {
    /// The first line of the script's docstring, after its file name: what it checks.
    pub fn summary(&self) -> &'static str {
        self.text
            .lines()
            .find_map(|l| l.strip_prefix("\"\"\""))
            .map(|l| l.split_once(" — ").map_or(l, |(_, rest)| rest))
            .unwrap_or("")
            .trim()
    }
}

/// The built-in check `$name`, the script `interestingness/$file` built into the binary.
macro_rules! builtin {
    ($name:literal, $file:literal) => {
        Builtin {
            name: $name,
            file: $file,
            text: include_str!(concat!("../interestingness/", $file)),
        }
    };
}

/// Every built-in check, in the order `mfppr checks list` shows them.
pub const BUILTINS: &[Builtin] = &[
    builtin!("failure", "check-failure.py"),
    builtin!("crash", "crash.py"),
    builtin!("hang", "hang.py"),
    builtin!("same-exit", "same-exit.py"),
    builtin!("coverage-marker", "coverage-marker.py"),
];

/// The helpers every built-in check imports from its own directory.
pub const HELPER: Builtin = builtin!("_mfppr_check", "_mfppr_check.py");

/// The directories of the built-in checks written by this process and not yet removed (their
/// canonical paths), so that a script path can be told to be a built-in one ([`builtin_at`]).
static WRITTEN: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The built-in check `name` (without `builtin:`); the error lists every name.
pub fn find(name: &str) -> anyhow::Result<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name).ok_or_else(|| {
        coded(
            ExitKind::Usage,
            format!(
                "there is no built-in check {name:?}; the built-in checks are {} (`mfppr checks \
                 list` describes them)",
                names()
            ),
        )
    })
}

/// Every built-in name as `builtin:NAME`, comma-separated.
fn names() -> String {
    BUILTINS
        .iter()
        .map(|b| format!("{PREFIX}{}", b.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `--check` resolved to a script on disk; a built-in one lives while this value does.
#[derive(Debug)]
pub struct Check {
    script: PathBuf,
    builtin: Option<&'static Builtin>,
    _dir: Option<Written>,
}

impl Check {
    /// The script to run.
    pub fn script(&self) -> &Path {
        &self.script
    }

    /// The built-in check this is, if it is one.
    pub fn builtin(&self) -> Option<&'static Builtin> {
        self.builtin
    }
}

/// A private directory holding every built-in check and the helper; removed on drop.
#[derive(Debug)]
struct Written {
    dir: tempfile::TempDir,
    canonical: PathBuf,
}

impl Drop for Written {
    fn drop(&mut self) {
        lock_written().retain(|d| d != &self.canonical);
    }
}

fn lock_written() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    WRITTEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The script a `--check` argument names: `builtin:NAME` is written (with every other built-in
/// check and the helper) to a private temporary directory, anything else is a path, as given
/// (its checks come when the oracle is made).
pub fn resolve(arg: &Path) -> anyhow::Result<Check> {
    let Some(name) = arg.to_str().and_then(|s| s.strip_prefix(PREFIX)) else {
        return Ok(Check {
            script: arg.to_path_buf(),
            builtin: None,
            _dir: None,
        });
    };
    let builtin = find(name)?;
    let written = write_private()?;
    Ok(Check {
        script: written.dir.path().join(builtin.file),
        builtin: Some(builtin),
        _dir: Some(written),
    })
}

/// Write every script into a new private temporary directory.
fn write_private() -> anyhow::Result<Written> {
    let dir = tempfile::Builder::new()
        .prefix("mfppr-checks-")
        .tempdir()
        .context("cannot create a temporary directory for the built-in checks; check TMPDIR")?;
    write_all(dir.path(), true)?;
    let canonical = std::fs::canonicalize(dir.path())
        .with_context(|| format!("cannot resolve the path of {}", dir.path().display()))?;
    lock_written().push(canonical.clone());
    Ok(Written { dir, canonical })
}

/// Write every built-in check (executable) and the helper into `dir`, which must exist; an
/// existing file is an error unless `force`. Returns the paths written.
pub fn write_all(dir: &Path, force: bool) -> anyhow::Result<Vec<PathBuf>> {
    let all: Vec<(&Builtin, u32)> = BUILTINS
        .iter()
        .map(|b| (b, 0o755))
        .chain([(&HELPER, 0o644)])
        .collect();
    // Every name is checked before the first is written, so a refusal writes nothing.
    for (b, _) in &all {
        crate::atomic::may_create(&dir.join(b.file), force)
            .map_err(|e| coded(ExitKind::Input, format!("{e:#}")))?;
    }
    let mut written = Vec::new();
    for (b, mode) in all {
        let path = dir.join(b.file);
        crate::atomic::create_file(&path, b.text.as_bytes(), mode, force).map_err(|e| {
            coded(
                ExitKind::Input,
                format!(
                    "cannot write {}: {e:#}; check the directory",
                    path.display()
                ),
            )
        })?;
        written.push(path);
    }
    Ok(written)
}

/// The built-in check `script` is, when it lies in a directory [`resolve`] wrote and that is
/// still there: what shows it and what task files name instead of its temporary path.
pub fn builtin_at(script: &Path) -> Option<&'static Builtin> {
    let dir = std::fs::canonicalize(script.parent()?).ok()?;
    if !lock_written().contains(&dir) {
        return None;
    }
    let file = script.file_name()?;
    BUILTINS.iter().find(|b| file == b.file)
}

/// How `script` is shown to the user: `builtin:NAME` for a built-in check, else its path.
pub fn shown(script: &Path) -> String {
    match builtin_at(script) {
        Some(b) => format!("{PREFIX}{}", b.name),
        None => script.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_its_file_in_interestingness_and_has_a_summary() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("interestingness");
        for b in BUILTINS.iter().chain([&HELPER]) {
            assert_eq!(std::fs::read_to_string(root.join(b.file)).unwrap(), b.text);
        }
        for b in BUILTINS {
            assert!(
                !b.summary().is_empty() && !b.summary().contains(".py"),
                "{b:?}"
            );
        }
        assert_eq!(
            find("failure").unwrap().summary(),
            "interesting iff the test compiles and a metamorphic check fails."
        );
    }

    #[test]
    fn resolve_writes_builtins_privately_and_removes_them() {
        let check = resolve(Path::new("builtin:crash")).unwrap();
        let script = check.script().to_path_buf();
        let dir = script.parent().unwrap().to_path_buf();
        assert_eq!(
            std::fs::read_to_string(&script).unwrap(),
            find("crash").unwrap().text
        );
        assert!(dir.join(HELPER.file).is_file());
        assert_eq!(builtin_at(&script).map(|b| b.name), Some("crash"));
        assert_eq!(shown(&script), "builtin:crash");
        drop(check);
        assert!(!dir.exists(), "the directory goes with the value");
        assert!(builtin_at(&script).is_none());
        let path = resolve(Path::new("interestingness/crash.py")).unwrap();
        assert_eq!(path.script(), Path::new("interestingness/crash.py"));
        assert!(path.builtin().is_none() && builtin_at(path.script()).is_none());
    }

    #[test]
    fn an_unknown_name_lists_the_builtin_ones() {
        let err = resolve(Path::new("builtin:nope")).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("\"nope\"") && msg.contains("builtin:failure, builtin:crash"));
        assert_eq!(crate::error::exit_kind(&err), ExitKind::Usage);
    }

    #[test]
    fn written_oracle_runs_and_finds_its_helpers() {
        let check = resolve(Path::new("builtin:coverage-marker")).unwrap();
        if !crate::tools::available("python3") {
            return;
        }
        // Without MARKER_ID the oracle says so and exits 2: it imported _mfppr_check.py.
        let cwd = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(check.script())
            .arg(cwd.path().join("t.cpp"))
            .current_dir(cwd.path())
            .env_remove("MARKER_ID")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("MARKER_ID is required"));
    }
}
