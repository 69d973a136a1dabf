//! The output paths of a run, validated together before the first check runs (design §7): each
//! lies in an existing directory, none is the input or another output of the same run, and none
//! is a directory, FIFO, device or socket (a symlink counts as what it points to), and each
//! directory takes a probe file. A symlink to a regular file is followed, so the link stays and
//! its target gets the text; a record of mfppr's own replaces a symlink instead.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{coded, ExitKind};

/// One output of a run: what it is (for messages, e.g. "the output", "the stats file") and the
/// flag that names it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output<'a> {
    /// What the file is, as the user knows it.
    pub what: &'a str,
    /// The command-line flag that chooses it.
    pub flag: &'a str,
    /// The path as given.
    pub path: &'a Path,
    /// A record of mfppr's own (written with [`crate::atomic::replace_atomic`]): a symlink at the
    /// path is replaced, never followed.
    pub record: bool,
}

/// Validate `outputs` against `input` and each other; return the paths to write (symlinks to
/// regular files resolved), in the same order.
pub(crate) fn validate(input: &Path, outputs: &[Output<'_>]) -> anyhow::Result<Vec<PathBuf>> {
    let input_id = file_id(input);
    let mut resolved: Vec<PathBuf> = Vec::with_capacity(outputs.len());
    for out in outputs {
        let path = resolve(out)?;
        let refuse = |why: String| {
            coded(
                ExitKind::Input,
                format!(
                    "{} {} {why}; choose another {}",
                    out.what,
                    out.path.display(),
                    out.flag
                ),
            )
        };
        if input_id.is_some() && file_id(&path) == input_id || same_path(&path, input) {
            return Err(refuse(
                "is the input, which mfppr never modifies".to_string(),
            ));
        }
        if let Some(i) = resolved.iter().position(|p| same_path(p, &path)) {
            return Err(refuse(format!(
                "is also {} ({})",
                outputs[i].what, outputs[i].flag
            )));
        }
        resolved.push(path);
    }
    Ok(resolved)
}

/// Refuse an output that is not (or does not point to) a regular file or a new name in an
/// existing directory; return the path to write.
fn resolve(out: &Output<'_>) -> anyhow::Result<PathBuf> {
    let refuse = |why: String| {
        coded(
            ExitKind::Input,
            format!("{} {} {why}", out.what, out.path.display()),
        )
    };
    let path = match std::fs::symlink_metadata(out.path) {
        Ok(meta) if meta.file_type().is_symlink() && out.record => out.path.to_path_buf(),
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(out.path).map_err(|_| {
                refuse(format!(
                    "is a symlink to a missing file; remove it or choose another {}",
                    out.flag
                ))
            })?
        }
        _ => out.path.to_path_buf(),
    };
    // A record's own symlink is replaced, so what it points to does not matter.
    let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    if let (false, Ok(meta)) = (link, std::fs::metadata(&path)) {
        if !meta.is_file() {
            return Err(refuse(format!(
                "is {}; mfppr writes only regular files, choose another {}",
                crate::atomic::kind_of(&meta.file_type()),
                out.flag
            )));
        }
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(refuse(format!(
            "is in a directory that does not exist ({}); create it or choose another {}",
            dir.display(),
            out.flag
        )));
    }
    probe_writable(dir).map_err(|e| {
        refuse(format!(
            "is in a directory mfppr cannot write ({}: {e}); choose another {}",
            dir.display(),
            out.flag
        ))
    })?;
    Ok(path)
}

/// Create and remove a file in `dir`: whether mfppr can write there (a read-only file system or
/// a directory without write permission fails here, before any check runs).
pub(crate) fn probe_writable(dir: &Path) -> std::io::Result<()> {
    tempfile::Builder::new()
        .prefix(crate::atomic::TEMP_PREFIX)
        .tempfile_in(dir)?
        .close()
}

/// Device and inode of an existing file (hard links and symlinks compare equal).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `a` and `b` name the same file, existing or not: same identity when both exist, else
/// the same canonical directory and file name.
fn same_path(a: &Path, b: &Path) -> bool {
    if let (Some(x), Some(y)) = (file_id(a), file_id(b)) {
        return x == y;
    }
    let canonical = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some((std::fs::canonicalize(dir).ok()?, p.file_name()?.to_owned()))
    };
    matches!((canonical(a), canonical(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out<'a>(what: &'a str, path: &'a Path) -> Output<'a> {
        Output {
            what,
            flag: "-o",
            path,
            record: false,
        }
    }

    #[test]
    fn rules() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::write(&input, "x").unwrap();
        let o = dir.path().join("o.cpp");
        let s = dir.path().join("s.json");
        assert_eq!(
            validate(&input, &[out("the output", &o), out("the stats", &s)]).unwrap(),
            vec![o.clone(), s.clone()]
        );
        let msg = |r: anyhow::Result<Vec<PathBuf>>| format!("{:#}", r.unwrap_err());
        assert!(msg(validate(&input, &[out("the output", &input)])).contains("is the input"));
        let dotted = dir.path().join(".").join("t.cpp");
        assert!(msg(validate(&input, &[out("the output", &dotted)])).contains("is the input"));
        assert!(msg(validate(&input, &[out("a", &o), out("b", &o)])).contains("is also a"));
        assert!(
            msg(validate(&input, &[out("a", &dir.path().join("no/o.cpp"))]))
                .contains("does not exist")
        );
        assert!(msg(validate(&input, &[out("a", dir.path())])).contains("a directory"));
        assert!(msg(validate(&input, &[out("a", Path::new("/dev/null"))])).contains("a device"));

        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert!(msg(validate(&input, &[out("a", &fifo)])).contains("a FIFO"));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert!(msg(validate(&input, &[out("a", &link)])).contains("a FIFO"));
        let to_input = dir.path().join("to_input");
        std::os::unix::fs::symlink(&input, &to_input).unwrap();
        assert!(msg(validate(&input, &[out("a", &to_input)])).contains("is the input"));
        let hard = dir.path().join("hard");
        std::fs::hard_link(&input, &hard).unwrap();
        assert!(msg(validate(&input, &[out("a", &hard)])).contains("is the input"));
        let to_o = dir.path().join("to_o");
        std::fs::write(&o, "old").unwrap();
        std::os::unix::fs::symlink(&o, &to_o).unwrap();
        assert_eq!(
            validate(&input, &[out("a", &to_o)]).unwrap(),
            vec![std::fs::canonicalize(&o).unwrap()]
        );
        // A record's symlink is kept as the path to replace, not followed.
        let record = Output {
            record: true,
            ..out("the record", &to_o)
        };
        assert_eq!(validate(&input, &[record]).unwrap(), vec![to_o.clone()]);
    }
}
