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

pub mod manifest;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use super::diff::new_lines::{NewFile, NewLines};
use super::paths::{join_lexically, relative_to};
use crate::atomic::write_atomic;
use crate::document::continuation::{self, Continuation, Parsed};
use crate::document::statements::{Insertion, StatementIndex};
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

/// A planned edit of one file.
#[derive(Debug)]
struct FilePlan {
    /// The file's real path (symlinks resolved): read, and in place written.
    source_path: PathBuf,
    /// Its path under the real source root (`/`-separated): where it goes in a copy.
    rel: String,
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

fn print_call(id: &str, file: &str, line: u32) -> String {
    format!(
        "fprintf(stderr, \"MFPPR-COV {id} {}:{line}\\n\")",
        c_string_body(file)
    )
}

/// The marker statement for `id` at `file:line`.
pub fn marker_statement(kind: MarkerKind, id: &str, file: &str, line: u32) -> String {
    let print = print_call(id, file, line);
    match kind {
        MarkerKind::Log => format!("{{ {print}; }} "),
        MarkerKind::Abort => format!("{{ {print}; abort(); }} "),
    }
}

/// The marker as a void expression, for the left side of a comma expression around an operand
/// (a continuation line in a `&&`/`||` operand or a `?:` branch).
pub fn marker_expression(kind: MarkerKind, id: &str, file: &str, line: u32) -> String {
    let print = print_call(id, file, line);
    match kind {
        MarkerKind::Log => format!("(void){print}"),
        MarkerKind::Abort => format!("(void){print}, abort()"),
    }
}

/// The stable id of a marker placed on `line` of `file`: the file key with every character other
/// than a letter or digit turned into `_`, then `-L<line>` (`src/isl_point.c`, 408 →
/// `src_isl_point_c-L408`). It depends on nothing else, so filters and other files do not move it.
pub fn marker_id(file: &str, line: u32) -> String {
    let stem: String = file
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{stem}-L{line}")
}

/// `id`, or `id.2`, `id.3`, … when a marker already has it (two markers on one line).
fn unique_id<'a>(id: String, taken: impl Iterator<Item = &'a Marker> + Clone) -> String {
    let free = |c: &str| !taken.clone().any(|m| m.id == c);
    if free(&id) {
        return id;
    }
    (2..)
        .map(|n| format!("{id}.{n}"))
        .find(|c| free(c))
        .unwrap_or(id)
}

/// Where one marker goes.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// Before (or wrapping) a statement.
    Statement(Insertion),
    /// Around the operand with these bytes.
    Operand(usize, usize),
}

fn line_starts(source: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            source
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect()
}

fn leading_space(text: &[u8]) -> usize {
    text.iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

/// Prepended to each edited file (see the module docs).
pub const PRELUDE: &str = "#include <stdio.h>\n#include <stdlib.h>\n#line 1\n";

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
            crate::outputs::kind_of(&meta.file_type())
        ));
    }
    Ok((real, rel))
}

/// Compute markers and new contents without writing anything: every target is checked here.
fn plan(
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
    let original = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()));
    let parsed = original.and_then(|original| {
        match (StatementIndex::new(&original), Parsed::new(&original)) {
            (Some(index), Some(parsed)) => Ok((original, index, parsed)),
            _ => Err("cannot parse the file".to_string()),
        }
    });
    let (original, index, parsed) = match parsed {
        Ok(p) => p,
        Err(why) => {
            for l in &f.lines {
                skip(l.line, why.clone());
            }
            return None;
        }
    };
    let line_starts = line_starts(&original);
    let line_of = |at: usize| line_starts.partition_point(|&s| s <= at) as u32;
    let mut edits = vec![Edit::replace(0..0, PRELUDE)];
    let mut file_markers: Vec<Marker> = Vec::new();
    for l in &f.lines {
        let placement = match placement(&original, &line_starts, &index, &parsed, l.line) {
            Ok(p) => p,
            Err(why) => {
                skip(l.line, why);
                continue;
            }
        };
        let at = match placement {
            Placement::Statement(ins) => ins.at,
            Placement::Operand(start, _) => start,
        };
        if let Some(m) = file_markers.iter_mut().find(|m| m.inserted_at == at) {
            m.lines.push(l.line);
            continue;
        }
        let id = unique_id(
            marker_id(&f.path, line_of(at)),
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

/// Where the marker of 1-based `line` goes, or why none can.
fn placement(
    original: &[u8],
    line_starts: &[usize],
    index: &StatementIndex,
    parsed: &Parsed,
    line: u32,
) -> Result<Placement, String> {
    let Some(ins) = index.insertion_for_line(line) else {
        return Err(
            "no statement can go there (brace, function header, namespace- or \
                    class-scope declaration, or preprocessor line)"
                .into(),
        );
    };
    let statement_line = line_starts.partition_point(|&s| s <= ins.at) as u32;
    if statement_line == line {
        return Ok(Placement::Statement(ins));
    }
    let pos = line_starts
        .get(line as usize - 1)
        .map(|&s| s + leading_space(&original[s..]))
        .unwrap_or(ins.at);
    match continuation::classify(parsed, pos, ins.at) {
        Continuation::Statement => Ok(Placement::Statement(ins)),
        Continuation::Operand { start, end } => Ok(Placement::Operand(start, end)),
        Continuation::Unmarkable(why) => Err(format!(
            "continuation of the statement on line {statement_line}, {why}"
        )),
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
    let mut copy = None;
    let markers_file = match &opts.target {
        InjectTarget::Copy(dest) => {
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
            copy = Some(copy_tree(&opts.source_root, &dest, &mut stop).map_err(|e| {
                if stop() {
                    incomplete()
                } else {
                    e
                }
            })?);
            for p in &plans {
                if stop() {
                    return Err(incomplete());
                }
                let out = dest.join(&p.rel);
                write_atomic(&out, &p.injected)?;
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
                write_atomic(&p.source_path, &p.injected)
                    .map_err(|e| still_marked(&e, manifest, n, plans.len()))?;
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
        new_lines: new.total(),
        copy,
    };
    let mut json = serde_json::to_vec_pretty(&serde_json::json!({
        "new_lines": injection.new_lines,
        "accounting": injection.accounting(),
        "markers": injection.markers,
        "skipped": injection.skipped,
    }))
    .context("cannot serialise markers")?;
    json.push(b'\n');
    write_atomic(&markers_file, &json).map_err(|e| match &opts.target {
        InjectTarget::InPlace { manifest } => still_marked(&e, manifest, plans.len(), plans.len()),
        InjectTarget::Copy(_) => e,
    })?;
    Ok(injection)
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

/// What [`copy_tree`] did.
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
fn copy_tree(root: &Path, dest: &Path, stop: &mut impl FnMut() -> bool) -> Result<CopyStats> {
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

#[cfg(test)]
mod tests {
    use super::super::diff::new_lines::{NewFile, NewLine};
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
