//! Step 1 of the analysis (module docs of [`super`]): the test's `main` read statement by
//! statement ([`MainStmts`]), instrumented to print where each run is, and one run of a candidate
//! read back ([`Trace`]); and the C++ text the other steps write (string literals, includes).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::*;

use super::super::reach::INJECTED_ENV;
use super::super::shell;
use crate::document::{Document, Stmt, StmtKind};
use crate::edit::Edit;

/// What one run of an instrumented candidate showed.
#[derive(Debug)]
pub(super) struct Trace {
    /// Exit status 0.
    pub(super) passed: bool,
    /// The program started (a statement line was printed): it compiled.
    pub(super) ran: bool,
    /// The last statement printed (where it ended).
    pub(super) last: Option<usize>,
    /// Per marker, the statements that reached it, in order.
    pub(super) reached: BTreeMap<String, Vec<usize>>,
    /// `MFPPR-VALUE <j> <hex>` lines.
    pub(super) values: BTreeMap<usize, String>,
    /// Its last line, for reasons.
    pub(super) last_line: String,
}

/// The parsed test: `main`'s statements and which variant each lies in.
pub(super) struct MainStmts {
    pub(super) text: Vec<u8>,
    pub(super) stmts: Vec<Stmt>,
    /// Per statement, `Some(k)` when it lies in variant `r_k`.
    pub(super) variant: Vec<Option<usize>>,
}

impl MainStmts {
    pub(super) fn new(text: &[u8]) -> Result<MainStmts> {
        let doc = Document::parse(text.to_vec())?;
        let Some(main) = doc
            .outline()
            .functions
            .iter()
            .find(|f| f.name == "main" && f.namespaces.is_empty())
        else {
            bail!("no main function");
        };
        let stmts = main.body.clone();
        let model = TestModel::build(&doc, &Catalogue::default()).ok();
        let variant = stmts
            .iter()
            .map(|s| {
                model.as_ref().and_then(|m| {
                    m.variants
                        .iter()
                        .find(|v| {
                            let span = v.span();
                            span.start <= s.span.start && s.span.end <= span.end
                        })
                        .map(|v| v.index)
                })
            })
            .collect();
        Ok(MainStmts {
            text: text.to_vec(),
            stmts,
            variant,
        })
    }

    pub(super) fn stmt_text(&self, i: usize) -> &str {
        std::str::from_utf8(&self.text[self.stmts[i].span.clone()]).unwrap_or("")
    }

    /// The statement's first line, for messages.
    pub(super) fn shown(&self, i: usize) -> String {
        let first = self.stmt_text(i).lines().next().unwrap_or("").trim();
        let mut s: String = first.chars().take(100).collect();
        if s.len() < first.len() {
            s.push('…');
        }
        s
    }

    /// A `metalib::checks::…` call or an `assert`: `Some(the checked pair)` or `Some(None)`.
    pub(super) fn check_of(&self, i: usize) -> Option<Option<String>> {
        let s = &self.stmts[i];
        if s.kind != StmtKind::Expr {
            return None;
        }
        let call = s.calls.first()?;
        if call.callee.starts_with("metalib::checks::") {
            let args: Vec<usize> = call
                .args
                .iter()
                .filter_map(|a| variant_index(std::str::from_utf8(&self.text[a.clone()]).ok()?))
                .collect();
            let other = args.iter().copied().find(|&k| k != 0).unwrap_or(0);
            return Some(Some(format!("r_0/r_{other}")));
        }
        (call.callee == "assert" && call.span.start == s.span.start).then_some(None)
    }

    /// The variable a statement sets and the span of the value it is set to.
    pub(super) fn value_of(&self, i: usize) -> Option<(String, std::ops::Range<usize>)> {
        let s = &self.stmts[i];
        if let Some(d) = &s.decl {
            if d.multiple {
                return None;
            }
            let init = d.init.clone()?;
            return Some(if d.direct_init {
                (d.name.clone(), init.start + 1..init.end.saturating_sub(1))
            } else {
                (d.name.clone(), init)
            });
        }
        let (name, span) = s.assigns.clone()?;
        let rest = &self.text[span.end..s.span.end];
        let eq = rest.iter().position(|&c| c == b'=')?;
        let end = self.text[..s.span.end].iter().rposition(|&c| c == b';')?;
        let start = span.end + eq + 1;
        (start < end).then_some((name, start..end))
    }

    /// The declared type of `name` by a declaration of `main` before statement `before`.
    pub(super) fn type_of(&self, name: &str, before: usize) -> Option<String> {
        self.stmts[..=before.min(self.stmts.len() - 1)]
            .iter()
            .rev()
            .filter_map(|s| s.decl.as_ref())
            .find(|d| d.name == name)
            .map(|d| normalise_type(&d.type_text))
    }

    /// Replacement values for statement `i` setting `var` to the text `value`: the spec's
    /// generators applied to it (with a fuzz context variable of `main` declared before `i`; those
    /// returning `var`'s type first), `var`'s earlier value (an assignment), then variables
    /// declared before `i`, those of the same type first, nearest first.
    pub(super) fn replacements(
        &self,
        i: usize,
        var: &str,
        value: &str,
        generators: &[Generator],
    ) -> Vec<String> {
        let ty = self.type_of(var, i);
        let mut out = Vec::new();
        let direct = self.stmts[i].decl.as_ref().is_some_and(|d| d.direct_init);
        let ctx = self.stmts[..i]
            .iter()
            .filter_map(|s| s.decl.as_ref())
            .find(|d| d.type_text.contains("fuzz_context"))
            .map(|d| d.name.clone());
        if let (Some(ctx), false) = (ctx, direct) {
            for same in [true, false] {
                for g in generators {
                    if (Some(&g.type_text) == ty.as_ref()) == same {
                        out.push(format!("{}({ctx}, ({}))", g.name, value.trim()));
                    }
                }
            }
        }
        if self.stmts[i].decl.is_none() {
            out.push(var.to_string());
        }
        let earlier: Vec<(String, String)> = self.stmts[..i]
            .iter()
            .rev()
            .filter_map(|s| s.decl.as_ref())
            .filter(|d| d.name != var && !d.multiple && !d.type_text.contains("fuzz_context"))
            .map(|d| (d.name.clone(), normalise_type(&d.type_text)))
            .collect();
        for same in [true, false] {
            for (name, t) in &earlier {
                if (Some(t) == ty.as_ref()) == same && !out.contains(name) {
                    out.push(name.clone());
                }
            }
        }
        out.truncate(MAX_REPLACEMENTS);
        out
    }

    /// Edits printing `MFPPR-STMT <i>` before each statement of `main`.
    pub(super) fn instrument(&self) -> Vec<Edit> {
        let mut edits = vec![Edit::replace(0..0, "#include <stdio.h>\n")];
        for (i, s) in self.stmts.iter().enumerate() {
            if matches!(s.kind, StmtKind::Comment | StmtKind::Empty) {
                continue;
            }
            edits.push(Edit::replace(
                s.span.start..s.span.start,
                format!("fprintf(stderr, \"MFPPR-STMT {i}\\n\"); "),
            ));
        }
        edits
    }

    /// The indentation of statement `i`'s line.
    pub(super) fn indent(&self, i: usize) -> String {
        let start = self.stmts[i].span.start;
        let line = self.text[..start]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        String::from_utf8_lossy(&self.text[line..start])
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect()
    }
}

/// `k` of an argument `r_k`.
pub(super) fn variant_index(arg: &str) -> Option<usize> {
    arg.trim().strip_prefix("r_")?.parse().ok()
}

/// Includes a value check needs, for those not yet in `text`.
pub(super) fn includes(text: &[u8], wanted: &[&str]) -> String {
    let t = String::from_utf8_lossy(text);
    wanted
        .iter()
        .filter(|h| !t.contains(&format!("#include <{h}>")))
        .map(|h| format!("#include <{h}>\n"))
        .collect()
}

pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Run `text` (instrumented by the caller) in `dir`.
pub(super) fn run(runner: &Runner, dir: &Path, text: &[u8], runs: &mut usize) -> Result<Trace> {
    let path = dir.join("mfppr_checked.cpp");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    let cmd = shell::expand(runner.run, &[("test", &path.to_string_lossy())]);
    let r = shell::run(
        &cmd,
        dir,
        &[(INJECTED_ENV, runner.injected)],
        runner.timeout,
    )?;
    *runs += 1;
    let mut trace = Trace {
        passed: r.passed(),
        ran: false,
        last: None,
        reached: BTreeMap::new(),
        values: BTreeMap::new(),
        last_line: format!("{}: {}", r.describe(), r.last_line()),
    };
    for line in String::from_utf8_lossy(&r.stderr).lines() {
        if let Some(i) = line.strip_prefix("MFPPR-STMT ") {
            trace.ran = true;
            trace.last = i.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("MFPPR-COV ") {
            let id = rest.split(' ').next().unwrap_or("");
            if let (true, Some(stmt)) = (runner.known.contains(id), trace.last) {
                let at = trace.reached.entry(id.to_string()).or_default();
                if at.last() != Some(&stmt) {
                    at.push(stmt);
                }
            }
        } else if let Some(rest) = line.strip_prefix("MFPPR-VALUE ") {
            if let Some((j, hex)) = rest.split_once(' ') {
                if let Ok(j) = j.parse() {
                    trace.values.insert(j, hex.trim().to_string());
                }
            }
        }
    }
    Ok(trace)
}
