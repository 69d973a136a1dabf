//! Step 3 of the analysis (module docs of [`super`]): a regression check (current behaviour)
//! for a value nothing checks, kept only when it runs, passes and fails once the value or the
//! expected text changes ([`characterise`]).

use std::path::Path;

use anyhow::Result;

use super::*;

use super::instrument::{includes, run, unhex, MainStmts};
use super::perturb::Perturbed;
use crate::cpp_text::string_literal;
use crate::edit::{self, Edit};

/// A value check to add: statement, variable, its printer expression.
struct Wanted {
    stmt: usize,
    var: String,
    printed: String,
}

/// Add regression checks for the executed-only markers whose value has a printer (module docs,
/// step 3), updating their verdicts and `checked.text`.
pub(super) fn characterise(
    p: &MainStmts,
    base: &[Edit],
    runner: &Runner,
    dir: &Path,
    markers: &mut [(String, usize, Perturbed)],
    checked: &mut Checked,
    runs: &mut usize,
) -> Result<()> {
    let wanted = printable(p, runner, markers, checked);
    if wanted.is_empty() {
        return Ok(());
    }
    let values = match probe(p, base, &wanted, runner, dir, runs)? {
        Ok(v) => v,
        Err(why) => {
            note_unchecked(markers, &wanted, &why);
            return Ok(());
        }
    };
    let checks: Vec<Edit> = wanted
        .iter()
        .zip(&values)
        .map(|(w, v)| check_edit(p, w, v))
        .collect();
    let head = Edit::replace(0..0, includes(&p.text, &["cassert", "string"]));
    let mut final_edits = checks.clone();
    final_edits.push(head.clone());
    let mut instrumented = base.to_vec();
    instrumented.extend(final_edits.iter().cloned());
    let t = run(runner, dir, &edit::apply(&p.text, &instrumented), runs)?;
    if !t.passed {
        let why = format!("the test with it does not pass ({})", t.last_line);
        note_unchecked(markers, &wanted, &why);
        return Ok(());
    }
    for (k, w) in wanted.iter().enumerate() {
        let live = Live {
            base,
            head: &head,
            checks: &checks,
            k,
            value: &values[k],
        };
        let verdict = verify_check(p, &live, w, markers, runner, dir, runs)?;
        for (_, i, j) in markers.iter_mut() {
            if *i == w.stmt {
                j.verdict = verdict.0.clone();
                j.reason = verdict.1.clone();
            }
        }
    }
    checked.text = edit::apply(&p.text, &final_edits);
    Ok(())
}

/// The values to print: one per statement of an executed-only marker whose type has a printer.
/// A type without one is noted in the marker's reason and in `checked.unprinted`.
fn printable(
    p: &MainStmts,
    runner: &Runner,
    markers: &mut [(String, usize, Perturbed)],
    checked: &mut Checked,
) -> Vec<Wanted> {
    let mut wanted: Vec<Wanted> = Vec::new();
    for (_, i, j) in markers.iter_mut() {
        if j.verdict != CheckedBy::ExecutedOnly || wanted.iter().any(|w| w.stmt == *i) {
            continue;
        }
        let Some((var, _)) = p.value_of(*i) else {
            continue;
        };
        let Some(ty) = p.type_of(&var, *i) else {
            continue;
        };
        match runner.printers.iter().find(|pr| pr.type_text == ty) {
            Some(pr) => wanted.push(Wanted {
                stmt: *i,
                printed: pr.print(&var),
                var,
            }),
            None => {
                j.reason.push_str(&format!(
                    "; no printer for {ty} (declare one: --printer '{ty}:EXPR')"
                ));
                checked.unprinted.insert(ty);
            }
        }
    }
    wanted
}

/// Say in the reason of every marker of `wanted` why it gets no value check.
fn note_unchecked(markers: &mut [(String, usize, Perturbed)], wanted: &[Wanted], why: &str) {
    for (_, i, j) in markers.iter_mut() {
        if wanted.iter().any(|w| w.stmt == *i) {
            j.reason.push_str(&format!("; no value check: {why}"));
        }
    }
}

/// The regression check of `w`, whose value printed `value`, right after its statement.
fn check_edit(p: &MainStmts, w: &Wanted, value: &[u8]) -> Edit {
    let end = p.stmts[w.stmt].span.end;
    Edit::replace(
        end..end,
        format!(
            "\n{}assert(std::string({}) == {}); // regression check (current behaviour)",
            p.indent(w.stmt),
            w.printed,
            string_literal(value)
        ),
    )
}

/// What a liveness run of check `k` needs: the test's edits with that check expecting another
/// text.
struct Live<'a> {
    base: &'a [Edit],
    head: &'a Edit,
    checks: &'a [Edit],
    k: usize,
    value: &'a [u8],
}

impl Live<'_> {
    /// The instrumented test with every check, check `k` expecting `expected`.
    fn edits(&self, p: &MainStmts, w: &Wanted, expected: &[u8]) -> Vec<Edit> {
        let mut edits = self.base.to_vec();
        edits.push(self.head.clone());
        for (j, c) in self.checks.iter().enumerate() {
            edits.push(if j == self.k {
                check_edit(p, w, expected)
            } else {
                c.clone()
            });
        }
        edits
    }
}

/// The printed values of `wanted` (hex-decoded), or why there are none: two runs must pass and
/// agree.
fn probe(
    p: &MainStmts,
    base: &[Edit],
    wanted: &[Wanted],
    runner: &Runner,
    dir: &Path,
    runs: &mut usize,
) -> Result<std::result::Result<Vec<Vec<u8>>, String>> {
    let mut edits = base.to_vec();
    edits.push(Edit::replace(0..0, includes(&p.text, &["string"])));
    for (j, w) in wanted.iter().enumerate() {
        let end = p.stmts[w.stmt].span.end;
        edits.push(Edit::replace(
            end..end,
            format!(
                " {{ std::string mfppr_v = std::string({}); fprintf(stderr, \"MFPPR-VALUE {j} \"); \
                 for (unsigned char mfppr_c : mfppr_v) fprintf(stderr, \"%02x\", mfppr_c); \
                 fprintf(stderr, \"\\n\"); }}",
                w.printed
            ),
        ));
    }
    let text = edit::apply(&p.text, &edits);
    let a = run(runner, dir, &text, runs)?;
    if !a.ran {
        return Ok(Err(format!(
            "the printer does not compile ({})",
            a.last_line
        )));
    }
    if !a.passed || a.values.len() != wanted.len() {
        return Ok(Err(format!(
            "the printer does not print (it throws or fails: {})",
            a.last_line
        )));
    }
    let b = run(runner, dir, &text, runs)?;
    if b.values != a.values {
        return Ok(Err("the printer prints differently from run to run".into()));
    }
    Ok(a.values
        .values()
        .map(|h| unhex(h).ok_or_else(|| "the printed value cannot be read".to_string()))
        .collect())
}

/// Whether the value check of `w` sees a change: the replacement no check saw before must now
/// fail in it.
fn verify_check(
    p: &MainStmts,
    live: &Live,
    w: &Wanted,
    markers: &[(String, usize, Perturbed)],
    runner: &Runner,
    dir: &Path,
    runs: &mut usize,
) -> Result<(CheckedBy, String)> {
    let unseen: Vec<String> = markers
        .iter()
        .find(|(_, i, _)| *i == w.stmt)
        .map(|(_, _, j)| j.unseen.clone())
        .unwrap_or_default();
    let kept = CheckedBy::Value { regression: true };
    if unseen.is_empty() {
        return Ok((
            kept,
            format!("a regression check pins the printed value of {}", w.var),
        ));
    }
    let (_, span) = p.value_of(w.stmt).expect("a value statement");
    for alt in &unseen {
        let mut edits = live.edits(p, w, live.value);
        edits.push(Edit::replace(span.clone(), alt.clone()));
        let t = run(runner, dir, &edit::apply(&p.text, &edits), runs)?;
        if !t.passed && t.last == Some(w.stmt) {
            return Ok((
                kept,
                format!(
                    "a regression check pins the printed value of {}; with {} = {alt} it fails",
                    w.var, w.var
                ),
            ));
        }
    }
    // No replacement printed differently: show that the check runs and compares, by expecting
    // another text.
    let mut other = live.value.to_vec();
    other.push(b'~');
    let t = run(
        runner,
        dir,
        &edit::apply(&p.text, &live.edits(p, w, &other)),
        runs,
    )?;
    Ok(if !t.passed && t.last == Some(w.stmt) {
        (
            kept,
            format!(
                "a regression check pins the printed value of {}; {} print the same, and with \
                 another expected text it fails",
                w.var,
                unseen.join(", ")
            ),
        )
    } else {
        (
            CheckedBy::ExecutedOnly,
            format!(
                "the regression check of {} does not fail with another expected text ({})",
                w.var, t.last_line
            ),
        )
    })
}
