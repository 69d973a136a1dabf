//! The sweep (design §4.5), applied to every candidate after its own edits: instances no longer
//! reachable from `main`, region instructions nothing reads, input blocks whose `output_var_<k>`
//! is unused, lone `;` statements and whitespace-only lines. The test runs the unread
//! computations all the same: where the failure is one of them (a crash while computing a value
//! nothing reads), the sweep keeps the names it is told to ([`SweepContext::keep`], found before
//! the search by `crate::reduce`'s unread step).

use std::collections::HashSet;

use crate::catalogue::Catalogue;
use crate::document::{Document, Span, StmtKind};
use crate::edit::Edit;
use crate::model::TestModel;

/// Extend `span` to whole lines when the rest of its first and last lines is blank (trailing `;`
/// of MF++'s `;;` count as blank), so deletions leave no empty line behind.
pub(crate) fn whole_lines(text: &[u8], span: Span) -> Span {
    let mut start = span.start;
    while start > 0 && matches!(text[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    let at_line_start = start == 0 || text[start - 1] == b'\n';
    let mut end = span.end;
    while end < text.len() && matches!(text[end], b' ' | b'\t' | b';' | b'\r') {
        end += 1;
    }
    let at_line_end = end >= text.len() || text[end] == b'\n';
    match (at_line_start, at_line_end) {
        (true, true) => start..(end + 1).min(text.len()),
        (_, true) => span.start..end,
        _ => span,
    }
}

/// Everything the sweep needs besides the text.
#[derive(Debug)]
pub(crate) struct SweepContext<'a> {
    /// The spec catalogue.
    pub(crate) catalogue: &'a Catalogue,
    /// Names of the instances of the text the candidate was made from: an unreached function
    /// with one of these names is an orphan to delete.
    pub(crate) known_instances: &'a HashSet<String>,
    /// Names whose computation stays though nothing reads it, with what it reads.
    pub(crate) keep: &'a HashSet<String>,
}

/// Sweep `doc`. `None` when the text is not, or no longer, a readable MF++ test.
///
/// One round finds everything (reachability from `main`, backward liveness per region, unused
/// inputs), and its deletions keep statements whole, so the result is only checked for syntax
/// errors rather than read again; anything a round leaves is swept with the next candidate.
pub(crate) fn sweep(doc: Document, ctx: &SweepContext) -> Option<Vec<u8>> {
    let model = TestModel::build_with(&doc, ctx.catalogue, Some(ctx.known_instances)).ok()?;
    let edits = sweep_edits(doc.text(), &model, ctx.keep);
    if edits.is_empty() {
        return Some(doc.text().to_vec());
    }
    let swept = doc.edited(&edits).ok()?;
    (!swept.has_syntax_errors()).then(|| swept.text().to_vec())
}

/// Every sweep deletion for `text`, in the order the steps find them, but the computations of
/// the names in `keep`.
fn sweep_edits(text: &[u8], model: &TestModel, keep: &HashSet<String>) -> Vec<Edit> {
    let mut edits = unreached_instances(text, model);
    edits.extend(
        unread_computations(text, model, keep)
            .into_iter()
            .map(|(_, e)| e),
    );
    edits.extend(definition_indentation(text, model));
    edits.extend(lone_semicolons(text, model));
    edits.extend(blank_lines(text, model));
    edits
}

/// Instances `main` no longer reaches.
fn unreached_instances(text: &[u8], model: &TestModel) -> Vec<Edit> {
    model
        .instances
        .iter()
        .filter(|i| i.caller.is_none())
        .map(|inst| Edit::delete(whole_lines(text, inst.span.clone())))
        .collect()
}

/// The computations the test runs though nothing reads them, in the order the sweep deletes
/// them: region instructions, then input blocks; each with the names it defines and its
/// deletion. Those that define a name in `keep` stay.
pub(crate) fn unread_computations(
    text: &[u8],
    model: &TestModel,
    keep: &HashSet<String>,
) -> Vec<(Vec<String>, Edit)> {
    let mut unread = dead_region_instructions(text, model, keep);
    unread.extend(unused_input_blocks(text, model, keep));
    unread
}

/// Region instructions whose definition nothing reads (nor is in `keep`), by backward liveness
/// over each region (regions of unreached instances go with their instance).
fn dead_region_instructions(
    text: &[u8],
    model: &TestModel,
    keep: &HashSet<String>,
) -> Vec<(Vec<String>, Edit)> {
    let mut edits = Vec::new();
    for region in &model.regions {
        if model
            .instances
            .iter()
            .any(|i| i.caller.is_none() && i.name == region.function)
        {
            continue;
        }
        let inside: HashSet<Span> = region.instructions.iter().map(|i| i.span.clone()).collect();
        let mut live: HashSet<&str> = model
            .function_idents(&region.function)
            .filter(|(_, stmt_span)| !inside.contains(stmt_span))
            .map(|(name, _)| name)
            .collect();
        live.insert(region.output.as_str());
        for ins in region.instructions.iter().rev() {
            match (&ins.defines, &ins.type_text) {
                (Some(d), Some(_)) if !live.contains(d.as_str()) && !keep.contains(d) => {
                    edits.push((
                        vec![d.clone()],
                        Edit::delete(whole_lines(text, ins.span.clone())),
                    ));
                    continue;
                }
                _ => {}
            }
            for u in &ins.uses {
                live.insert(u.as_str());
            }
        }
    }
    edits
}

/// Input blocks whose declarations nothing outside the block reads (nor is in `keep`).
fn unused_input_blocks(
    text: &[u8],
    model: &TestModel,
    keep: &HashSet<String>,
) -> Vec<(Vec<String>, Edit)> {
    let mut edits = Vec::new();
    for block in &model.input_blocks {
        let declared: HashSet<&str> = model
            .main_stmts
            .iter()
            .filter(|s| s.span.start >= block.span.start && s.span.end <= block.span.end)
            .filter_map(|s| s.decl.as_ref().map(|d| d.name.as_str()))
            .collect();
        let used = model
            .main_stmts
            .iter()
            .filter(|s| s.span.start >= block.span.end || s.span.end <= block.span.start)
            .flat_map(|s| s.idents.iter())
            .any(|(name, _)| declared.contains(name.as_str()));
        if !used && !declared.iter().any(|d| keep.contains(*d)) {
            let mut names: Vec<String> = declared.iter().map(|d| d.to_string()).collect();
            names.sort();
            edits.push((names, Edit::delete(whole_lines(text, block.span.clone()))));
        }
    }
    edits
}

/// MF++'s indentation quirk: the return type of a definition after a step that transplanted
/// nothing starts indented. Top-level definitions start at column 0.
fn definition_indentation(text: &[u8], model: &TestModel) -> Vec<Edit> {
    let mut edits = Vec::new();
    for start in model
        .instances
        .iter()
        .filter(|i| i.caller.is_some())
        .map(|i| i.span.start)
        .chain(std::iter::once(model.main_span.start))
    {
        let indent = text[..start]
            .iter()
            .rev()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let at_line_start = start == indent || text[start - indent - 1] == b'\n';
        if indent > 0 && at_line_start {
            edits.push(Edit::delete(start - indent..start));
        }
    }
    edits
}

/// Lone `;` statements in main and in instances.
fn lone_semicolons(text: &[u8], model: &TestModel) -> Vec<Edit> {
    model
        .main_stmts
        .iter()
        .chain(model.instance_stmts())
        .filter(|s| s.kind == StmtKind::Empty)
        .map(|stmt| Edit::delete(whole_lines(text, stmt.span.clone())))
        .collect()
}

/// Whitespace-only lines from the first instance (or main) to the end of main, except those
/// that separate variants (`// Meta test` comments) for readability; one empty line goes before
/// each variant that has none.
fn blank_lines(text: &[u8], model: &TestModel) -> Vec<Edit> {
    let from = model.first_definition();
    let from = text[..from]
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    let to = model.main_span.end.min(text.len());
    let mut edits = Vec::new();
    let mut line_start = from;
    let mut prev_blank = false;
    while line_start < to {
        let line_end = text[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|p| line_start + p)
            .unwrap_or(text.len());
        let blank = text[line_start..line_end]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        if blank && line_end < text.len() {
            if !starts_variant(&text[(line_end + 1).min(text.len())..]) {
                edits.push(Edit::delete(line_start..line_end + 1));
            } else if line_end > line_start {
                // The separator line keeps no indentation.
                edits.push(Edit::delete(line_start..line_end));
            }
        } else if !blank && !prev_blank && text[line_start..line_end].starts_with(b"// Meta test") {
            // One empty line before each variant, for the reader.
            edits.push(Edit::replace(line_start..line_start, "\n"));
        }
        prev_blank = blank;
        line_start = line_end + 1;
    }
    edits
}

/// Whether `rest` (the text after a line break) starts with a variant's `// Meta test` comment,
/// after indentation.
fn starts_variant(rest: &[u8]) -> bool {
    rest.iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .map(|p| &rest[p..])
        .unwrap_or(&[])
        .starts_with(b"// Meta test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_takes_indentation_newline_and_trailing_semicolons() {
        let t = b"a\n    int x = 1;;\nb\n";
        let span = 6..16;
        assert_eq!(&t[span.clone()], b"int x = 1;");
        let w = whole_lines(t, span);
        assert_eq!(&t[w], b"    int x = 1;;\n");
    }

    #[test]
    fn whole_lines_keeps_other_content_on_the_line() {
        let t = b"f(); g();\n";
        assert_eq!(whole_lines(t, 5..9), 5..9);
        assert_eq!(whole_lines(t, 0..4), 0..4);
    }
}
