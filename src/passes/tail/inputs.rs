//! Tail inputs (design §10.1): the statements of `main` before the first variant compute the
//! inputs every variant shares, so any input on which the variants disagree is a real mismatch.
//! They may go (assignments, setup loops, declarations nothing reads), each with the declarations
//! only it reads, and a value read once by a later input statement may move there (a
//! value-preserving rewrite, offered with the equivalences). Number literals are left as they
//! are: shrinking them one by one cost more oracle runs than all the other tail edits together
//! for a few bytes.

use std::collections::HashSet;

use crate::cpp_text::as_operand;
use crate::document::{Span, Stmt, StmtKind};
use crate::edit::Edit;
use crate::model::TestModel;
use crate::passes::{lines, slice, Effect, Opportunity};

use super::first_variant_start;

/// The statements of `main` before the first variant, less fuzz-region markers, comments and
/// empty statements.
fn prefix(model: &TestModel) -> Vec<&Stmt> {
    let end = first_variant_start(model);
    model
        .main_stmts
        .iter()
        .filter(|s| s.span.end <= end)
        .filter(|s| !is_marker(s) && !matches!(s.kind, StmtKind::Comment | StmtKind::Empty))
        .collect()
}

/// Deletions of input statements, in source order, each with the declarations only it reads;
/// then, for those that have such declarations, the statement alone (what it reads may be
/// where the failure happens).
pub(super) fn input_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let prefix = prefix(model);
    let mut with = Vec::new();
    let mut alone = Vec::new();
    for (k, stmt) in prefix.iter().enumerate() {
        if let Some(op) = delete_op(text, model, &prefix[..k], stmt) {
            if op.edits.len() > 1 {
                alone.extend(delete_op(text, model, &[], stmt));
            }
            with.push(op);
        }
    }
    with.extend(alone);
    with
}

/// Values read once moved to where they are read, in source order. A value that moves into
/// another one that moves too goes along with it: one opportunity per chain, at its end.
pub(super) fn move_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let prefix = prefix(model);
    let moves: Vec<Move> = (0..prefix.len())
        .filter_map(|k| single_move(text, model, &prefix, k))
        .collect();
    let defs: HashSet<usize> = moves.iter().map(|m| m.def).collect();
    moves
        .iter()
        .filter(|m| !defs.contains(&m.reader))
        .filter_map(|m| chain_op(text, &prefix, &moves, m))
        .collect()
}

fn is_marker(stmt: &Stmt) -> bool {
    stmt.calls
        .first()
        .is_some_and(|c| c.callee.ends_with("mfr_fuzz_start") || c.callee.ends_with("mfr_fuzz_end"))
}

/// How many identifier uses of `name` the statements of `main` hold.
fn reads(model: &TestModel, name: &str) -> usize {
    model
        .function_idents("main")
        .filter(|(n, _)| *n == name)
        .count()
}

/// A statement that declares nothing later statements read (an assignment, a setup loop, a
/// declaration of an unread name), with the `earlier` declarations only it (or they, in turn)
/// reads: one opportunity where deleting the statement alone would leave them for another run.
fn delete_op(
    text: &[u8],
    model: &TestModel,
    earlier: &[&Stmt],
    stmt: &Stmt,
) -> Option<Opportunity> {
    if let Some(d) = &stmt.decl {
        if reads(model, &d.name) > 0 {
            return None;
        }
    }
    let mut gone: Vec<&Stmt> = vec![stmt];
    let mut taken: HashSet<usize> = HashSet::new();
    loop {
        let uses = |name: &str| -> usize {
            gone.iter()
                .flat_map(|s| &s.idents)
                .filter(|(n, _)| n == name)
                .count()
        };
        let feeder = earlier.iter().enumerate().find(|(i, s)| {
            !taken.contains(i)
                && s.decl.as_ref().is_some_and(|d| {
                    let n = reads(model, &d.name);
                    n > 0 && n == uses(&d.name)
                })
        });
        let Some((i, s)) = feeder else { break };
        taken.insert(i);
        gone.push(s);
    }
    let what = match stmt.kind {
        StmtKind::Decl => "declaration",
        StmtKind::Expr => "statement",
        _ => "setup statement",
    };
    let with = match gone.len() - 1 {
        0 => String::new(),
        1 => " and the declaration it reads".to_string(),
        n => format!(" and the {n} declarations it reads"),
    };
    Some(Opportunity {
        description: format!(
            "delete the input {what} `{}`{with}",
            first_line(slice(text, &stmt.span))
        ),
        edits: gone
            .iter()
            .map(|s| Edit::delete(lines(text, &s.span)))
            .collect(),
        effect: Effect::Rewrite,
    })
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

/// `U y = E;` (statement `def`) whose `y` is read once, at `at` in a later input statement
/// (`reader`): the value `E` (at `init`) can move there.
struct Move {
    def: usize,
    reader: usize,
    name: String,
    init: Span,
    at: Span,
    /// The read is the reader's whole initializer (`T x = y;`).
    whole_init: bool,
}

/// The move of the value of `prefix[k]`, when it is a plain declaration read once by a later
/// input declaration or expression statement.
fn single_move(text: &[u8], model: &TestModel, prefix: &[&Stmt], k: usize) -> Option<Move> {
    let d = prefix[k].decl.as_ref()?;
    if d.direct_init || d.multiple || reads(model, &d.name) != 1 {
        return None;
    }
    let init = d.init.clone()?;
    let value = slice(text, &init).trim();
    if value.is_empty() || value.starts_with('{') {
        return None;
    }
    let (reader, stmt) = prefix
        .iter()
        .enumerate()
        .skip(k + 1)
        .find(|(_, s)| s.idents.iter().any(|(n, _)| *n == d.name))?;
    if !matches!(stmt.kind, StmtKind::Decl | StmtKind::Expr) {
        return None;
    }
    let (_, at) = stmt.idents.iter().find(|(n, _)| *n == d.name)?;
    let whole_init = stmt
        .decl
        .as_ref()
        .and_then(|r| r.init.as_ref())
        .is_some_and(|i| slice(text, i).trim() == d.name);
    Some(Move {
        def: k,
        reader,
        name: d.name.clone(),
        init,
        at: at.clone(),
        whole_init,
    })
}

/// The value of `m` with the values that move into it in place: its text and the statements
/// (indices into the prefix) whose declarations go. `None` when a read of a moving value is not
/// inside the initializer.
fn composed(text: &[u8], moves: &[Move], m: &Move) -> Option<(String, Vec<usize>)> {
    let mut defs = vec![m.def];
    let mut parts: Vec<(Span, String)> = Vec::new();
    for f in moves.iter().filter(|f| f.reader == m.def) {
        if f.at.start < m.init.start || f.at.end > m.init.end {
            return None;
        }
        let (value, inner) = composed(text, moves, f)?;
        parts.push((f.at.clone(), as_operand(&value)));
        defs.extend(inner);
    }
    parts.sort_by_key(|(span, _)| span.start);
    let mut value = String::new();
    let mut pos = m.init.start;
    for (span, with) in parts {
        value.push_str(slice(text, &(pos..span.start)));
        value.push_str(&with);
        pos = span.end;
    }
    value.push_str(slice(text, &(pos..m.init.end)));
    Some((value.trim().to_string(), defs))
}

/// The opportunity of the chain that ends with `m`: every declaration of the chain goes and the
/// read in `m`'s reader becomes the composed value — when no statement in between assigns a
/// name the moving values read, or is anything but a declaration and reads one.
fn chain_op(text: &[u8], prefix: &[&Stmt], moves: &[Move], m: &Move) -> Option<Opportunity> {
    let (value, defs) = composed(text, moves, m)?;
    let read: HashSet<&str> = defs
        .iter()
        .flat_map(|&k| &prefix[k].idents)
        .map(|(n, _)| n.as_str())
        .collect();
    let first = defs.iter().copied().min()?;
    let touched = (first + 1..m.reader)
        .filter(|k| !defs.contains(k))
        .map(|k| prefix[k])
        .any(|s| {
            s.assigns
                .as_ref()
                .is_some_and(|(n, _)| read.contains(n.as_str()))
                || (s.kind != StmtKind::Decl
                    && s.idents.iter().any(|(n, _)| read.contains(n.as_str())))
        });
    if touched {
        return None;
    }
    let reader = prefix[m.reader];
    let into = reader
        .decl
        .as_ref()
        .map(|r| r.name.as_str())
        .or(reader.assigns.as_ref().map(|(n, _)| n.as_str()))
        .unwrap_or("its reader");
    let with = if m.whole_init {
        value
    } else {
        as_operand(&value)
    };
    let mut edits: Vec<Edit> = defs
        .iter()
        .map(|&k| Edit::delete(lines(text, &prefix[k].span)))
        .collect();
    edits.push(Edit::replace(m.at.clone(), with));
    let also = match defs.len() - 1 {
        0 => String::new(),
        1 => " with the value moving into it".to_string(),
        n => format!(" with the {n} values moving into it"),
    };
    Some(Opportunity {
        description: format!("move the value of {} into {into}{also}", m.name),
        edits,
        effect: Effect::Rewrite,
    })
}
