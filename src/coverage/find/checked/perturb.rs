//! Step 2 of the analysis (module docs of [`super`]): a statement's value replaced by others,
//! and which check, if any, sees the change ([`judge`]).

use std::path::Path;

use anyhow::Result;

use super::*;

use super::instrument::{run, MainStmts};
use crate::edit::{self, Edit};

/// What perturbing one statement showed.
#[derive(Clone, Debug)]
pub(super) struct Perturbed {
    pub(super) verdict: CheckedBy,
    pub(super) reason: String,
    /// Replacements that ran and passed (changes no check saw, or no changes), for verifying a
    /// value check.
    pub(super) unseen: Vec<String>,
}

/// The verdict of statement `i` (see the module docs, step 2).
pub(super) fn judge(
    p: &MainStmts,
    i: usize,
    base: &[Edit],
    runner: &Runner,
    dir: &Path,
    runs: &mut usize,
) -> Result<Perturbed> {
    let done = |verdict, reason: String| Perturbed {
        verdict,
        reason,
        unseen: Vec::new(),
    };
    if let Some(check) = p.check_of(i) {
        return Ok(match check {
            Some(pair) => done(
                CheckedBy::Metamorphic { pair },
                "the line runs in the check itself".into(),
            ),
            None => done(
                CheckedBy::Value { regression: false },
                "the assertion tests the value computed there".into(),
            ),
        });
    }
    let Some((var, span)) = p.value_of(i) else {
        return Ok(done(
            CheckedBy::ExecutedOnly,
            "the statement reaching it computes no value a check could read".into(),
        ));
    };
    let mut unseen = Vec::new();
    let mut tried = Vec::new();
    let value = String::from_utf8_lossy(&p.text[span.clone()]).into_owned();
    for alt in p.replacements(i, &var, &value, runner.generators) {
        let mut edits = base.to_vec();
        edits.push(Edit::replace(span.clone(), alt.clone()));
        let t = run(runner, dir, &edit::apply(&p.text, &edits), runs)?;
        if !t.ran {
            tried.push(format!("{alt} (does not compile)"));
            continue;
        }
        if t.passed {
            tried.push(format!("{alt} (no check fails)"));
            unseen.push(alt);
            continue;
        }
        match t.last.and_then(|l| p.check_of(l).map(|c| (l, c))) {
            Some((l, Some(pair))) => {
                let pair = match p.variant[i] {
                    Some(k) if k != 0 => format!("r_0/r_{k}"),
                    _ => pair,
                };
                return Ok(done(
                    CheckedBy::Metamorphic { pair },
                    format!("with {var} = {alt}, `{}` fails", p.shown(l)),
                ));
            }
            Some((l, None)) => {
                return Ok(done(
                    CheckedBy::Value { regression: false },
                    format!("with {var} = {alt}, `{}` fails", p.shown(l)),
                ))
            }
            None => tried.push(format!("{alt} (fails outside a check: {})", t.last_line)),
        }
    }
    let reason = if tried.is_empty() {
        format!("no other value to give {var} before it")
    } else {
        format!("no check fails with {var} = {}", tried.join(", "))
    };
    Ok(Perturbed {
        verdict: CheckedBy::ExecutedOnly,
        reason,
        unseen,
    })
}
