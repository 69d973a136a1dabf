//! Tail inputs (design §10): the statements of `main` before the first variant compute the
//! inputs every variant shares, so any input on which the variants disagree is a real mismatch.
//! They may go (assignments, setup loops, declarations nothing reads), a single-use value may
//! move into the declaration that reads it, and number literals may become 0, 1 or shorter.

use crate::document::{Stmt, StmtKind};
use crate::edit::Edit;
use crate::model::TestModel;
use crate::passes::{lines, slice, Effect, Opportunity};

use super::{first_variant_start, is_ident};

/// Deletions first, then moved values, then smaller literals.
pub(super) fn input_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let end = first_variant_start(model);
    let prefix: Vec<&Stmt> = model
        .main_stmts
        .iter()
        .filter(|s| s.span.end <= end)
        .collect();
    let mut deletions = Vec::new();
    let mut moves = Vec::new();
    let mut literals = Vec::new();
    for (k, stmt) in prefix.iter().enumerate() {
        if is_marker(stmt) || matches!(stmt.kind, StmtKind::Comment | StmtKind::Empty) {
            continue;
        }
        if let Some(op) = delete_op(text, model, stmt) {
            deletions.push(op);
        }
        if let Some(op) = move_op(text, model, &prefix[..k], stmt) {
            moves.push(op);
        }
        literals.extend(literal_ops(text, stmt));
    }
    deletions.extend(moves);
    deletions.extend(literals);
    deletions
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

/// A statement that declares nothing later statements read: an assignment, a setup loop, a
/// declaration of an unread name.
fn delete_op(text: &[u8], model: &TestModel, stmt: &Stmt) -> Option<Opportunity> {
    if let Some(d) = &stmt.decl {
        if reads(model, &d.name) > 0 {
            return None;
        }
    }
    let what = match stmt.kind {
        StmtKind::Decl => "declaration",
        StmtKind::Expr => "statement",
        _ => "setup statement",
    };
    Some(Opportunity {
        description: format!(
            "delete the input {what} `{}`",
            first_line(slice(text, &stmt.span))
        ),
        edits: vec![Edit::delete(lines(text, &stmt.span))],
        effect: Effect::Rewrite,
    })
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

/// `T x = y;` where `y` is read only here and declared earlier by `U y = E;`: `y`'s declaration
/// goes and `x` takes `E`.
fn move_op(text: &[u8], model: &TestModel, earlier: &[&Stmt], stmt: &Stmt) -> Option<Opportunity> {
    let d = stmt.decl.as_ref()?;
    if d.direct_init || d.multiple {
        return None;
    }
    let source = slice(text, d.init.as_ref()?).trim();
    if !is_ident(source) || reads(model, source) != 1 {
        return None;
    }
    let def = earlier.iter().rev().find_map(|s| {
        s.decl
            .as_ref()
            .filter(|e| e.name == source && !e.direct_init && !e.multiple)
            .map(|e| (s, e))
    })?;
    let value = slice(text, def.1.init.as_ref()?).trim();
    Some(Opportunity {
        description: format!("move the value of {source} into {}", d.name),
        edits: vec![
            Edit::delete(lines(text, &def.0.span)),
            Edit::replace(d.init.clone()?, value),
        ],
        effect: Effect::Rewrite,
    })
}

/// Each number literal of `stmt` (with its sign when it is a unary minus) becomes a smaller one:
/// 0, 1, or the literal without its last digit — only values of smaller magnitude, so that the
/// search never goes back and forth between two literals.
fn literal_ops(text: &[u8], stmt: &Stmt) -> Vec<Opportunity> {
    let mut out = Vec::new();
    for span in number_literals(text, stmt.span.clone()) {
        let current = slice(text, &span);
        let negative = current.starts_with('-');
        let digits = current.trim_start_matches('-').trim_start();
        let magnitude = digits.trim_start_matches('0');
        let mut values: Vec<String> = Vec::new();
        if !magnitude.is_empty() {
            values.push("0".to_string());
        }
        if magnitude.len() > 1 || (magnitude.len() == 1 && magnitude != "1") {
            values.push("1".to_string());
        }
        if magnitude.len() > 1 {
            let shorter = &magnitude[..magnitude.len() - 1];
            let shorter = if negative {
                format!("-{shorter}")
            } else {
                shorter.to_string()
            };
            if !values.contains(&shorter) {
                values.push(shorter);
            }
        }
        for value in values {
            out.push(Opportunity {
                description: format!("input literal {current} -> {value}"),
                edits: vec![Edit::replace(span.clone(), value)],
                effect: Effect::Rewrite,
            });
        }
    }
    out
}

/// Spans of the decimal integer literals in `span` (outside string and character literals and
/// identifiers), each with a unary minus in front of it when there is one.
fn number_literals(text: &[u8], span: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = span.start;
    while i < span.end {
        let c = text[i];
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < span.end && text[i] != c {
                i += usize::from(text[i] == b'\\') + 1;
            }
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < span.end && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < span.end && text[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let plain = text[start..i].iter().all(u8::is_ascii_digit);
            let decimal_point = i < span.end && text[i] == b'.';
            if decimal_point {
                i += 1;
                while i < span.end && text[i].is_ascii_alphanumeric() {
                    i += 1;
                }
            } else if plain {
                out.push(with_minus(text, span.start, start)..i);
            }
            continue;
        }
        i += 1;
    }
    out
}

/// `start`, moved back over a unary minus (one that follows `(`, `,`, `=` or the statement start).
fn with_minus(text: &[u8], stmt_start: usize, start: usize) -> usize {
    let mut j = start;
    while j > stmt_start && text[j - 1] == b' ' {
        j -= 1;
    }
    if j == stmt_start || text[j - 1] != b'-' {
        return start;
    }
    let minus = j - 1;
    let mut k = minus;
    while k > stmt_start && text[k - 1] == b' ' {
        k -= 1;
    }
    if k == stmt_start || matches!(text[k - 1], b'(' | b',' | b'=') {
        minus
    } else {
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literals(s: &str) -> Vec<&str> {
        number_literals(s.as_bytes(), 0..s.len())
            .into_iter()
            .map(|r| &s[r])
            .collect()
    }

    #[test]
    fn literals_keep_their_unary_minus_and_skip_names_and_strings() {
        assert_eq!(
            literals("fuzz::fuzz_context fctx(-48, 48);"),
            vec!["-48", "48"]
        );
        assert_eq!(literals("x = a - 3 + f(\"12\") + v2 + 1.5;"), vec!["3"]);
        assert_eq!(literals("long k = 0x1F + 7L;"), Vec::<&str>::new());
    }

    #[test]
    fn literals_only_get_smaller() {
        let values = |s: &str| {
            let stmt = Stmt {
                span: 0..s.len(),
                kind: StmtKind::Expr,
                decl: None,
                assigns: None,
                calls: Vec::new(),
                idents: Vec::new(),
            };
            literal_ops(s.as_bytes(), &stmt)
                .into_iter()
                .map(|o| o.edits[0].text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(values("f(-48);"), vec!["0", "1", "-4"]);
        assert_eq!(values("f(12);"), vec!["0", "1"]);
        assert_eq!(values("f(7);"), vec!["0", "1"]);
        assert_eq!(values("f(1);"), vec!["0"]);
        assert_eq!(values("f(0);"), Vec::<String>::new());
    }
}
