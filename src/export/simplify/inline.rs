//! Calls of spec functions whose body returns one expression (base MRs, `mfr_*` reductions)
//! replaced in the test code by that expression, the call's arguments in place of the
//! parameters, unless an argument with a possible side effect would be dropped or evaluated
//! twice.

use std::collections::HashMap;
use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::as_operand;
use crate::document::declarations::Declaration;
use crate::document::{Document, StmtKind};

/// At most this many calls are inlined (each inlining re-reads the test code).
const MAX_INLINES: usize = 500;

/// A spec function whose body is one `return E;`.
struct Inlinable {
    params: Vec<String>,
    expr: String,
    /// For each parameter, the spans of its uses in `expr`.
    uses: Vec<Vec<Range<usize>>>,
}

/// The inlinable functions among `decls`, by qualified name (overloaded names are left out).
fn inlinable(decls: &[(Declaration, String)]) -> HashMap<Vec<String>, Inlinable> {
    let mut found: HashMap<Vec<String>, Option<Inlinable>> = HashMap::new();
    for (decl, text) in decls {
        let Some(name) = decl.name.as_deref() else {
            continue;
        };
        let mut key = decl.namespaces.clone();
        key.push(name.to_string());
        let entry = one_expression(name, text);
        found.entry(key).and_modify(|e| *e = None).or_insert(entry);
    }
    found
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
}

/// `text` as an [`Inlinable`], when it defines the non-template function `name` with named
/// parameters and a body of one `return E;` that does not call `name`. (A `void` function, such
/// as a check, stays: the check script recognises a failing check by its name.)
fn one_expression(name: &str, text: &str) -> Option<Inlinable> {
    if text.trim_start().starts_with("template") {
        return None;
    }
    let doc = Document::parse(text.as_bytes().to_vec()).ok()?;
    let [f] = doc.outline().functions.as_slice() else {
        return None;
    };
    if f.name != name || f.params.iter().any(|p| p.name.is_empty()) {
        return None;
    }
    let mut body = f
        .body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Comment | StmtKind::Empty));
    let (stmt, None) = (body.next()?, body.next()) else {
        return None;
    };
    let inner = text[stmt.span.clone()].strip_suffix(';')?;
    let rest = inner.strip_prefix("return")?;
    if f.return_type == "void" || !rest.starts_with([' ', '(', '\t', '\n']) {
        return None;
    }
    let expr = rest.trim();
    let start = stmt.span.start + inner.len() - rest.trim_start().len();
    if expr.is_empty() || stmt.calls.iter().any(|c| c.callee == name) {
        return None;
    }
    let params: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
    let mut uses = vec![Vec::new(); params.len()];
    for (ident, span) in &stmt.idents {
        let before = text[..span.start].trim_end();
        if span.start < start || span.end > start + expr.len() || before.ends_with([':', '.', '>'])
        {
            continue;
        }
        if let Some(i) = params.iter().position(|p| p == ident) {
            uses[i].push(span.start - start..span.end - start);
        }
    }
    Some(Inlinable {
        params,
        expr: expr.to_string(),
        uses,
    })
}

/// Whether an argument can be dropped or repeated without changing what the code does: a
/// (qualified) name, a member of one, or a number.
fn is_plain(arg: &str) -> bool {
    let arg = arg.trim();
    let digits = arg.strip_prefix('-').unwrap_or(arg);
    (!digits.is_empty()
        && digits
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.'))
        || (!arg.is_empty()
            && arg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'.')))
}

/// Replace, in the test code, every call of a spec function of `decls` whose body is one
/// expression by that expression with the call's arguments in place of the parameters —
/// unless an argument with a possible side effect would be dropped or evaluated twice.
pub(in crate::export) fn inline_calls(
    decls: &[(Declaration, String)],
    mut test: String,
) -> Result<String> {
    let functions = inlinable(decls);
    if functions.is_empty() {
        return Ok(test);
    }
    for _ in 0..MAX_INLINES {
        let doc = Document::parse(test.clone().into_bytes())?;
        let mut edit: Option<(Range<usize>, String)> = None;
        'calls: for call in doc.outline().functions.iter().flat_map(|f| &f.calls) {
            let key: Vec<String> = call
                .callee
                .trim_start_matches("::")
                .split("::")
                .map(str::to_string)
                .collect();
            let Some(f) = functions.get(&key) else {
                continue;
            };
            if call.args.len() != f.params.len() {
                continue;
            }
            let mut subst: Vec<(Range<usize>, String)> = Vec::new();
            for (arg, uses) in call.args.iter().zip(&f.uses) {
                let arg = test[arg.clone()].trim();
                if uses.len() != 1 && !is_plain(arg) {
                    continue 'calls;
                }
                subst.extend(uses.iter().map(|u| (u.clone(), as_operand(arg))));
            }
            subst.sort_by_key(|(span, _)| span.start);
            let mut value = String::new();
            let mut pos = 0;
            for (span, with) in subst {
                value.push_str(&f.expr[pos..span.start]);
                value.push_str(&with);
                pos = span.end;
            }
            value.push_str(&f.expr[pos..]);
            edit = Some((call.span.clone(), as_operand(&value)));
            break;
        }
        let Some((span, with)) = edit else {
            break;
        };
        test.replace_range(span, &with);
    }
    Ok(test)
}
