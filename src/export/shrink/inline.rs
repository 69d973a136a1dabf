//! Inlining ([`super::Kind::Inline`]): a test function called once, whose body is
//! straight-line (declarations and expression statements, then `return E;`), is inlined at its
//! call when the call is the whole value of its statement (`T x = f(…);`, `x = f(…);`, `f(…);`,
//! `return f(…);`); a parameter the body never assigns is replaced by a plain argument (a name
//! or a non-negative integer), any other becomes a variable initialised by its argument; body
//! names that clash with the caller's are renamed.

use std::collections::HashSet;
use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::{is_ident, split_top};
use crate::document::{Document, Function, Stmt, StmtKind};

use super::{code, is_number, matching_close, modified, unwrapped, Standalone};

/// The keys of [`super::Kind::Inline`]: the names of the test's functions that can be inlined
/// at their one call.
pub(super) fn keys(doc: &Document, text: &str) -> Vec<String> {
    doc.outline()
        .functions
        .iter()
        .filter(|f| inline_site(doc, text, &f.name).is_some())
        .map(|f| f.name.clone())
        .collect()
}

/// Inline the functions `keys` names, while one of them can be; whether one was.
pub(super) fn apply(out: &mut Standalone, keys: &[String]) -> Result<bool> {
    let mut changed = false;
    loop {
        let doc = Document::parse(out.test.clone().into_bytes())?;
        let site = keys
            .iter()
            .find_map(|k| inline_site(&doc, &out.test, k).map(|s| (k, s)));
        let Some((name, site)) = site else { break };
        let Some(test) = inline(&doc, &out.test, name, &site) else {
            break;
        };
        out.test = test;
        changed = true;
    }
    Ok(changed)
}

/// Where a function is called once: the caller, the statement's index in its body, the call's
/// span and arguments.
struct OnlyCall {
    caller: usize,
    stmt: usize,
    call: Range<usize>,
    args: Vec<Range<usize>>,
}

/// The one call of the test function `name` when it can be inlined there (see the module doc).
fn inline_site(doc: &Document, text: &str, name: &str) -> Option<OnlyCall> {
    let functions = &doc.outline().functions;
    let callee = functions.iter().find(|f| f.name == name)?;
    if name == "main"
        || !callee.namespaces.is_empty()
        || callee.return_type == "void"
        || functions.iter().filter(|f| f.name == name).count() != 1
        || doc.identifiers().iter().filter(|(n, _)| n == name).count() != 2
        || straight_line(callee, text).is_none()
    {
        return None;
    }
    for (ci, caller) in functions.iter().enumerate() {
        if caller.name == name {
            continue;
        }
        for (si, stmt) in caller.body.iter().enumerate() {
            let Some(call) = stmt.calls.iter().find(|c| c.callee == name) else {
                continue;
            };
            if call.args.len() != callee.params.len() {
                return None;
            }
            let before = text[stmt.span.start..call.span.start].trim();
            let after = text[call.span.end..stmt.span.end].trim();
            let whole_value = before.is_empty()
                || before == "return"
                || (before.ends_with('=')
                    && !before[..before.len() - 1].ends_with(|c: char| "=!<>+-*/%&|^".contains(c))
                    && !before.contains(['(', '[', '{']));
            if after != ";" || !whole_value {
                return None;
            }
            return Some(OnlyCall {
                caller: ci,
                stmt: si,
                call: call.span.clone(),
                args: call.args.clone(),
            });
        }
    }
    None
}

/// The code statements of `f` and its returned expression's span, when its body is
/// straight-line: declarations (one declarator each) and expression statements, then
/// `return E;`; and its parameters are named, without default values.
fn straight_line<'f>(f: &'f Function, text: &str) -> Option<(Vec<&'f Stmt>, Range<usize>)> {
    let mut stmts = code(f);
    let last = stmts.pop()?;
    let ret = text[last.span.clone()].strip_prefix("return")?;
    if !ret.starts_with([' ', '(', '\t', '\n']) || f.params.iter().any(|p| p.name.is_empty()) {
        return None;
    }
    let ok = stmts.iter().all(|s| match s.kind {
        StmtKind::Decl => s.decl.as_ref().is_some_and(|d| !d.multiple),
        StmtKind::Expr => true,
        _ => false,
    });
    if !ok || params_text(f, text)?.iter().any(|p| p.contains('=')) {
        return None;
    }
    let expr_start = last.span.end - ret.len() + (ret.len() - ret.trim_start().len());
    let expr_end = last.span.start + text[last.span.clone()].trim_end().len() - 1;
    (expr_start < expr_end).then_some((stmts, expr_start..expr_end))
}

/// The text of each parameter declaration of `f`.
fn params_text<'t>(f: &Function, text: &'t str) -> Option<Vec<&'t str>> {
    let open = f.name_span.end + text[f.name_span.end..].find('(')?;
    let close = open + matching_close(&text[open..])?;
    let inner = text[open + 1..close].trim();
    if inner.is_empty() || inner == "void" {
        return Some(Vec::new());
    }
    Some(split_top(inner, b',').into_iter().map(str::trim).collect())
}

/// The test text with `name` inlined at `site`.
fn inline(doc: &Document, text: &str, name: &str, site: &OnlyCall) -> Option<String> {
    let functions = &doc.outline().functions;
    let callee = functions.iter().find(|f| f.name == name)?;
    let caller = &functions[site.caller];
    let (stmts, ret) = straight_line(callee, text)?;
    let (renames, mut lines) = inline_names(doc, text, callee, caller, site, &stmts)?;
    for s in &stmts {
        lines.push(renamed(
            text,
            &renames,
            s.span.clone(),
            s.decl.as_ref().map(|d| &d.name_span),
            s,
        ));
    }
    let last = code(callee).pop()?;
    let value = renamed(text, &renames, ret, None, last);
    let stmt = &caller.body[site.stmt];
    let indent = indent_of(text, &stmt.span);
    let mut call_site = text[stmt.span.clone()].to_string();
    let (cs, ce) = (
        site.call.start - stmt.span.start,
        site.call.end - stmt.span.start,
    );
    call_site.replace_range(cs..ce, unwrapped(&value));
    lines.push(call_site);
    let mut out = text.to_string();
    out.replace_range(stmt.span.clone(), &lines.join(&format!("\n{indent}")));
    Some(out)
}

/// Names and what they become, a later rename of a name overriding an earlier one.
type Renames = Vec<(String, String)>;

/// What each name of the body of `callee` (`stmts`) becomes when inlined into `caller` at
/// `site`, and the declarations of the parameters that become variables.
fn inline_names(
    doc: &Document,
    text: &str,
    callee: &Function,
    caller: &Function,
    site: &OnlyCall,
    stmts: &[&Stmt],
) -> Option<(Renames, Vec<String>)> {
    let params = params_text(callee, text)?;
    let taken: HashSet<String> = doc.identifiers().into_iter().map(|(n, _)| n).collect();
    let mut fresh_taken = taken.clone();
    let mut fresh = |base: &str| -> String {
        if !caller_uses(caller, base) && !fresh_taken.contains(&format!("#{base}")) {
            fresh_taken.insert(format!("#{base}"));
            return base.to_string();
        }
        let new = (1..)
            .map(|k| format!("{base}_{k}"))
            .find(|n| !fresh_taken.contains(n))
            .unwrap_or_default();
        fresh_taken.insert(new.clone());
        new
    };
    let mut renames: Renames = Vec::new();
    let mut declared: Vec<String> = Vec::new();
    for ((p, ptext), arg) in callee.params.iter().zip(&params).zip(&site.args) {
        let arg = text[arg.clone()].trim();
        let plain = is_ident(arg) || (is_number(arg) && !arg.starts_with('-'));
        if plain && !modified(stmts, &p.name, text) {
            renames.push((p.name.clone(), arg.to_string()));
            continue;
        }
        if ptext.contains(['(', '[']) || !ptext.ends_with(p.name.as_str()) {
            return None;
        }
        let new = fresh(&p.name);
        let ty = &ptext[..ptext.len() - p.name.len()];
        declared.push(format!("{ty}{new} = {arg};"));
        renames.push((p.name.clone(), new));
    }
    for s in stmts {
        if let Some(d) = &s.decl {
            let new = fresh(&d.name);
            renames.push((d.name.clone(), new));
        }
    }
    Some((renames, declared))
}

/// The text at `span` of statement `s` with its names (and the name at `extra`) renamed by
/// `renames`, the last rename of a name winning.
fn renamed(
    text: &str,
    renames: &[(String, String)],
    span: Range<usize>,
    extra: Option<&Range<usize>>,
    s: &Stmt,
) -> String {
    let mut edits: Vec<(Range<usize>, String)> = s
        .idents
        .iter()
        .filter(|(_, r)| r.start >= span.start && r.end <= span.end)
        .filter(|(_, r)| !text[..r.start].trim_end().ends_with(['.', '>', ':']))
        .filter_map(|(n, r)| {
            let to = renames.iter().rev().find(|(from, _)| from == n)?;
            Some((r.clone(), to.1.clone()))
        })
        .collect();
    if let Some(r) = extra {
        let n = &text[r.clone()];
        if let Some((_, to)) = renames.iter().rev().find(|(from, _)| from == n) {
            edits.push((r.clone(), to.clone()));
        }
    }
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text[span.clone()].to_string();
    for (r, to) in edits {
        out.replace_range(r.start - span.start..r.end - span.start, &to);
    }
    out
}

/// The indentation before the statement at `span`: the whitespace from its line's start, or
/// nothing when other text precedes it on the line.
fn indent_of(text: &str, span: &Range<usize>) -> String {
    let line = text[..span.start].rfind('\n').map_or(0, |p| p + 1);
    let before = &text[line..span.start];
    match before.trim().is_empty() {
        true => before.to_string(),
        false => String::new(),
    }
}

/// Whether `caller` (its parameters or body) uses the name `n`.
fn caller_uses(caller: &Function, n: &str) -> bool {
    caller.params.iter().any(|p| p.name == n)
        || caller.body.iter().any(|s| {
            s.idents.iter().any(|(m, _)| m == n) || s.decl.as_ref().is_some_and(|d| d.name == n)
        })
}
