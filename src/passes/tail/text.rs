//! Tail text (design §10.1): fuzz-region markers (both of a region at once), comments other than
//! the `// Meta test <i>` headers that name the variants, `#include <…>` and `#define` lines
//! before the first definition, an `#else` with nothing under it, and a conditional group left
//! empty. Quoted includes stay, in both `#ifdef EXECUTE` branches: they are the spec headers
//! mfppr reads the MR families from, so the result stays an MF++ test mfppr reads as well as the
//! input (`mfppr export` is what replaces them). So does a `#define` whose name the test's own
//! code or a header of the `EXECUTE` build reads (`FV_COUNT`, an array bound in a spec's type
//! header): deleting it only breaks the build, and every window holding it would fail (issue 60).
//! The oracle says which of the rest the test needs; the sweep checks it is still an MF++ test.

use std::collections::HashMap;

use crate::catalogue::Catalogue;
use crate::cpp_text::identifiers;
use crate::document::StmtKind;
use crate::edit::Edit;
use crate::model::TestModel;
use crate::passes::{lines, slice, Effect, Opportunity};

/// Markers first, then comments, then preprocessor lines.
pub(super) fn text_ops(text: &[u8], model: &TestModel, catalogue: &Catalogue) -> Vec<Opportunity> {
    let mut ops: Vec<Opportunity> = model
        .regions
        .iter()
        .map(|r| Opportunity {
            description: format!("delete the fuzz-region markers of {}", r.output),
            edits: vec![
                Edit::delete(lines(text, &r.start_marker)),
                Edit::delete(lines(text, &r.end_marker)),
            ],
            effect: Effect::Rewrite,
        })
        .collect();
    for stmt in model.main_stmts.iter().chain(model.instance_stmts()) {
        let comment = slice(text, &stmt.span);
        if stmt.kind == StmtKind::Comment && !is_variant_header(comment) {
            ops.push(Opportunity {
                description: format!(
                    "delete the comment `{}`",
                    comment.lines().next().unwrap_or("")
                ),
                edits: vec![Edit::delete(lines(text, &stmt.span))],
                effect: Effect::Rewrite,
            });
        }
    }
    ops.extend(preprocessor_ops(text, model, catalogue));
    ops
}

fn is_variant_header(comment: &str) -> bool {
    comment
        .strip_prefix("//")
        .is_some_and(|c| c.trim_start().starts_with("Meta test"))
}

/// A line of the text: its span with the line break, and its content trimmed.
struct Line<'t> {
    span: std::ops::Range<usize>,
    content: &'t str,
}

/// The lines before the first definition (instance or `main`).
fn preamble_lines<'t>(text: &'t [u8], model: &TestModel) -> Vec<Line<'t>> {
    let end = model.first_definition();
    let mut out = Vec::new();
    let mut start = 0;
    while start < end {
        let stop = text[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| start + p + 1);
        if stop > end {
            break;
        }
        out.push(Line {
            span: start..stop,
            content: slice(text, &(start..stop)).trim(),
        });
        start = stop;
    }
    out
}

/// Whether `content` is the directive `#<name>` (spaces allowed after `#`).
fn directive(content: &str, name: &str) -> bool {
    content
        .strip_prefix('#')
        .map(str::trim_start)
        .is_some_and(|d| {
            d.starts_with(name)
                && !d[name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// How often each identifier occurs in the code of `text`.
fn name_counts(text: &[u8]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for name in identifiers(text) {
        *counts.entry(name).or_insert(0) += 1;
    }
    counts
}

fn preprocessor_ops(text: &[u8], model: &TestModel, catalogue: &Catalogue) -> Vec<Opportunity> {
    let lines = preamble_lines(text, model);
    let counts = name_counts(text);
    // A macro the build reads: named by a header of the EXECUTE build, or by the test's code
    // outside its own `#define` line (`#define NAME …`: NAME is the line's second identifier).
    let read = |line: &Line<'_>| {
        let own = identifiers(line.content.as_bytes());
        own.get(1).is_some_and(|name| {
            let in_line = own.iter().filter(|n| *n == name).count();
            catalogue.execute_names.contains(name) || counts.get(name).is_some_and(|&c| c > in_line)
        })
    };
    let mut ops = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let spec_header = directive(line.content, "include") && line.content.contains('"');
        let define = directive(line.content, "define") && !read(line);
        if (directive(line.content, "include") && !spec_header) || define {
            ops.push(Opportunity {
                description: format!("delete `{}`", line.content),
                edits: vec![Edit::delete(line.span.clone())],
                effect: Effect::Rewrite,
            });
        }
        if line.content.starts_with("//") {
            ops.push(Opportunity {
                description: format!("delete the comment `{}`", line.content),
                edits: vec![Edit::delete(line.span.clone())],
                effect: Effect::Rewrite,
            });
        }
        let next = lines[i + 1..].iter().find(|l| !l.content.is_empty());
        if directive(line.content, "else") && next.is_some_and(|l| directive(l.content, "endif")) {
            ops.push(Opportunity {
                description: "delete an empty #else".to_string(),
                edits: vec![Edit::delete(line.span.clone())],
                effect: Effect::Rewrite,
            });
        }
        let opens = ["if", "ifdef", "ifndef"]
            .iter()
            .any(|d| directive(line.content, d));
        if let (true, Some(end)) = (opens, next.filter(|l| directive(l.content, "endif"))) {
            ops.push(Opportunity {
                description: format!("delete the empty group `{}`", line.content),
                edits: vec![Edit::delete(line.span.start..end.span.end)],
                effect: Effect::Rewrite,
            });
        }
    }
    ops
}
