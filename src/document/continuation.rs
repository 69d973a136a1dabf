//! Continuation lines: a new line that is part of a statement starting on an earlier line.
//!
//! A marker before the statement fires whenever the statement runs, which is right only when the
//! line's code runs whenever the statement does. [`classify`] walks up from the line's first token
//! to its statement and says which of three cases holds:
//!
//! * the token is inside a conditionally evaluated operand — the right operand of `&&`/`||`, or a
//!   branch of `?:` — : [`Continuation::Operand`], the innermost such operand, which gets a comma
//!   expression `((void)MARKER, (operand))` that fires exactly when the operand is evaluated;
//! * nothing conditional lies between the token and the statement: [`Continuation::Statement`],
//!   the statement's marker stands for the line;
//! * the token is in a `for` loop's condition or increment, a `do … while` condition, or a nested
//!   lambda: [`Continuation::Unmarkable`] with the reason, and the line gets no marker.

use tree_sitter::{Node, Parser, Tree};

/// Where a continuation line's marker can go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// The statement's own marker fires exactly when the line's code runs.
    Statement,
    /// Wrap these bytes (an expression) as `((void)MARKER, (expr))`.
    Operand {
        /// First byte of the operand.
        start: usize,
        /// One past its last byte.
        end: usize,
    },
    /// No marker fires only when this line runs.
    Unmarkable(String),
}

/// A parsed file, for [`classify`].
#[derive(Debug)]
pub struct ParsedFile {
    source: Vec<u8>,
    tree: Tree,
}

impl ParsedFile {
    /// Parse `source` with the C++ grammar (C parses with it too); `None` when tree-sitter fails.
    pub fn new(source: &[u8]) -> Option<ParsedFile> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .ok()?;
        let tree = parser.parse(source, None)?;
        Some(ParsedFile {
            source: source.to_vec(),
            tree,
        })
    }

    fn operator(&self, n: &Node<'_>) -> &[u8] {
        n.child_by_field_name("operator")
            .map_or(&[][..], |o| &self.source[o.byte_range()])
    }
}

fn is_field(parent: &Node<'_>, field: &str, child: &Node<'_>) -> bool {
    parent
        .child_by_field_name(field)
        .is_some_and(|c| c.id() == child.id())
}

/// Classify the continuation line whose first token starts at byte `pos`, inside the statement
/// that starts at byte `statement_start` (see the module docs).
pub fn classify(parsed: &ParsedFile, pos: usize, statement_start: usize) -> Continuation {
    let Some(mut cur) = parsed.tree.root_node().descendant_for_byte_range(pos, pos) else {
        return Continuation::Unmarkable("cannot find the line's code in the parse tree".into());
    };
    // A line starting with an operator (`&& b`, `: c`): its code is the operand after it.
    if !cur.is_named() {
        if let Some(next) = cur.next_named_sibling() {
            cur = next;
        }
    }
    while let Some(parent) = cur.parent() {
        match parent.kind() {
            "binary_expression"
                if matches!(parsed.operator(&parent), b"&&" | b"||" | b"and" | b"or")
                    && is_field(&parent, "right", &cur) =>
            {
                return Continuation::Operand {
                    start: cur.start_byte(),
                    end: cur.end_byte(),
                }
            }
            "conditional_expression"
                if is_field(&parent, "consequence", &cur)
                    || is_field(&parent, "alternative", &cur) =>
            {
                return Continuation::Operand {
                    start: cur.start_byte(),
                    end: cur.end_byte(),
                }
            }
            "for_statement" if !is_field(&parent, "initializer", &cur) => {
                return Continuation::Unmarkable(
                    "part of a for loop's condition or increment, which may run without the rest"
                        .into(),
                )
            }
            "do_statement" => {
                return Continuation::Unmarkable(
                    "part of a do-while condition, which may not run when the body does".into(),
                )
            }
            "lambda_expression" | "function_definition" => {
                return Continuation::Unmarkable(
                    "inside a nested definition that starts on another line".into(),
                )
            }
            _ => {}
        }
        if parent.start_byte() <= statement_start {
            return Continuation::Statement;
        }
        cur = parent;
    }
    Continuation::Statement
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(src: &str, line: usize) -> usize {
        let start: usize = src.split_inclusive('\n').take(line - 1).map(str::len).sum();
        start + src[start..].find(|c: char| !c.is_whitespace()).unwrap()
    }

    fn classify_line(src: &str, line: usize, statement_line: usize) -> Continuation {
        classify(
            &ParsedFile::new(src.as_bytes()).unwrap(),
            at(src, line),
            at(src, statement_line),
        )
    }

    #[test]
    fn right_operands_and_branches_get_their_own_marker() {
        let src = "int f(int a, int b) {\n  if (a &&\n      b > 2)\n    return 1;\n  return a ? 2\n           : b;\n}\n";
        let Continuation::Operand { start, end } = classify_line(src, 3, 2) else {
            panic!("{:?}", classify_line(src, 3, 2));
        };
        assert_eq!(&src[start..end], "b > 2");
        let Continuation::Operand { start, end } = classify_line(src, 6, 5) else {
            panic!();
        };
        assert_eq!(&src[start..end], "b");
    }

    #[test]
    fn unconditional_parts_fold_and_loop_increments_are_refused() {
        let src = "int f(int a) {\n  int y = a +\n          2;\n  for (int i = 0; i < a;\n       i++)\n    y++;\n  return y;\n}\n";
        assert_eq!(classify_line(src, 3, 2), Continuation::Statement);
        assert!(matches!(
            classify_line(src, 5, 4),
            Continuation::Unmarkable(r) if r.contains("for loop")
        ));
    }
}
