//! The marked copy of the source tree: sources only, each with its modification time, so the
//! user's build in the copy remakes only what the markers changed.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::error::{coded, ExitKind};

/// What `copy_tree` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CopyStats {
    /// Files copied (their modification times kept).
    pub copied: usize,
    /// Their bytes.
    pub copied_bytes: u64,
    /// Build outputs left out ([`is_build_output`]).
    pub left_out: usize,
    /// Their bytes.
    pub left_out_bytes: u64,
}

/// Build outputs and version-control data that a marked copy does not need: the user's build in
/// the copy remakes them. Object files and libraries (`.o .obj .a .so .lo .la .dylib`), coverage
/// data (`.gcda .gcno .gcov`) and the `.git`, `.libs` and `.hg` directories.
pub fn is_build_output(name: &str, is_dir: bool) -> bool {
    if is_dir {
        return matches!(name, ".git" | ".hg" | ".libs");
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "o" | "obj" | "a" | "so" | "lo" | "la" | "dylib" | "gcda" | "gcno" | "gcov"
    ) || name.contains(".so.")
}

/// Copy the sources under `root` into `dest` (which must not exist or be empty), keeping each
/// file's modification time (build systems compare them) and leaving out build outputs
/// ([`is_build_output`]) and `dest` itself when it lies inside `root`; gives up (with an error) as
/// soon as `stop` says so.
pub(super) fn copy_tree(
    root: &Path,
    dest: &Path,
    stop: &mut impl FnMut() -> bool,
) -> Result<CopyStats> {
    let root = crate::coverage::paths::absolute(root);
    let dest = crate::coverage::paths::absolute(dest);
    if dest == root || root.starts_with(&dest) {
        return Err(coded(
            ExitKind::Input,
            format!(
                "--inject-into {} would overwrite the source root {}",
                dest.display(),
                root.display()
            ),
        ));
    }
    if dest.exists()
        && std::fs::read_dir(&dest)
            .with_context(|| format!("cannot read {}", dest.display()))?
            .next()
            .is_some()
    {
        return Err(coded(
            ExitKind::Input,
            format!("--inject-into {} exists and is not empty", dest.display()),
        ));
    }
    std::fs::create_dir_all(&dest).with_context(|| format!("cannot create {}", dest.display()))?;
    let mut stats = CopyStats::default();
    let mut walker = walkdir::WalkDir::new(&root)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| e.path() != dest);
    while let Some(entry) = walker.next() {
        if stop() {
            anyhow::bail!("copy of {} stopped", root.display());
        }
        let entry = entry.with_context(|| format!("cannot walk {}", root.display()))?;
        let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let out = dest.join(rel);
        let ft = entry.file_type();
        if is_build_output(&entry.file_name().to_string_lossy(), ft.is_dir()) {
            stats.left_out += 1;
            if ft.is_dir() {
                walker.skip_current_dir();
            } else {
                stats.left_out_bytes += entry.metadata().map_or(0, |m| m.len());
            }
            continue;
        }
        if ft.is_dir() {
            std::fs::create_dir_all(&out)
                .with_context(|| format!("cannot create {}", out.display()))?;
        } else if ft.is_symlink() {
            let target = std::fs::read_link(entry.path())
                .with_context(|| format!("cannot read link {}", entry.path().display()))?;
            std::os::unix::fs::symlink(&target, &out)
                .with_context(|| format!("cannot create link {}", out.display()))?;
        } else {
            stats.copied_bytes += std::fs::copy(entry.path(), &out).with_context(|| {
                format!(
                    "cannot copy {} to {}",
                    entry.path().display(),
                    out.display()
                )
            })?;
            stats.copied += 1;
            keep_times(entry.path(), &out)?;
        }
    }
    Ok(stats)
}

/// Give `to` the access and modification times of `from`.
fn keep_times(from: &Path, to: &Path) -> Result<()> {
    let meta = std::fs::metadata(from)
        .with_context(|| format!("cannot read the times of {}", from.display()))?;
    let mut times = std::fs::FileTimes::new();
    if let Ok(t) = meta.accessed() {
        times = times.set_accessed(t);
    }
    if let Ok(t) = meta.modified() {
        times = times.set_modified(t);
    }
    std::fs::File::open(to)
        .and_then(|f| f.set_times(times))
        .with_context(|| format!("cannot set the times of {}", to.display()))
}
