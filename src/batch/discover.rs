//! A campaign's tests: the inputs named on the command line (files, or directories searched for
//! C++ files), each with a stem that names its directory under OUTDIR.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::campaign::MANIFEST;
use super::journal;
use super::triage;
use crate::error::{coded, ExitKind};
use crate::lock::LOCK_FILE;

/// File extensions taken from a directory given as input.
const EXTENSIONS: &[&str] = &["cpp", "cc", "cxx", "C"];

/// One test of a campaign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Test {
    /// Absolute path of the input.
    pub input: PathBuf,
    /// Its directory name under the output directory (unique in the campaign).
    pub stem: String,
    /// Its size, for the smallest-first order.
    pub bytes: u64,
}

/// Whether `stem` can name a test's directory under OUTDIR: one path component that is neither
/// `.`, `..` nor the name of one of the campaign's own files.
pub(crate) fn stem_is_valid(stem: &str) -> bool {
    let own = [LOCK_FILE, journal::JOURNAL, triage::SUMMARY, MANIFEST];
    !matches!(stem, "" | "." | "..") && !stem.contains('/') && !own.contains(&stem)
}

/// The tests named by `inputs` (files, or directories searched recursively for C++ files other
/// than `*.reduced.cpp`), smallest first, with unique stems: a stem shared by several inputs, or
/// not valid ([`stem_is_valid`]: `...cpp`, `results.jsonl.cpp`), gets the first 8 hex digits of
/// the blake3 hash of the input's path appended. A path that is not UTF-8 is refused: the journal
/// records paths as JSON strings; so is a named input that is not a regular file, and a directory
/// entry with a C++ name that is not a regular file is skipped with a warning that names it.
pub(crate) fn discover(inputs: &[PathBuf]) -> anyhow::Result<Vec<Test>> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk(input, &mut files, &mut skipped)?;
        } else {
            files.push(input.clone());
        }
    }
    if !skipped.is_empty() {
        crate::messages::warn(format!(
            "skipped {} C++ file name(s) that are not regular files (a FIFO, a device or a \
             symlink): {}; copy the tests in as regular files to reduce them",
            skipped.len(),
            skipped.join(", ")
        ));
    }
    let mut tests = Vec::new();
    let mut seen = HashSet::new();
    for file in files {
        let input = std::path::absolute(&file)
            .with_context(|| format!("cannot resolve the path {}", file.display()))?;
        if seen.insert(input.clone()) {
            tests.push(test_of(input)?);
        }
    }
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for t in &tests {
        *count.entry(t.stem.clone()).or_insert(0) += 1;
    }
    for t in &mut tests {
        if count[&t.stem] > 1 || !stem_is_valid(&t.stem) {
            let h = blake3::hash(t.input.as_os_str().as_encoded_bytes()).to_hex();
            t.stem = format!("{}-{}", t.stem, &h[..8]);
        }
    }
    tests.sort_by(|a, b| (a.bytes, &a.input).cmp(&(b.bytes, &b.input)));
    Ok(tests)
}

/// The C++ files below `dir` (other than `*.reduced.cpp`) into `files`; entries with a C++ name
/// that are not regular files into `skipped`.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, skipped: &mut Vec<String>) -> anyhow::Result<()> {
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry =
            entry.with_context(|| format!("cannot list the directory {}", dir.display()))?;
        let path = entry.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let ext_ok = path
            .extension()
            .is_some_and(|e| EXTENSIONS.iter().any(|x| e == *x));
        if !ext_ok || name.ends_with(".reduced.cpp") {
            continue;
        }
        if entry.file_type().is_file() {
            files.push(path.to_path_buf());
        } else if !entry.file_type().is_dir() {
            skipped.push(path.display().to_string());
        }
    }
    Ok(())
}

/// The test at the absolute path `input`, with its file stem: refused when the path is not UTF-8
/// or not a regular file.
fn test_of(input: PathBuf) -> anyhow::Result<Test> {
    if input.to_str().is_none() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: the path is not UTF-8, which the campaign's journal cannot record; \
                 rename the file",
                input.display()
            ),
        ));
    }
    let meta = std::fs::metadata(&input).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("cannot read input {}: {e}; check the path", input.display()),
        )
    })?;
    if !meta.is_file() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "input {} is {}, not an MF++ test file; give regular files or directories",
                input.display(),
                crate::atomic::kind_of(&meta.file_type())
            ),
        ));
    }
    let stem = input
        .file_stem()
        .map_or_else(|| "test".to_string(), |s| s.to_string_lossy().into_owned());
    Ok(Test {
        input,
        stem,
        bytes: meta.len(),
    })
}
