//! The default oracle of `cover find --reduce`: `interestingness/coverage-marker.py` and the
//! `_mfppr_check.py` it imports, compiled into the binary and written to a private temporary
//! directory when a reduction needs them, so an installed `mfppr` works without its repository.
//! For a metamorphic point the oracle also calls this binary back (`MFPPR_EXE`, `mfppr cover
//! isolate`) to split each candidate into its two sides.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// `interestingness/coverage-marker.py`.
const COVERAGE_MARKER: &str = include_str!("../../../interestingness/coverage-marker.py");
/// `interestingness/_mfppr_check.py`, imported from the script's own directory.
const CHECK_HELPERS: &str = include_str!("../../../interestingness/_mfppr_check.py");

/// The embedded scripts on disk; the directory is removed when this is dropped.
#[derive(Debug)]
pub struct DefaultCheck {
    dir: tempfile::TempDir,
}

impl DefaultCheck {
    /// Write both scripts (the oracle executable) into a new temporary directory.
    pub fn write() -> Result<DefaultCheck> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("mfppr-oracle-")
            .tempdir()
            .context("cannot create a temporary directory for the coverage oracle; check TMPDIR")?;
        for (name, text, mode) in [
            ("coverage-marker.py", COVERAGE_MARKER, 0o755),
            ("_mfppr_check.py", CHECK_HELPERS, 0o644),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text)
                .and_then(|()| {
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                })
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(DefaultCheck { dir })
    }

    /// The oracle script.
    pub fn script(&self) -> PathBuf {
        self.dir.path().join("coverage-marker.py")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_oracle_runs_and_finds_its_helpers() {
        let check = DefaultCheck::write().unwrap();
        let script = check.script();
        let dir = script.parent().unwrap().to_path_buf();
        assert_eq!(std::fs::read_to_string(&script).unwrap(), COVERAGE_MARKER);
        if !crate::tools::available("python3") {
            return;
        }
        // Without MARKER_ID the oracle says so and exits 2: it imported _mfppr_check.py.
        let cwd = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(&script)
            .arg(cwd.path().join("t.cpp"))
            .current_dir(cwd.path())
            .env_remove("MARKER_ID")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("MARKER_ID is required"));
        drop(check);
        assert!(!dir.exists(), "the directory goes with the value");
    }
}
