//! Namespace-scope declarations of a C++ file in preprocessing order, for the standalone export.
//!
//! [`Document::declarations`] flattens namespaces and resolves `#ifdef EXECUTE` to the branch the
//! running build sees (other conditionals, such as include guards, are read through); each
//! declaration carries the names it refers to, so a caller can compute the closure of what a test
//! uses. [`Document::identifiers`] lists every plain identifier with its span, for renaming.

use tree_sitter::Node;

use super::{preorder, Branch, Document, Span};

/// One item at namespace scope, in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// An `#include` the running build sees.
    Include {
        /// The path between the delimiters.
        path: String,
        /// `<…>` rather than `"…"`.
        system: bool,
    },
    /// Anything else: a function, prototype, type, variable or macro definition.
    Declaration(Declaration),
}

/// A declaration with its namespace path and the names it uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// Enclosing namespaces, outermost first.
    pub namespaces: Vec<String>,
    /// The declared name (`None`: nothing named, e.g. `using namespace …;`).
    pub name: Option<String>,
    /// The declaration's bytes, with the `;` that ends a class or enum definition.
    pub span: Span,
    /// Names it refers to, split at `::`, template arguments removed.
    pub refs: Vec<Vec<String>>,
}

/// A node still to look at: a container to open, or an item to emit.
enum Entry<'t> {
    Open(Node<'t>, Vec<String>),
    Emit(Node<'t>, Vec<String>, Span),
}

impl Document {
    /// The namespace-scope items of this file in source order, `EXECUTE` branch taken.
    pub fn declarations(&self) -> Vec<Item> {
        let mut out = Vec::new();
        let mut stack = vec![Entry::Open(self.tree.root_node(), Vec::new())];
        while let Some(entry) = stack.pop() {
            match entry {
                Entry::Emit(node, ns, span) => out.extend(self.item(node, ns, span)),
                Entry::Open(node, ns) => {
                    let mut entries = self.open(node, &ns);
                    entries.reverse();
                    stack.extend(entries);
                }
            }
        }
        out
    }

    /// Every `identifier` node (not field names or parts of qualified names' scopes), in order.
    pub fn identifiers(&self) -> Vec<(String, Span)> {
        let mut out = Vec::new();
        preorder(self.tree.root_node(), |n| {
            if n.kind() == "identifier" {
                let r = n.byte_range();
                out.push((self.slice(r.clone()).to_string(), r));
            }
        });
        out
    }

    /// The entries for the children of container `node` in namespace `ns`.
    fn open<'t>(&self, node: Node<'t>, ns: &[String]) -> Vec<Entry<'t>> {
        let alternative = node.child_by_field_name("alternative").map(|a| a.id());
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.children(&mut cursor).collect();
        let mut entries = Vec::new();
        for (i, child) in children.iter().copied().enumerate() {
            if !child.is_named() || Some(child.id()) == alternative {
                continue;
            }
            match child.kind() {
                "comment" | "preproc_call" | "identifier" | "preproc_arg" => {}
                "namespace_definition" => {
                    let mut inner = ns.to_vec();
                    if let Some(name) = child.child_by_field_name("name") {
                        inner.extend(
                            self.slice(name.byte_range())
                                .split("::")
                                .map(|p| p.trim().to_string()),
                        );
                    }
                    if let Some(body) = child.child_by_field_name("body") {
                        entries.push(Entry::Open(body, inner));
                    }
                }
                "linkage_specification" | "declaration_list" | "preproc_else" => {
                    let inner = child.child_by_field_name("body").unwrap_or(child);
                    entries.push(Entry::Open(inner, ns.to_vec()));
                }
                "preproc_ifdef" | "preproc_if" => {
                    let (then_branch, _) = self.conditional(child);
                    if then_branch == Branch::NotExecute {
                        if let Some(alt) = child.child_by_field_name("alternative") {
                            entries.push(Entry::Open(alt, ns.to_vec()));
                        }
                    } else {
                        entries.push(Entry::Open(child, ns.to_vec()));
                    }
                }
                _ => {
                    let mut span = child.byte_range();
                    if let Some(next) = children.get(i + 1) {
                        if next.kind() == ";" {
                            span.end = next.end_byte();
                        }
                    }
                    entries.push(Entry::Emit(child, ns.to_vec(), span));
                }
            }
        }
        entries
    }

    /// The item for a leaf `node`.
    fn item(&self, node: Node, namespaces: Vec<String>, span: Span) -> Option<Item> {
        if node.kind() == "preproc_include" {
            let path = node.child_by_field_name("path")?;
            let raw = self.slice(path.byte_range());
            return Some(Item::Include {
                path: raw
                    .trim_matches(|c| c == '"' || c == '<' || c == '>')
                    .to_string(),
                system: path.kind() == "system_lib_string",
            });
        }
        let name = declared_name(node).map(|n| self.slice(n.byte_range()).to_string());
        let mut refs = Vec::new();
        preorder(node, |n| {
            let inside_qualified = n
                .parent()
                .is_some_and(|p| p.kind() == "qualified_identifier");
            let wanted = matches!(
                n.kind(),
                "qualified_identifier"
                    | "identifier"
                    | "type_identifier"
                    | "template_function"
                    | "template_type"
            );
            if wanted && !inside_qualified && !inside_template_name(n) {
                refs.push(split_name(self.slice(n.byte_range())));
            }
        });
        Some(Item::Declaration(Declaration {
            namespaces,
            name,
            span,
            refs,
        }))
    }
}

/// Whether `n` is the name part of a template (already counted with its template node).
fn inside_template_name(n: Node) -> bool {
    n.parent().is_some_and(|p| {
        matches!(p.kind(), "template_function" | "template_type")
            && p.child_by_field_name("name").map(|c| c.id()) == Some(n.id())
    })
}

/// `a :: b<int>::c` → `["a", "b", "c"]`.
fn split_name(text: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            c if depth == 0 && !c.is_whitespace() => plain.push(c),
            _ => {}
        }
    }
    plain
        .split("::")
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// The node naming what `node` declares.
fn declared_name(node: Node) -> Option<Node> {
    match node.kind() {
        "template_declaration" => {
            let mut c = node.walk();
            let inner = node
                .named_children(&mut c)
                .filter(|n| n.kind() != "template_parameter_list")
                .last()?;
            declared_name(inner)
        }
        "class_specifier"
        | "struct_specifier"
        | "union_specifier"
        | "enum_specifier"
        | "preproc_def"
        | "preproc_function_def"
        | "alias_declaration" => node.child_by_field_name("name"),
        "function_definition" | "declaration" | "type_definition" | "field_declaration" => {
            if let Some(d) = node.child_by_field_name("declarator") {
                innermost_name(d)
            } else {
                node.child_by_field_name("type")
                    .and_then(|t| t.child_by_field_name("name"))
            }
        }
        _ => None,
    }
}

/// The identifier at the bottom of a declarator chain (`*f(…)`, `x = 1`, `T name[3]`).
fn innermost_name(node: Node) -> Option<Node> {
    let mut n = node;
    for _ in 0..16 {
        match n.kind() {
            "identifier" | "type_identifier" | "field_identifier" | "operator_name"
            | "destructor_name" => return Some(n),
            "qualified_identifier" => n = n.child_by_field_name("name")?,
            _ => n = n.child_by_field_name("declarator")?,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(src: &str) -> Vec<Item> {
        Document::parse(src.as_bytes().to_vec())
            .unwrap()
            .declarations()
    }

    #[test]
    fn namespaces_flattened_and_execute_branch_taken() {
        let src = "#ifndef G\n#define G\n#include <string>\nnamespace a { namespace b {\n\
                   typedef lib::Set T;\nclass C { public: long x; };\n\
                   T f(C c) { return a::b::g<int>(c.x); } } }\n\
                   #ifdef EXECUTE\n#include \"lib.h\"\n#else\n#include \"spec.h\"\n#endif\n#endif\n";
        let got = items(src);
        assert_eq!(
            got[1],
            Item::Include {
                path: "string".into(),
                system: true
            }
        );
        let names: Vec<(Vec<String>, Option<String>)> = got
            .iter()
            .filter_map(|i| match i {
                Item::Declaration(d) => Some((d.namespaces.clone(), d.name.clone())),
                Item::Include { .. } => None,
            })
            .collect();
        let ab = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            names,
            vec![
                (vec![], Some("G".into())),
                (ab.clone(), Some("T".into())),
                (ab.clone(), Some("C".into())),
                (ab, Some("f".into())),
            ]
        );
        assert!(got.contains(&Item::Include {
            path: "lib.h".into(),
            system: false
        }));
        assert!(!got
            .iter()
            .any(|i| matches!(i, Item::Include { path, .. } if path == "spec.h")));
        let Item::Declaration(f) = &got[4] else {
            panic!("{got:?}")
        };
        assert!(f.refs.contains(&vec!["a".into(), "b".into(), "g".into()]));
        assert!(f.refs.contains(&vec!["T".into()]));
        let Item::Declaration(c) = &got[3] else {
            panic!()
        };
        assert!(src[c.span.clone()].ends_with("};"));
    }
}
