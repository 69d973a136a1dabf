//! The standalone export (design §10.2): one C++ file that compiles against the library alone.
//!
//! [`Standalone::build`] follows the test's includes as the running (`EXECUTE`) build sees them,
//! splits the headers into spec headers (anything mentioning `fuzz`, `metalib` or `mfr_*`), whose
//! declarations it may pull in, and library headers, which stay `#include`d. It pulls in the
//! closure of spec declarations the test uses, in header order within their namespaces, replaces
//! the spec's aliases of library types by those types, drops the fuzz-region markers and names
//! inputs and results readably. [`minimise`] then drops, with the oracle, the pulled-in
//! declarations the export might compile without (a wrongly removed declaration fails to
//! compile, so this cannot slip), and [`format()`] indents with `clang-format` when installed.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::document::declarations::{Declaration, Item};
use crate::document::Document;
use crate::edit::{self, Edit};
use crate::error::{coded, ExitKind};
use crate::judge::{Judge, Trials};

mod shrink;
mod simplify;

/// Calls that only mark fuzz regions or template blocks; dropped from the export.
const MARKERS: [&str; 5] = [
    "fuzz::mfr_fuzz_start",
    "fuzz::mfr_fuzz_end",
    "fuzz::start",
    "fuzz::end",
    "fuzz::meta_test",
];

/// A spec declaration the test needs.
#[derive(Clone, Debug)]
pub(crate) struct Chunk {
    /// Its declaration (enclosing namespaces, name, the names it uses).
    pub decl: Declaration,
    /// Its source text.
    pub text: String,
    /// The only declaration a reference of the test (or of another required chunk) can mean:
    /// without it the export cannot compile, so [`minimise`] does not try.
    pub required: bool,
}

/// The parts of a standalone export, before minimisation and formatting.
#[derive(Clone, Debug)]
pub(crate) struct Standalone {
    /// `#include` lines: system headers, then library headers.
    pub includes: Vec<String>,
    /// The pulled-in spec declarations, in header order.
    pub chunks: Vec<Chunk>,
    /// The test's own code (instances and `main`), markers dropped, names renamed.
    pub test: String,
    /// The source file's name, for the header comment.
    pub source: String,
}

/// A header read while following the includes.
struct Header {
    items: Vec<Item>,
    text: Vec<u8>,
}

impl Standalone {
    /// Build the export of the test at `path` (bytes `text`), finding headers beside each
    /// including file and in `include_dirs`; `specs` are read after the test's own headers.
    pub(crate) fn build(
        path: &Path,
        text: &[u8],
        include_dirs: &[PathBuf],
        specs: &[PathBuf],
    ) -> Result<Standalone> {
        crate::model::check_is_mfpp_test(text)?;
        let doc = Document::parse(text.to_vec())?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut walk = Walk {
            include_dirs,
            seen: HashSet::new(),
            includes: Vec::new(),
            decls: Vec::new(),
        };
        for item in doc.declarations() {
            if let Item::Include { path: inc, system } = item {
                walk.include(&inc, system, &dir, &path.display().to_string())?;
            }
        }
        for spec in specs {
            walk.header(spec)?;
        }
        let (decls, test) = simplify::resolve_aliases(walk.decls, test_code(&doc)?);
        let test = simplify::inline_calls(&decls, test)?;
        let test = simplify::scalarise(&decls, test)?;
        let test_doc = Document::parse(test.clone().into_bytes())?;
        let roots: Vec<Declaration> = test_doc
            .declarations()
            .into_iter()
            .filter_map(|i| match i {
                Item::Declaration(d) => Some(d),
                Item::Include { .. } => None,
            })
            .collect();
        let needed = closure(&roots, &decls);
        let required = required(&roots, &decls, &needed);
        let chunks: Vec<Chunk> = decls
            .into_iter()
            .zip(needed.into_iter().zip(required))
            .filter(|(_, (n, _))| *n)
            .map(|((d, text), (_, required))| Chunk {
                decl: d,
                text,
                required,
            })
            .collect();
        let mut sa = Standalone {
            includes: walk.includes,
            chunks,
            test,
            source: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        shrink::prune(&mut sa)?;
        Ok(sa)
    }

    /// The export text with the chunks `keep` marks (all when shorter), unformatted.
    pub(crate) fn render(&self, keep: &[bool]) -> String {
        // The name on one line (a newline in it would end the comment and leave the rest as code).
        let mut out = format!(
            "// Exported by mfppr from {}.\n",
            crate::messages::printable(&self.source)
        );
        for inc in &self.includes {
            out.push_str(inc);
            out.push('\n');
        }
        out.push('\n');
        // Consecutive chunks of one namespace share a (C++17 nested) namespace definition.
        let mut open: &[String] = &[];
        for (i, chunk) in self.chunks.iter().enumerate() {
            if !keep.get(i).copied().unwrap_or(true) {
                continue;
            }
            let namespaces = &chunk.decl.namespaces;
            if namespaces != open {
                close(&mut out, open);
                if !namespaces.is_empty() {
                    out.push_str(&format!("namespace {} {{\n", namespaces.join("::")));
                }
                open = namespaces;
            }
            out.push_str(&chunk.text);
            out.push_str("\n\n");
        }
        close(&mut out, open);
        out.push_str(&self.test);
        out.push('\n');
        out
    }
}

/// The library operations `sa` calls, sorted: the calls of its functions that name the library
/// under test ([`crate::evidence::library_op`]), except those of the spec's checks
/// (`metalib::checks`: the check's own equality or solver calls) and of the standard library.
pub(crate) fn library_operations(sa: &Standalone) -> Result<Vec<String>> {
    let doc = Document::parse(sa.render(&[]).into_bytes())?;
    let ops: BTreeSet<String> = doc
        .outline()
        .functions
        .iter()
        .filter(|f| !(f.namespaces.len() >= 2 && f.namespaces[..2] == ["metalib", "checks"]))
        .flat_map(|f| &f.calls)
        .filter_map(|c| crate::evidence::library_op(&c.callee))
        .filter(|op| !op.starts_with("std::"))
        .collect();
    Ok(ops.into_iter().collect())
}

/// Close the namespace definition of `open` (nothing when it is the global one).
fn close(out: &mut String, open: &[String]) {
    if open.is_empty() {
        return;
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out.push_str(&format!("}} // namespace {}\n\n", open.join("::")));
}

/// The include walk: library includes kept, spec declarations collected in header order.
struct Walk<'a> {
    include_dirs: &'a [PathBuf],
    seen: HashSet<PathBuf>,
    includes: Vec<String>,
    decls: Vec<(Declaration, String)>,
}

impl Walk<'_> {
    fn include(&mut self, name: &str, system: bool, dir: &Path, from: &str) -> Result<()> {
        if system {
            self.keep(format!("#include <{name}>"));
            return Ok(());
        }
        let found = std::iter::once(dir)
            .chain(self.include_dirs.iter().map(PathBuf::as_path))
            .map(|d| d.join(name))
            .find(|p| p.is_file());
        let Some(found) = found else {
            if crate::compiler::find(name).is_some() {
                // A library header on the compiler's own path: the standalone includes it.
                self.keep(format!("#include \"{name}\""));
                return Ok(());
            }
            let searched: Vec<String> = std::iter::once(dir)
                .chain(self.include_dirs.iter().map(PathBuf::as_path))
                .chain(crate::compiler::include_dirs().iter().map(PathBuf::as_path))
                .map(|d| match d.as_os_str().is_empty() {
                    true => ".".to_string(),
                    false => d.display().to_string(),
                })
                .collect();
            return Err(coded(
                ExitKind::Input,
                format!(
                    "header \"{name}\" (included by {from}) not found in {}; {}",
                    searched.join(", "),
                    crate::compiler::problem().unwrap_or("pass -I with its directory")
                ),
            ));
        };
        let header = read_header(&found)?;
        if is_spec(&header) {
            self.header(&found)
        } else {
            self.keep(format!("#include \"{name}\""));
            Ok(())
        }
    }

    /// Keep the library include `line` in the standalone (once).
    fn keep(&mut self, line: String) {
        if !self.includes.contains(&line) {
            self.includes.push(line);
        }
    }

    fn header(&mut self, path: &Path) -> Result<()> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if !self.seen.insert(canonical) {
            return Ok(());
        }
        let header = read_header(path)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for item in header.items {
            match item {
                Item::Include { path: inc, system } => {
                    self.include(&inc, system, &dir, &path.display().to_string())?
                }
                Item::Declaration(d) => {
                    if d.name.as_deref().is_some_and(is_guard_like) && d.refs.len() <= 1 {
                        let text = String::from_utf8_lossy(&header.text[d.span.clone()]);
                        if text.trim_start().starts_with("#define") {
                            continue;
                        }
                    }
                    let text = String::from_utf8_lossy(&header.text[d.span.clone()])
                        .trim_end()
                        .to_string();
                    self.decls.push((d, text));
                }
            }
        }
        Ok(())
    }
}

/// An include-guard macro: `_FOO_HPP`, `FOO_H_`, … (never needed by a single-file export).
fn is_guard_like(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && (name.ends_with("_H")
            || name.ends_with("_HPP")
            || name.ends_with("_H_")
            || name.ends_with("_HPP_"))
}

fn read_header(path: &Path) -> Result<Header> {
    let text =
        std::fs::read(path).with_context(|| format!("cannot read header {}", path.display()))?;
    let items = Document::parse(text.clone())?.declarations();
    Ok(Header { items, text })
}

/// Whether a header belongs to the MF++ spec rather than to the library under test.
fn is_spec(header: &Header) -> bool {
    header.items.iter().any(|i| match i {
        Item::Include { .. } => false,
        Item::Declaration(d) => {
            d.namespaces
                .first()
                .is_some_and(|n| n == "fuzz" || n == "metalib")
                || d.name.as_deref().is_some_and(|n| n.starts_with("mfr_"))
                || d.refs
                    .iter()
                    .any(|r| r.first().is_some_and(|n| n == "fuzz" || n == "metalib"))
        }
    })
}

/// Whether the reference `name` made in namespace `context` can mean `decl`.
fn refers_to(name: &[String], context: &[String], decl: &Declaration) -> bool {
    let Some((last, qual)) = name.split_last() else {
        return false;
    };
    if decl.name.as_deref() != Some(last.as_str()) || decl.namespaces.len() < qual.len() {
        return false;
    }
    let split = decl.namespaces.len() - qual.len();
    decl.namespaces[split..] == *qual && context.starts_with(&decl.namespaces[..split])
}

/// Which of `decls` the `roots` need, transitively.
fn closure(roots: &[Declaration], decls: &[(Declaration, String)]) -> Vec<bool> {
    let mut needed: Vec<bool> = decls.iter().map(|(d, _)| d.name.is_none()).collect();
    let mut queue: Vec<&Declaration> = roots.iter().collect();
    queue.extend(
        decls
            .iter()
            .filter(|(d, _)| d.name.is_none())
            .map(|(d, _)| d),
    );
    while let Some(user) = queue.pop() {
        for r in &user.refs {
            for (i, (d, _)) in decls.iter().enumerate() {
                if !needed[i] && refers_to(r, &user.namespaces, d) {
                    needed[i] = true;
                    queue.push(d);
                }
            }
        }
    }
    needed
}

/// Which of the `needed` `decls` are required: the only needed declaration that a reference of
/// the `roots`, of an unnamed needed declaration or of another required one can mean.
fn required(roots: &[Declaration], decls: &[(Declaration, String)], needed: &[bool]) -> Vec<bool> {
    let mut required: Vec<bool> = decls
        .iter()
        .zip(needed)
        .map(|((d, _), n)| *n && d.name.is_none())
        .collect();
    let mut queue: Vec<&Declaration> = roots.iter().collect();
    queue.extend(
        decls
            .iter()
            .zip(&required)
            .filter(|(_, r)| **r)
            .map(|((d, _), _)| d),
    );
    while let Some(user) = queue.pop() {
        for r in &user.refs {
            let mut meant = (0..decls.len())
                .filter(|&i| needed[i] && refers_to(r, &user.namespaces, &decls[i].0));
            if let (Some(i), None) = (meant.next(), meant.next()) {
                if !required[i] {
                    required[i] = true;
                    queue.push(&decls[i].0);
                }
            }
        }
    }
    required
}

/// The readable name for an MF++ name: `output_var_k` → `in<k>`, `r_0` → `ref`,
/// `r_k` → `follow_up_<k>`.
fn readable(name: &str) -> Option<String> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(k) = name.strip_prefix("output_var_").filter(|k| digits(k)) {
        return Some(format!("in{k}"));
    }
    match name.strip_prefix("r_").filter(|k| digits(k)) {
        Some("0") => Some("ref".to_string()),
        Some(k) => Some(format!("follow_up_{k}")),
        None => None,
    }
}

/// The test's own declarations (instances, `main`), markers dropped and names renamed.
fn test_code(doc: &Document) -> Result<String> {
    let text = doc.text();
    let idents = doc.identifiers();
    let taken: HashSet<&str> = idents.iter().map(|(n, _)| n.as_str()).collect();
    let mut edits: Vec<Edit> = idents
        .iter()
        .filter_map(|(name, span)| {
            readable(name)
                .filter(|new| !taken.contains(new.as_str()))
                .map(|new| Edit::replace(span.clone(), new))
        })
        .collect();
    for f in &doc.outline().functions {
        for s in &f.body {
            let [call] = s.calls.as_slice() else {
                continue;
            };
            if MARKERS.contains(&call.callee.as_str()) {
                edits.retain(|e| e.span.start >= s.span.end || e.span.end <= s.span.start);
                edits.push(Edit::delete(whole_lines(text, s.span.clone())));
            }
        }
    }
    let edited = Document::parse(edit::apply(text, &edits))?;
    let mut parts = Vec::new();
    for item in edited.declarations() {
        if let Item::Declaration(d) = item {
            parts.push(
                String::from_utf8_lossy(&edited.text()[d.span])
                    .trim_end()
                    .to_string(),
            );
        }
    }
    Ok(parts.join("\n\n"))
}

/// `span` widened to whole lines when nothing else is on them.
fn whole_lines(text: &[u8], span: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let start = text[..span.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let end = text[span.end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |p| span.end + p + 1);
    let blank = |r: std::ops::Range<usize>| text[r].iter().all(|b| b.is_ascii_whitespace());
    if blank(start..span.start) && blank(span.end..end) {
        start..end
    } else {
        span
    }
}

/// Indent `text` with `clang-format` when it is installed, else by brace depth. Returns the
/// text and the tool used.
pub(crate) fn format(text: &str) -> (String, &'static str) {
    if let Some(formatted) = clang_format(text) {
        return (formatted, "clang-format");
    }
    (reindent(text), "mfppr")
}

/// How long `clang-format` may run on one export.
const FORMAT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `text` formatted by `clang-format` through the process runner; `None` when it is not installed,
/// fails, times out or writes more than four times the text (plus 64 KiB).
fn clang_format(text: &str) -> Option<String> {
    let mut command = std::process::Command::new("clang-format");
    command.arg("--style={BasedOnStyle: LLVM, IndentWidth: 4, ColumnLimit: 100}");
    let cap = 4 * text.len() + 64 * 1024;
    let out = crate::process::capture(&mut command, text.as_bytes(), FORMAT_TIMEOUT, cap).ok()?;
    (out.finished.end.status() == Some(0) && !out.truncated && !out.stdout.is_empty())
        .then(|| String::from_utf8(out.stdout).ok())
        .flatten()
}

/// Re-indent by brace depth, four spaces a level (namespace bodies not indented); preprocessor
/// lines at column 0; runs of blank lines collapsed to one.
pub(crate) fn reindent(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // One entry per open brace: whether it opens a namespace.
    let mut open: Vec<bool> = Vec::new();
    let mut blank = false;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            if !blank && !out.is_empty() {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        blank = false;
        let (leading, opens, closes) = braces(t);
        for _ in 0..leading {
            open.pop();
        }
        let level = if t.starts_with('#') {
            0
        } else {
            open.iter().filter(|ns| !**ns).count()
        };
        out.push_str(&"    ".repeat(level));
        out.push_str(t);
        out.push('\n');
        let namespace = t.starts_with("namespace ");
        // Braces after the first non-brace character, in order: a close pops what the line
        // opened before it pops older ones.
        for _ in 0..opens {
            open.push(namespace);
        }
        for _ in leading..closes {
            open.pop();
        }
    }
    out
}

/// For one line, outside strings and `//` comments: the number of leading `}`, of `{`, and of
/// `}` in all.
fn braces(line: &str) -> (usize, usize, usize) {
    let (mut leading, mut opens, mut closes) = (0usize, 0usize, 0usize);
    let mut in_str: Option<char> = None;
    let mut seen_other = false;
    let mut prev = ' ';
    for c in line.chars() {
        match in_str {
            Some(q) if c == q && prev != '\\' => in_str = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => in_str = Some(c),
                '/' if prev == '/' => break,
                '{' => {
                    opens += 1;
                    seen_other = true;
                }
                '}' => {
                    if !seen_other {
                        leading += 1;
                    }
                    closes += 1;
                }
                c if c.is_whitespace() => {}
                _ => seen_other = true,
            },
        }
        prev = if prev == '\\' && c == '\\' { ' ' } else { c };
    }
    (leading, opens, closes)
}

/// What minimisation did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub(crate) struct Minimised {
    /// Declarations pulled in by the closure.
    pub pulled: usize,
    /// Declarations the oracle needed.
    pub kept: usize,
    /// Oracle runs (including the verification runs).
    pub oracle_calls: usize,
    /// Bytes of the first verified export, before the rewrites of [`shrink`].
    pub first_bytes: usize,
    /// Oracle runs of those rewrites (part of `oracle_calls`).
    pub shrink_calls: usize,
    /// The rewrites the check accepted, one line per kind (`2 functions called once inlined`).
    pub shrunk: Vec<String>,
}

/// At most this many oracle runs judge the rewrites of [`shrink`] (issue 28: ≤ 10 a report).
const SHRINK_RUNS: usize = 8;

/// Verify the formatted export is interesting, then drop the pulled-in declarations that are not
/// [`Chunk::required`] one at a time (last first, so a user goes before what it uses) while it
/// stays interesting; then make it minimal with the rewrites of [`shrink`], each kind's keys
/// judged all at once and halved on rejection, the kinds again while a round accepts something
/// (at most [`SHRINK_RUNS`] runs in all). Returns the final
/// text, the last one found interesting.
pub(crate) fn minimise(sa: &Standalone, judge: &dyn Judge) -> Result<(String, Minimised)> {
    let mut stats = Minimised {
        pulled: sa.chunks.len(),
        ..Minimised::default()
    };
    let mut trials = Trials::new(judge);
    let mut keep = vec![true; sa.chunks.len()];
    let mut text = format(&sa.render(&keep)).0;
    let first = trials.judged(text.as_bytes())?;
    if !first.interesting() {
        return Err(not_interesting(&first.run.stderr_tail));
    }
    let droppable = (0..keep.len()).rev().filter(|&i| !sa.chunks[i].required);
    trials.each(droppable, |trials, i| {
        keep[i] = false;
        let smaller = format(&sa.render(&keep)).0;
        if trials.run(smaller.as_bytes())?.kept() {
            text = smaller;
        } else {
            keep[i] = true;
        }
        Ok(())
    })?;
    stats.oracle_calls = trials.runs();
    stats.kept = keep.iter().filter(|k| **k).count();
    stats.first_bytes = text.len();
    let mut current = sa.clone();
    let mut flags = keep.iter();
    current
        .chunks
        .retain(|_| flags.next().copied().unwrap_or(true));
    let mut shrinking = Trials::new(judge);
    let mut accepted = [0; shrink::Kind::ALL.len()];
    loop {
        let mut round = 0;
        for (k, kind) in shrink::Kind::ALL.into_iter().enumerate() {
            let n = shrink_kind(kind, &mut current, &mut text, &mut shrinking)?;
            accepted[k] += n;
            round += n;
        }
        if round == 0 || shrinking.runs() == SHRINK_RUNS {
            break;
        }
    }
    for (kind, n) in shrink::Kind::ALL.into_iter().zip(accepted) {
        if n > 0 {
            stats.shrunk.push(format!("{n} {}", kind.describe()));
        }
    }
    stats.shrink_calls = shrinking.runs();
    stats.oracle_calls += stats.shrink_calls;
    stats.kept = current.chunks.len();
    Ok((text, stats))
}

/// One try of `kind` on `current` (all its keys at once, halved on rejection, within the budget
/// of [`SHRINK_RUNS`] runs of `trials`), keeping what the check accepts; the number of keys
/// accepted.
fn shrink_kind(
    kind: shrink::Kind,
    current: &mut Standalone,
    text: &mut String,
    trials: &mut Trials,
) -> Result<usize> {
    let mut accepted = 0;
    let mut groups = vec![shrink::keys(kind, current)?];
    while let Some(group) = groups.pop() {
        if group.is_empty() || trials.runs() == SHRINK_RUNS {
            continue;
        }
        let Some(candidate) = shrink::apply(kind, current, &group)? else {
            continue;
        };
        let smaller = format(&candidate.render(&[])).0;
        if smaller.len() >= text.len() {
            continue;
        }
        if trials.run(smaller.as_bytes())?.kept() {
            *current = candidate;
            *text = smaller;
            accepted += group.len();
        } else if group.len() > 1 {
            let half = group.len() / 2;
            groups.push(group[half..].to_vec());
            groups.push(group[..half].to_vec());
        }
    }
    Ok(accepted)
}

fn not_interesting(tail: &str) -> anyhow::Error {
    coded(
        ExitKind::NotInteresting,
        format!("the check rejects the standalone export (its stderr ends: {tail}); the MF++ test itself is unaffected"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimise_judges_through_a_fake_judge_and_keeps_what_it_needs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = root.join("fixtures/expected/iset_merge_small_a.reduced.cpp");
        let text = std::fs::read(&path).unwrap();
        let spec = root.join("fixtures/iset/spec");
        let sa = Standalone::build(&path, &text, &[spec], &[]).unwrap();
        let needs = |t: &[u8]| String::from_utf8_lossy(t).contains("iset::subtract(");
        let judge = crate::judge::FnJudge(|t: &[u8]| Some(needs(t)));
        let (out, m) = minimise(&sa, &judge).unwrap();
        assert!(needs(out.as_bytes()));
        assert!(m.oracle_calls >= 1 && m.kept <= m.pulled);
        assert!(out.len() <= format(&sa.render(&[])).0.len());
        let never = crate::judge::FnJudge(|_: &[u8]| Some(false));
        let err = minimise(&sa, &never).unwrap_err();
        assert!(format!("{err:#}").contains("rejects"), "{err:#}");
    }

    #[test]
    fn readable_names() {
        assert_eq!(readable("output_var_3").as_deref(), Some("in3"));
        assert_eq!(readable("r_0").as_deref(), Some("ref"));
        assert_eq!(readable("r_12").as_deref(), Some("follow_up_12"));
        assert_eq!(readable("r_x"), None);
        assert_eq!(readable("output_var"), None);
    }

    #[test]
    fn reindent_by_braces() {
        let got = reindent(
            "namespace a {\nint f()\n{\n  if (x) {\n return \"}\";\n} }\n}\n\n\n#define X\nint g() { return 1; }\n",
        );
        assert_eq!(
            got,
            "namespace a {\nint f()\n{\n    if (x) {\n        return \"}\";\n} }\n}\n\n#define X\nint g() { return 1; }\n"
        );
    }

    #[test]
    fn qualified_lookup() {
        let d = Declaration {
            namespaces: vec!["metalib".into(), "relations".into(), "shift".into()],
            name: Some("base".into()),
            span: 0..0,
            refs: vec![],
        };
        let n = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
        assert!(refers_to(&n("metalib::relations::shift::base"), &[], &d));
        assert!(refers_to(
            &n("relations::shift::base"),
            &n("metalib::relations::unite"),
            &d
        ));
        assert!(!refers_to(&n("relations::shift::base"), &[], &d));
        assert!(!refers_to(&n("unite::base"), &n("metalib"), &d));
    }
}
