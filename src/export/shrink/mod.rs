//! The minimal standalone (design §10, issue 28): rewrites of a verified export that make it read
//! like a test a library maintainer would paste. Each kind proposes keys; [`apply`] turns a set
//! of keys into a new [`Standalone`] (pure text work), and `minimise` judges it with the check,
//! all keys of a kind at once, halving on rejection. After every rewrite [`prune`] drops what
//! nothing uses any more (test functions, spec declarations).
//!
//! - [`Kind::Inline`]: a test function called once, whose body is straight-line (declarations
//!   and expression statements, then `return E;`), is inlined at its call when the call is the
//!   whole value of its statement (`T x = f(…);`, `x = f(…);`, `f(…);`, `return f(…);`);
//!   a parameter the body never assigns is replaced by a plain argument (a name or a
//!   non-negative integer), any other becomes a variable initialised by its argument; body
//!   names that clash with the caller's are renamed.
//! - [`Kind::Context`]: an object of a spec class whose constructor only stores its parameters
//!   (the fuzz context), only read member by member, becomes those members: a reference member
//!   bound to a variable is that variable, a member holding a number is that number, an unread
//!   member goes, and a variable declared without initialiser only to be passed to the
//!   constructor goes with it.
//! - [`Kind::Fold`]: a local variable whose value is read once, by the next statement, is
//!   replaced there by its initialiser (`T x = E; y = f(x);` → `y = f(E);`; when the next
//!   statement assigns `x`, it keeps the declaration); a variable initialised by a name or a
//!   number, which no later statement assigns, is replaced by it everywhere. The moved
//!   expression crosses no statement, so no library call is duplicated or reordered.
//! - [`Kind::Flatten`]: a spec function alone in its namespace moves to the global one, its
//!   qualified uses unqualified (`metalib::checks::check_equal` → `check_equal`).
//! - [`Kind::Infix`]: an operator function called by name (`z3::operator+(a, b)`) is written
//!   as its operator (`a + b`), in the test's functions and the spec's; see [`infix`].
//!
//! `minimise` tries the kinds in this order, again while a round accepts something (a fold
//! can become possible once another is made), within its budget of runs.

use std::collections::HashSet;
use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::{as_operand, is_ident, split_top};
use crate::document::declarations::{Declaration, Item};
use crate::document::{Document, Function, Stmt, StmtKind};

mod fold;
mod infix;

use fold::folds;

use super::simplify::{qualified_names, used_includes};
use super::{closure, refers_to, Chunk, Standalone};

/// The kinds of rewrite, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Inline,
    Context,
    Fold,
    Flatten,
    Infix,
}

impl Kind {
    pub(crate) const ALL: [Kind; 5] = [
        Kind::Inline,
        Kind::Context,
        Kind::Fold,
        Kind::Flatten,
        Kind::Infix,
    ];

    /// What it does, for the report.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Inline => "functions called once inlined",
            Kind::Context => "context objects replaced by their members",
            Kind::Fold => "variables folded into their use",
            Kind::Flatten => "spec functions moved out of their namespace",
            Kind::Infix => "operator calls written as operators",
        }
    }
}

/// The keys `kind` proposes on `sa`: function names ([`Kind::Inline`]), variable names of
/// `main` ([`Kind::Context`]), `function/variable/definition text` ([`Kind::Fold`]), qualified
/// chunk names ([`Kind::Flatten`]), `test|function/call text` or `spec NAME|function/call
/// text` ([`Kind::Infix`]).
pub(crate) fn keys(kind: Kind, sa: &Standalone) -> Result<Vec<String>> {
    let doc = Document::parse(sa.test.clone().into_bytes())?;
    let text = sa.test.as_str();
    Ok(match kind {
        Kind::Inline => doc
            .outline()
            .functions
            .iter()
            .filter(|f| inline_site(&doc, text, &f.name).is_some())
            .map(|f| f.name.clone())
            .collect(),
        Kind::Context => context_objects(&doc, text, &sa.chunks)
            .into_iter()
            .map(|c| c.var)
            .collect(),
        Kind::Fold => doc
            .outline()
            .functions
            .iter()
            .flat_map(|f| folds(f, text).into_iter().map(|k| k.key(f, text)))
            .collect(),
        Kind::Flatten => (0..sa.chunks.len())
            .filter(|&i| flattenable(sa, i))
            .map(|i| qualified(&sa.chunks[i].decl))
            .collect(),
        Kind::Infix => {
            let mut keys = infix::keys_in(TEST_SCOPE, &doc, text);
            for c in &sa.chunks {
                let chunk = Document::parse(c.text.clone().into_bytes())?;
                keys.extend(infix::keys_in(&chunk_scope(c), &chunk, &c.text));
            }
            keys
        }
    })
}

/// `sa` with the rewrites of `kind` named by `keys` applied (those that still apply) and what
/// is then unused pruned; `None` when nothing applied.
pub(crate) fn apply(kind: Kind, sa: &Standalone, keys: &[String]) -> Result<Option<Standalone>> {
    let mut out = sa.clone();
    let mut changed = false;
    match kind {
        Kind::Inline => loop {
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
        },
        Kind::Context => {
            for key in keys {
                let doc = Document::parse(out.test.clone().into_bytes())?;
                let objects = context_objects(&doc, &out.test, &out.chunks);
                if let Some(c) = objects.into_iter().find(|c| &c.var == key) {
                    out.test = c.rewrite(&out.test);
                    changed = true;
                }
            }
        }
        Kind::Fold => {
            for key in keys.iter().rev() {
                let doc = Document::parse(out.test.clone().into_bytes())?;
                let found = doc.outline().functions.iter().find_map(|f| {
                    folds(f, &out.test)
                        .into_iter()
                        .find(|k| &k.key(f, &out.test) == key)
                        .map(|k| k.rewrite(f, &out.test))
                });
                if let Some(test) = found {
                    out.test = test;
                    changed = true;
                }
            }
        }
        Kind::Infix => {
            for key in keys {
                if let Some(test) = infix::apply_in(TEST_SCOPE, &out.test, key)? {
                    out.test = test;
                    changed = true;
                }
                for c in &mut out.chunks {
                    if let Some(text) = infix::apply_in(&chunk_scope(c), &c.text, key)? {
                        c.decl.refs = refs_of(&text).unwrap_or_else(|| c.decl.refs.clone());
                        c.text = text;
                        changed = true;
                    }
                }
            }
        }
        Kind::Flatten => {
            for key in keys {
                if let Some(i) = (0..out.chunks.len())
                    .find(|&i| &qualified(&out.chunks[i].decl) == key && flattenable(&out, i))
                {
                    flatten(&mut out, i)?;
                    changed = true;
                }
            }
        }
    }
    if !changed {
        return Ok(None);
    }
    prune(&mut out)?;
    Ok(Some(out))
}

/// Drop the test's functions nothing reachable from `main` uses, then the spec declarations
/// nothing left uses.
pub(crate) fn prune(sa: &mut Standalone) -> Result<()> {
    let doc = Document::parse(sa.test.clone().into_bytes())?;
    let decls: Vec<(Declaration, String)> = doc
        .declarations()
        .into_iter()
        .filter_map(|i| match i {
            Item::Declaration(d) => Some((d, String::new())),
            Item::Include { .. } => None,
        })
        .collect();
    let roots: Vec<Declaration> = decls
        .iter()
        .filter(|(d, _)| d.name.as_deref() == Some("main"))
        .map(|(d, _)| d.clone())
        .collect();
    if roots.is_empty() {
        return Ok(());
    }
    let reached = closure(&roots, &decls);
    let mut test = sa.test.clone();
    let mut kept: Vec<Declaration> = Vec::new();
    for ((d, _), reached) in decls.iter().zip(reached).rev() {
        if reached || d.name.as_deref() == Some("main") {
            kept.push(d.clone());
        } else {
            test.replace_range(with_space_after(&test, &d.span), "");
        }
    }
    sa.test = test.trim_end().to_string();
    let chunks: Vec<(Declaration, String)> = sa
        .chunks
        .iter()
        .map(|c| (c.decl.clone(), String::new()))
        .collect();
    let needed = closure(&kept, &chunks);
    let mut needed = needed.into_iter();
    sa.chunks.retain(|_| needed.next().unwrap_or(true));
    sa.includes = used_includes(std::mem::take(&mut sa.includes), &sa.chunks, &sa.test);
    Ok(())
}

/// The prefix of the [`Kind::Infix`] keys of the test's functions.
const TEST_SCOPE: &str = "test|";

/// The prefix of the [`Kind::Infix`] keys of a spec declaration's functions.
fn chunk_scope(c: &Chunk) -> String {
    format!("spec {}|", qualified(&c.decl))
}

fn qualified(d: &Declaration) -> String {
    let mut parts = d.namespaces.clone();
    parts.extend(d.name.clone());
    parts.join("::")
}

/// Whether `s` is a number, optionally negative (`-48`, `12`, `1.5`, `7u`).
fn is_number(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    d.starts_with(|c: char| c.is_ascii_digit())
        && d.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.')
}

/// The statements of `f` that are code (not comments or lone `;`).
fn code(f: &Function) -> Vec<&Stmt> {
    f.body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Comment | StmtKind::Empty))
        .collect()
}

/// Whether a statement of `stmts` may change the variable `name`: assigns it, increments or
/// decrements it, or takes its address.
fn modified(stmts: &[&Stmt], name: &str, text: &str) -> bool {
    stmts.iter().any(|s| {
        s.idents.iter().any(|(n, span)| {
            if n != name {
                return false;
            }
            let before = text[..span.start].trim_end();
            let after = text[span.end..].trim_start();
            let assigned = after.starts_with('=') && !after.starts_with("==");
            let compound = ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="]
                .iter()
                .any(|op| after.starts_with(op));
            assigned
                || compound
                || after.starts_with("++")
                || after.starts_with("--")
                || before.ends_with("++")
                || before.ends_with("--")
                || (before.ends_with('&') && !before.ends_with("&&"))
        })
    })
}

/// Where a function is called once: the caller, the statement's index in its body, the call's
/// span and arguments.
struct Site {
    caller: usize,
    stmt: usize,
    call: Range<usize>,
    args: Vec<Range<usize>>,
}

/// The one call of the test function `name` when it can be inlined there (see the module doc).
fn inline_site(doc: &Document, text: &str, name: &str) -> Option<Site> {
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
            return Some(Site {
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

/// The index of the `)` closing the `(` that `s` starts with.
fn matching_close(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `value` to stand at `span` of `text`: as it is where it is a whole argument or initialiser,
/// else parenthesised unless primary.
fn operand_at(text: &str, span: &Range<usize>, value: &str) -> String {
    let before = text[..span.start].trim_end();
    let after = text[span.end..].trim_start();
    let assigned = before.ends_with('=')
        && !before[..before.len() - 1].ends_with(|c: char| "=!<>+-*/%&|^".contains(c));
    if (before.ends_with(['(', ',']) || assigned || before.ends_with("return"))
        && after.starts_with([',', ')', ';'])
    {
        unwrapped(value).to_string()
    } else {
        as_operand(value)
    }
}

/// `value` trimmed, without parentheses around all of it.
fn unwrapped(value: &str) -> &str {
    let mut v = value.trim();
    while v.starts_with('(') && matching_close(v) == Some(v.len() - 1) {
        v = v[1..v.len() - 1].trim();
    }
    v
}

/// `span` extended over the whitespace after it.
fn with_space_after(text: &str, span: &Range<usize>) -> Range<usize> {
    let end = text[span.end..]
        .find(|c: char| !c.is_whitespace())
        .map_or(text.len(), |p| span.end + p);
    span.start..end
}

/// The test text with `name` inlined at `site`.
fn inline(doc: &Document, text: &str, name: &str, site: &Site) -> Option<String> {
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
    site: &Site,
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

/// A context object in `main` ([`Kind::Context`]).
struct ContextObject {
    var: String,
    /// The declaration statement's span.
    decl: Range<usize>,
    /// What replaces the declaration (possibly nothing).
    replacement: String,
    /// Each member use and what replaces it.
    uses: Vec<(Range<usize>, String)>,
    /// Declarations of variables only passed to the constructor, to delete.
    dead: Vec<Range<usize>>,
}

impl ContextObject {
    fn rewrite(&self, text: &str) -> String {
        let mut edits: Vec<(Range<usize>, String)> = self
            .uses
            .iter()
            .map(|(r, v)| (r.clone(), operand_at(text, r, v)))
            .collect();
        let decl = match self.replacement.is_empty() {
            true => with_space_after(text, &self.decl),
            false => self.decl.clone(),
        };
        edits.push((decl, self.replacement.clone()));
        edits.extend(
            self.dead
                .iter()
                .map(|r| (with_space_after(text, r), String::new())),
        );
        edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        let mut out = text.to_string();
        for (r, with) in edits {
            out.replace_range(r, &with);
        }
        out
    }
}

/// The context objects of `main` that can become their members.
fn context_objects(doc: &Document, text: &str, chunks: &[Chunk]) -> Vec<ContextObject> {
    let classes: Vec<super::simplify::PlainClass> = chunks
        .iter()
        .filter_map(|c| {
            super::simplify::plain_class(&c.decl.namespaces, c.decl.name.as_deref()?, &c.text)
        })
        .collect();
    let mut out = Vec::new();
    let Some(main) = doc.outline().functions.iter().find(|f| f.name == "main") else {
        return out;
    };
    for super::simplify::ClassObject {
        stmt,
        var,
        class,
        values,
        uses,
    } in super::simplify::class_objects(main, text, &classes)
    {
        let read: HashSet<usize> = uses.iter().map(|(_, m)| *m).collect();
        let mut declared = Vec::new();
        let mut with = vec![String::new(); class.members.len()];
        let mut dead = Vec::new();
        for (m, ((ty, name), value)) in class.members.iter().zip(&values).enumerate() {
            let reference = ty.ends_with('&');
            if !read.contains(&m) {
                if is_ident(value) {
                    dead.extend(only_passed(main, stmt, value, text));
                }
                continue;
            }
            if (reference && is_ident(value)) || is_number(value) {
                with[m] = value.clone();
            } else {
                let new = format!("{var}_{name}");
                declared.push(format!("{ty} {new} = {value};"));
                with[m] = new;
            }
        }
        out.push(ContextObject {
            var,
            decl: stmt.span.clone(),
            replacement: declared.join(" "),
            uses: uses
                .into_iter()
                .map(|(r, m)| (r, with[m].clone()))
                .collect(),
            dead,
        });
    }
    out
}

/// The declaration of `var` in `main` when it has no initialiser and its only use is in
/// `ctor` (the context object's declaration).
fn only_passed(main: &Function, ctor: &Stmt, var: &str, text: &str) -> Option<Range<usize>> {
    let decl = main
        .body
        .iter()
        .find(|s| s.decl.as_ref().is_some_and(|d| d.name == var))?;
    let d = decl.decl.as_ref()?;
    let uses = main
        .body
        .iter()
        .flat_map(|s| &s.idents)
        .filter(|(n, _)| n == var)
        .count();
    let in_ctor = ctor.idents.iter().filter(|(n, _)| n == var).count();
    (d.init.is_none() && !d.multiple && uses == in_ctor && text[decl.span.clone()].ends_with(';'))
        .then(|| decl.span.clone())
}

/// Whether chunk `i` is a function alone in its (non-global) namespace whose name nothing else
/// declares.
fn flattenable(sa: &Standalone, i: usize) -> bool {
    let d = &sa.chunks[i].decl;
    let Some(name) = d.name.as_deref() else {
        return false;
    };
    !d.namespaces.is_empty()
        && sa.chunks[i].text.contains('(')
        && sa.chunks.iter().enumerate().all(|(j, c)| {
            j == i || (c.decl.namespaces != d.namespaces && c.decl.name.as_deref() != Some(name))
        })
        && !Document::parse(sa.test.clone().into_bytes())
            .map(|doc| {
                doc.declarations()
                    .iter()
                    .any(|it| matches!(it, Item::Declaration(t) if t.name.as_deref() == Some(name)))
            })
            .unwrap_or(true)
}

/// Move chunk `i` to the global namespace, unqualifying the names that mean it.
fn flatten(sa: &mut Standalone, i: usize) -> Result<()> {
    let decl = sa.chunks[i].decl.clone();
    let name = decl.name.clone().unwrap_or_default();
    let unqualify = |text: &str, context: &[String]| -> String {
        let mut out = text.to_string();
        for (span, q) in qualified_names(text).into_iter().rev() {
            let parts: Vec<String> = q
                .trim_start_matches("::")
                .split("::")
                .map(str::to_string)
                .collect();
            if parts.len() > 1 && refers_to(&parts, context, &decl) {
                out.replace_range(span, &name);
            }
        }
        out
    };
    sa.test = unqualify(&sa.test, &[]);
    for c in &mut sa.chunks {
        c.text = unqualify(&c.text, &c.decl.namespaces);
    }
    sa.chunks[i].decl.namespaces.clear();
    for c in &mut sa.chunks {
        c.decl.refs = refs_of(&c.text).unwrap_or_else(|| c.decl.refs.clone());
    }
    Ok(())
}

/// The names the one declaration in `text` refers to.
fn refs_of(text: &str) -> Option<Vec<Vec<String>>> {
    let doc = Document::parse(text.as_bytes().to_vec()).ok()?;
    doc.declarations().into_iter().find_map(|i| match i {
        Item::Declaration(d) => Some(d.refs),
        Item::Include { .. } => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(chunks: &str, test: &str) -> Standalone {
        let doc = Document::parse(chunks.as_bytes().to_vec()).unwrap();
        let chunks = doc
            .declarations()
            .into_iter()
            .filter_map(|i| match i {
                Item::Declaration(d) => {
                    let text = chunks[d.span.clone()].to_string();
                    Some(Chunk {
                        decl: d,
                        text,
                        required: false,
                    })
                }
                Item::Include { .. } => None,
            })
            .collect();
        Standalone {
            includes: Vec::new(),
            chunks,
            test: test.to_string(),
            source: "t.cpp".to_string(),
        }
    }

    fn run(kind: Kind, s: &Standalone) -> Standalone {
        let keys = keys(kind, s).unwrap();
        assert!(!keys.is_empty(), "{kind:?}: no keys in {}", s.test);
        apply(kind, s, &keys).unwrap().unwrap()
    }

    const CTX: &str = "namespace fuzz { class FreeVars { public: int n; };\n\
        class fuzz_context { public: z3::context& ctx; fuzz::FreeVars& fvs;\n\
        fuzz_context(z3::context& _ctx, fuzz::FreeVars& _fvs) : ctx(_ctx), fvs(_fvs) {} ; }; }\n\
        namespace metalib::checks { void check_equal(z3::expr a, z3::expr b) { assert(z3::eq(a, b)); } }\n";

    #[test]
    fn a_function_called_once_is_inlined_and_then_goes() {
        let s = sa(
            CTX,
            "z3::expr mod_2(fuzz::fuzz_context ctx, z3::expr a, unsigned k)\n{\n    \
             z3::expr d = ctx.ctx.int_val(k + 1);\n    z3::expr t = a;\n    return t - d * (t / d);\n}\n\n\
             int main()\n{\n    z3::context ctx;\n    fuzz::FreeVars fvs;\n    fuzz::fuzz_context fctx(ctx, fvs);\n    \
             z3::expr d = fctx.ctx.int_val(3);\n    z3::expr r = mod_2(fctx, d, 12);\n    \
             metalib::checks::check_equal(r, d);\n}",
        );
        let got = run(Kind::Inline, &s);
        assert_eq!(
            got.test,
            "int main()\n{\n    z3::context ctx;\n    fuzz::FreeVars fvs;\n    fuzz::fuzz_context fctx(ctx, fvs);\n    \
             z3::expr d = fctx.ctx.int_val(3);\n    z3::expr d_1 = fctx.ctx.int_val(12 + 1);\n    \
             z3::expr t = d;\n    z3::expr r = t - d_1 * (t / d_1);\n    \
             metalib::checks::check_equal(r, d);\n}"
        );
        // The context object is then read member by member: it becomes `ctx`, and `fvs`, only
        // passed to it, goes with the classes.
        let got = run(Kind::Context, &got);
        assert_eq!(
            got.test,
            "int main()\n{\n    z3::context ctx;\n    \
             z3::expr d = ctx.int_val(3);\n    z3::expr d_1 = ctx.int_val(12 + 1);\n    \
             z3::expr t = d;\n    z3::expr r = t - d_1 * (t / d_1);\n    \
             metalib::checks::check_equal(r, d);\n}"
        );
        assert_eq!(got.chunks.len(), 1, "{:?}", got.chunks);
        // `t` is a copy of `d`; `r` is read once, by the next statement.
        let got = run(Kind::Fold, &got);
        assert_eq!(
            got.test,
            "int main()\n{\n    z3::context ctx;\n    \
             z3::expr d = ctx.int_val(3);\n    z3::expr d_1 = ctx.int_val(12 + 1);\n    \
             metalib::checks::check_equal(d - d_1 * (d / d_1), d);\n}"
        );
        let got = run(Kind::Flatten, &got);
        assert!(got.test.contains("    check_equal(d -"), "{}", got.test);
        assert!(got.chunks[0].decl.namespaces.is_empty());
    }

    #[test]
    fn what_is_not_straight_line_or_called_twice_stays() {
        let s = sa(
            CTX,
            "int f(int a) { if (a) a = 2; return a; }\nint g(int a) { return a + 1; }\n\
             int main() { int x = f(1); int y = g(x) + g(2); return x + y; }",
        );
        assert!(keys(Kind::Inline, &s).unwrap().is_empty());
    }

    #[test]
    fn an_assigned_parameter_becomes_a_variable() {
        let s = sa(
            "",
            "int f(int t1, int t2) { t2 = t2 * 2; return t1 + t2; }\n\
             int main() { int t2 = 3; int y = f(t2, h(4)); return y; }",
        );
        let got = run(Kind::Inline, &s);
        assert_eq!(
            got.test,
            "int main() { int t2 = 3; int t2_1 = h(4);\nt2_1 = t2_1 * 2;\nint y = t2 + t2_1; return y; }"
        );
    }

    #[test]
    fn a_value_read_twice_or_not_next_is_not_folded() {
        let s = sa(
            "",
            "int main() { int a = f(1); int b = g(); int c = a + a; h(c); int d = f(2); g(); h(d); }",
        );
        let keys = keys(Kind::Fold, &s).unwrap();
        // `c` is read once, by the next statement; `a` twice, `d` after another call.
        assert_eq!(keys, vec!["main/c/int c = a + a;"]);
    }

    #[test]
    fn a_redefinition_keeps_the_declaration() {
        let s = sa("", "int main() { int r = f(1); r = g(r, 2); h(r); }");
        let got = apply(Kind::Fold, &s, &["main/r/int r = f(1);".to_string()])
            .unwrap()
            .unwrap();
        assert_eq!(got.test, "int main() { int r = g(f(1), 2); h(r); }");
    }

    #[test]
    fn operator_calls_become_operators_parenthesised_where_needed() {
        let spec = format!(
            "{CTX}namespace metalib::checks {{ void check_sat(z3::expr a, z3::expr b) \
             {{ z3::expr c = z3::operator==(a, b); }} }}\n"
        );
        let s = sa(
            &spec,
            "int main()\n{\n    z3::context ctx;\n    z3::expr a = ctx.int_val(1);\n    \
             z3::expr r = z3::operator+(a, z3::operator-(z3::ite(z3::operator==(a, ctx.int_val(0)), a, z3::operator/(a, (a)))));\n    \
             r = z3::operator*(z3::operator-(a, a), a).simplify();\n    \
             metalib::checks::check_sat(z3::operator-(a, a), !z3::operator<(a, r));\n    \
             return f(1, 2);\n}",
        );
        let got = run(Kind::Infix, &s);
        assert_eq!(
            got.test,
            "int main()\n{\n    z3::context ctx;\n    z3::expr a = ctx.int_val(1);\n    \
             z3::expr r = a + (-z3::ite(a == ctx.int_val(0), a, a / (a)));\n    \
             r = ((a - a) * a).simplify();\n    \
             metalib::checks::check_sat(a - a, !(a < r));\n    \
             return f(1, 2);\n}"
        );
        // In the spec's functions too.
        let check = got
            .chunks
            .iter()
            .find(|c| c.text.contains("check_sat"))
            .unwrap();
        assert!(
            check.text.contains("z3::expr c = a == b;"),
            "{}",
            check.text
        );
        // One key per outermost operator call; a call that is not an operator's has none.
        assert_eq!(keys(Kind::Infix, &s).unwrap().len(), 5);
    }
}
