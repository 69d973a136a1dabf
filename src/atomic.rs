//! The one writer policy (issue 59): every file mfppr creates or replaces is written here, through
//! a temporary file renamed over it, so the file on disk is always either the old or the new text;
//! a symlink, dangling or not, is never written through (refused, or for mfppr's own records
//! replaced), and only the file mfppr writes gets its mode (what a link points to is never
//! chmod-ed).

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
    write(path, bytes, false, None)
}

/// Create `path` with `bytes` and permission bits `mode` (a file mfppr hands out, such as a check
/// script of `mfppr checks write`): a file already there is an error unless `force`, and then
/// replaced by a new file (never written into, never chmod-ed); a symlink, dangling or not, is
/// always refused, so nothing outside the directory is created, written or chmod-ed.
pub(crate) fn create_file(path: &Path, bytes: &[u8], mode: u32, force: bool) -> anyhow::Result<()> {
    may_create(path, force)?;
    write(path, bytes, false, Some(mode))
}

/// Whether [`create_file`] may write `path`: an error when a symlink is there, or a file and not
/// `force` (for checking every file of a set before the first is written).
pub(crate) fn may_create(path: &Path, force: bool) -> anyhow::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            anyhow::bail!(
                "{} is a symlink; mfppr never writes through one: remove it, or give another \
                 directory",
                path.display()
            );
        }
        if !force {
            anyhow::bail!(
                "{} exists; give an empty directory, or --force to overwrite it",
                path.display()
            );
        }
    }
    Ok(())
}

/// [`write_atomic`] for mfppr's own records (such as `<output>.mfppr-origin`): a symlink at `path`
/// is replaced by the new file, never followed, so a planted link cannot make mfppr write
/// elsewhere.
pub(crate) fn replace_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write(path, bytes, true, None)
}

/// Write `bytes` over `path` as the policy says; `mode` for the new file, else the permissions of
/// the regular file it replaces (0644 for a new one).
fn write(path: &Path, bytes: &[u8], replace_link: bool, mode: Option<u32>) -> anyhow::Result<()> {
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
    let permissions = {
        use std::os::unix::fs::PermissionsExt;
        match (mode, previous) {
            (Some(mode), _) => std::fs::Permissions::from_mode(mode),
            (None, Some(m)) => m.permissions(),
            (None, None) => std::fs::Permissions::from_mode(0o644),
        }
    };
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
    fn a_created_file_never_goes_through_a_link_and_never_chmods_a_target() {
        let dir = tempfile::tempdir().unwrap();
        let dangling = dir.path().join("dangling.py");
        let target = dir.path().join("elsewhere.py");
        std::os::unix::fs::symlink(&target, &dangling).unwrap();
        assert!(create_file(&dangling, b"x", 0o755, true).is_err());
        assert!(!target.exists());
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.py");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = create_file(&link, b"x", 0o755, true).unwrap_err();
        assert!(err.to_string().contains("is a symlink"), "{err}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let file = dir.path().join("new.py");
        create_file(&file, b"one", 0o755, false).unwrap();
        assert!(create_file(&file, b"two", 0o755, false).is_err());
        create_file(&file, b"two", 0o755, true).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }

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
