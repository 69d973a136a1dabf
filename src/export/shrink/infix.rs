//! Infix ([`super::Kind::Infix`]): an operator function called by name (`z3::operator+(a, b)`,
//! `z3::operator-(a)`, as MF++ specs write them) becomes the operator (`a + b`, `-a`). An
//! operand that is not a name, a number, a call or a parenthesised expression is parenthesised,
//! and so is the whole expression unless it stands alone as an argument, an initialiser, the
//! right-hand side of an assignment or a returned value. The rewrite is judged by the check like
//! the others: an overload the operator would resolve to differently fails the check there and
//! is not kept.

use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::is_operand;
use crate::document::{squeeze, Call, Document, Function};

use super::{qualified, refs_of, Chunk, Standalone};

/// The prefix of the [`super::Kind::Infix`] keys of the test's functions.
const TEST_SCOPE: &str = "test|";

/// The prefix of the [`super::Kind::Infix`] keys of a spec declaration's functions.
fn chunk_scope(c: &Chunk) -> String {
    format!("spec {}|", qualified(&c.decl))
}

/// The keys of [`super::Kind::Infix`]: `test|function/call text` for the operator calls of the
/// test's functions (`doc`), `spec NAME|function/call text` for those of the spec's.
pub(super) fn keys(doc: &Document, sa: &Standalone) -> Result<Vec<String>> {
    let mut keys = keys_in(TEST_SCOPE, doc, &sa.test);
    for c in &sa.chunks {
        let chunk = Document::parse(c.text.clone().into_bytes())?;
        keys.extend(keys_in(&chunk_scope(c), &chunk, &c.text));
    }
    Ok(keys)
}

/// Write the operator call `key` names as its operator, in the test or in the spec's
/// declarations; whether it was.
pub(super) fn apply(out: &mut Standalone, key: &str) -> Result<bool> {
    let mut changed = false;
    if let Some(test) = apply_in(TEST_SCOPE, &out.test, key)? {
        out.test = test;
        changed = true;
    }
    for c in &mut out.chunks {
        if let Some(text) = apply_in(&chunk_scope(c), &c.text, key)? {
            c.decl.refs = refs_of(&text).unwrap_or_else(|| c.decl.refs.clone());
            c.text = text;
            changed = true;
        }
    }
    Ok(changed)
}

/// The keys of the outermost operator calls of the functions of `doc` (parsed from `text`: the
/// test, or a spec declaration's text), each `scope` followed by `function/call text`.
fn keys_in(scope: &str, doc: &Document, text: &str) -> Vec<String> {
    doc.outline()
        .functions
        .iter()
        .flat_map(|f| {
            outermost(f, text)
                .into_iter()
                .map(|(k, _)| format!("{scope}{k}"))
        })
        .collect()
}

/// `text` with the operator call of `key` (made by [`keys_in`] with `scope`) written with its
/// operator; `None` when `text` has no such call.
fn apply_in(scope: &str, text: &str, key: &str) -> Result<Option<String>> {
    let Some(key) = key.strip_prefix(scope) else {
        return Ok(None);
    };
    let doc = Document::parse(text.as_bytes().to_vec())?;
    Ok(doc.outline().functions.iter().find_map(|f| {
        outermost(f, text)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, span)| rewrite(f, text, &span))
    }))
}

/// The operator `callee` names, when it is an operator function taking `args` operands.
fn operator(callee: &str, args: usize) -> Option<&str> {
    let name = callee.rsplit("::").next()?;
    let op = name.strip_prefix("operator")?;
    const BINARY: [&str; 18] = [
        "+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "&", "|", "^", "<<",
        ">>",
    ];
    const UNARY: [&str; 4] = ["-", "+", "!", "~"];
    let known = match args {
        2 => BINARY.contains(&op),
        1 => UNARY.contains(&op),
        _ => false,
    };
    known.then_some(op)
}

/// The calls of `f` that are operator calls, with their operator.
fn operator_calls(f: &Function) -> Vec<(&Call, &str)> {
    f.calls
        .iter()
        .filter_map(|c| operator(&c.callee, c.args.len()).map(|op| (c, op)))
        .collect()
}

/// The operator calls of `f` inside no other operator call, each with its key
/// (`function/call text`).
fn outermost(f: &Function, text: &str) -> Vec<(String, Range<usize>)> {
    outermost_in(&operator_calls(f), &(0..text.len()))
        .into_iter()
        .map(|span| {
            (
                format!("{}/{}", f.name, squeeze(&text[span.clone()])),
                span.clone(),
            )
        })
        .collect()
}

/// The spans of the operator calls of `calls` inside `range` and inside no other of them.
fn outermost_in<'c>(calls: &'c [(&Call, &str)], range: &Range<usize>) -> Vec<&'c Range<usize>> {
    let inside: Vec<&Range<usize>> = calls
        .iter()
        .map(|(c, _)| &c.span)
        .filter(|s| range.start <= s.start && s.end <= range.end)
        .collect();
    inside
        .iter()
        .filter(|s| {
            !inside
                .iter()
                .any(|o| o != *s && o.start <= s.start && s.end <= o.end)
        })
        .copied()
        .collect()
}

/// `text` with the outermost operator call at `span` of `f` written with its operator.
fn rewrite(f: &Function, text: &str, span: &Range<usize>) -> String {
    let calls = operator_calls(f);
    let mut out = text.to_string();
    out.replace_range(span.clone(), &in_context(&calls, text, span));
    out
}

/// The call at `span` written with its operator, parenthesised unless its place in `text`
/// takes any expression.
fn in_context(calls: &[(&Call, &str)], text: &str, span: &Range<usize>) -> String {
    let infix = written(calls, text, span);
    let before = text[..span.start].trim_end();
    let after = text[span.end..].trim_start();
    let assigned =
        before.ends_with('=') && !["==", "!=", "<=", ">="].iter().any(|o| before.ends_with(o));
    let alone_before = before.ends_with(['(', ',']) || before.ends_with("return") || assigned;
    let alone_after = after.starts_with([')', ',', ';']);
    if alone_before && alone_after {
        infix
    } else {
        format!("({infix})")
    }
}

/// The operator call at `span` written with its operator, its operands rewritten too.
fn written(calls: &[(&Call, &str)], text: &str, span: &Range<usize>) -> String {
    let Some((call, op)) = calls.iter().find(|(c, _)| c.span == *span) else {
        return text[span.clone()].to_string();
    };
    let operands: Vec<String> = call.args.iter().map(|a| operand(calls, text, a)).collect();
    match operands.as_slice() {
        [a] => format!("{op}{a}"),
        [a, b] => format!("{a} {op} {b}"),
        _ => text[span.clone()].to_string(),
    }
}

/// The argument at `arg` as an operand: its operator calls rewritten, parenthesised unless it is
/// primary or parenthesised already (an operator call is neither).
fn operand(calls: &[(&Call, &str)], text: &str, arg: &Range<usize>) -> String {
    let original = text[arg.clone()].trim();
    let is_call = calls.iter().any(|(c, _)| {
        arg.start <= c.span.start
            && c.span.end <= arg.end
            && text[c.span.clone()].trim() == original
    });
    let rewritten = inner(calls, text, arg);
    if !is_call && is_operand(original) {
        rewritten
    } else {
        format!("({rewritten})")
    }
}

/// The text of `range` with its outermost operator calls rewritten.
fn inner(calls: &[(&Call, &str)], text: &str, range: &Range<usize>) -> String {
    let mut spans = outermost_in(calls, range);
    spans.sort_by_key(|s| std::cmp::Reverse(s.start));
    let mut out = text[range.clone()].to_string();
    for s in spans {
        let local = s.start - range.start..s.end - range.start;
        out.replace_range(local, &in_context(calls, text, s));
    }
    out.trim().to_string()
}
