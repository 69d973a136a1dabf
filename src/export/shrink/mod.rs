//! The minimal standalone (design §10, issue 28): rewrites of a verified export that make it read
//! like a test a library maintainer would paste. Each kind proposes keys; [`apply`] turns a set
//! of keys into a new [`Standalone`] (pure text work), and `minimise` judges it with the check,
//! all keys of a kind at once, halving on rejection. After every rewrite [`prune`] drops what
//! nothing uses any more (test functions, spec declarations).
//!
//! There are five kinds, one file each, each with its keys and its rewrite: `inline` (a test
//! function called once, inlined at its call), `context` (a context object read member by
//! member, replaced by its members), `fold` (a variable folded into its one use), `flatten` (a
//! spec function alone in its namespace, moved to the global one) and `infix` (an operator
//! function called by name, written as its operator). This module owns the dispatch, the pruning
//! and the text helpers they share.
//!
//! `minimise` tries the kinds in [`Kind::ALL`]'s order, again while a round accepts something
//! (a fold can become possible once another is made), within its budget of runs.

use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::as_operand;
use crate::document::declarations::{Declaration, Item};
use crate::document::{Document, Function, Stmt, StmtKind};

mod context;
mod flatten;
mod fold;
mod infix;
mod inline;

use super::simplify::used_includes;
use super::{closure, Chunk, Standalone};

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

/// The keys `kind` proposes on `sa` (each kind's `keys` says what they name).
pub(crate) fn keys(kind: Kind, sa: &Standalone) -> Result<Vec<String>> {
    let doc = Document::parse(sa.test.clone().into_bytes())?;
    let text = sa.test.as_str();
    Ok(match kind {
        Kind::Inline => inline::keys(&doc, text),
        Kind::Context => context::keys(&doc, text, &sa.chunks),
        Kind::Fold => fold::keys(&doc, text),
        Kind::Flatten => flatten::keys(sa),
        Kind::Infix => infix::keys(&doc, sa)?,
    })
}

/// `sa` with the rewrites of `kind` named by `keys` applied (those that still apply) and what
/// is then unused pruned; `None` when nothing applied.
pub(crate) fn apply(kind: Kind, sa: &Standalone, keys: &[String]) -> Result<Option<Standalone>> {
    let mut out = sa.clone();
    let changed = match kind {
        Kind::Inline => inline::apply(&mut out, keys)?,
        Kind::Context => each_key(&mut out, keys.iter(), context::apply)?,
        // The last first.
        Kind::Fold => each_key(&mut out, keys.iter().rev(), fold::apply)?,
        Kind::Infix => each_key(&mut out, keys.iter(), infix::apply)?,
        Kind::Flatten => each_key(&mut out, keys.iter(), flatten::apply)?,
    };
    if !changed {
        return Ok(None);
    }
    prune(&mut out)?;
    Ok(Some(out))
}

/// The rewrite `one` of each of `keys` in turn, on `out` as the earlier ones left it (a key
/// that no longer applies changes nothing); whether one changed it.
fn each_key<'k>(
    out: &mut Standalone,
    keys: impl Iterator<Item = &'k String>,
    one: fn(&mut Standalone, &str) -> Result<bool>,
) -> Result<bool> {
    let mut changed = false;
    for key in keys {
        changed |= one(out, key)?;
    }
    Ok(changed)
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

/// The qualified name of `d`.
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
