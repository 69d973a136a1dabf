//! Planning an injection: which file each new line's key names (real path under the source root),
//! where its marker goes (statement, operand of a continuation line, or nowhere, with the reason),
//! and each file's marked text. Reads the sources; writes nothing.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::marker::{marker_expression, marker_id, marker_statement, unique_id, PRELUDE};
use super::{InjectOptions, Marker, MarkerKind, Skipped};
use crate::coverage::diff::new_lines::{NewFile, NewLines};
use crate::coverage::paths::{join_lexically, relative_to};
use crate::document::continuation::{self, Continuation, ParsedFile};
use crate::document::statements::{Insertion, StatementIndex};
use crate::edit::{self, Edit};
use crate::error::{coded, ExitKind};

/// A planned edit of one file.
#[derive(Debug)]
pub(super) struct FilePlan {
    /// The file's real path (symlinks resolved): read, and in place written.
    pub(super) source_path: PathBuf,
    /// Its path under the real source root (`/`-separated): where it goes in a copy.
    pub(super) rel: String,
    pub(super) original: Vec<u8>,
    pub(super) injected: Vec<u8>,
}

/// Where one marker goes.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// Before (or wrapping) a statement.
    Statement(Insertion),
    /// Around the operand with these bytes.
    Operand(usize, usize),
}

impl Placement {
    /// The byte where the marker is inserted.
    fn at(&self) -> usize {
        match self {
            Placement::Statement(ins) => ins.at,
            Placement::Operand(start, _) => *start,
        }
    }
}

fn leading_space(text: &[u8]) -> usize {
    text.iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

/// The file that coverage key `key` names, if it may be marked: its real path (symlinks
/// resolved) and that path under `real_root`; else why not.
fn target(key: &str, root: &Path, real_root: &Path) -> Result<(PathBuf, String), String> {
    let path = join_lexically(root, Path::new(key));
    let real =
        std::fs::canonicalize(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let rel = relative_to(&real, real_root)
        .ok_or_else(|| format!("outside --source-root (it resolves to {})", real.display()))?;
    let meta =
        std::fs::metadata(&real).map_err(|e| format!("cannot read {}: {e}", real.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "not a regular file ({} is {})",
            real.display(),
            crate::atomic::kind_of(&meta.file_type())
        ));
    }
    Ok((real, rel))
}

/// Compute markers and new contents without writing anything: every target is checked here.
pub(super) fn plan(
    new: &NewLines,
    opts: &InjectOptions,
) -> Result<(Vec<FilePlan>, Vec<Marker>, Vec<Skipped>)> {
    let root = &opts.source_root;
    let real_root = std::fs::canonicalize(root).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "--source-root {}: {e}; give the existing library directory",
                root.display()
            ),
        )
    })?;
    let mut skipped = Vec::new();
    // By real path: a file under two names is marked once.
    let mut targets: Vec<(PathBuf, String, Vec<&NewFile>)> = Vec::new();
    for f in &new.files {
        match target(&f.path, root, &real_root) {
            Ok((real, rel)) => match targets.iter_mut().find(|t| t.0 == real) {
                Some(t) => t.2.push(f),
                None => targets.push((real, rel, vec![f])),
            },
            Err(why) => skipped.extend(f.lines.iter().map(|l| Skipped {
                file: f.path.clone(),
                line: l.line,
                reason: why.clone(),
            })),
        }
    }
    let mut plans = Vec::new();
    let mut markers = Vec::new();
    for (real, rel, names) in targets {
        let file = merge_names(&rel, &names, &mut skipped);
        if let Some((plan, file_markers)) =
            plan_file(&file, real, rel, opts.kind, &markers, &mut skipped)
        {
            markers.extend(file_markers);
            plans.push(plan);
        }
    }
    Ok((plans, markers, skipped))
}

/// The new lines of one file that the coverage names under several keys, under one key (its real
/// path under the root when that is one of them, else the first); a line named twice goes to
/// `skipped` the second time.
fn merge_names(rel: &str, names: &[&NewFile], skipped: &mut Vec<Skipped>) -> NewFile {
    let main = names.iter().position(|f| f.path == rel).unwrap_or(0);
    let mut file = names[main].clone();
    for other in names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != main)
        .map(|(_, f)| f)
    {
        for l in &other.lines {
            if file.lines.iter().any(|m| m.line == l.line) {
                skipped.push(Skipped {
                    file: other.path.clone(),
                    line: l.line,
                    reason: format!("counted under {} (the same file)", file.path),
                });
            } else {
                file.lines.push(l.clone());
            }
        }
    }
    file.lines.sort_by_key(|l| l.line);
    file
}

/// The markers of the file at `path` (real path; `rel` under the root) and its marked text
/// (`None` when no line of it gets a marker); the lines that cannot be marked go to `skipped`.
/// `earlier` are the markers of earlier files (ids are unique across files).
fn plan_file(
    f: &NewFile,
    path: PathBuf,
    rel: String,
    kind: MarkerKind,
    earlier: &[Marker],
    skipped: &mut Vec<Skipped>,
) -> Option<(FilePlan, Vec<Marker>)> {
    let mut skip = |line: u32, reason: String| {
        skipped.push(Skipped {
            file: f.path.clone(),
            line,
            reason,
        })
    };
    let (original, index, parsed) = match read_and_parse(&path) {
        Ok(p) => p,
        Err(why) => {
            for l in &f.lines {
                skip(l.line, why.clone());
            }
            return None;
        }
    };
    let sources = Sources {
        original: &original,
        line_starts: crate::cpp_text::line_starts(&original),
        index: &index,
        parsed: &parsed,
    };
    let mut edits = vec![Edit::replace(0..0, PRELUDE)];
    let mut file_markers: Vec<Marker> = Vec::new();
    for l in &f.lines {
        let placement = match sources.placement(l.line) {
            Ok(p) => p,
            Err(why) => {
                skip(l.line, why);
                continue;
            }
        };
        let at = placement.at();
        if let Some(m) = file_markers.iter_mut().find(|m| m.inserted_at == at) {
            m.lines.push(l.line);
            continue;
        }
        let id = unique_id(
            marker_id(&f.path, sources.line_of(at)),
            earlier.iter().chain(&file_markers),
        );
        edits.extend(marker_edits(placement, kind, &id, &f.path, l.line));
        file_markers.push(Marker {
            id,
            file: f.path.clone(),
            line: l.line,
            lines: vec![l.line],
            inserted_at: at,
            path: path.clone(),
        });
    }
    if file_markers.is_empty() {
        return None;
    }
    let injected = edit::apply(&original, &edits);
    let plan = FilePlan {
        source_path: path,
        rel,
        original,
        injected,
    };
    Some((plan, file_markers))
}

/// Read the file at `path` and parse it twice: its statements (where markers go) and its syntax
/// tree (how a continuation line relates to its statement); else why not.
fn read_and_parse(path: &Path) -> Result<(Vec<u8>, StatementIndex, ParsedFile), String> {
    let original =
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match (StatementIndex::new(&original), ParsedFile::new(&original)) {
        (Some(index), Some(parsed)) => Ok((original, index, parsed)),
        _ => Err("cannot parse the file".to_string()),
    }
}

/// One source file, read and parsed, for placing its markers.
struct Sources<'a> {
    original: &'a [u8],
    /// The byte offset of each line's start.
    line_starts: Vec<usize>,
    index: &'a StatementIndex,
    parsed: &'a ParsedFile,
}

impl Sources<'_> {
    /// The 1-based line of byte `at`.
    fn line_of(&self, at: usize) -> u32 {
        self.line_starts.partition_point(|&s| s <= at) as u32
    }

    /// Where the marker of 1-based `line` goes, or why none can.
    fn placement(&self, line: u32) -> Result<Placement, String> {
        let Some(ins) = self.index.insertion_for_line(line) else {
            return Err(
                "no statement can go there (brace, function header, namespace- or \
                        class-scope declaration, or preprocessor line)"
                    .into(),
            );
        };
        let statement_line = self.line_of(ins.at);
        if statement_line == line {
            return Ok(Placement::Statement(ins));
        }
        let pos = self
            .line_starts
            .get(line as usize - 1)
            .map(|&s| s + leading_space(&self.original[s..]))
            .unwrap_or(ins.at);
        match continuation::classify(self.parsed, pos, ins.at) {
            Continuation::Statement => Ok(Placement::Statement(ins)),
            Continuation::Operand { start, end } => Ok(Placement::Operand(start, end)),
            Continuation::Unmarkable(why) => Err(format!(
                "continuation of the statement on line {statement_line}, {why}"
            )),
        }
    }
}

/// The edits that insert marker `id` (for `line` of `file`) at `placement`.
fn marker_edits(
    placement: Placement,
    kind: MarkerKind,
    id: &str,
    file: &str,
    line: u32,
) -> Vec<Edit> {
    match placement {
        Placement::Statement(ins) => {
            let stmt = marker_statement(kind, id, file, line);
            match ins.wrap_end {
                None => vec![Edit::replace(ins.at..ins.at, stmt)],
                Some(end) => vec![
                    Edit::replace(ins.at..ins.at, format!("{{ {stmt}")),
                    Edit::replace(end..end, " }"),
                ],
            }
        }
        Placement::Operand(start, end) => {
            let expr = marker_expression(kind, id, file, line);
            vec![
                Edit::replace(start..start, format!("({expr}, (")),
                Edit::replace(end..end, "))"),
            ]
        }
    }
}
