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
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::catalogue::Catalogue;
use crate::edit::{self};
use crate::model::TestModel;

/// At most this many replacement values are tried per statement.
mod characterise;
mod instrument;
mod perturb;

use characterise::characterise;
use instrument::{run, MainStmts};
use perturb::{judge, Perturbed};

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
pub enum CheckedBy {
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

impl CheckedBy {
    /// `checked (metamorphic, pair r_0/r_1)`, `checked (value)`, `executed only`.
    pub fn label(&self) -> String {
        match self {
            CheckedBy::Metamorphic { pair } => format!("checked (metamorphic, pair {pair})"),
            CheckedBy::Value { regression: false } => "checked (value)".into(),
            CheckedBy::Value { regression: true } => {
                "checked (value): regression check (current behaviour)".into()
            }
            CheckedBy::ExecutedOnly => "executed only".into(),
        }
    }

    /// Ordering for choosing among tests: metamorphic, then value, then executed only.
    pub fn rank(&self) -> u8 {
        match self {
            CheckedBy::Metamorphic { .. } => 2,
            CheckedBy::Value { .. } => 1,
            CheckedBy::ExecutedOnly => 0,
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
    pub verdict: CheckedBy,
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

/// The analysis (see the module docs) of the test `text`, scratch files in `dir`.
pub fn analyse(text: &[u8], dir: &Path, runner: &Runner) -> Result<Checked> {
    let p = MainStmts::new(text)?;
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

#[cfg(test)]
mod tests {
    use super::instrument::unhex;
    use super::*;
    use crate::cpp_text::string_literal;

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
        assert_eq!(string_literal(b"{ [0] }"), "\"{ [0] }\"");
        assert_eq!(
            string_literal(b"a\"b\\c\n??="),
            "\"a\\\"b\\\\c\\012\\?\\?=\""
        );
        assert_eq!(unhex("7b0a"), Some(b"{\n".to_vec()));
        assert_eq!(unhex("7"), None);
    }

    const TEST: &str = "#include \"spec.h\"\nint main() {\n    int output_var_0 = 3;\n    int v = half(11);\n    output_var_0 = v + 1;\n\n// Meta test 0\nint r_0 = twice(output_var_0);\n\n// Meta test 1\nint r_1 = neg(output_var_0);\nr_1 = neg(r_1);\nmetalib::checks::check_equal(r_1, r_0);\nassert(v > 0);\nreturn 0;\n}\n";

    #[test]
    fn statements_values_replacements_and_checks() {
        let p = MainStmts::new(TEST.as_bytes()).unwrap();
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
        let q = MainStmts::new(with_ctx.as_bytes()).unwrap();
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
