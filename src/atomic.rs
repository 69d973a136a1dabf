//! Atomic file replacement: the result on disk is always either the old or the new text.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader (or a crash, or Ctrl-C) never sees a half-written file.
///
/// Only a regular file is ever replaced: a directory, FIFO, device, socket or symlink at `path`
/// is refused (callers validate their outputs up front, see [`crate::outputs`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.is_file() {
            anyhow::bail!(
                "refusing to replace {}: it is {}, not a regular file",
                path.display(),
                if meta.file_type().is_symlink() {
                    "a symlink"
                } else {
                    crate::outputs::kind_of(&meta.file_type())
                }
            );
        }
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".mfppr-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "cannot create a temporary file in {}; check that the directory is writable",
                dir.display()
            )
        })?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.flush())
        .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
    // tempfile creates 0600 files; results are ordinary source files.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot replace {}: {}; check that the directory is writable",
            path.display(),
            e.error
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.cpp");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        let err = write_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
    }
}
