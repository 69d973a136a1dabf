//! Marker injection: before each new line's statement, insert a statement that reports
//! `MFPPR-COV <id> <file>:<line>` on stderr (and, with [`MarkerKind::Abort`], aborts).
//!
//! Each edited file gets `#include <stdio.h>`, `#include <stdlib.h>` and `#line 1` prepended: the
//! C headers work from C and C++ and put `fprintf`/`stderr`/`abort` in the global namespace, and
//! `#line 1` keeps compiler diagnostics (and `__LINE__`) on the original line numbers. Markers are
//! inserted on the statement's own line, so no line moves.
//!
//! A continuation line of a multi-line statement gets a marker only where it fires exactly when
//! that line's code runs ([`crate::document::continuation`]): the statement's marker when nothing between
//! them is conditional, a comma expression around its `&&`/`||` operand or `?:` branch, or none
//! (reported in `skipped`). Several new lines that map to the same place share one marker.
//!
//! Ids are stable: [`marker_id`] of the file key and the line where the marker is placed, so a
//! filter or another file does not change them. `markers.json` lists the markers and the skipped
//! lines and their accounting (every new line is in exactly one of them).
//!
//! Only regular files whose real path (symlinks resolved) lies under the source root are marked,
//! by that real path, so no write goes through a symlink or outside the tree: the others' lines
//! are skipped with the reason, and one file under two names (a symlink, a symlinked directory)
//! is marked once. In place, every target is checked before the manifest and the first edit, and
//! an error after an edit names `mfppr cover restore`.
//!
//! Into a copy ([`InjectTarget::Copy`]), only sources are copied ([`is_build_output`]), each with
//! its modification time, so the user's build in the copy remakes only what the markers changed
//! (edited files are newer than anything else).

//!
//! Files: `plan` computes the markers and each file's marked text without writing anything;
//! [`marker`] is the text of a marker and its id; [`write`] writes the plan into a copy (made by
//! [`copy`]) or in place (after the [`manifest`]), and `markers.json`. This module owns every
//! write to the user's sources; it may not read coverage files or run commands (the `--build` of a
//! marked copy is [`crate::coverage::commands`]'), and reaches tree-sitter only through
//! [`crate::document`].

pub mod copy;
pub mod manifest;
pub mod marker;
mod plan;
mod write;

use std::path::PathBuf;

use serde::Serialize;

pub use copy::{is_build_output, CopyStats};
pub use marker::{marker_expression, marker_id, marker_statement, PRELUDE};
pub use write::inject;

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
    /// Source root: coverage keys are resolved against it, and only regular files whose real
    /// path lies under it are marked (into a copy, the tree copied).
    pub source_root: PathBuf,
    /// Marker behaviour.
    pub kind: MarkerKind,
    /// Where to write.
    pub target: InjectTarget,
    /// Where to write `markers.json` (default: inside the copy, or next to the manifest).
    pub markers_path: Option<PathBuf>,
}

/// One injected marker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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
    /// How many new lines were given: every one is in exactly one marker's `lines` or in
    /// `skipped`.
    pub new_lines: usize,
    /// What the copy copied and left out (`None` in place).
    pub copy: Option<CopyStats>,
}

impl Injection {
    /// New lines that a marker stands for.
    pub fn marked_lines(&self) -> usize {
        self.markers.iter().map(|m| m.lines.len()).sum()
    }

    /// The line accounting, `N new lines: M markers for K lines, S skipped (reason: n, …)`, which
    /// adds up (K + S = N).
    pub fn accounting(&self) -> String {
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for s in &self.skipped {
            let key = s
                .reason
                .split_once(", ")
                .filter(|_| s.reason.starts_with("continuation"))
                .map_or(s.reason.as_str(), |(_, why)| why);
            let key = key.split(" (").next().unwrap_or(key).to_string();
            match reasons.iter_mut().find(|(r, _)| *r == key) {
                Some((_, n)) => *n += 1,
                None => reasons.push((key, 1)),
            }
        }
        let folded = self.marked_lines() - self.markers.len();
        let mut text = format!(
            "{} new lines: {} markers for {} lines ({} of them folded into a marker of the same \
             statement), {} skipped",
            self.new_lines,
            self.markers.len(),
            self.marked_lines(),
            folded,
            self.skipped.len()
        );
        if !reasons.is_empty() {
            let list: Vec<String> = reasons.iter().map(|(r, n)| format!("{n}: {r}")).collect();
            text.push_str(&format!(" ({})", list.join("; ")));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::write::inject_unless;
    use super::*;
    use crate::coverage::diff::new_lines::{NewFile, NewLine, NewLines};
    use crate::error::ExitKind;

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
            source_root: src.path().to_path_buf(),
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
        assert_eq!(
            ids,
            vec![("x_hpp-L3", 3, &[3][..]), ("x_hpp-L4", 4, &[4, 5][..])]
        );
        assert_eq!(
            inj.accounting(),
            "5 new lines: 2 markers for 3 lines (1 of them folded into a marker of the same \
             statement), 2 skipped (2: no statement can go there)"
        );
        let skipped: Vec<u32> = inj.skipped.iter().map(|s| s.line).collect();
        assert_eq!(skipped, vec![1, 7]);
        let text = std::fs::read_to_string(dest.join("x.hpp")).unwrap();
        assert!(text.starts_with(PRELUDE));
        assert!(
            text.contains(
                "    { { fprintf(stderr, \"MFPPR-COV x_hpp-L3 x.hpp:3\\n\"); } return 1; }\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  { fprintf(stderr, \"MFPPR-COV x_hpp-L4 x.hpp:4\\n\"); } int y = x +\n"
            ),
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

    /// Defect 1 of issue 14: the second line of `if (a &&\n b)` got a marker before the `if`,
    /// which fired whenever the first line ran.
    #[test]
    fn continuation_lines_get_operand_markers_or_none() {
        let src = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::write(
            src.path().join("p.c"),
            "int f(int a, int b) {\n  if (a &&\n      b)\n    return 1;\n  for (int i = 0; i < a;\n       i++)\n    b++;\n  return b;\n}\n",
        )
        .unwrap();
        let opts = InjectOptions {
            source_root: src.path().to_path_buf(),
            kind: MarkerKind::Log,
            target: InjectTarget::Copy(out.path().join("c")),
            markers_path: None,
        };
        let inj = inject(&new_lines("p.c", &[3, 6]), &opts).unwrap();
        assert_eq!(inj.markers.len(), 1);
        assert_eq!(inj.markers[0].id, "p_c-L3");
        let text = std::fs::read_to_string(out.path().join("c/p.c")).unwrap();
        assert!(
            text.contains(
                "  if (a &&\n      ((void)fprintf(stderr, \"MFPPR-COV p_c-L3 p.c:3\\n\"), (b)))\n"
            ),
            "{text}"
        );
        assert_eq!(inj.skipped.len(), 1);
        assert!(
            inj.skipped[0]
                .reason
                .starts_with("continuation of the statement on line 5, part of a for loop"),
            "{:?}",
            inj.skipped
        );
        assert!(inj
            .accounting()
            .starts_with("2 new lines: 1 markers for 1 lines"));
    }

    /// Defects 2 and 3 of issue 14: the copy kept no file times and copied build outputs.
    #[test]
    fn the_copy_keeps_file_times_and_leaves_out_build_outputs() {
        let src = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        for (name, text) in [
            ("a.c", "int a(int x) {\n  return x;\n}\n"),
            ("configure.ac", "AC_INIT\n"),
            ("a.o", "object"),
            ("libx.a", "archive"),
            ("a.gcno", "notes"),
        ] {
            std::fs::write(src.path().join(name), text).unwrap();
            std::fs::File::open(src.path().join(name))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        std::fs::create_dir(src.path().join(".git")).unwrap();
        std::fs::write(src.path().join(".git/HEAD"), "ref").unwrap();
        let dest = out.path().join("c");
        let opts = InjectOptions {
            source_root: src.path().to_path_buf(),
            kind: MarkerKind::Log,
            target: InjectTarget::Copy(dest.clone()),
            markers_path: None,
        };
        let inj = inject(&new_lines("a.c", &[2]), &opts).unwrap();
        let mtime = |p: &str| std::fs::metadata(dest.join(p)).unwrap().modified().unwrap();
        assert_eq!(mtime("configure.ac"), old);
        assert!(mtime("a.c") > old);
        for gone in ["a.o", "libx.a", "a.gcno", ".git"] {
            assert!(!dest.join(gone).exists(), "{gone} was copied");
        }
        let copy = inj.copy.unwrap();
        assert_eq!((copy.copied, copy.left_out), (2, 4));
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
            source_root: src.path().to_path_buf(),
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

    /// A write that fails after an edit in place (here b.cpp turned into a symlink between the
    /// checks and its write) says how to put the edited files back.
    #[test]
    fn an_in_place_error_after_an_edit_names_cover_restore() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a.cpp"), "int a(int x) {\n  return x;\n}\n").unwrap();
        std::fs::write(
            src.path().join("b.cpp"),
            "int b(int x) {\n  return -x;\n}\n",
        )
        .unwrap();
        let mut new = new_lines("a.cpp", &[2]);
        new.files.extend(new_lines("b.cpp", &[2]).files);
        let manifest = src.path().join("m.json");
        let opts = InjectOptions {
            source_root: src.path().to_path_buf(),
            kind: MarkerKind::Log,
            target: InjectTarget::InPlace {
                manifest: manifest.clone(),
            },
            markers_path: None,
        };
        let mut asked = 0;
        let err = inject_unless(&new, &opts, || {
            asked += 1;
            if asked == 2 {
                let b = src.path().join("b.cpp");
                std::fs::remove_file(&b).unwrap();
                std::os::unix::fs::symlink("a.cpp", &b).unwrap();
            }
            false
        })
        .unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("it is a symlink")
                && msg.ends_with(&format!(
                    "1 of 2 files are marked: run `mfppr cover restore {}` to put them back",
                    manifest.display()
                ))
                && !msg.contains('\n'),
            "{msg}"
        );
    }

    #[test]
    fn interrupted_copy_names_the_incomplete_copy() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a.cpp"), "int a() {\n  return 1;\n}\n").unwrap();
        let out = tempfile::tempdir().unwrap();
        let opts = InjectOptions {
            source_root: src.path().to_path_buf(),
            kind: MarkerKind::Log,
            target: InjectTarget::Copy(out.path().join("copy")),
            markers_path: None,
        };
        let err = inject_unless(&new_lines("a.cpp", &[2]), &opts, || true).unwrap_err();
        assert_eq!(crate::error::exit_kind(&err), ExitKind::Interrupted);
        assert!(format!("{err:#}").contains("is incomplete"), "{err:#}");
    }
}
