//! Tail tidy (design §10.1): MF++'s odd indentation (signature, braces and the variants' lines
//! at column 0, body statements at four, a block moving with its statement), the `class`
//! keyword MF++ writes before the variants' type, and `main`'s parameters when its body reads
//! neither. Whitespace and spelling only; the oracle still judges each.

use crate::edit::Edit;
use crate::model::TestModel;
use crate::passes::{slice, Effect, Opportunity};

use crate::cpp_text::matching_paren;

/// Indentation, then `class`, then `main`'s parameters.
pub(super) fn tidy_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let mut ops = Vec::new();
    let indent = indentation(text, model);
    if !indent.is_empty() {
        ops.push(Opportunity {
            description: "reindent the definitions and main".to_string(),
            edits: indent.clone(),
            effect: Effect::Rewrite,
        });
    }
    // A declaration at column 0 gets its indentation with `class` (one edit at one place).
    let class: Vec<Edit> = model
        .variants
        .iter()
        .filter_map(|v| v.steps.first()?.decl_head.clone())
        .filter(|head| slice(text, head).starts_with("class "))
        .map(|head| {
            let at = head.start..head.start;
            let indent = indent
                .iter()
                .find(|e| e.span == at)
                .map_or("", |e| e.text.as_str());
            Edit::replace(head.start..head.start + "class ".len(), indent)
        })
        .collect();
    if !class.is_empty() {
        ops.push(Opportunity {
            description: "drop `class` before the variants' type".to_string(),
            edits: class,
            effect: Effect::Rewrite,
        });
    }
    ops.extend(main_params(text, model));
    ops.extend(preamble_blank_lines(text, model));
    ops
}

/// Blank lines at the top of the file, and all but one of each run of blank lines before the
/// first definition (what deleted preprocessor lines leave).
fn preamble_blank_lines(text: &[u8], model: &TestModel) -> Option<Opportunity> {
    let end = model.first_definition();
    let mut edits = Vec::new();
    let mut start = 0;
    let mut previous_blank = true;
    while start < end {
        let stop = text[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| start + p + 1);
        let blank = text[start..stop].iter().all(u8::is_ascii_whitespace);
        if blank && previous_blank && stop <= end {
            edits.push(Edit::delete(start..stop));
        }
        previous_blank = blank;
        start = stop;
    }
    (!edits.is_empty()).then(|| Opportunity {
        description: "delete blank lines before the first definition".to_string(),
        edits,
        effect: Effect::Rewrite,
    })
}

/// The leading whitespace of each line that starts a statement (four spaces) or the signature
/// or a brace of a definition (none), where it differs.
fn indentation(text: &[u8], model: &TestModel) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut set = |line_start: usize, want: &str| {
        let width = text[line_start..]
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        if &text[line_start..line_start + width] != want.as_bytes() {
            edits.push(Edit::replace(line_start..line_start + width, want));
        }
    };
    let bodies = model
        .instances
        .iter()
        .filter(|i| i.caller.is_some())
        .map(|i| (i.span.clone(), body_open(text, &i.span), &i.body))
        .chain(std::iter::once((
            model.main_span.clone(),
            Some(model.main_body.start),
            &model.main_stmts,
        )));
    for (span, open, body) in bodies {
        let Some(open) = open else { continue };
        // Signature lines and the opening brace's line.
        for start in span_line_starts(text, span.start..open + 1) {
            set(start, "");
        }
        for stmt in body.iter() {
            let start = line_start(text, stmt.span.start);
            if text[start..stmt.span.start]
                .iter()
                .all(|&b| b == b' ' || b == b'\t')
            {
                set(start, "    ");
                // The statement's other lines (a block's braces and statements) move with it.
                let shift = 4 - columns(&text[start..stmt.span.start]) as isize;
                let raw = text[stmt.span.clone()]
                    .windows(2)
                    .any(|w| w == b"R\"" || w == b"\\\n");
                if shift != 0 && !raw {
                    for inner in span_line_starts(text, stmt.span.clone())
                        .into_iter()
                        .skip(1)
                    {
                        let width = text[inner..]
                            .iter()
                            .take_while(|&&b| b == b' ' || b == b'\t')
                            .count();
                        if matches!(text.get(inner + width), None | Some(b'\n' | b'\r')) {
                            continue;
                        }
                        let now = columns(&text[inner..inner + width]) as isize;
                        set(inner, &" ".repeat((now + shift).max(0) as usize));
                    }
                }
            }
        }
        let close = line_start(text, span.end - 1);
        if text[close..span.end - 1]
            .iter()
            .all(|&b| b == b' ' || b == b'\t')
        {
            set(close, "");
        }
    }
    edits
}

/// The width of leading whitespace, a tab counting four columns.
fn columns(blank: &[u8]) -> usize {
    blank.iter().map(|&b| if b == b'\t' { 4 } else { 1 }).sum()
}

/// The `{` that opens the body of the definition `span`.
fn body_open(text: &[u8], span: &std::ops::Range<usize>) -> Option<usize> {
    let open = span.start + text[span.clone()].iter().position(|&b| b == b'(')?;
    let close = matching_paren(text, open)?;
    Some(close + text[close..span.end].iter().position(|&b| b == b'{')?)
}

fn line_start(text: &[u8], at: usize) -> usize {
    text[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

/// The starts of the lines that `span` touches.
fn span_line_starts(text: &[u8], span: std::ops::Range<usize>) -> Vec<usize> {
    let mut out = vec![line_start(text, span.start)];
    out.extend(
        (span.start..span.end.min(text.len()))
            .filter(|&i| text[i] == b'\n' && i + 1 < span.end)
            .map(|i| i + 1),
    );
    out
}

/// `main(int argc, char** argv)` becomes `main()` when the body reads neither.
fn main_params(text: &[u8], model: &TestModel) -> Option<Opportunity> {
    let head = model.main_span.start..model.main_body.start;
    let open = head.start + text[head.clone()].iter().position(|&b| b == b'(')?;
    let close = matching_paren(text, open)?;
    if close == open + 1 {
        return None;
    }
    let reads = model
        .function_idents("main")
        .any(|(n, _)| n == "argc" || n == "argv");
    (!reads).then(|| Opportunity {
        description: "drop main's unused parameters".to_string(),
        edits: vec![Edit::replace(open + 1..close, "")],
        effect: Effect::Rewrite,
    })
}
