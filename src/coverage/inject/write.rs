//! Writing a planned injection: into a marked copy, or in place after the manifest (undone on
//! Ctrl-C), then `markers.json`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::copy::{copy_tree, CopyStats};
use super::manifest;
use super::plan::{plan, FilePlan};
use super::{InjectOptions, InjectTarget, Injection, Marker};
use crate::atomic::write_atomic;
use crate::coverage::diff::new_lines::NewLines;
use crate::error::{coded, ExitKind};

/// Inject markers for `new` (see the module docs) and write `markers.json`.
///
/// Ctrl-C / SIGTERM (handlers installed here) stop the injection between two files with an
/// [`ExitKind::Interrupted`] error: in place, the files already marked are restored from the
/// manifest, which is then removed; into a copy, the error names the incomplete copy.
pub fn inject(new: &NewLines, opts: &InjectOptions) -> Result<Injection> {
    crate::interrupt::install()?;
    inject_unless(new, opts, crate::interrupt::requested)
}

/// [`inject`], asking `stop` before each file written whether to give up.
pub(super) fn inject_unless(
    new: &NewLines,
    opts: &InjectOptions,
    mut stop: impl FnMut() -> bool,
) -> Result<Injection> {
    let (plans, mut markers, skipped) = plan(new, opts)?;
    let (markers_file, copy) = match &opts.target {
        InjectTarget::Copy(dest) => {
            let dest = crate::coverage::paths::absolute(dest);
            let copy = write_copy(&plans, &mut markers, &opts.source_root, &dest, &mut stop)?;
            let markers_file = opts
                .markers_path
                .clone()
                .unwrap_or_else(|| dest.join("markers.json"));
            (markers_file, Some(copy))
        }
        InjectTarget::InPlace { manifest } => {
            write_in_place(&plans, manifest, &mut stop)?;
            let markers_file = opts.markers_path.clone().unwrap_or_else(|| {
                crate::coverage::paths::absolute(manifest)
                    .parent()
                    .map(|d| d.join("markers.json"))
                    .unwrap_or_else(|| PathBuf::from("markers.json"))
            });
            (markers_file, None)
        }
    };
    let injection = Injection {
        markers,
        skipped,
        markers_file: markers_file.clone(),
        new_lines: new.total(),
        copy,
    };
    write_markers_file(&injection, &markers_file).map_err(|e| match &opts.target {
        InjectTarget::InPlace { manifest } => still_marked(&e, manifest, plans.len(), plans.len()),
        InjectTarget::Copy(_) => e,
    })?;
    Ok(injection)
}

/// Copy the sources under `root` into `dest` and write the marked files there; the markers then
/// name their file in the copy.
fn write_copy(
    plans: &[FilePlan],
    markers: &mut [Marker],
    root: &Path,
    dest: &Path,
    stop: &mut impl FnMut() -> bool,
) -> Result<CopyStats> {
    let incomplete = || {
        coded(
            ExitKind::Interrupted,
            format!(
                "interrupted: the marked copy {} is incomplete; remove it before the next run",
                dest.display()
            ),
        )
    };
    let copy = copy_tree(root, dest, stop).map_err(|e| if stop() { incomplete() } else { e })?;
    for p in plans {
        if stop() {
            return Err(incomplete());
        }
        let out = dest.join(&p.rel);
        write_atomic(&out, &p.injected)?;
        for m in markers.iter_mut().filter(|m| m.path == p.source_path) {
            m.path = out.clone();
        }
    }
    Ok(copy)
}

/// Write the manifest (with the originals), then each marked file in place; an interrupt puts
/// back what was marked.
fn write_in_place(
    plans: &[FilePlan],
    manifest: &Path,
    stop: &mut impl FnMut() -> bool,
) -> Result<()> {
    let originals: Vec<(PathBuf, Vec<u8>)> = plans
        .iter()
        .map(|p| (p.source_path.clone(), p.original.clone()))
        .collect();
    manifest::prepare(manifest, &originals)?;
    for (n, p) in plans.iter().enumerate() {
        if stop() {
            return Err(undo_interrupted(manifest, n, plans.len()));
        }
        write_atomic(&p.source_path, &p.injected)
            .map_err(|e| still_marked(&e, manifest, n, plans.len()))?;
    }
    Ok(())
}

/// Write `markers.json`: the new lines, their accounting, the markers and the skipped lines.
fn write_markers_file(injection: &Injection, markers_file: &Path) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(&serde_json::json!({
        "new_lines": injection.new_lines,
        "accounting": injection.accounting(),
        "markers": injection.markers,
        "skipped": injection.skipped,
    }))
    .context("cannot serialise markers")?;
    json.push(b'\n');
    write_atomic(markers_file, &json)
}

/// An error after the manifest was written for an in-place injection, with `edited` of `total`
/// files marked: it says how to put them back.
fn still_marked(e: &anyhow::Error, manifest: &Path, edited: usize, total: usize) -> anyhow::Error {
    coded(
        ExitKind::Input,
        format!(
            "{e:#}; {edited} of {total} files are marked: run `mfppr cover restore {}` to put \
             them back",
            manifest.display()
        ),
    )
}

/// After an interrupt with `edited` of `total` files marked in place: put them back and drop
/// the manifest; the error says what state the sources are in.
fn undo_interrupted(manifest: &Path, edited: usize, total: usize) -> anyhow::Error {
    match manifest::restore(manifest).and_then(|_| manifest::discard(manifest)) {
        Ok(()) => coded(
            ExitKind::Interrupted,
            format!(
                "interrupted after marking {edited} of {total} files; they were restored and the \
                 sources are unchanged"
            ),
        ),
        Err(e) => coded(
            ExitKind::Interrupted,
            format!(
                "interrupted after marking {edited} of {total} files, and restoring them failed \
                 ({e:#}); run `mfppr cover restore {}`",
                manifest.display()
            ),
        ),
    }
}
