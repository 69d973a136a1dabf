//! Tail inputs (design §10): the statements of `main` before the first variant compute the
//! inputs every variant shares, so any input on which the variants disagree is a real mismatch.
//! They may go (assignments, setup loops, declarations nothing reads), each with the declarations
//! only it reads, and a value read once by a later input statement may move there (a
//! value-preserving rewrite, offered with the equivalences). Number literals are left as they
//! are: shrinking them one by one cost more oracle runs than all the other tail edits together
//! for a few bytes.

use std::collections::HashSet;

use crate::document::{Stmt, StmtKind};
use crate::edit::Edit;
use crate::model::TestModel;
use crate::passes::{lines, slice, Effect, Opportunity};

use super::{as_operand, first_variant_start};

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

/// Values read once moved to where they are read, in source order. A value that another value
/// moves into waits until that one has moved (both in one window would lose the inner move).
pub(super) fn move_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let prefix = prefix(model);
    let moves: Vec<(usize, usize, Opportunity)> = (0..prefix.len())
        .filter_map(|k| move_op(text, model, &prefix, k))
        .collect();
    let readers: HashSet<usize> = moves.iter().map(|(_, u, _)| *u).collect();
    moves
        .into_iter()
        .filter(|(k, _, _)| !readers.contains(k))
        .map(|(_, _, op)| op)
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

/// `U y = E;` whose `y` is read once, by a later input statement: `y`'s declaration goes and
/// the read becomes `E` (parenthesised unless primary) — when no statement in between assigns
/// a name `E` reads, or is anything but a declaration and reads one.
/// Returns `k`, the index of the reader in `prefix`, and the opportunity.
fn move_op(
    text: &[u8],
    model: &TestModel,
    prefix: &[&Stmt],
    k: usize,
) -> Option<(usize, usize, Opportunity)> {
    let def = prefix[k];
    let d = def.decl.as_ref()?;
    if d.direct_init || d.multiple || reads(model, &d.name) != 1 {
        return None;
    }
    let value = slice(text, d.init.as_ref()?).trim();
    if value.is_empty() || value.starts_with('{') {
        return None;
    }
    let (u, reader) = prefix
        .iter()
        .enumerate()
        .skip(k + 1)
        .find(|(_, s)| s.idents.iter().any(|(n, _)| *n == d.name))?;
    if !matches!(reader.kind, StmtKind::Decl | StmtKind::Expr) {
        return None;
    }
    let read: Vec<&str> = def.idents.iter().map(|(n, _)| n.as_str()).collect();
    let touched = prefix[k + 1..u].iter().any(|s| {
        s.assigns.as_ref().is_some_and(|(n, _)| read.contains(&n.as_str()))
            || (s.kind != StmtKind::Decl && s.idents.iter().any(|(n, _)| read.contains(&n.as_str())))
    });
    if touched {
        return None;
    }
    let (_, at) = reader.idents.iter().find(|(n, _)| *n == d.name)?;
    let whole_init = reader
        .decl
        .as_ref()
        .and_then(|r| r.init.as_ref())
        .is_some_and(|init| slice(text, init).trim() == d.name);
    let with = if whole_init {
        value.to_string()
    } else {
        as_operand(value)
    };
    let into = reader
        .decl
        .as_ref()
        .map(|r| r.name.as_str())
        .or(reader.assigns.as_ref().map(|(n, _)| n.as_str()))
        .unwrap_or("its reader");
    let op = Opportunity {
        description: format!("move the value of {} into {into}", d.name),
        edits: vec![
            Edit::delete(lines(text, &def.span)),
            Edit::replace(at.clone(), with),
        ],
        effect: Effect::Rewrite,
    };
    Some((k, u, op))
}

