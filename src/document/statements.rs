//! Statement positions in arbitrary C++ sources, for coverage marker injection.
//!
//! [`StatementIndex`] parses a file once (tree-sitter) and answers, for a 1-based line, where a
//! marker statement can go so that it runs exactly when the statement on that line runs:
//!
//! * a statement inside a compound statement (function body, block) or after a `case …:` label,
//!   also inside an `#if`/`#ifdef`/`#else` group within a function body: insert right before it;
//! * a `case`/`default` label line: insert right after the colon;
//! * the unbraced body of `if`/`else`/`for`/`while`/`do`: wrap it, `{ MARKER stmt }`, so the
//!   marker stays inside the branch;
//! * a continuation line of a multi-line statement: before that statement.
//!
//! `None` for blank lines, preprocessor lines, a line starting with `}` that starts no statement,
//! function headers and member-initialiser lists, and declarations at namespace or class scope.

use std::collections::HashMap;

use tree_sitter::{Node, Parser, Tree};

/// Where to insert a marker for a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insertion {
    /// Byte offset where the marker goes.
    pub at: usize,
    /// When set, the statement at `at` is an unbraced branch body ending at this byte: the
    /// marker must be inserted as `{ MARKER ` at `at` with ` }` at `wrap_end`.
    pub wrap_end: Option<usize>,
}

/// A parsed source with its statement insertion points.
#[derive(Debug)]
pub struct StatementIndex {
    source: Vec<u8>,
    tree: Tree,
    /// Insertion point per statement node, keyed by the node's byte span.
    by_span: HashMap<(usize, usize), Insertion>,
    /// (row, start byte, insertion) of every candidate, sorted.
    by_row: Vec<(usize, usize, Insertion)>,
    line_starts: Vec<usize>,
}

fn is_statement(n: &Node<'_>) -> bool {
    n.is_named()
        && !n.is_error()
        && !n.is_missing()
        && !matches!(n.kind(), "comment" | "attribute_declaration")
        && !n.kind().starts_with("preproc")
}

/// Node kinds a "containing statement" search must not cross: the line belongs to a nested
/// definition whose own statements (if any) were already considered.
const STOP_KINDS: &[&str] = &[
    "function_definition",
    "lambda_expression",
    "class_specifier",
    "struct_specifier",
    "union_specifier",
    "field_declaration_list",
    "declaration_list",
    "translation_unit",
];

/// Preprocessor groups whose statements count as the enclosing block's when they sit in a
/// function body (tree-sitter makes them the group's children, not the block's).
const PREPROC_GROUPS: &[&str] = &[
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
    "preproc_elif",
    "preproc_elifdef",
];

/// Kinds that cannot appear in a function body: a preprocessor group holding one is at namespace
/// scope, or tree-sitter misparsed it (a group that splits `if (…) {` between its branches
/// swallows the rest of the file), so its statements get no point of their own.
const NOT_IN_BODIES: &[&str] = &[
    "function_definition",
    "namespace_definition",
    "template_declaration",
    "linkage_specification",
];

/// Whether `node` lies in a function body: a compound statement comes before any definition.
fn in_function_body(node: &Node<'_>) -> bool {
    let mut parent = node.parent();
    while let Some(p) = parent {
        if p.kind() == "compound_statement" {
            return true;
        }
        if STOP_KINDS.contains(&p.kind()) {
            return false;
        }
        parent = p.parent();
    }
    false
}

/// Insertion points being collected, per statement node.
#[derive(Default)]
struct Points {
    by_span: HashMap<(usize, usize), Insertion>,
    by_row: Vec<(usize, usize, Insertion)>,
}

impl Points {
    fn add(&mut self, n: &Node<'_>, ins: Insertion) {
        self.by_span.insert((n.start_byte(), n.end_byte()), ins);
        self.by_row
            .push((n.start_position().row, n.start_byte(), ins));
    }

    /// A marker right before `n`.
    fn add_before(&mut self, n: &Node<'_>) {
        self.add(
            n,
            Insertion {
                at: n.start_byte(),
                wrap_end: None,
            },
        );
    }

    /// The points `node` (with its `children`) provides for its own statements.
    fn add_node(&mut self, node: &Node<'_>, children: &[Node<'_>]) {
        match node.kind() {
            "compound_statement" => self.add_block(children),
            kind if PREPROC_GROUPS.contains(&kind)
                && in_function_body(node)
                && !children.iter().any(|c| NOT_IN_BODIES.contains(&c.kind())) =>
            {
                self.add_preproc_group(node, children)
            }
            "case_statement" => self.add_case(node, children),
            "if_statement" | "while_statement" | "for_statement" | "for_range_loop"
            | "do_statement" | "else_clause" => self.add_branch_bodies(node, children),
            _ => {}
        }
    }

    /// The statements of a block; its `case` labels are added with their colon.
    fn add_block(&mut self, children: &[Node<'_>]) {
        for c in children
            .iter()
            .filter(|c| is_statement(c) && c.kind() != "case_statement")
        {
            self.add_before(c);
        }
    }

    /// The statements of a preprocessor group in a function body: only the group's body, not its
    /// `name`/`condition`, nor its `alternative`.
    fn add_preproc_group(&mut self, node: &Node<'_>, children: &[Node<'_>]) {
        let body = children.iter().enumerate().filter(|(i, c)| {
            is_statement(c)
                && c.kind() != "case_statement"
                && node.field_name_for_child(*i as u32).is_none()
        });
        for (_, c) in body {
            self.add_before(c);
        }
    }

    /// A `case`/`default` label: right after its colon, then the statements after the colon.
    fn add_case(&mut self, node: &Node<'_>, children: &[Node<'_>]) {
        let Some(colon) = children.iter().find(|c| c.kind() == ":") else {
            return;
        };
        self.add(
            node,
            Insertion {
                at: colon.end_byte(),
                wrap_end: None,
            },
        );
        for c in children
            .iter()
            .filter(|c| c.start_byte() >= colon.end_byte() && is_statement(c))
        {
            self.add_before(c);
        }
    }

    /// The unbraced bodies of `if`/`else`/`for`/`while`/`do`: wrapped, so the marker stays inside
    /// the branch.
    fn add_branch_bodies(&mut self, node: &Node<'_>, children: &[Node<'_>]) {
        let bodies: Vec<Node<'_>> = if node.kind() == "else_clause" {
            children
                .iter()
                .filter(|c| is_statement(c))
                .copied()
                .collect()
        } else {
            ["consequence", "body"]
                .iter()
                .filter_map(|f| node.child_by_field_name(f))
                .collect()
        };
        for b in bodies
            .iter()
            .filter(|b| b.kind() != "compound_statement" && is_statement(b))
        {
            self.add(
                b,
                Insertion {
                    at: b.start_byte(),
                    wrap_end: Some(b.end_byte()),
                },
            );
        }
    }
}

impl StatementIndex {
    /// Parse `source`. Returns `None` only if tree-sitter cannot produce a tree at all.
    pub fn new(source: &[u8]) -> Option<StatementIndex> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .ok()?;
        let tree = parser.parse(source, None)?;
        let mut points = Points::default();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            stack.extend(children.iter().copied());
            points.add_node(&node, &children);
        }
        let Points {
            by_span,
            mut by_row,
        } = points;
        by_row.sort_by_key(|&(row, start, _)| (row, start));
        Some(StatementIndex {
            source: source.to_vec(),
            tree,
            by_span,
            by_row,
            line_starts: crate::cpp_text::line_starts(source),
        })
    }

    /// Where a marker for 1-based `line` can go (see the module docs), or `None`.
    pub fn insertion_for_line(&self, line: u32) -> Option<Insertion> {
        let row = (line as usize).checked_sub(1)?;
        let start = *self.line_starts.get(row)?;
        let end = self
            .line_starts
            .get(row + 1)
            .copied()
            .unwrap_or(self.source.len());
        let text = &self.source[start..end];
        let indent = text.iter().position(|b| !b.is_ascii_whitespace())?;
        let first = text[indent];
        // A statement starting on this line: the outermost (leftmost) one.
        let i = self.by_row.partition_point(|&(r, _, _)| r < row);
        if let Some(&(r, _, ins)) = self.by_row.get(i) {
            if r == row {
                return Some(ins);
            }
        }
        if first == b'}' || first == b'#' || first == b'/' {
            return None;
        }
        // A continuation line: the innermost statement containing it, unless a nested definition
        // (function header, class, namespace-scope declaration) comes first.
        let pos = start + indent;
        let mut node = self.tree.root_node().descendant_for_byte_range(pos, pos)?;
        loop {
            if let Some(ins) = self.by_span.get(&(node.start_byte(), node.end_byte())) {
                if node.start_byte() < pos {
                    return Some(*ins);
                }
            }
            if STOP_KINDS.contains(&node.kind()) {
                return None;
            }
            node = node.parent()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"#include <vector>
namespace n {
int global = 3;
struct S {
  int m = 1;
  int get() const { return m; }
};
template <typename T>
T f(T x,
    T y) {
  T total = 0;
  if (x < 0) {
    total -= x;
  } else {
    total += x;
  }
  if (y)
    return y;
  else
    total += 1;
  switch (x) {
    case 0:
      return 10;
    default:
      break;
  }
  int z = g(x,
            y);
  for (int i = 0; i < 3; ++i) total += i;
  return total;
}
}  // namespace n
"#;

    fn at(line: u32) -> Option<(String, bool)> {
        let idx = StatementIndex::new(SRC.as_bytes()).unwrap();
        idx.insertion_for_line(line).map(|ins| {
            let rest = &SRC[ins.at..];
            (
                rest.lines().next().unwrap().trim().to_string(),
                ins.wrap_end.is_some(),
            )
        })
    }

    #[test]
    fn statements_in_blocks_get_a_point_before_them() {
        assert_eq!(at(11), Some(("T total = 0;".into(), false)));
        assert_eq!(at(12), Some(("if (x < 0) {".into(), false)));
        assert_eq!(at(13), Some(("total -= x;".into(), false)));
        assert_eq!(at(15), Some(("total += x;".into(), false)));
        assert_eq!(at(30), Some(("return total;".into(), false)));
        assert_eq!(
            at(29),
            Some(("for (int i = 0; i < 3; ++i) total += i;".into(), false))
        );
    }

    #[test]
    fn unbraced_bodies_are_wrapped_and_case_labels_take_the_colon() {
        assert_eq!(at(18), Some(("return y;".into(), true)));
        assert_eq!(at(20), Some(("total += 1;".into(), true)));
        // After `case 0:` — the rest of that line is empty.
        assert_eq!(at(22), Some(("".into(), false)));
        assert_eq!(at(23), Some(("return 10;".into(), false)));
        assert_eq!(at(25), Some(("break;".into(), false)));
    }

    #[test]
    fn continuation_lines_point_at_their_statement() {
        assert_eq!(at(28), Some(("int z = g(x,".into(), false)));
    }

    #[test]
    fn no_point_for_braces_headers_preprocessor_and_scope_declarations() {
        for line in [1, 2, 3, 5, 9, 10, 14, 16, 26, 31, 32, 100, 0] {
            assert_eq!(at(line), None, "line {line}");
        }
        // A one-line member function: its `return` is a statement on that line.
        assert_eq!(at(6), Some(("return m; }".into(), false)));
    }

    #[test]
    fn statements_in_preprocessor_groups_of_a_body_get_their_own_point() {
        let src = "#ifdef A\nint g();\n#endif\nvoid f(int& x) {\n  if (x) {\n#ifdef BUG\n    x = 1;\n#elif X > 2\n    x = 3;\n#else\n    x = 2;\n#endif\n  }\n}\n";
        let idx = StatementIndex::new(src.as_bytes()).unwrap();
        let at = |line| {
            idx.insertion_for_line(line)
                .map(|ins| src[ins.at..].lines().next().unwrap().to_string())
        };
        assert_eq!(at(7).as_deref(), Some("x = 1;"));
        assert_eq!(at(9).as_deref(), Some("x = 3;"));
        assert_eq!(at(11).as_deref(), Some("x = 2;"));
        // Namespace scope and the directives themselves: nothing.
        assert_eq!(at(2), None);
        assert_eq!(at(6), None);
        assert_eq!(at(10), None);
    }

    #[test]
    fn a_group_splitting_an_if_header_never_puts_points_at_namespace_scope() {
        // tree-sitter parses the `#ifdef` below as running to the end of the file, holding `g`.
        let src = "int f(int a) {\n#ifdef BUG\n  if (a < 1) {\n#else\n  if (a < 2) {\n#endif\n    return 1;\n  }\n  return 0;\n}\n\nint g(int b)\n{\n  return b;\n}\n";
        let idx = StatementIndex::new(src.as_bytes()).unwrap();
        for line in 1..=15 {
            if let Some(ins) = idx.insertion_for_line(line) {
                let rest = src[ins.at..].lines().next().unwrap();
                assert!(
                    !rest.starts_with("int g"),
                    "line {line}: point before `{rest}`"
                );
            }
        }
        assert_eq!(idx.insertion_for_line(12), None);
    }

    #[test]
    fn points_of_a_one_statement_function() {
        let idx = StatementIndex::new(b"int f() {\n  return 1;\n}\n").unwrap();
        assert_eq!(
            idx.insertion_for_line(2),
            Some(Insertion {
                at: 12,
                wrap_end: None
            })
        );
        assert_eq!(idx.insertion_for_line(1), None);
        assert_eq!(idx.insertion_for_line(3), None);
    }
}
