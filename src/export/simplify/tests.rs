//! Tests of the rewrites of an export, on a small spec.

use super::*;
use crate::document::declarations::Declaration;
use crate::document::Document;

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
    let test = "int main()\n{\n    fuzz::ctx c(-4, 8);\n    long lo = 1;\n    f(c.lo, c.hi);\n}";
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
