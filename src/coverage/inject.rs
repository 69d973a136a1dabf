//! Marker injection: before each new line's statement, insert a statement that reports
//! `MFPPR-COV <id> <file>:<line>` on stderr (and, with [`MarkerKind::Abort`], aborts).
//!
//! Each edited file gets `#include <stdio.h>`, `#include <stdlib.h>` and `#line 1` prepended: the
//! C headers work from C and C++ and put `fprintf`/`stderr`/`abort` in the global namespace, and
//! `#line 1` keeps compiler diagnostics (and `__LINE__`) on the original line numbers. Markers are
//! inserted on the statement's own line, so no line moves.
//!
//! Ids are `P1`, `P2`, … in (file, line) order of the insertion points; several new lines that
//! map to the same statement share one marker.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use super::diff::NewLines;
use super::manifest::{self, write_atomically};
use super::paths::{join_lexically, relative_to};
use crate::document::statements::StatementIndex;
use crate::edit::{self, Edit};
use crate::error::{coded, ExitKind};

/// What a marker does when reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkerKind {
    /// Print `MFPPR-COV <id> <file>:<line>` on stderr and continue.
    #[default]
    Log,
    /// Print, then `abort()` (the thesis' failing assert).
    Abort,
}

/// Where the injected sources go.
#[derive(Clone, Debug)]
pub enum InjectTarget {
    /// Copy everything under the source root into this directory, then inject into the copy.
    Copy(PathBuf),
    /// Edit the sources in place after writing this manifest.
    InPlace {
        /// Manifest path.
        manifest: PathBuf,
    },
}

/// Options of [`inject`].
#[derive(Clone, Debug)]
pub struct InjectOptions {
    /// Absolute source root; relative coverage keys are resolved against it. Required for
    /// [`InjectTarget::Copy`].
    pub source_root: Option<PathBuf>,
    /// Marker behaviour.
    pub kind: MarkerKind,
    /// Where to write.
    pub target: InjectTarget,
    /// Where to write `markers.json` (default: inside the copy, or next to the manifest).
    pub markers_path: Option<PathBuf>,
}

/// One injected marker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Marker {
    /// Stable id (`P<n>`).
    pub id: String,
    /// Normalised file key, as in the coverage report.
    pub file: String,
    /// First new line this marker stands for.
    pub line: u32,
    /// Every new line this marker stands for.
    pub lines: Vec<u32>,
    /// Byte offset in the original file where the marker was inserted.
    pub inserted_at: usize,
    /// The file that was edited.
    pub path: PathBuf,
}

/// A new line that got no marker, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Normalised file key.
    pub file: String,
    /// The line.
    pub line: u32,
    /// Why no marker could go there.
    pub reason: String,
}

/// Result of [`inject`].
#[derive(Clone, Debug, Serialize)]
pub struct Injection {
    /// Markers, in id order.
    pub markers: Vec<Marker>,
    /// New lines without a marker.
    pub skipped: Vec<Skipped>,
    /// Where `markers.json` was written.
    pub markers_file: PathBuf,
}

/// A planned edit of one file.
#[derive(Debug)]
struct FilePlan {
    /// The file read (the original).
    source_path: PathBuf,
    /// Key relative to the source root, when inside it.
    rel: Option<String>,
    original: Vec<u8>,
    injected: Vec<u8>,
}

fn c_string_body(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The marker statement for `id` at `file:line`.
pub fn marker_statement(kind: MarkerKind, id: &str, file: &str, line: u32) -> String {
    let print = format!(
        "fprintf(stderr, \"MFPPR-COV {id} {}:{line}\\n\");",
        c_string_body(file)
    );
    match kind {
        MarkerKind::Log => format!("{{ {print} }} "),
        MarkerKind::Abort => format!("{{ {print} abort(); }} "),
    }
}

/// Prepended to each edited file (see the module docs).
pub const PRELUDE: &str = "#include <stdio.h>\n#include <stdlib.h>\n#line 1\n";

fn resolve(key: &str, root: Option<&Path>) -> PathBuf {
    let p = Path::new(key);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        join_lexically(
            root.map_or_else(|| super::paths::absolute(Path::new(".")), Path::to_path_buf)
                .as_path(),
            p,
        )
    }
}

/// Compute markers and new contents without writing anything.
fn plan(
    new: &NewLines,
    opts: &InjectOptions,
) -> Result<(Vec<FilePlan>, Vec<Marker>, Vec<Skipped>)> {
    let root = opts.source_root.as_deref();
    let mut plans = Vec::new();
    let mut markers = Vec::new();
    let mut skipped = Vec::new();
    for f in &new.files {
        let path = resolve(&f.path, root);
        let rel = root.and_then(|r| relative_to(&path, r));
        let skip_all = |reason: &str, skipped: &mut Vec<Skipped>| {
            skipped.extend(f.lines.iter().map(|l| Skipped {
                file: f.path.clone(),
                line: l.line,
                reason: reason.to_string(),
            }))
        };
        if matches!(opts.target, InjectTarget::Copy(_)) && rel.is_none() {
            skip_all("outside --source-root", &mut skipped);
            continue;
        }
        let original = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                skip_all(
                    &format!("cannot read {}: {e}", path.display()),
                    &mut skipped,
                );
                continue;
            }
        };
        let Some(index) = StatementIndex::new(&original) else {
            skip_all("cannot parse the file", &mut skipped);
            continue;
        };
        let mut edits = vec![Edit::replace(0..0, PRELUDE)];
        let mut file_markers: Vec<Marker> = Vec::new();
        for l in &f.lines {
            let Some(ins) = index.insertion_for_line(l.line) else {
                skipped.push(Skipped {
                    file: f.path.clone(),
                    line: l.line,
                    reason: "no statement can go there (brace, declaration, function header or preprocessor line)".into(),
                });
                continue;
            };
            if let Some(m) = file_markers.iter_mut().find(|m| m.inserted_at == ins.at) {
                m.lines.push(l.line);
                continue;
            }
            let id = format!("P{}", markers.len() + file_markers.len() + 1);
            let stmt = marker_statement(opts.kind, &id, &f.path, l.line);
            match ins.wrap_end {
                None => edits.push(Edit::replace(ins.at..ins.at, stmt)),
                Some(end) => {
                    edits.push(Edit::replace(ins.at..ins.at, format!("{{ {stmt}")));
                    edits.push(Edit::replace(end..end, " }"));
                }
            }
            file_markers.push(Marker {
                id,
                file: f.path.clone(),
                line: l.line,
                lines: vec![l.line],
                inserted_at: ins.at,
                path: path.clone(),
            });
        }
        if file_markers.is_empty() {
            continue;
        }
        let injected = edit::apply(&original, &edits);
        markers.extend(file_markers);
        plans.push(FilePlan {
            source_path: path,
            rel,
            original,
            injected,
        });
    }
    Ok((plans, markers, skipped))
}

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
fn inject_unless(
    new: &NewLines,
    opts: &InjectOptions,
    mut stop: impl FnMut() -> bool,
) -> Result<Injection> {
    let (plans, mut markers, skipped) = plan(new, opts)?;
    let markers_file = match &opts.target {
        InjectTarget::Copy(dest) => {
            let root = opts.source_root.as_deref().ok_or_else(|| {
                coded(
                    ExitKind::Usage,
                    "--inject-into needs --source-root (the tree to copy)",
                )
            })?;
            let dest = super::paths::absolute(dest);
            let incomplete = || {
                coded(
                    ExitKind::Interrupted,
                    format!(
                        "interrupted: the marked copy {} is incomplete; remove it before the next run",
                        dest.display()
                    ),
                )
            };
            copy_tree(root, &dest, &mut stop).map_err(|e| if stop() { incomplete() } else { e })?;
            for p in &plans {
                if stop() {
                    return Err(incomplete());
                }
                let rel = p.rel.as_deref().unwrap_or_default();
                let out = dest.join(rel);
                write_atomically(&out, &p.injected)?;
                for m in markers.iter_mut().filter(|m| m.path == p.source_path) {
                    m.path = out.clone();
                }
            }
            opts.markers_path
                .clone()
                .unwrap_or_else(|| dest.join("markers.json"))
        }
        InjectTarget::InPlace { manifest } => {
            let originals: Vec<(PathBuf, Vec<u8>)> = plans
                .iter()
                .map(|p| (p.source_path.clone(), p.original.clone()))
                .collect();
            manifest::prepare(manifest, &originals)?;
            for (n, p) in plans.iter().enumerate() {
                if stop() {
                    return Err(undo_interrupted(manifest, n, plans.len()));
                }
                write_atomically(&p.source_path, &p.injected)?;
            }
            opts.markers_path.clone().unwrap_or_else(|| {
                super::paths::absolute(manifest)
                    .parent()
                    .map(|d| d.join("markers.json"))
                    .unwrap_or_else(|| PathBuf::from("markers.json"))
            })
        }
    };
    let injection = Injection {
        markers,
        skipped,
        markers_file: markers_file.clone(),
    };
    let mut json = serde_json::to_vec_pretty(&serde_json::json!({
        "markers": injection.markers,
        "skipped": injection.skipped,
    }))
    .context("cannot serialise markers")?;
    json.push(b'\n');
    write_atomically(&markers_file, &json)?;
    Ok(injection)
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

/// Copy everything under `root` into `dest` (which must not exist or be empty), skipping `dest`
/// itself when it lies inside `root`; gives up (with an error) as soon as `stop` says so.
fn copy_tree(root: &Path, dest: &Path, stop: &mut impl FnMut() -> bool) -> Result<()> {
    let root = super::paths::absolute(root);
    let dest = super::paths::absolute(dest);
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
    let walker = walkdir::WalkDir::new(&root)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| e.path() != dest);
    for entry in walker {
        if stop() {
            anyhow::bail!("copy of {} stopped", root.display());
        }
        let entry = entry.with_context(|| format!("cannot walk {}", root.display()))?;
        let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let out = dest.join(rel);
        let ft = entry.file_type();
        if ft.is_dir() {
            std::fs::create_dir_all(&out)
                .with_context(|| format!("cannot create {}", out.display()))?;
        } else if ft.is_symlink() {
            let target = std::fs::read_link(entry.path())
                .with_context(|| format!("cannot read link {}", entry.path().display()))?;
            std::os::unix::fs::symlink(&target, &out)
                .with_context(|| format!("cannot create link {}", out.display()))?;
        } else {
            std::fs::copy(entry.path(), &out).with_context(|| {
                format!(
                    "cannot copy {} to {}",
                    entry.path().display(),
                    out.display()
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::diff::{NewFile, NewLine};
    use super::*;

    fn new_lines(path: &str, lines: &[u32]) -> NewLines {
        NewLines {
            files: vec![NewFile {
                path: path.into(),
                lines: lines
                    .iter()
                    .map(|&line| NewLine {
                        line,
                        count: 1,
                        function: None,
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn marker_text_is_escaped() {
        assert_eq!(
            marker_statement(MarkerKind::Log, "P1", "a\"b%.h", 3),
            "{ fprintf(stderr, \"MFPPR-COV P1 a\\\"b%%.h:3\\n\"); } "
        );
        assert!(marker_statement(MarkerKind::Abort, "P1", "a.h", 3).contains("abort();"));
    }

    #[test]
    fn copy_injection_marks_statements_and_reports_skipped_lines() {
        let src = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("inj");
        std::fs::write(
            src.path().join("x.hpp"),
            "inline int f(int x) {\n  if (x)\n    return 1;\n  int y = x +\n          2;\n  return y;\n}\n",
        )
        .unwrap();
        std::fs::write(src.path().join("other.txt"), "keep me").unwrap();
        let opts = InjectOptions {
            source_root: Some(src.path().to_path_buf()),
            kind: MarkerKind::Log,
            target: InjectTarget::Copy(dest.clone()),
            markers_path: None,
        };
        let inj = inject(&new_lines("x.hpp", &[1, 3, 4, 5, 7]), &opts).unwrap();
        let ids: Vec<(&str, u32, &[u32])> = inj
            .markers
            .iter()
            .map(|m| (m.id.as_str(), m.line, m.lines.as_slice()))
            .collect();
        assert_eq!(ids, vec![("P1", 3, &[3][..]), ("P2", 4, &[4, 5][..])]);
        let skipped: Vec<u32> = inj.skipped.iter().map(|s| s.line).collect();
        assert_eq!(skipped, vec![1, 7]);
        let text = std::fs::read_to_string(dest.join("x.hpp")).unwrap();
        assert!(text.starts_with(PRELUDE));
        assert!(
            text.contains("    { { fprintf(stderr, \"MFPPR-COV P1 x.hpp:3\\n\"); } return 1; }\n"),
            "{text}"
        );
        assert!(
            text.contains("  { fprintf(stderr, \"MFPPR-COV P2 x.hpp:4\\n\"); } int y = x +\n"),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("other.txt")).unwrap(),
            "keep me"
        );
        assert!(dest.join("markers.json").exists());
        // The original is untouched.
        assert!(!std::fs::read_to_string(src.path().join("x.hpp"))
            .unwrap()
            .contains("MFPPR"));
    }

    #[test]
    fn interrupted_in_place_injection_restores_the_sources_and_drops_the_manifest() {
        let src = tempfile::tempdir().unwrap();
        let a = "int a(int x) {\n  return x;\n}\n";
        let b = "int b(int x) {\n  return -x;\n}\n";
        std::fs::write(src.path().join("a.cpp"), a).unwrap();
        std::fs::write(src.path().join("b.cpp"), b).unwrap();
        let mut new = new_lines("a.cpp", &[2]);
        new.files.extend(new_lines("b.cpp", &[2]).files);
        let manifest = src.path().join("m.json");
        let opts = InjectOptions {
            source_root: Some(src.path().to_path_buf()),
            kind: MarkerKind::Abort,
            target: InjectTarget::InPlace {
                manifest: manifest.clone(),
            },
            markers_path: None,
        };
        for stop_at in [0usize, 1] {
            let mut asked = 0;
            let mut edited_when_stopped = None;
            let err = inject_unless(&new, &opts, || {
                if asked == stop_at {
                    // The manifest comes first, then the files one by one.
                    assert!(manifest::read(&manifest).is_ok());
                    let edited = ["a.cpp", "b.cpp"]
                        .iter()
                        .filter(|f| {
                            std::fs::read_to_string(src.path().join(f))
                                .unwrap()
                                .contains("MFPPR-COV")
                        })
                        .count();
                    edited_when_stopped = Some(edited);
                }
                asked += 1;
                asked > stop_at
            })
            .unwrap_err();
            assert_eq!(edited_when_stopped, Some(stop_at));
            assert_eq!(crate::error::exit_kind(&err), ExitKind::Interrupted);
            let msg = format!("{err:#}");
            assert!(
                msg.contains(&format!("after marking {stop_at} of 2 files"))
                    && msg.contains("restored"),
                "{msg}"
            );
            assert_eq!(
                std::fs::read_to_string(src.path().join("a.cpp")).unwrap(),
                a
            );
            assert_eq!(
                std::fs::read_to_string(src.path().join("b.cpp")).unwrap(),
                b
            );
            let left: Vec<String> = std::fs::read_dir(src.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "a.cpp" && n != "b.cpp")
                .collect();
            assert!(left.is_empty(), "left behind: {left:?}");
        }
    }

    #[test]
    fn interrupted_copy_names_the_incomplete_copy() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a.cpp"), "int a() {\n  return 1;\n}\n").unwrap();
        let out = tempfile::tempdir().unwrap();
        let opts = InjectOptions {
            source_root: Some(src.path().to_path_buf()),
            kind: MarkerKind::Log,
            target: InjectTarget::Copy(out.path().join("copy")),
            markers_path: None,
        };
        let err = inject_unless(&new_lines("a.cpp", &[2]), &opts, || true).unwrap_err();
        assert_eq!(crate::error::exit_kind(&err), ExitKind::Interrupted);
        assert!(format!("{err:#}").contains("is incomplete"), "{err:#}");
    }
}
