//! In-place injection safety: the manifest of original files, atomic writes, and `--restore`.
//!
//! Before any source file is touched, every original is copied to a backup directory next to the
//! manifest (`<manifest>.backup/`) and the manifest (each file's absolute path, BLAKE3 hash and
//! length of the original, and its backup path) is written atomically. Each edited file is then
//! written atomically (temp file + rename). [`restore`] puts back every file whose content differs
//! from its original hash, so it also works after a partial injection, and removes the temporary
//! files (`.mfppr-tmp-*`) that a killed atomic write leaves in the directories it touched.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::atomic::write_atomic;
use crate::error::{coded, ExitKind};

/// The manifest file written before an in-place injection.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always `"mfppr-cover-manifest"`.
    pub kind: String,
    /// Manifest format version (1).
    pub version: u32,
    /// The files that the injection may edit.
    pub files: Vec<ManifestEntry>,
}

/// One file of the manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Absolute path of the source file.
    pub path: PathBuf,
    /// BLAKE3 hash (hex) of the original bytes.
    pub original_blake3: String,
    /// Length of the original.
    pub original_len: u64,
    /// Absolute path of the byte-for-byte backup of the original.
    pub backup: PathBuf,
}

const KIND: &str = "mfppr-cover-manifest";

/// Hex BLAKE3 of `bytes`.
pub fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Back up `files` (absolute paths with their original bytes) and write the manifest at
/// `manifest_path`, refusing to overwrite an existing manifest (an earlier injection that was not
/// restored). Nothing else is written.
pub fn prepare(manifest_path: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<Manifest> {
    if manifest_path.exists() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "manifest {} already exists: run `mfppr cover restore {}` first, or pass another --manifest",
                manifest_path.display(),
                manifest_path.display()
            ),
        ));
    }
    let manifest_path = crate::coverage::paths::absolute(manifest_path);
    let backup_dir = PathBuf::from(format!("{}.backup", manifest_path.display()));
    std::fs::create_dir_all(&backup_dir)
        .with_context(|| format!("cannot create backup directory {}", backup_dir.display()))?;
    let mut entries = Vec::new();
    for (i, (path, original)) in files.iter().enumerate() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let backup = backup_dir.join(format!("{:04}-{name}.orig", i + 1));
        write_atomic(&backup, original)?;
        entries.push(ManifestEntry {
            path: path.clone(),
            original_blake3: hash(original),
            original_len: original.len() as u64,
            backup,
        });
    }
    let manifest = Manifest {
        kind: KIND.to_string(),
        version: 1,
        files: entries,
    };
    let mut json = serde_json::to_vec_pretty(&manifest).context("cannot serialise the manifest")?;
    json.push(b'\n');
    write_atomic(&manifest_path, &json)?;
    Ok(manifest)
}

/// Read a manifest.
pub fn read(manifest_path: &Path) -> Result<Manifest> {
    crate::coverage::read::load::check_regular_file(manifest_path, "manifest")?;
    let bytes = std::fs::read(manifest_path)
        .with_context(|| format!("cannot read manifest {}", manifest_path.display()))?;
    let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("{}: not an mfppr manifest: {e}", manifest_path.display()),
        )
    })?;
    if m.kind != KIND || m.version != 1 {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: not an mfppr cover manifest (kind {:?}, version {})",
                manifest_path.display(),
                m.kind,
                m.version
            ),
        ));
    }
    Ok(m)
}

/// What [`restore`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Files written back from their backup.
    pub restored: Vec<PathBuf>,
    /// Files that already had their original content.
    pub unchanged: Vec<PathBuf>,
    /// Temporary files of interrupted atomic writes that were removed.
    pub leftovers: Vec<PathBuf>,
}

/// Restore every file of the manifest byte for byte. Backups are checked against the recorded
/// hash before anything is written.
pub fn restore(manifest_path: &Path) -> Result<RestoreReport> {
    let m = read(manifest_path)?;
    let mut originals = Vec::new();
    for e in &m.files {
        let bytes = std::fs::read(&e.backup).with_context(|| {
            format!(
                "cannot read backup {} of {}",
                e.backup.display(),
                e.path.display()
            )
        })?;
        if hash(&bytes) != e.original_blake3 {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "backup {} does not match the hash recorded for {}; nothing restored",
                    e.backup.display(),
                    e.path.display()
                ),
            ));
        }
        originals.push(bytes);
    }
    let mut report = RestoreReport::default();
    for (e, original) in m.files.iter().zip(originals) {
        let current = std::fs::read(&e.path).ok();
        if current.as_deref().map(hash).as_deref() == Some(e.original_blake3.as_str()) {
            report.unchanged.push(e.path.clone());
            continue;
        }
        write_atomic(&e.path, &original)?;
        report.restored.push(e.path.clone());
    }
    report.leftovers = remove_leftovers(&m)?;
    Ok(report)
}

/// Remove the `.mfppr-tmp-*` files in the directories of the manifest's files and backups.
fn remove_leftovers(m: &Manifest) -> Result<Vec<PathBuf>> {
    let dirs: std::collections::BTreeSet<&Path> = m
        .files
        .iter()
        .flat_map(|e| [e.path.parent(), e.backup.parent()])
        .flatten()
        .collect();
    let mut removed = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let is_temp = entry
                .file_name()
                .to_string_lossy()
                .starts_with(crate::atomic::TEMP_PREFIX)
                && entry.file_type().is_ok_and(|t| t.is_file());
            if is_temp {
                let path = entry.path();
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove leftover {}", path.display()))?;
                removed.push(path);
            }
        }
    }
    removed.sort();
    Ok(removed)
}

/// Remove the manifest and its backups (once every file is known to be original again).
pub fn discard(manifest_path: &Path) -> Result<()> {
    let m = read(manifest_path)?;
    for e in &m.files {
        std::fs::remove_file(&e.backup)
            .with_context(|| format!("cannot remove backup {}", e.backup.display()))?;
    }
    let backup_dir = PathBuf::from(format!(
        "{}.backup",
        crate::coverage::paths::absolute(manifest_path).display()
    ));
    // Only when empty: the directory may hold what the user put there.
    let _ = std::fs::remove_dir(backup_dir);
    std::fs::remove_file(manifest_path)
        .with_context(|| format!("cannot remove manifest {}", manifest_path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_then_restore_after_partial_edit() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.cpp");
        let b = dir.path().join("b.cpp");
        std::fs::write(&a, b"int a;\n").unwrap();
        std::fs::write(&b, b"int b;\n").unwrap();
        let man = dir.path().join("m.json");
        let files = vec![
            (a.clone(), b"int a;\n".to_vec()),
            (b.clone(), b"int b;\n".to_vec()),
        ];
        prepare(&man, &files).unwrap();
        assert!(
            prepare(&man, &files).is_err(),
            "an existing manifest is never overwritten"
        );
        write_atomic(&a, b"changed\n").unwrap();
        // What a write killed between create and rename leaves behind.
        let leftover = dir
            .path()
            .join(format!("{}Ab12Cd", crate::atomic::TEMP_PREFIX));
        std::fs::write(&leftover, b"marked").unwrap();
        let r = restore(&man).unwrap();
        assert_eq!(r.restored, vec![a.clone()]);
        assert_eq!(r.unchanged, vec![b.clone()]);
        assert_eq!(r.leftovers, vec![leftover.clone()]);
        assert!(!leftover.exists());
        assert_eq!(std::fs::read(&a).unwrap(), b"int a;\n");
        discard(&man).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "only a.cpp and b.cpp remain");
    }

    #[test]
    fn corrupt_backup_restores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.cpp");
        std::fs::write(&a, b"x").unwrap();
        let man = dir.path().join("m.json");
        let m = prepare(&man, &[(a.clone(), b"x".to_vec())]).unwrap();
        std::fs::write(&m.files[0].backup, b"y").unwrap();
        std::fs::write(&a, b"z").unwrap();
        assert!(format!("{:#}", restore(&man).unwrap_err()).contains("does not match"));
        assert_eq!(std::fs::read(&a).unwrap(), b"z");
    }
}
