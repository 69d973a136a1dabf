//! Folds ([`super::Kind::Fold`]): a local variable read once, by the next statement, replaced
//! there by its value; a variable holding a name or a number replaced by it everywhere.

use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::is_ident;
use crate::document::{Document, Function, Stmt};

use super::{code, is_number, modified, operand_at, with_space_after, Standalone};

/// The keys of [`super::Kind::Fold`]: `function/variable/definition text`.
pub(super) fn keys(doc: &Document, text: &str) -> Vec<String> {
    doc.outline()
        .functions
        .iter()
        .flat_map(|f| folds(f, text).into_iter().map(|k| k.key(f, text)))
        .collect()
}

/// Make the fold `key` names, if it still applies; whether it did.
pub(super) fn apply(out: &mut Standalone, key: &str) -> Result<bool> {
    let doc = Document::parse(out.test.clone().into_bytes())?;
    let found = doc.outline().functions.iter().find_map(|f| {
        folds(f, &out.test)
            .into_iter()
            .find(|k| k.key(f, &out.test) == key)
            .map(|k| k.rewrite(f, &out.test))
    });
    let Some(test) = found else {
        return Ok(false);
    };
    out.test = test;
    Ok(true)
}

/// A fold ([`Kind::Fold`]) in one function.
struct Fold {
    /// The defining statement (index into the function's body).
    def: usize,
    var: String,
    /// The value's span.
    value: Range<usize>,
    /// The uses to replace by the value, and whether the definition is a declaration whose
    /// use statement re-assigns the variable (then that statement becomes the declaration).
    uses: Vec<Range<usize>>,
    redeclare: Option<(Range<usize>, String)>,
}

impl Fold {
    fn key(&self, f: &Function, text: &str) -> String {
        format!(
            "{}/{}/{}",
            f.name,
            self.var,
            text[f.body[self.def].span.clone()].trim()
        )
    }

    fn rewrite(&self, f: &Function, text: &str) -> String {
        let value = &text[self.value.clone()];
        let mut edits: Vec<(Range<usize>, String)> = self
            .uses
            .iter()
            .map(|r| (r.clone(), operand_at(text, r, value)))
            .collect();
        if let Some((r, with)) = &self.redeclare {
            edits.push((r.clone(), with.clone()));
        }
        edits.push((
            with_space_after(text, &f.body[self.def].span),
            String::new(),
        ));
        edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        let mut out = text.to_string();
        for (r, with) in edits {
            out.replace_range(r, &with);
        }
        out
    }
}

/// The folds of `f` (see the module doc).
fn folds(f: &Function, text: &str) -> Vec<Fold> {
    let stmts = code(f);
    let locals: Vec<(&str, &str)> = stmts
        .iter()
        .filter_map(|s| s.decl.as_ref())
        .map(|d| (d.name.as_str(), d.type_text.as_str()))
        .collect();
    let mut out = Vec::new();
    for (i, s) in stmts.iter().enumerate() {
        let Some((var, value, is_decl)) = definition(s, text) else {
            continue;
        };
        let value_text = text[value.clone()].trim();
        let local = locals
            .iter()
            .find(|(n, _)| *n == var)
            .is_some_and(|(_, ty)| !ty.contains('&'))
            || is_decl;
        if !local || value_text.is_empty() || value_text.starts_with('{') {
            continue;
        }
        let def = f.body.iter().position(|b| b.span == s.span).unwrap_or(0);
        let rest = &stmts[i + 1..];
        let copy = match is_decl {
            true => copy_fold(def, &var, &value, rest, text),
            false => None,
        };
        out.extend(copy.or_else(|| next_fold(s, def, var, value, is_decl, rest, text)));
    }
    out
}

/// The variable that `s` defines, its value's span, and whether `s` declares it
/// (`T x = E;`, not `x = E;`).
fn definition(s: &Stmt, text: &str) -> Option<(String, Range<usize>, bool)> {
    match (&s.decl, &s.assigns) {
        (Some(d), _) if !d.direct_init && !d.multiple => {
            Some((d.name.clone(), d.init.clone()?, true))
        }
        (None, Some((name, span))) => {
            let after = text[span.end..s.span.end].trim_start();
            if !after.starts_with('=') || after.starts_with("==") {
                return None;
            }
            let start = s.span.end - after.len() + 1;
            let value = start..s.span.start + text[s.span.clone()].trim_end().len() - 1;
            Some((name.clone(), value, false))
        }
        _ => None,
    }
}

/// The spans where `s` reads `var`: not where it assigns it, not a member of that name.
fn reads(s: &Stmt, var: &str, text: &str) -> Vec<Range<usize>> {
    s.idents
        .iter()
        .filter(|(n, r)| n == var && s.assigns.as_ref().is_none_or(|(_, a)| a != r))
        .filter(|(_, r)| !text[..r.start].trim_end().ends_with(['.', '>', ':']))
        .map(|(_, r)| r.clone())
        .collect()
}

/// The fold of `var`, declared by statement `def` as a copy of a name or a number (`value`),
/// that nothing of `rest` assigns: replaced everywhere.
fn copy_fold(
    def: usize,
    var: &str,
    value: &Range<usize>,
    rest: &[&Stmt],
    text: &str,
) -> Option<Fold> {
    let value_text = text[value.clone()].trim();
    if !is_ident(value_text) && !is_number(value_text) {
        return None;
    }
    let until_last = rest
        .iter()
        .rposition(|t| !reads(t, var, text).is_empty())
        .map_or(0, |p| p + 1);
    // The name copied is not changed before the last read, except by the statement of
    // the last read assigning it (its value is computed first).
    let source_stable = !is_ident(value_text)
        || rest[..until_last].iter().enumerate().all(|(k, t)| {
            !modified(&[t], value_text, text)
                || (k + 1 == until_last && t.assigns.as_ref().is_some_and(|(n, _)| n == value_text))
        });
    (until_last > 0 && !modified(rest, var, text) && source_stable).then(|| Fold {
        def,
        var: var.to_string(),
        value: value.clone(),
        uses: rest.iter().flat_map(|t| reads(t, var, text)).collect(),
        redeclare: None,
    })
}

/// The fold of `var`, defined by `s` (statement `def`) as `value`, into the first statement
/// of `rest`, when that reads it once and nothing after it needs the variable.
fn next_fold(
    s: &Stmt,
    def: usize,
    var: String,
    value: Range<usize>,
    is_decl: bool,
    rest: &[&Stmt],
    text: &str,
) -> Option<Fold> {
    let next = rest.first()?;
    let uses = reads(next, &var, text);
    let next_text = &text[next.span.clone()];
    if uses.len() != 1
        || next_text.contains("&&")
        || next_text.contains("||")
        || next_text.contains(['?', '['])
    {
        return None;
    }
    let reassigns = next.assigns.as_ref().is_some_and(|(n, _)| *n == var);
    let later = &rest[1..];
    let read_later = later.iter().any(|t| !reads(t, &var, text).is_empty());
    let redeclare = if is_decl && reassigns {
        let d = s.decl.as_ref();
        let ty = d.map(|d| text[s.span.start..d.name_span.start].to_string());
        ty.map(|ty| (next.span.start..next.span.start, ty))
    } else {
        None
    };
    let ok = if reassigns {
        true
    } else {
        !read_later && (!is_decl || later.iter().all(|t| !mentions(t, &var)))
    };
    ok.then_some(Fold {
        def,
        var,
        value,
        uses,
        redeclare,
    })
}

/// Whether `s` mentions the name `var` at all.
fn mentions(s: &Stmt, var: &str) -> bool {
    s.idents.iter().any(|(n, _)| n == var) || s.decl.as_ref().is_some_and(|d| d.name == var)
}
