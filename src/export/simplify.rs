//! What makes an export read in the library's own terms: the spec's aliases of library types
//! replaced by those types ([`resolve_aliases`]), calls of spec functions whose body is one
//! expression (base MRs, checks, `mfr_*` reductions) replaced by that expression
//! ([`inline_calls`]), and standard headers nothing uses any more left out ([`used_includes`]).
//! Text in, text out; the closure of declarations is computed afterwards on the result.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use anyhow::Result;

use crate::document::declarations::Declaration;
use crate::document::{Document, StmtKind};
use crate::passes::as_operand;

use super::Chunk;

/// At most this many calls are inlined (each inlining re-reads the test code).
const MAX_INLINES: usize = 500;

/// Standard headers a spec header includes that the export needs only if it uses one of the
/// names listed (a library header includes what it uses itself).
const STD_HEADERS: [(&str, &[&str]); 2] = [
    ("#include <cassert>", &["assert"]),
    (
        "#include <string>",
        &[
            "std::string",
            "std::to_string",
            "std::stoi",
            "std::stol",
            "std::stoll",
            "std::getline",
        ],
    ),
];

/// A type alias of the spec (`typedef T name;` or `using name = T;`) whose type names no
/// `fuzz`/`metalib` declaration: its qualified name and the type.
fn library_alias(decl: &Declaration, text: &str) -> Option<(String, String)> {
    let name = decl.name.as_deref()?;
    let body = text.trim().strip_suffix(';')?.trim();
    let target = if let Some(rest) = body.strip_prefix("typedef") {
        rest.trim().strip_suffix(name)?.trim()
    } else {
        body.strip_prefix("using")?
            .trim()
            .strip_prefix(name)?
            .trim()
            .strip_prefix('=')?
            .trim()
    };
    let spec = qualified_names(target)
        .iter()
        .any(|(_, n)| n.starts_with("fuzz::") || n.starts_with("metalib::"));
    if decl.namespaces.is_empty() || target.is_empty() || spec || target.contains('(') {
        return None;
    }
    Some((
        format!("{}::{name}", decl.namespaces.join("::")),
        target.to_string(),
    ))
}

/// Replace the spec's type aliases of library types (`fuzz::set_term` → `iset::Set`) in the
/// declarations and the test code by the library type, and drop the aliases. Inside the alias's
/// namespace its unqualified name is replaced too.
pub(super) fn resolve_aliases(
    decls: Vec<(Declaration, String)>,
    test: String,
) -> (Vec<(Declaration, String)>, String) {
    // (qualified name, namespaces, name, type)
    let mut aliases: Vec<(String, Vec<String>, String, String)> = Vec::new();
    let mut rest = Vec::new();
    for (decl, text) in decls {
        match library_alias(&decl, &text) {
            Some((qualified, target)) => aliases.push((
                qualified,
                decl.namespaces,
                decl.name.unwrap_or_default(),
                target,
            )),
            None => rest.push((decl, text)),
        }
    }
    if aliases.is_empty() {
        return (rest, test);
    }
    let replace = |text: &str, namespaces: &[String]| -> String {
        let mut out = String::with_capacity(text.len());
        let mut pos = 0;
        for (span, name) in qualified_names(text) {
            let bare = name.strip_prefix("::").unwrap_or(&name);
            let member = text[..span.start].trim_end().ends_with(['.', '>']);
            let hit = aliases.iter().find(|(q, ns, n, _)| {
                bare == q || (!member && bare == n && namespaces.starts_with(ns))
            });
            if let Some((_, _, _, target)) = hit {
                out.push_str(&text[pos..span.start]);
                out.push_str(target);
                pos = span.end;
            }
        }
        out.push_str(&text[pos..]);
        out
    };
    let test = replace(&test, &[]);
    let decls = rest
        .into_iter()
        .map(|(d, text)| {
            let text = replace(&text, &d.namespaces);
            (d, text)
        })
        .collect();
    (decls, test)
}

/// A spec function whose body is one expression: `return E;`, or `E;` in a `void` function.
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
/// parameters and a body of one `return E;` (or `E;` when it returns `void`) that does not call
/// `name`.
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
    let src = &text[stmt.span.clone()];
    let inner = src.strip_suffix(';')?;
    let (start, expr) = match inner.strip_prefix("return") {
        Some(rest) if f.return_type != "void" && rest.starts_with([' ', '(', '\t', '\n']) => {
            let expr = rest.trim();
            let at = stmt.span.start + inner.len() - rest.trim_start().len();
            (at, expr)
        }
        _ if f.return_type == "void" && stmt.kind == StmtKind::Expr => {
            (stmt.span.start, inner.trim_end())
        }
        _ => return None,
    };
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
pub(super) fn inline_calls(decls: &[(Declaration, String)], mut test: String) -> Result<String> {
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

/// `includes` less the [`STD_HEADERS`] whose names neither the chunks nor the test use.
pub(super) fn used_includes(includes: Vec<String>, chunks: &[Chunk], test: &str) -> Vec<String> {
    let names: HashSet<String> = chunks
        .iter()
        .map(|c| c.text.as_str())
        .chain(std::iter::once(test))
        .flat_map(qualified_names)
        .map(|(_, n)| n.trim_start_matches("::").to_string())
        .collect();
    includes
        .into_iter()
        .filter(|inc| {
            STD_HEADERS
                .iter()
                .find(|(line, _)| line == inc)
                .is_none_or(|(_, uses)| uses.iter().any(|u| names.contains(*u)))
        })
        .collect()
}

/// The (possibly `::`-qualified) names in C++ `text`, outside comments and string and
/// character literals, with their spans.
fn qualified_names(text: &str) -> Vec<(Range<usize>, String)> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += usize::from(b[i] == b'\\') + 1;
                }
                i += 1;
            }
            c if c.is_ascii_digit() => {
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
            }
            c if ident(c) || (c == b':' && b.get(i + 1) == Some(&b':')) => {
                let start = i;
                loop {
                    if b[i..].starts_with(b"::") {
                        i += 2;
                    }
                    let from = i;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                    if i == from || !b[i..].starts_with(b"::") {
                        break;
                    }
                }
                if i == start {
                    i += 1;
                    continue;
                }
                out.push((start..i, text[start..i].to_string()));
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &str) -> Vec<String> {
        qualified_names(s).into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn qualified_names_skip_comments_strings_and_numbers() {
        assert_eq!(
            names("fuzz::set_term a = ::iset::f(\"fuzz::x\", 12); // fuzz::y\nb.c"),
            vec!["fuzz::set_term", "a", "::iset::f", "b", "c"]
        );
    }

    fn decls(spec: &str) -> Vec<(Declaration, String)> {
        let doc = Document::parse(spec.as_bytes().to_vec()).unwrap();
        doc.declarations()
            .into_iter()
            .filter_map(|i| match i {
                crate::document::declarations::Item::Declaration(d) => {
                    let text = spec[d.span.clone()].to_string();
                    Some((d, text))
                }
                _ => None,
            })
            .collect()
    }

    const SPEC: &str = "namespace fuzz { typedef lib::T term; }\n\
        namespace m { namespace add { fuzz::term base(fuzz::ctx c, fuzz::term a, fuzz::term b) {\n\
        return lib::add(a, b); } } }\n\
        namespace m { void check(fuzz::term a) { assert(lib::ok(a)); } }\n\
        fuzz::term twice(fuzz::term a) { return lib::add(a, a); }\n";

    #[test]
    fn aliases_of_library_types_are_replaced_and_dropped() {
        let (d, test) = resolve_aliases(decls(SPEC), "fuzz::term x = y; term z;".to_string());
        assert_eq!(test, "lib::T x = y; term z;");
        assert!(d.iter().all(|(d, _)| d.name.as_deref() != Some("term")));
        assert!(d[0]
            .1
            .contains("lib::T base(fuzz::ctx c, lib::T a, lib::T b)"));
    }

    #[test]
    fn one_expression_functions_are_inlined_unless_an_argument_could_be_lost_or_repeated() {
        let (d, _) = resolve_aliases(decls(SPEC), String::new());
        let test = "int main() { lib::T r = m::add::base(ctx, f(1), x.y);\n\
                    m::check(r); lib::T s = twice(g(r)); lib::T t = twice(r); }";
        let got = inline_calls(&d, test.to_string()).unwrap();
        assert_eq!(
            got,
            "int main() { lib::T r = lib::add(f(1), x.y);\n\
             assert(lib::ok(r)); lib::T s = twice(g(r)); lib::T t = lib::add(r, r); }"
        );
        // An argument with a possible side effect is never dropped.
        let got = inline_calls(&d, "int main() { m::add::base(f(), a, b); }".to_string());
        assert_eq!(got.unwrap(), "int main() { m::add::base(f(), a, b); }");
    }

    #[test]
    fn unused_standard_headers_are_left_out() {
        let inc = vec![
            "#include <cassert>".to_string(),
            "#include <string>".to_string(),
            "#include <vector>".to_string(),
            "#include \"lib.h\"".to_string(),
        ];
        assert_eq!(
            used_includes(inc, &[], "int main() { assert(1); }"),
            vec![
                "#include <cassert>",
                "#include <vector>",
                "#include \"lib.h\""
            ]
        );
    }
}
