//! Atomic file replacement: the file on disk is always either the old or the new text.

use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use anyhow::Context;

/// Prefix of the temporary files of [`write_atomic`] (a crash may leave one; `cover restore`
/// removes them).
pub(crate) const TEMP_PREFIX: &str = ".mfppr-tmp-";

/// Write `bytes` to `path` through a temporary file in the same directory, flushed to disk, given
/// the permissions of the file it replaces (0644 for a new one), then renamed over it, so a reader
/// (or a crash, or Ctrl-C) never sees a half-written file.
///
/// Only a regular file is ever replaced: a directory, FIFO, device, socket or symlink at `path`
/// is refused (callers validate their outputs up front, see [`crate::outputs`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write(path, bytes, false)
}

/// [`write_atomic`] for mfppr's own records (such as `<output>.mfppr-origin`): a symlink at `path`
/// is replaced by the new file, never followed, so a planted link cannot make mfppr write
/// elsewhere.
pub(crate) fn replace_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write(path, bytes, true)
}

fn write(path: &Path, bytes: &[u8], replace_link: bool) -> anyhow::Result<()> {
    let previous = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| !(replace_link && m.file_type().is_symlink()));
    if let Some(meta) = &previous {
        if !meta.is_file() {
            anyhow::bail!(
                "refusing to replace {}: it is {}, not a regular file",
                path.display(),
                if meta.file_type().is_symlink() {
                    "a symlink"
                } else {
                    kind_of(&meta.file_type())
                }
            );
        }
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "cannot create a temporary file in {}; check that the directory is writable",
                dir.display()
            )
        })?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
    // tempfile creates 0600 files; results are ordinary source files.
    let permissions = previous.map(|m| m.permissions()).unwrap_or_else(|| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::Permissions::from_mode(0o644)
    });
    let _ = tmp.as_file().set_permissions(permissions);
    tmp.persist(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot replace {}: {}; check that the directory is writable",
            path.display(),
            e.error
        )
    })?;
    Ok(())
}

/// "a directory", "a FIFO", … for a file type that is not a regular file.
pub(crate) fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_record_replaces_a_planted_symlink_instead_of_writing_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let record = dir.path().join("out.cpp.mfppr-origin");
        std::os::unix::fs::symlink(&victim, &record).unwrap();
        assert!(write_atomic(&record, b"{}").is_err());
        replace_atomic(&record, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&record).unwrap().is_file());
        assert_eq!(std::fs::read(&record).unwrap(), b"{}");
    }

    #[test]
    fn replaces_the_file_keeps_its_mode_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.cpp");
        write_atomic(&path, b"one").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o644
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        let err = write_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let err = write_atomic(&link, b"x").unwrap_err();
        assert!(err.to_string().contains("a symlink"), "{err}");
    }
}
