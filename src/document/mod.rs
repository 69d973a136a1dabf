//! The C++ front end: the only module that touches tree-sitter.
//!
//! [`Document::parse`] reads bytes into a concrete syntax tree and [`Document::outline`] turns the
//! parts mfppr reasons about into plain data with byte spans: `#include`s (with the `EXECUTE`
//! branch they sit in), function definitions at namespace scope (with their namespace path,
//! parameters and body statements), and per statement its declaration, assignment target, calls
//! and identifier uses. No tree-sitter type leaves this module.
//!
//! All walks are iterative, so deeply nested input cannot overflow the stack.

use std::ops::Range;

use anyhow::{anyhow, Result};
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use crate::edit::{self, Edit};

pub mod continuation;
pub mod declarations;
pub mod statements;

/// A byte range in the document.
pub type Span = Range<usize>;

/// Above this many edits [`Document::edited`] parses afresh instead of incrementally.
const MAX_INCREMENTAL_EDITS: usize = 64;

/// Which side of `#ifdef EXECUTE` a construct is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Branch {
    /// Outside any `EXECUTE` conditional: seen by both builds.
    Both,
    /// Only when `EXECUTE` is defined (the build that runs).
    Execute,
    /// Only when `EXECUTE` is not defined (the build MF++ parses).
    NotExecute,
}

impl Branch {
    fn nest(self, inner: Branch) -> Branch {
        match (self, inner) {
            (Branch::Both, b) | (b, Branch::Both) => b,
            (a, b) if a == b => a,
            // Contradictory nesting: never compiled; treat as not seen by the executed build.
            _ => Branch::NotExecute,
        }
    }
}

/// An `#include` directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Include {
    /// The path between quotes or angle brackets.
    pub path: String,
    /// `<…>` rather than `"…"`.
    pub system: bool,
    /// The `EXECUTE` branch it is in.
    pub branch: Branch,
    /// Byte offset of the directive.
    pub offset: usize,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The type, whitespace-normalised, without `&`/`const` qualifiers.
    pub type_text: String,
    /// The parameter name (empty when unnamed).
    pub name: String,
}

/// A call expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The callee as written, without whitespace (`metalib::relations::add::base`, `f_1_2`).
    pub callee: String,
    /// Span of the callee expression.
    pub callee_span: Span,
    /// Span of the whole call.
    pub span: Span,
    /// Spans of the arguments.
    pub args: Vec<Span>,
    /// Content of the first string-literal argument, if any.
    pub string_arg: Option<String>,
}

/// A declaration statement's first declarator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    /// The declared name.
    pub name: String,
    /// Span of the declared name.
    pub name_span: Span,
    /// The declared type, whitespace-normalised.
    pub type_text: String,
    /// Span of the initializer expression after `=`, or of the `(…)` argument list.
    pub init: Option<Span>,
    /// True when the initializer is a `(…)` direct-initialisation list.
    pub direct_init: bool,
    /// More than one declarator in the statement.
    pub multiple: bool,
}

/// What kind of statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// A declaration.
    Decl,
    /// A non-empty expression statement.
    Expr,
    /// A lone `;`.
    Empty,
    /// A comment (tree-sitter keeps them as children of blocks).
    Comment,
    /// Anything else (`return`, `if`, loops, blocks, …).
    Other,
}

/// A direct child statement of a function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// The statement's bytes (without leading whitespace).
    pub span: Span,
    /// Its kind.
    pub kind: StmtKind,
    /// The declaration, for [`StmtKind::Decl`].
    pub decl: Option<Decl>,
    /// For `x = …;`: the assigned name and its span.
    pub assigns: Option<(String, Span)>,
    /// Every call inside, in source order.
    pub calls: Vec<Call>,
    /// Every identifier use inside (name, span), in source order, excluding the declared name.
    pub idents: Vec<(String, Span)>,
}

/// A function definition at namespace scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Unqualified name.
    pub name: String,
    /// Enclosing namespaces, outermost first.
    pub namespaces: Vec<String>,
    /// Span of the name.
    pub name_span: Span,
    /// Span of the whole definition, from the return type to the closing brace.
    pub span: Span,
    /// Return type, whitespace-normalised.
    pub return_type: String,
    /// Parameters.
    pub params: Vec<Param>,
    /// Span of the body's braces.
    pub body_span: Span,
    /// The body's direct statements.
    pub body: Vec<Stmt>,
    /// Every call in the body, in source order (also inside nested blocks).
    pub calls: Vec<Call>,
    /// The `EXECUTE` branch the definition is in.
    pub branch: Branch,
}

/// A function declared (not defined) at namespace scope, e.g. a family's `placeholder`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prototype {
    /// Unqualified name.
    pub name: String,
    /// Enclosing namespaces, outermost first.
    pub namespaces: Vec<String>,
    /// Parameter types.
    pub params: Vec<Param>,
}

/// What [`Document::outline`] extracts.
#[derive(Clone, Debug, Default)]
pub struct Outline {
    /// Every `#include`, in source order.
    pub includes: Vec<Include>,
    /// Function definitions at namespace scope, in source order.
    pub functions: Vec<Function>,
    /// Function declarations at namespace scope.
    pub prototypes: Vec<Prototype>,
    /// Number of syntax errors tree-sitter recovered from.
    pub syntax_errors: usize,
    /// Byte offset of the first syntax error, if any.
    pub first_error: Option<usize>,
}

/// Source bytes with their tree-sitter syntax tree.
pub struct Document {
    text: Vec<u8>,
    tree: Tree,
    outline: std::sync::OnceLock<Outline>,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("bytes", &self.text.len())
            .finish()
    }
}

impl Document {
    /// Parse `text` as C++.
    pub fn parse(text: Vec<u8>) -> Result<Document> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .map_err(|e| anyhow!("cannot load the C++ grammar: {e}"))?;
        let tree = parser
            .parse(&text, None)
            .ok_or_else(|| anyhow!("the C++ parser gave up on this input"))?;
        Ok(Document {
            text,
            tree,
            outline: std::sync::OnceLock::new(),
        })
    }

    /// The document with `edits` applied (as `edit::apply` does), re-parsed incrementally from
    /// this document's tree: only the edited parts are parsed again.
    pub fn edited(&self, edits: &[Edit]) -> Result<Document> {
        let kept = edit::effective(self.text.len(), edits);
        let text = edit::splice(&self.text, &kept);
        if kept.len() > MAX_INCREMENTAL_EDITS {
            // Each tree edit walks the tree: past a few, a fresh parse is cheaper.
            return Document::parse(text);
        }
        let mut tree = self.tree.clone();
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(memchr_newlines(&self.text).map(|i| i + 1))
            .collect();
        let point = |offset: usize| {
            let row = line_starts.partition_point(|&s| s <= offset) - 1;
            Point::new(row, offset - line_starts[row])
        };
        // Last edit first: the positions of the earlier ones stay valid.
        for e in kept.iter().rev() {
            let start = point(e.span.start);
            let inserted = e.text.as_bytes();
            let new_end = match inserted.iter().rposition(|&b| b == b'\n') {
                Some(last) => Point::new(
                    start.row + inserted.iter().filter(|&&b| b == b'\n').count(),
                    inserted.len() - last - 1,
                ),
                None => Point::new(start.row, start.column + inserted.len()),
            };
            tree.edit(&InputEdit {
                start_byte: e.span.start,
                old_end_byte: e.span.end,
                new_end_byte: e.span.start + inserted.len(),
                start_position: start,
                old_end_position: point(e.span.end),
                new_end_position: new_end,
            });
        }
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .map_err(|e| anyhow!("cannot load the C++ grammar: {e}"))?;
        let tree = parser
            .parse(&text, Some(&tree))
            .ok_or_else(|| anyhow!("the C++ parser gave up on this input"))?;
        Ok(Document {
            text,
            tree,
            outline: std::sync::OnceLock::new(),
        })
    }

    /// Whether tree-sitter had to recover from syntax errors.
    pub fn has_syntax_errors(&self) -> bool {
        self.tree.root_node().has_error() && self.outline().syntax_errors > 0
    }

    /// The bytes.
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// The outline (see [`Outline`]), extracted on first use.
    pub fn outline(&self) -> &Outline {
        self.outline.get_or_init(|| self.extract())
    }

    fn extract(&self) -> Outline {
        let mut out = Outline::default();
        let root = self.tree.root_node();
        if root.has_error() {
            let (count, first) = count_errors(root);
            out.syntax_errors = count;
            out.first_error = first;
        }
        // Iterative walk over namespace-level containers.
        let mut stack: Vec<(Node, Vec<String>, Branch)> = vec![(root, Vec::new(), Branch::Both)];
        while let Some((node, ns, branch)) = stack.pop() {
            let alternative = node.child_by_field_name("alternative").map(|a| a.id());
            let mut items = Vec::new();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if Some(child.id()) != alternative {
                    items.push(child);
                }
            }
            // Push in reverse so that source order is preserved.
            for child in items.into_iter().rev() {
                match child.kind() {
                    "function_definition" => {
                        if let Some(f) = self.function(child, &ns, branch) {
                            out.functions.push(f);
                        }
                    }
                    "declaration" if brace_body(child).is_some() => {
                        if let Some(f) = self.function(child, &ns, branch) {
                            out.functions.push(f);
                        }
                    }
                    "declaration" => {
                        if let Some(p) = self.prototype(child, &ns) {
                            out.prototypes.push(p);
                        }
                    }
                    "preproc_include" => out.includes.extend(self.include(child, branch)),
                    "namespace_definition" => {
                        let mut inner = ns.clone();
                        if let Some(name) = child.child_by_field_name("name") {
                            for part in self.slice(name.byte_range()).split("::") {
                                inner.push(part.trim().to_string());
                            }
                        }
                        if let Some(body) = child.child_by_field_name("body") {
                            stack.push((body, inner, branch));
                        }
                    }
                    "linkage_specification" => {
                        if let Some(body) = child.child_by_field_name("body") {
                            stack.push((body, ns.clone(), branch));
                        }
                    }
                    "preproc_ifdef" | "preproc_if" | "preproc_elif" | "preproc_elifdef" => {
                        let (then_branch, else_branch) = self.conditional(child);
                        if let Some(alt) = child.child_by_field_name("alternative") {
                            stack.push((alt, ns.clone(), branch.nest(else_branch)));
                        }
                        stack.push((child, ns.clone(), branch.nest(then_branch)));
                    }
                    "preproc_else" => stack.push((child, ns.clone(), branch)),
                    "declaration_list" => stack.push((child, ns.clone(), branch)),
                    _ => {}
                }
            }
        }
        // The stack walk visits containers depth-first but collects items per container; restore
        // global source order.
        out.functions.sort_by_key(|f| f.span.start);
        out.includes.sort_by_key(|i| i.offset);
        out
    }

    /// An `#include` directive, in `branch`.
    fn include(&self, node: Node, branch: Branch) -> Option<Include> {
        let path = node.child_by_field_name("path")?;
        let raw = self.slice(path.byte_range());
        Some(Include {
            path: raw
                .trim_matches(|c| c == '"' || c == '<' || c == '>')
                .to_string(),
            system: path.kind() == "system_lib_string",
            branch,
            offset: node.start_byte(),
        })
    }

    /// For a conditional node: the branch of its own (then) children and of its `alternative`.
    fn conditional(&self, node: Node) -> (Branch, Branch) {
        let name = node
            .child_by_field_name("name")
            .or_else(|| node.child_by_field_name("condition"))
            .map(|n| squeeze(self.slice(n.byte_range())))
            .unwrap_or_default();
        let directive = node
            .child(0)
            .map(|c| self.slice(c.byte_range()).to_string())
            .unwrap_or_default();
        let negated = directive.contains("ifndef") || name.starts_with('!');
        let mentions_execute = matches!(
            name.trim_start_matches('!'),
            "EXECUTE" | "defined(EXECUTE)" | "defined EXECUTE"
        );
        match (mentions_execute, negated) {
            (true, false) => (Branch::Execute, Branch::NotExecute),
            (true, true) => (Branch::NotExecute, Branch::Execute),
            _ => (Branch::Both, Branch::Both),
        }
    }

    fn slice(&self, range: Range<usize>) -> &str {
        std::str::from_utf8(&self.text[range]).unwrap_or("")
    }

    fn squeezed(&self, range: Range<usize>) -> String {
        squeeze(self.slice(range))
    }

    fn function(&self, node: Node, ns: &[String], branch: Branch) -> Option<Function> {
        let body = node
            .child_by_field_name("body")
            .or_else(|| brace_body(node))?;
        let (declarator, name_node) = function_declarator(node)?;
        let name_text = self.slice(name_node.byte_range()).trim().to_string();
        let mut namespaces = ns.to_vec();
        let name = match name_text.rsplit_once("::") {
            Some((scope, last)) => {
                namespaces.extend(scope.split("::").map(|s| s.trim().to_string()));
                last.to_string()
            }
            None => name_text,
        };
        let return_type = node
            .child_by_field_name("type")
            .map(|t| self.squeezed(t.byte_range()))
            .unwrap_or_default();
        let params = declarator
            .child_by_field_name("parameters")
            .map(|p| self.params(p))
            .unwrap_or_default();
        let mut stmts = Vec::new();
        let mut cursor = body.walk();
        for child in body.named_children(&mut cursor) {
            stmts.push(self.statement(child));
        }
        let calls = stmts.iter().flat_map(|s| s.calls.iter().cloned()).collect();
        Some(Function {
            name,
            namespaces,
            name_span: name_node.byte_range(),
            span: node.byte_range(),
            return_type,
            params,
            body_span: body.byte_range(),
            body: stmts,
            calls,
            branch,
        })
    }

    fn prototype(&self, node: Node, ns: &[String]) -> Option<Prototype> {
        let declarator = node.child_by_field_name("declarator")?;
        if declarator.kind() != "function_declarator" {
            return None;
        }
        let name = declarator.child_by_field_name("declarator")?;
        let params = declarator
            .child_by_field_name("parameters")
            .map(|p| self.params(p))
            .unwrap_or_default();
        Some(Prototype {
            name: self.slice(name.byte_range()).trim().to_string(),
            namespaces: ns.to_vec(),
            params,
        })
    }

    fn params(&self, list: Node) -> Vec<Param> {
        let mut out = Vec::new();
        let mut cursor = list.walk();
        for p in list.named_children(&mut cursor) {
            if !p.kind().contains("parameter_declaration") {
                continue;
            }
            let type_text = p
                .child_by_field_name("type")
                .map(|t| self.squeezed(t.byte_range()))
                .unwrap_or_default();
            let name = p
                .child_by_field_name("declarator")
                .and_then(|d| innermost_identifier(d))
                .map(|n| self.slice(n.byte_range()).to_string())
                .unwrap_or_default();
            out.push(Param { type_text, name });
        }
        out
    }

    fn statement(&self, node: Node) -> Stmt {
        let span = node.byte_range();
        let kind = match node.kind() {
            "declaration" => StmtKind::Decl,
            "expression_statement" if node.named_child_count() == 0 => StmtKind::Empty,
            "expression_statement" => StmtKind::Expr,
            "comment" => StmtKind::Comment,
            _ => StmtKind::Other,
        };
        let decl = if kind == StmtKind::Decl {
            self.decl(node)
        } else {
            None
        };
        let assigns = if kind == StmtKind::Expr {
            node.named_child(0)
                .filter(|e| e.kind() == "assignment_expression")
                .and_then(|e| e.child_by_field_name("left"))
                .filter(|l| l.kind() == "identifier")
                .map(|l| (self.slice(l.byte_range()).to_string(), l.byte_range()))
        } else {
            None
        };
        let (calls, idents) = if kind == StmtKind::Comment {
            (Vec::new(), Vec::new())
        } else {
            self.scan(node, decl.as_ref().map(|d| &d.name_span))
        };
        Stmt {
            span,
            kind,
            decl,
            assigns,
            calls,
            idents,
        }
    }

    fn decl(&self, node: Node) -> Option<Decl> {
        let type_text = node
            .child_by_field_name("type")
            .map(|t| self.squeezed(t.byte_range()))
            .unwrap_or_default();
        let mut cursor = node.walk();
        let declarators: Vec<Node> = node
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        let first = *declarators.first()?;
        let (name_node, init, direct_init) = match first.kind() {
            "init_declarator" => {
                let name = first
                    .child_by_field_name("declarator")
                    .and_then(innermost_identifier)?;
                let value = first.child_by_field_name("value");
                let direct = value.map(|v| v.kind() == "argument_list").unwrap_or(false);
                (name, value.map(|v| v.byte_range()), direct)
            }
            // `T x(a, b);` with names for arguments parses as a function declaration (the most
            // vexing parse); in a function body it declares `x` from `a` and `b`.
            "function_declarator" if vexing_arguments(first).is_some() => {
                let name = first
                    .child_by_field_name("declarator")
                    .filter(|d| d.kind() == "identifier")?;
                (name, vexing_arguments(first).map(|p| p.byte_range()), true)
            }
            _ => (innermost_identifier(first)?, None, false),
        };
        Some(Decl {
            name: self.slice(name_node.byte_range()).to_string(),
            name_span: name_node.byte_range(),
            type_text,
            init,
            direct_init,
            multiple: declarators.len() > 1,
        })
    }

    /// Every call expression and every plain identifier use under `node`, in source order, in
    /// one walk. Identifiers exclude field names, qualified-name parts and the `skip` span.
    fn scan(&self, node: Node, skip: Option<&Span>) -> (Vec<Call>, Vec<(String, Span)>) {
        let mut calls = Vec::new();
        let mut idents = Vec::new();
        // Parent kinds along the current path (tree-sitter's `parent()` walks from the root).
        let mut cursor = node.walk();
        let mut path: Vec<&str> = Vec::new();
        loop {
            let n = cursor.node();
            match n.kind() {
                "identifier" if path.last() != Some(&"qualified_identifier") => {
                    let r = n.byte_range();
                    if skip != Some(&r) {
                        idents.push((self.slice(r.clone()).to_string(), r));
                    }
                }
                // The arguments of `T x(a, b);` (see `vexing_arguments`).
                "type_identifier"
                    if path.ends_with(&[
                        "declaration",
                        "function_declarator",
                        "parameter_list",
                        "parameter_declaration",
                    ]) =>
                {
                    idents.push((self.slice(n.byte_range()).to_string(), n.byte_range()));
                }
                "call_expression" => calls.extend(self.call(n)),
                _ => {}
            }
            if cursor.goto_first_child() {
                path.push(n.kind());
                continue;
            }
            loop {
                if cursor.node() == node {
                    return (calls, idents);
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return (calls, idents);
                }
                path.pop();
            }
        }
    }

    fn call(&self, n: Node) -> Option<Call> {
        let f = n.child_by_field_name("function")?;
        let args = n.child_by_field_name("arguments")?;
        let mut c = args.walk();
        let arg_nodes: Vec<Node> = args
            .named_children(&mut c)
            .filter(|a| a.kind() != "comment")
            .collect();
        let string_arg = arg_nodes
            .iter()
            .find(|a| a.kind() == "string_literal")
            .map(|a| self.slice(a.byte_range()).trim_matches('"').to_string());
        Some(Call {
            callee: self.squeezed(f.byte_range()),
            callee_span: f.byte_range(),
            span: n.byte_range(),
            args: arg_nodes.iter().map(|a| a.byte_range()).collect(),
            string_arg,
        })
    }
}

/// The `function_declarator` of a definition and its name node (through pointer/reference
/// declarators, e.g. `T& f(...)`).
/// The body of a function definition whose body holds only (nested) empty blocks, such as
/// `void f() { { } }`: tree-sitter reads it as a declaration of `f` with a brace initialiser and a
/// missing `;`, and the initialiser is the body.
fn brace_body(node: Node) -> Option<Node> {
    if node.kind() != "declaration" {
        return None;
    }
    let init = node.child_by_field_name("declarator")?;
    let value = init.child_by_field_name("value")?;
    let function = init.child_by_field_name("declarator")?;
    let only_braces = |n: Node| {
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            if n.kind() != "initializer_list" {
                return false;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        true
    };
    (init.kind() == "init_declarator"
        && function.kind() == "function_declarator"
        && only_braces(value))
    .then_some(value)
}

fn function_declarator(node: Node) -> Option<(Node, Node)> {
    let mut d = node.child_by_field_name("declarator")?;
    for _ in 0..8 {
        if d.kind() == "function_declarator" {
            let name = d.child_by_field_name("declarator")?;
            return Some((d, name));
        }
        d = d.child_by_field_name("declarator")?;
    }
    None
}

/// The parameter list of a block-scope `T x(a, b);` that tree-sitter reads as a function
/// declaration: every parameter a bare name, which in a function body is an argument.
fn vexing_arguments(declarator: Node) -> Option<Node> {
    let params = declarator.child_by_field_name("parameters")?;
    let mut cursor = params.walk();
    let mut any = false;
    for p in params.named_children(&mut cursor) {
        let bare = p.kind() == "parameter_declaration"
            && p.child_by_field_name("declarator").is_none()
            && p.child_by_field_name("type")
                .is_some_and(|t| t.kind() == "type_identifier");
        if !bare {
            return None;
        }
        any = true;
    }
    any.then_some(params)
}

fn innermost_identifier(node: Node) -> Option<Node> {
    let mut n = node;
    for _ in 0..16 {
        match n.kind() {
            "identifier" | "field_identifier" => return Some(n),
            _ => n = n.child_by_field_name("declarator")?,
        }
    }
    None
}

fn memchr_newlines(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    text.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

/// Pre-order traversal without recursion.
fn preorder<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn count_errors(root: Node) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    preorder(root, |n| {
        let brace_function_end = n.is_missing()
            && n.kind() == ";"
            && n.parent().is_some_and(|p| brace_body(p).is_some());
        if (n.is_error() || n.is_missing()) && !brace_function_end {
            count += 1;
            if first.is_none() {
                first = Some(n.start_byte());
            }
        }
    });
    (count, first)
}

/// Collapse runs of whitespace to nothing around `::`, `<`, `>`, `*`, `&`, `,` and to one space
/// elsewhere, so that type texts compare by meaning rather than layout.
pub fn squeeze(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            let last = out.chars().last().unwrap_or(' ');
            let glue = |c: char| matches!(c, ':' | '<' | '>' | '*' | '&' | ',' | '(' | ')');
            if !glue(last) && !glue(c) {
                out.push(' ');
            }
            pending_space = false;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(src: &str) -> Outline {
        Document::parse(src.as_bytes().to_vec())
            .unwrap()
            .outline()
            .clone()
    }

    #[test]
    fn a_function_of_nested_empty_blocks_is_a_function_not_a_syntax_error() {
        for src in [
            "void f() { { } }\nint main() { { } }\n",
            "void f()\n{\n    {\n        {}\n    }\n}\nint main() { return 0; }\n",
        ] {
            let doc = Document::parse(src.as_bytes().to_vec()).unwrap();
            let o = doc.outline();
            assert_eq!((o.syntax_errors, o.first_error), (0, None), "{src:?}");
            assert!(!doc.has_syntax_errors(), "{src:?}");
            let names: Vec<&str> = o.functions.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["f", "main"], "{src:?}");
            let f = &o.functions[0];
            assert_eq!(&src[f.body_span.clone()].chars().next(), &Some('{'));
            assert!(src[f.body_span.clone()].ends_with('}'));
        }
        // A brace initialiser with a value is no function body: still an error.
        let o = outline("void f() { { 1 } }\n");
        assert!(o.syntax_errors > 0);
    }

    #[test]
    fn includes_carry_their_execute_branch() {
        let o = outline(
            "#include <cassert>\n#ifdef EXECUTE\n#include \"a.h\"\n#else\n#include \"b.h\"\n#endif\n#include \"c.h\"\n",
        );
        let got: Vec<(&str, Branch)> = o
            .includes
            .iter()
            .map(|i| (i.path.as_str(), i.branch))
            .collect();
        assert_eq!(
            got,
            vec![
                ("cassert", Branch::Both),
                ("a.h", Branch::Execute),
                ("b.h", Branch::NotExecute),
                ("c.h", Branch::Both)
            ]
        );
    }

    #[test]
    fn functions_in_namespaces_with_statements() {
        let o = outline(
            "namespace metalib { namespace relations { namespace add {\n\
             T f(C ctx, T a) { T b = g(a); a = h(b, 1); return placeholder(ctx, a); }\n} } }\n",
        );
        let f = &o.functions[0];
        assert_eq!(f.name, "f");
        assert_eq!(f.namespaces, vec!["metalib", "relations", "add"]);
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.body.len(), 3);
        let d = f.body[0].decl.as_ref().unwrap();
        assert_eq!((d.name.as_str(), d.type_text.as_str()), ("b", "T"));
        assert_eq!(f.body[1].assigns.as_ref().unwrap().0, "a");
        let callees: Vec<&str> = f.calls.iter().map(|c| c.callee.as_str()).collect();
        assert_eq!(callees, vec!["g", "h", "placeholder"]);
    }

    #[test]
    fn a_declaration_from_names_in_parentheses_reads_them() {
        // Real MF++ output: `fuzz::fuzz_context fctx(ctx, fvs);` (tree-sitter reads a function
        // declaration); a local function declaration with typed parameters stays one.
        let src = "int main() {\n  z3::context ctx;\n  fuzz::FreeVars fvs;\n  \
                   fuzz::fuzz_context fctx(ctx, fvs);\n  int g(int a);\n}\n";
        let o = outline(src);
        let body = &o.functions[0].body;
        let fctx = &body[2];
        let d = fctx.decl.as_ref().unwrap();
        assert_eq!(d.name, "fctx");
        assert!(d.direct_init);
        assert_eq!(d.init.clone().map(|r| &src[r]), Some("(ctx, fvs)"));
        let reads: Vec<&str> = fctx.idents.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(reads, vec!["ctx", "fvs"]);
        let g = &body[3];
        assert!(g
            .decl
            .as_ref()
            .is_none_or(|d| !d.direct_init && d.init.is_none()));
        assert!(g.idents.iter().all(|(n, _)| n != "int"));
    }

    #[test]
    fn incremental_reparse_equals_a_fresh_parse() {
        let src =
            "int f_0_1(int a) {\n  return a;\n}\nint main() {\n  int x = f_0_1(1);;\n  x = 2;\n}\n";
        let doc = Document::parse(src.as_bytes().to_vec()).unwrap();
        let edits = [
            Edit::delete(0..31),
            Edit::replace(54..59, "g"),
            Edit::replace(63..63, "\n  // note\n"),
        ];
        let edited = doc.edited(&edits).unwrap();
        let fresh = Document::parse(edit::apply(doc.text(), &edits)).unwrap();
        assert_eq!(edited.text(), fresh.text());
        assert_eq!(
            edited.tree.root_node().to_sexp(),
            fresh.tree.root_node().to_sexp()
        );
        assert_eq!(edited.outline().functions, fresh.outline().functions);
    }

    #[test]
    fn squeeze_normalises_layout() {
        assert_eq!(squeeze("class  z3::expr"), "class z3::expr");
        assert_eq!(squeeze("std::vector< int >"), "std::vector<int>");
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let mut src = String::from("int main() { int x = ");
        src.push_str(&"(".repeat(20000));
        src.push('1');
        src.push_str(&")".repeat(20000));
        src.push_str("; }");
        let o = outline(&src);
        assert_eq!(o.functions.len(), 1);
    }
}
