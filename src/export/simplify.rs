//! What makes an export read in the library's own terms: the spec's aliases of library types
//! replaced by those types ([`resolve_aliases`]), calls of spec functions whose body returns one
//! expression (base MRs, `mfr_*` reductions) replaced by that expression
//! ([`inline_calls`]), a context object only read member by member replaced by its members
//! ([`scalarise`]), and standard headers nothing uses any more left out ([`used_includes`]).
//! Text in, text out; the closure of declarations is computed afterwards on the result.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::{as_operand, last_ident, split_top};
use crate::document::declarations::Declaration;
use crate::document::{Document, StmtKind};

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

/// A spec class of public data members and one constructor that only initialises each of them
/// from a parameter (the fuzz context): its qualified name, its members (type, name) and, per
/// constructor parameter, the member it initialises.
pub(super) struct PlainClass {
    pub(super) qualified: String,
    pub(super) members: Vec<(String, String)>,
    pub(super) params: Vec<usize>,
}

/// A constructor's parameter names and its `member(value)` initialisers.
type Ctor = (Vec<String>, Vec<(String, String)>);

/// `text` (the declaration of class `name` in `namespaces`) as a [`PlainClass`].
pub(super) fn plain_class(namespaces: &[String], name: &str, text: &str) -> Option<PlainClass> {
    let head = text.trim_start();
    let rest = head
        .strip_prefix("class")
        .or_else(|| head.strip_prefix("struct"))?;
    if !rest
        .trim_start()
        .strip_prefix(name)?
        .trim_start()
        .starts_with('{')
    {
        return None;
    }
    let body = &text[text.find('{')? + 1..text.rfind('}')?];
    let mut members: Vec<(String, String)> = Vec::new();
    // The constructor: its parameter names and its (member, value) initialisers.
    let mut ctor: Option<Ctor> = None;
    for item in split_top(body, b';') {
        let item = item.trim();
        let item = item.strip_prefix("public:").unwrap_or(item).trim();
        if item.is_empty() {
            continue;
        }
        if let Some(after) = item.strip_prefix(name) {
            let after = after.trim_start().strip_prefix('(')?;
            let close = after.find(')')?;
            let params: Vec<String> = split_top(&after[..close], b',')
                .iter()
                .map(|p| last_ident(p).to_string())
                .collect();
            let init = after[close + 1..].trim().strip_prefix(':')?;
            let (list, body) = init.rsplit_once('{')?;
            if body.trim() != "}" || ctor.is_some() {
                return None;
            }
            let inits = split_top(list, b',')
                .iter()
                .map(|i| {
                    let (m, v) = i.trim().strip_suffix(')')?.split_once('(')?;
                    Some((m.trim().to_string(), v.trim().to_string()))
                })
                .collect::<Option<Vec<_>>>()?;
            ctor = Some((params, inits));
        } else {
            let member = last_ident(item);
            let ty = item[..item.len() - member.len()].trim();
            if member.is_empty() || ty.is_empty() || item.contains(['(', '=', '{']) {
                return None;
            }
            members.push((ty.to_string(), member.to_string()));
        }
    }
    let (params, inits) = ctor?;
    if inits.len() != members.len() || params.len() != members.len() {
        return None;
    }
    let params = params
        .iter()
        .map(|p| {
            let (m, _) = inits.iter().find(|(_, v)| v == p)?;
            members.iter().position(|(_, n)| n == m)
        })
        .collect::<Option<Vec<usize>>>()?;
    let distinct: HashSet<&usize> = params.iter().collect();
    if distinct.len() != members.len() {
        return None;
    }
    let mut qualified = namespaces.to_vec();
    qualified.push(name.to_string());
    Some(PlainClass {
        qualified: qualified.join("::"),
        members,
        params,
    })
}

/// Replace, in `main`, a variable of a [`PlainClass`] that is only ever read member by member
/// (`fuzz::fuzz_context fctx(-48, 48);` … `fctx.lo`) by one variable per member (`long lo = -48;`
/// … `lo`): the class is then no longer needed.
pub(super) fn scalarise(decls: &[(Declaration, String)], mut test: String) -> Result<String> {
    let classes: Vec<PlainClass> = decls
        .iter()
        .filter_map(|(d, text)| plain_class(&d.namespaces, d.name.as_deref()?, text))
        .collect();
    if classes.is_empty() {
        return Ok(test);
    }
    let doc = Document::parse(test.clone().into_bytes())?;
    let taken: HashSet<String> = doc.identifiers().into_iter().map(|(n, _)| n).collect();
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for f in doc.outline().functions.iter().filter(|f| f.name == "main") {
        for ClassObject {
            stmt,
            var,
            class,
            values,
            uses,
        } in class_objects(f, &test, &classes)
        {
            let names: Vec<String> = class
                .members
                .iter()
                .map(|(_, m)| {
                    if taken.contains(m) {
                        format!("{var}_{m}")
                    } else {
                        m.clone()
                    }
                })
                .collect();
            let indent: String = {
                let line = test[..stmt.span.start].rfind('\n').map_or(0, |p| p + 1);
                test[line..stmt.span.start].to_string()
            };
            let declared = class
                .members
                .iter()
                .zip(&names)
                .zip(&values)
                .map(|(((ty, _), name), value)| format!("{ty} {name} = {value};"))
                .collect::<Vec<_>>()
                .join(&format!("\n{indent}"));
            edits.push((stmt.span.clone(), declared));
            edits.extend(uses.into_iter().map(|(span, m)| (span, names[m].clone())));
        }
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    for (span, with) in edits {
        test.replace_range(span, &with);
    }
    Ok(test)
}

/// A variable of a [`PlainClass`] declared in `main` with its constructor's arguments, whose
/// every use reads a member.
pub(super) struct ClassObject<'f, 'c> {
    /// Its declaration statement.
    pub(super) stmt: &'f crate::document::Stmt,
    pub(super) var: String,
    pub(super) class: &'c PlainClass,
    /// Each member's value (the constructor argument it is set from), by member index.
    pub(super) values: Vec<String>,
    /// Every use: the span of `var.member` and the member's index ([`member_uses`]).
    pub(super) uses: Vec<(Range<usize>, usize)>,
}

/// The variables of `classes` that `main` (`f`) declares as `T v(args…);` with one argument per
/// constructor parameter and reads only member by member.
pub(super) fn class_objects<'f, 'c>(
    f: &'f crate::document::Function,
    test: &str,
    classes: &'c [PlainClass],
) -> Vec<ClassObject<'f, 'c>> {
    let mut out = Vec::new();
    for stmt in &f.body {
        let Some(decl) = stmt.decl.as_ref().filter(|d| d.direct_init && !d.multiple) else {
            continue;
        };
        let ty = decl.type_text.trim_start_matches("::");
        let Some(class) = classes.iter().find(|c| c.qualified == ty) else {
            continue;
        };
        let Some(init) = decl.init.as_ref() else {
            continue;
        };
        let args = test[init.clone()]
            .trim()
            .strip_prefix('(')
            .and_then(|a| a.strip_suffix(')'))
            .map(|a| split_top(a, b','));
        let Some(args) = args.filter(|a| a.len() == class.params.len()) else {
            continue;
        };
        let Some(uses) = member_uses(f, &decl.name, class, test) else {
            continue;
        };
        let mut values = vec![String::new(); class.members.len()];
        for (arg, &member) in args.iter().zip(&class.params) {
            values[member] = arg.trim().to_string();
        }
        out.push(ClassObject {
            stmt,
            var: decl.name.clone(),
            class,
            values,
            uses,
        });
    }
    out
}

/// Every use of the variable `name` in `f` as the span of `name.member` and the member's index;
/// `None` when a use reads no member of `class`.
pub(super) fn member_uses(
    f: &crate::document::Function,
    name: &str,
    class: &PlainClass,
    test: &str,
) -> Option<Vec<(Range<usize>, usize)>> {
    f.body
        .iter()
        .flat_map(|s| &s.idents)
        .filter(|(n, _)| n == name)
        .map(|(_, span)| {
            let after = test[span.end..].strip_prefix('.')?;
            let member = class.members.iter().position(|(_, m)| {
                after.strip_prefix(m.as_str()).is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
            })?;
            Some((
                span.start..span.end + 1 + class.members[member].1.len(),
                member,
            ))
        })
        .collect()
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
pub(super) fn qualified_names(text: &str) -> Vec<(Range<usize>, String)> {
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
        // A check stays a call: the check script knows a failure by the check's name.
        assert_eq!(
            got,
            "int main() { lib::T r = lib::add(f(1), x.y);\n\
             m::check(r); lib::T s = twice(g(r)); lib::T t = lib::add(r, r); }"
        );
        // An argument with a possible side effect is never dropped.
        let got = inline_calls(&d, "int main() { m::add::base(f(), a, b); }".to_string());
        assert_eq!(got.unwrap(), "int main() { m::add::base(f(), a, b); }");
    }

    #[test]
    fn a_context_read_member_by_member_becomes_its_members() {
        let d = decls(
            "namespace fuzz { class ctx { public: long lo; long hi;\n\
             ctx(long _lo, long _hi) : lo(_lo), hi(_hi) {}; }; }\n",
        );
        let test =
            "int main()\n{\n    fuzz::ctx c(-4, 8);\n    long lo = 1;\n    f(c.lo, c.hi);\n}";
        assert_eq!(
            scalarise(&d, test.to_string()).unwrap(),
            "int main()\n{\n    long c_lo = -4;\n    long hi = 8;\n    long lo = 1;\n    f(c_lo, hi);\n}"
        );
        // Passed whole to a function: the object stays.
        let test = "int main() { fuzz::ctx c(1, 2); g(c); }";
        assert_eq!(scalarise(&d, test.to_string()).unwrap(), test);
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
