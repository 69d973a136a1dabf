//! Whether a reduced coverage test *checks* its new lines, and a check for those it only
//! executes (issue 30, design §13).
//!
//! A test is checked for a marker when the value computed by the statement of `main` that
//! reaches the marker flows into a check that would see a change of it. Measured, not guessed:
//!
//! 1. **Where.** The test is run once with a `MFPPR-STMT <i>` line printed before each statement
//!    of `main`; the statement printed last before a marker's `MFPPR-COV` line reaches it.
//! 2. **Perturb.** That statement's value (`T x = E;`, `x = E;`) is replaced by another value:
//!    the spec's generators of its type (`metalib::generators::empty::base(fctx, (E))`: valid by
//!    the spec, and seldom equal to `x`), `x`'s earlier value, earlier variables (same type
//!    first). When the run
//!    then fails in a check statement (a `metalib::checks::…` call or an `assert`), the marker is
//!    `checked (metamorphic, pair r_0/r_k)` (a metamorphic check failed) or `checked (value)` (an
//!    assertion failed). A replacement that does not compile or fails outside a check is not a
//!    valid value and the next one is tried. A check statement reaching the marker checks it
//!    itself; a statement that computes no value leaves it `executed only`, with the reason.
//! 3. **Characterise.** For a value nothing checks, with a printer for its type (`--printer
//!    'TYPE:EXPR'`, `{}` the value), the value is printed twice (two runs; they must agree and
//!    pass) and `assert(std::string(EXPR) == "<printed>");` is added right after the statement: a
//!    *regression check (current behaviour)*. It is kept only when the test still passes and,
//!    when a replacement value passed before, the replacement now fails in that check — or, when
//!    every such replacement prints the same text, the check fails once it expects another text
//!    (it runs and compares). Else the marker
//!    stays `executed only`, with the reason (no printer for the type, said once per type; a
//!    printer that throws or prints differently from run to run).
//!
//! Every candidate is an edit set on the reduced text and is run with the `--run` command against
//! the marked tree, like the tests of `find`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use super::reach::INJECTED_ENV;
use super::shell;
use crate::catalogue::Catalogue;
use crate::document::{Document, Stmt, StmtKind};
use crate::edit::{self, Edit};
use crate::model::TestModel;

/// At most this many replacement values are tried per statement.
const MAX_REPLACEMENTS: usize = 4;

/// A spec generator `metalib::generators::<family>::<name>(fuzz_context, T) -> T`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generator {
    /// The qualified name.
    pub name: String,
    /// The type it returns, normalised.
    pub type_text: String,
}

/// The generators of `catalogue` that take a fuzz context and one value.
pub fn generators(catalogue: &Catalogue) -> Vec<Generator> {
    catalogue
        .mrs
        .iter()
        .filter(|m| {
            m.kind == crate::catalogue::MrKind::Generator
                && m.executable
                && m.params.len() == 2
                && m.params[0].contains("fuzz_context")
        })
        .map(|m| Generator {
            name: m.qualified(),
            type_text: normalise_type(&m.return_type),
        })
        .collect()
}

/// A printer for values of one type: `--printer 'TYPE:EXPR'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printer {
    /// The declared type it prints (`isl::set`), whitespace-normalised.
    pub type_text: String,
    /// The expression, `{}` standing for the value (`{}.to_str()`).
    pub expr: String,
}

impl Printer {
    /// Parse `TYPE:EXPR`: the first `:` that is not part of a `::` separates them, and EXPR must
    /// hold `{}`.
    pub fn parse(s: &str) -> Result<Printer> {
        let b = s.as_bytes();
        let colon = (0..b.len())
            .find(|&i| b[i] == b':' && (i == 0 || b[i - 1] != b':') && b.get(i + 1) != Some(&b':'));
        let Some(i) = colon else {
            bail!("--printer {s:?}: expected TYPE:EXPR, e.g. 'isl::set:{{}}.to_str()'");
        };
        let (ty, expr) = (normalise_type(&s[..i]), s[i + 1..].trim().to_string());
        if ty.is_empty() || !expr.contains("{}") {
            bail!("--printer {s:?}: expected TYPE:EXPR with {{}} for the value, e.g. 'isl::set:{{}}.to_str()'");
        }
        Ok(Printer {
            type_text: ty,
            expr,
        })
    }

    fn print(&self, var: &str) -> String {
        self.expr.replace("{}", var)
    }
}

/// A declared type without `class`/`struct`/`const` and with single spaces.
fn normalise_type(t: &str) -> String {
    let words: Vec<&str> = t
        .split_whitespace()
        .filter(|w| !matches!(*w, "class" | "struct" | "const"))
        .collect();
    words.join(" ")
}

/// How a marker's line is checked in one test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Verdict {
    /// A metamorphic check of the pair fails when the value changes.
    Metamorphic {
        /// `r_0/r_k`.
        pair: String,
    },
    /// An assertion fails when the value changes; `regression` when mfppr added it.
    Value {
        /// The check is a regression check (current behaviour) that mfppr added.
        regression: bool,
    },
    /// No check sees a change of it.
    ExecutedOnly,
}

impl Verdict {
    /// `checked (metamorphic, pair r_0/r_1)`, `checked (value)`, `executed only`.
    pub fn label(&self) -> String {
        match self {
            Verdict::Metamorphic { pair } => format!("checked (metamorphic, pair {pair})"),
            Verdict::Value { regression: false } => "checked (value)".into(),
            Verdict::Value { regression: true } => {
                "checked (value): regression check (current behaviour)".into()
            }
            Verdict::ExecutedOnly => "executed only".into(),
        }
    }

    /// Ordering for choosing among tests: metamorphic, then value, then executed only.
    pub fn rank(&self) -> u8 {
        match self {
            Verdict::Metamorphic { .. } => 2,
            Verdict::Value { .. } => 1,
            Verdict::ExecutedOnly => 0,
        }
    }
}

/// One marker reached by the test, and how it is checked.
#[derive(Clone, Debug, Serialize)]
pub struct MarkerCheck {
    /// Marker id.
    pub marker: String,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The statement of `main` that reaches it (first line), when found.
    pub statement: String,
    /// Why (the replacement that a check saw, or why none did).
    pub reason: String,
}

/// The analysis of one test.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The test, with the regression checks added.
    pub text: Vec<u8>,
    /// Per marker it reaches, in id order.
    pub markers: Vec<MarkerCheck>,
    /// Runs of the `--run` command it took.
    pub runs: usize,
    /// Types that had no printer (for one message per type).
    pub unprinted: BTreeSet<String>,
}

/// How to run candidates: the `--run` template against the marked tree.
#[derive(Clone, Debug)]
pub struct Runner<'a> {
    /// `--run` (`{test}`).
    pub run: &'a str,
    /// The marked tree (`MFPPR_INJECTED`).
    pub injected: &'a Path,
    /// Every marker id.
    pub known: &'a BTreeSet<String>,
    /// Per run.
    pub timeout: Duration,
    /// `--printer`s.
    pub printers: &'a [Printer],
    /// The spec's generators (replacement values).
    pub generators: &'a [Generator],
}

/// What one run of an instrumented candidate showed.
#[derive(Debug)]
struct Trace {
    /// Exit status 0.
    passed: bool,
    /// The program started (a statement line was printed): it compiled.
    ran: bool,
    /// The last statement printed (where it ended).
    last: Option<usize>,
    /// Per marker, the statements that reached it, in order.
    reached: BTreeMap<String, Vec<usize>>,
    /// `MFPPR-VALUE <j> <hex>` lines.
    values: BTreeMap<usize, String>,
    /// Its last line, for reasons.
    last_line: String,
}

/// The parsed test: `main`'s statements and which variant each lies in.
struct Parsed {
    text: Vec<u8>,
    stmts: Vec<Stmt>,
    /// Per statement, `Some(k)` when it lies in variant `r_k`.
    variant: Vec<Option<usize>>,
}

impl Parsed {
    fn new(text: &[u8]) -> Result<Parsed> {
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
        Ok(Parsed {
            text: text.to_vec(),
            stmts,
            variant,
        })
    }

    fn stmt_text(&self, i: usize) -> &str {
        std::str::from_utf8(&self.text[self.stmts[i].span.clone()]).unwrap_or("")
    }

    /// The statement's first line, for messages.
    fn shown(&self, i: usize) -> String {
        let first = self.stmt_text(i).lines().next().unwrap_or("").trim();
        let mut s: String = first.chars().take(100).collect();
        if s.len() < first.len() {
            s.push('…');
        }
        s
    }

    /// A `metalib::checks::…` call or an `assert`: `Some(the checked pair)` or `Some(None)`.
    fn check_of(&self, i: usize) -> Option<Option<String>> {
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
    fn value_of(&self, i: usize) -> Option<(String, std::ops::Range<usize>)> {
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
    fn type_of(&self, name: &str, before: usize) -> Option<String> {
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
    fn replacements(
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
    fn instrument(&self) -> Vec<Edit> {
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
    fn indent(&self, i: usize) -> String {
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
fn variant_index(arg: &str) -> Option<usize> {
    arg.trim().strip_prefix("r_")?.parse().ok()
}

/// Includes a value check needs, for those not yet in `text`.
fn includes(text: &[u8], wanted: &[&str]) -> String {
    let t = String::from_utf8_lossy(text);
    wanted
        .iter()
        .filter(|h| !t.contains(&format!("#include <{h}>")))
        .map(|h| format!("#include <{h}>\n"))
        .collect()
}

/// `bytes` as a C++ string literal (octal escapes for anything not printable).
fn cxx_literal(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'?' => s.push_str("\\?"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Run `text` (instrumented by the caller) in `dir`.
fn run(runner: &Runner, dir: &Path, text: &[u8], runs: &mut usize) -> Result<Trace> {
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

/// What perturbing one statement showed.
#[derive(Clone, Debug)]
struct Perturbed {
    verdict: Verdict,
    reason: String,
    /// Replacements that ran and passed (changes no check saw, or no changes), for verifying a
    /// value check.
    unseen: Vec<String>,
}

/// The analysis (see the module docs) of the test `text`, scratch files in `dir`.
pub fn analyse(text: &[u8], dir: &Path, runner: &Runner) -> Result<Checked> {
    let p = Parsed::new(text)?;
    let mut runs = 0;
    let base = p.instrument();
    let first = run(runner, dir, &edit::apply(text, &base), &mut runs)?;
    if !first.passed {
        bail!("it does not pass when run: {}", first.last_line);
    }
    let mut by_stmt: BTreeMap<usize, Perturbed> = BTreeMap::new();
    let mut markers = Vec::new();
    for (id, stmts) in &first.reached {
        let mut best: Option<(usize, Perturbed)> = None;
        for &i in stmts {
            if let std::collections::btree_map::Entry::Vacant(e) = by_stmt.entry(i) {
                e.insert(judge(&p, i, &base, runner, dir, &mut runs)?);
            }
            let j = &by_stmt[&i];
            if best
                .as_ref()
                .is_none_or(|(_, b)| j.verdict.rank() > b.verdict.rank())
            {
                best = Some((i, j.clone()));
            }
        }
        let (i, j) = best.expect("a reached marker has a statement");
        markers.push((id.clone(), i, j));
    }
    let mut checked = Checked {
        text: text.to_vec(),
        markers: Vec::new(),
        runs: 0,
        unprinted: BTreeSet::new(),
    };
    characterise(
        &p,
        &base,
        runner,
        dir,
        &mut markers,
        &mut checked,
        &mut runs,
    )?;
    checked.markers = markers
        .into_iter()
        .map(|(id, i, j)| MarkerCheck {
            marker: id,
            verdict: j.verdict,
            statement: p.shown(i),
            reason: j.reason,
        })
        .collect();
    checked.runs = runs;
    Ok(checked)
}

/// The verdict of statement `i` (see the module docs, step 2).
fn judge(
    p: &Parsed,
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
                Verdict::Metamorphic { pair },
                "the line runs in the check itself".into(),
            ),
            None => done(
                Verdict::Value { regression: false },
                "the assertion tests the value computed there".into(),
            ),
        });
    }
    let Some((var, span)) = p.value_of(i) else {
        return Ok(done(
            Verdict::ExecutedOnly,
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
                    Verdict::Metamorphic { pair },
                    format!("with {var} = {alt}, `{}` fails", p.shown(l)),
                ));
            }
            Some((l, None)) => {
                return Ok(done(
                    Verdict::Value { regression: false },
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
        verdict: Verdict::ExecutedOnly,
        reason,
        unseen,
    })
}

/// A value check to add: statement, variable, its printer expression.
struct Wanted {
    stmt: usize,
    var: String,
    printed: String,
}

/// Add regression checks for the executed-only markers whose value has a printer (module docs,
/// step 3), updating their verdicts and `checked.text`.
fn characterise(
    p: &Parsed,
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
    p: &Parsed,
    runner: &Runner,
    markers: &mut [(String, usize, Perturbed)],
    checked: &mut Checked,
) -> Vec<Wanted> {
    let mut wanted: Vec<Wanted> = Vec::new();
    for (_, i, j) in markers.iter_mut() {
        if j.verdict != Verdict::ExecutedOnly || wanted.iter().any(|w| w.stmt == *i) {
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
fn check_edit(p: &Parsed, w: &Wanted, value: &[u8]) -> Edit {
    let end = p.stmts[w.stmt].span.end;
    Edit::replace(
        end..end,
        format!(
            "\n{}assert(std::string({}) == {}); // regression check (current behaviour)",
            p.indent(w.stmt),
            w.printed,
            cxx_literal(value)
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
    fn edits(&self, p: &Parsed, w: &Wanted, expected: &[u8]) -> Vec<Edit> {
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
    p: &Parsed,
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
    p: &Parsed,
    live: &Live,
    w: &Wanted,
    markers: &[(String, usize, Perturbed)],
    runner: &Runner,
    dir: &Path,
    runs: &mut usize,
) -> Result<(Verdict, String)> {
    let unseen: Vec<String> = markers
        .iter()
        .find(|(_, i, _)| *i == w.stmt)
        .map(|(_, _, j)| j.unseen.clone())
        .unwrap_or_default();
    let kept = Verdict::Value { regression: true };
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
            Verdict::ExecutedOnly,
            format!(
                "the regression check of {} does not fail with another expected text ({})",
                w.var, t.last_line
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printers_parse_and_refuse_what_is_not_one() {
        let p = Printer::parse("isl::set:{}.to_str()").unwrap();
        assert_eq!(p.type_text, "isl::set");
        assert_eq!(p.print("s_1"), "s_1.to_str()");
        let p = Printer::parse("fuzz::set_term:iset::to_string({})").unwrap();
        assert_eq!(p.type_text, "fuzz::set_term");
        assert_eq!(p.expr, "iset::to_string({})");
        assert_eq!(
            Printer::parse("int:std::to_string({})").unwrap().type_text,
            "int"
        );
        assert!(Printer::parse("isl::set").is_err());
        assert!(Printer::parse("isl::set:to_str()").is_err());
    }

    #[test]
    fn literals_escape_what_cxx_would_read_otherwise() {
        assert_eq!(cxx_literal(b"{ [0] }"), "\"{ [0] }\"");
        assert_eq!(cxx_literal(b"a\"b\\c\n??="), "\"a\\\"b\\\\c\\012\\?\\?=\"");
        assert_eq!(unhex("7b0a"), Some(b"{\n".to_vec()));
        assert_eq!(unhex("7"), None);
    }

    const TEST: &str = "#include \"spec.h\"\nint main() {\n    int output_var_0 = 3;\n    int v = half(11);\n    output_var_0 = v + 1;\n\n// Meta test 0\nint r_0 = twice(output_var_0);\n\n// Meta test 1\nint r_1 = neg(output_var_0);\nr_1 = neg(r_1);\nmetalib::checks::check_equal(r_1, r_0);\nassert(v > 0);\nreturn 0;\n}\n";

    #[test]
    fn statements_values_replacements_and_checks() {
        let p = Parsed::new(TEST.as_bytes()).unwrap();
        let find = |s: &str| {
            (0..p.stmts.len())
                .find(|&i| p.stmt_text(i).starts_with(s))
                .unwrap()
        };
        let v = find("int v");
        let (var, span) = p.value_of(v).unwrap();
        assert_eq!((var.as_str(), &TEST[span]), ("v", "half(11)"));
        assert_eq!(p.type_of("v", v).as_deref(), Some("int"));
        assert_eq!(
            p.replacements(v, "v", "half(11)", &[]),
            vec!["output_var_0"]
        );
        let assign = find("output_var_0 = v");
        let (var, span) = p.value_of(assign).unwrap();
        assert_eq!((var.as_str(), &TEST[span]), ("output_var_0", " v + 1"));
        assert_eq!(
            p.replacements(assign, "output_var_0", " v + 1", &[]),
            vec!["output_var_0", "v"]
        );
        let gens = [Generator {
            name: "metalib::generators::empty::base".into(),
            type_text: "int".into(),
        }];
        let with_ctx = TEST.replace(
            "int main() {\n",
            "int main() {\n    fuzz::fuzz_context fctx(1);\n",
        );
        let q = Parsed::new(with_ctx.as_bytes()).unwrap();
        let qv = (0..q.stmts.len())
            .find(|&i| q.stmt_text(i).starts_with("int v"))
            .unwrap();
        assert_eq!(
            q.replacements(qv, "v", "half(11)", &gens),
            vec![
                "metalib::generators::empty::base(fctx, (half(11)))",
                "output_var_0"
            ]
        );
        let step = find("r_1 = neg(r_1)");
        assert_eq!(p.variant[step], Some(1));
        assert_eq!(p.variant[v], None);
        assert_eq!(
            p.check_of(find("metalib::checks")),
            Some(Some("r_0/r_1".into()))
        );
        assert_eq!(p.check_of(find("assert(v")), Some(None));
        assert_eq!(p.check_of(v), None);
        let instrumented =
            String::from_utf8(edit::apply(p.text.as_slice(), &p.instrument())).unwrap();
        assert!(instrumented.starts_with("#include <stdio.h>\n"));
        assert!(instrumented.contains(&format!(
            "fprintf(stderr, \"MFPPR-STMT {v}\\n\"); int v = half(11);"
        )));
        assert!(!instrumented.contains("MFPPR-STMT 0\\n\"); // Meta"));
    }
}
