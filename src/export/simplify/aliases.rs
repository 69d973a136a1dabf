//! The spec's aliases of library types (`typedef iset::Set set_term;` in namespace `fuzz`)
//! replaced, in the declarations and the test code, by the library type, and dropped.

use super::qualified_names;
use crate::document::declarations::Declaration;

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
pub(in crate::export) fn resolve_aliases(
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
