//! One level deeper than blame (issue 28): when a single MR is the suspect and its body is the
//! test's (a transplanted instance), each library call inside that body, and each call of the
//! suspect's base the other variants make (the computation it is checked against), is computed
//! another way the spec says is equal, one oracle run each; the failure "needs" the calls whose
//! other computation makes it disappear.
//!
//! A call can be computed another way when it is a base MR call (`relations::unite::base(ctx, a,
//! b)`) or a library call that a family's base merely wraps (`iset::subtract(a, b)`, the body of
//! `subtract::base`): it is replaced by a copy of another MR of that family, its placeholders
//! resolved to the families' bases as MF++ transplants them at depth one, in a namespace of its
//! own inserted before the test's first function. An MR that avoids the call's operations is
//! preferred; one that uses them again can still show the failure needs the call (it goes away),
//! but not that it does not. A knockout that does not compile decides nothing.
//!
//! Campaign triage asks the same of every such call in the test ([`Look::everywhere`]): the
//! families whose calls the failure needs are a signature of the library operation at fault,
//! whichever relation reached it.
//!
//! The test is never edited in place; each knockout is a candidate text judged by the check.

use std::collections::BTreeSet;

use anyhow::Result;
use serde::Serialize;

use super::ways::{
    context_param, library_op, resolved_copy, shown, with_arity, Compiles, Look, SpecFn, Target,
};
use crate::catalogue::Mr;
use crate::document::{squeeze, Call, Document, Function, Param};
use crate::edit::{self, Edit};
use crate::judge::{warn_undecided, Judge, Trials, Tried};
use crate::model::parse_qualified_mr;

/// At most this many calls are knocked out (one oracle run each).
const MAX_KNOCKOUTS: usize = 6;
/// At most this many calls are knocked out for triage, over the whole test.
const MAX_TRIAGE_KNOCKOUTS: usize = 10;
/// The namespace, inside `metalib`, that holds a knockout's copy of an MR.
const NAMESPACE: &str = "mfppr_knockout";

/// What one knockout showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KnockoutOutcome {
    /// Computed another way, the failure went away: the failure needs this call.
    Needed,
    /// Computed without its operations, the failure stayed: it does not need them.
    NotNeeded,
    /// The run could not tell (see `why`).
    Undecided,
}

/// One library call, computed another way.
#[derive(Clone, Debug, Serialize)]
pub struct Knockout {
    /// Where it is: the suspect's function, or the variant (`r_0`) that calls the suspect's base.
    pub place: String,
    /// The call as written, whitespace collapsed (cut after 80 characters).
    pub call: String,
    /// The library operations it computes with; once run, those the other computation avoided
    /// (all of them when it avoided none and the failure went away).
    pub ops: Vec<String>,
    /// The MR (`family::name`) that computed it instead.
    pub by: Option<String>,
    /// What the run showed.
    pub outcome: KnockoutOutcome,
    /// Why, in a few words.
    pub why: String,
}

/// The deeper look into a single suspect.
#[derive(Clone, Debug, Serialize)]
pub struct Deeper {
    /// The suspect MR (`family::name`).
    pub mr: String,
    /// The test's function that is its body.
    pub function: String,
    /// Every call tried, in source order.
    pub knockouts: Vec<Knockout>,
    /// The library operations of the calls the failure needs.
    pub needs: Vec<String>,
    /// Why nothing (or not everything) could be decided, when so.
    pub undecided: Option<String>,
    /// Oracle runs it made.
    pub oracle_calls: usize,
}

/// Blame's single suspect, as the deeper look takes it.
pub(super) struct Suspect<'b> {
    /// The MR (`family::name`).
    pub(super) mr: &'b str,
    /// The callee its fold replaced (an instance, or the MR called directly).
    pub(super) callee: &'b str,
    /// The variant that calls it.
    pub(super) variant: usize,
    /// Its family's base (qualified), which the other variants call.
    pub(super) base: &'b str,
}

impl Look<'_> {
    /// Look into blame's single `site`, when its body is in the test.
    pub(super) fn suspect(
        &self,
        site: &Suspect,
        judge: &dyn Judge,
        compiles: Compiles,
    ) -> Result<Option<Deeper>> {
        let mut deeper = Deeper {
            mr: site.mr.to_string(),
            function: site.callee.to_string(),
            knockouts: Vec::new(),
            needs: Vec::new(),
            undecided: None,
            oracle_calls: 0,
        };
        let doc = Document::parse(self.text.to_vec())?;
        let function = doc
            .outline()
            .functions
            .iter()
            .find(|f| f.name == site.callee && self.model.instance(&f.name).is_some());
        let Some(function) = function else {
            deeper.undecided = Some(format!(
                "`{}` is called directly: its body is the spec's, not the test's",
                site.callee
            ));
            return Ok(Some(deeper));
        };
        let targets = self.suspect_targets(function, site);
        if targets.len() > MAX_KNOCKOUTS {
            deeper.undecided = Some(format!(
                "only the first {MAX_KNOCKOUTS} of {} calls were tried",
                targets.len()
            ));
        }
        let mut trials = Trials::new(judge);
        deeper.knockouts = trials.each(targets.iter().take(MAX_KNOCKOUTS), |trials, target| {
            self.knock_out(target, trials, compiles)
        })?;
        deeper.oracle_calls = trials.runs();
        for knockout in &deeper.knockouts {
            if knockout.outcome == KnockoutOutcome::Needed {
                for op in &knockout.ops {
                    if !deeper.needs.contains(op) {
                        deeper.needs.push(op.clone());
                    }
                }
            }
        }
        if deeper.needs.is_empty() && deeper.undecided.is_none() {
            deeper.undecided = Some(not_decided(function, &targets));
        }
        Ok(Some(deeper))
    }

    /// The suspect's knockout targets: the calls in its body, then each call of its base in the
    /// other variants.
    fn suspect_targets(&self, function: &Function, site: &Suspect) -> Vec<Target> {
        let ctx = context_param(function);
        let mut targets: Vec<Target> = function
            .calls
            .iter()
            .filter_map(|c| self.target(&function.name, c, ctx, &function.params))
            .collect();
        let variants = self
            .model
            .variants
            .iter()
            .filter(|v| v.index != site.variant);
        for v in variants {
            for step in v.steps.iter().filter(|s| s.callee == site.base) {
                let call = Call {
                    callee: step.callee.clone(),
                    callee_span: step.callee_span.clone(),
                    span: step.call_span.clone(),
                    args: step.args.clone(),
                    string_arg: None,
                };
                targets.extend(self.target(&v.name, &call, None, &[]));
            }
        }
        targets
    }

    /// Triage's look: every base MR call and wrapped library call of the test (in the functions
    /// with a context parameter; `main`'s base MR calls), in source order, at most
    /// [`MAX_TRIAGE_KNOCKOUTS`]. Returns the sorted families (without their kind: `division`)
    /// whose calls the failure needs, and the check runs made.
    pub(super) fn everywhere(
        &self,
        judge: &dyn Judge,
        compiles: Compiles,
    ) -> Result<(Vec<String>, usize)> {
        let targets = self.all_targets()?;
        let mut trials = Trials::new(judge);
        let needed = trials.each(
            targets.iter().take(MAX_TRIAGE_KNOCKOUTS),
            |trials, target| {
                let knockout = self.knock_out(target, trials, compiles)?;
                Ok((knockout.outcome == KnockoutOutcome::Needed).then(|| target.family.clone()))
            },
        )?;
        let needs: BTreeSet<String> = needed.into_iter().flatten().collect();
        Ok((needs.into_iter().collect(), trials.runs()))
    }

    /// Every base MR call and wrapped library call of the test, in source order: in the
    /// functions with a context parameter, and `main`'s base MR calls.
    pub(super) fn all_targets(&self) -> Result<Vec<Target>> {
        let doc = Document::parse(self.text.to_vec())?;
        let mut targets = Vec::new();
        for f in &doc.outline().functions {
            let ctx = context_param(f);
            targets.extend(
                f.calls
                    .iter()
                    .filter_map(|c| self.target(&f.name, c, ctx, &f.params)),
            );
        }
        Ok(targets)
    }

    /// `call` as a knockout target: a base MR call, or a library call a family's base wraps (of
    /// several such bases, the one whose parameter types match most of the arguments that are
    /// parameters of the calling function, `params`: Z3's `z3::ite` of two integers is
    /// `ite_integer_term_cond::base`'s, not `ite_bool::base`'s).
    fn target(
        &self,
        place: &str,
        call: &Call,
        ctx: Option<&str>,
        params: &[Param],
    ) -> Option<Target> {
        if let Some((kind, family, "base")) = parse_qualified_mr(&call.callee) {
            return Some(Target {
                place: place.to_string(),
                call: call.clone(),
                kind,
                family: family.to_string(),
                ops: self.ops.of(&call.callee),
                whole_call_with: None,
            });
        }
        library_op(&call.callee)?;
        let op = with_arity(call);
        let ctx = ctx?;
        let typed: Vec<Option<&str>> = call
            .args
            .iter()
            .map(|a| {
                let arg = squeeze(&String::from_utf8_lossy(&self.text[a.clone()]));
                params
                    .iter()
                    .find(|p| p.name == arg)
                    .map(|p| p.type_text.as_str())
            })
            .collect();
        let fits = |m: &Mr| {
            self.ops.spec.get(&m.qualified()).map_or(0, |spec| {
                let types = spec.function.params.iter().skip(1).map(|p| &p.type_text);
                types
                    .zip(&typed)
                    .filter(|(t, a)| a.is_some_and(|a| a == t.as_str()))
                    .count()
            })
        };
        let (_, base) = self
            .catalogue
            .mrs
            .iter()
            .filter(|m| m.is_base && m.executable && self.wraps(m, &call.callee, call.args.len()))
            .enumerate()
            .max_by_key(|&(i, m)| (fits(m), std::cmp::Reverse(i)))?;
        Some(Target {
            place: place.to_string(),
            call: call.clone(),
            kind: base.kind,
            family: base.family.clone(),
            ops: BTreeSet::from([op]),
            whole_call_with: Some(ctx.to_string()),
        })
    }

    /// Whether base MR `m`'s body is only `return callee(p1, …, pn);` with its parameters after
    /// the context, in order.
    fn wraps(&self, m: &Mr, callee: &str, arity: usize) -> bool {
        let Some(SpecFn { text, function }) = self.ops.spec.get(&m.qualified()) else {
            return false;
        };
        let [call] = function.calls.as_slice() else {
            return false;
        };
        let names: Vec<&str> = function.params.iter().skip(1).map(|p| &*p.name).collect();
        let args: Vec<String> = call
            .args
            .iter()
            .map(|a| squeeze(&String::from_utf8_lossy(&text[a.start..a.end])))
            .collect();
        let body = squeeze(&String::from_utf8_lossy(
            &text[function.body_span.start..function.body_span.end],
        ));
        call.callee == callee
            && args.len() == arity
            && args == names
            && body.starts_with("{ return ")
            && body.ends_with("; }")
    }

    /// Another MR of the target's family that can run (no fuzzed values, every placeholder's
    /// base runs), the one that avoids most of the target's operations (the first of those); with
    /// the operations it avoids.
    fn replacement(&self, target: &Target) -> Option<(&Mr, &SpecFn, Vec<String>)> {
        let mut best: Option<(&Mr, &SpecFn, Vec<String>)> = None;
        for m in &self.catalogue.mrs {
            if m.kind != target.kind || m.family != target.family || m.is_base || m.has_fuzz {
                continue;
            }
            let runs = m.placeholder_families.iter().all(|(kind, family)| {
                self.catalogue
                    .base_of(*kind, family)
                    .is_some_and(|b| b.executable)
            });
            let Some(spec) = self.ops.spec.get(&m.qualified()).filter(|_| runs) else {
                continue;
            };
            let uses = self.ops.of(&m.qualified());
            let avoided: Vec<String> = target.ops.difference(&uses).cloned().collect();
            if best.as_ref().is_none_or(|b| avoided.len() > b.2.len()) {
                best = Some((m, spec, avoided));
            }
        }
        best
    }

    /// Compute `target` by another MR of its family, run the check (one run of `trials`), and
    /// say what that showed.
    fn knock_out(
        &self,
        target: &Target,
        trials: &mut Trials,
        compiles: Compiles,
    ) -> Result<Knockout> {
        let call = shown(&self.text[target.call.span.start..target.call.span.end]);
        let ops: Vec<String> = target.ops.iter().cloned().collect();
        let undecided = |by: Option<String>, why: &str| Knockout {
            place: target.place.clone(),
            call: call.clone(),
            ops: ops.clone(),
            by,
            outcome: KnockoutOutcome::Undecided,
            why: why.to_string(),
        };
        let Some((mr, spec, avoided)) = self.replacement(target) else {
            return Ok(undecided(
                None,
                "the spec has no other MR of the family that runs",
            ));
        };
        let by = format!("{}::{}", mr.family, mr.name);
        let candidate = self.candidate(target, mr, spec);
        if let Err(why) = compiles(&candidate) {
            return Ok(undecided(
                Some(by),
                &format!("the knockout does not compile ({why})"),
            ));
        }
        let fails = match trials.run(&candidate)? {
            Tried::Undecided(why) => {
                warn_undecided(&why, &format!("the knockout of `{call}` by {by}"));
                return Ok(undecided(Some(by), &why));
            }
            tried => tried.kept(),
        };
        let without = avoided
            .iter()
            .map(|o| format!("`{o}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let (outcome, ops, why) = match (fails, avoided.is_empty()) {
            (false, true) => (
                KnockoutOutcome::Needed,
                ops,
                "computed another way (with the same operations), the failure goes away"
                    .to_string(),
            ),
            (false, false) => (
                KnockoutOutcome::Needed,
                avoided,
                format!("computed without {without}, the failure goes away"),
            ),
            (true, false) => (
                KnockoutOutcome::NotNeeded,
                avoided,
                format!("computed without {without}, the failure stays"),
            ),
            (true, true) => (
                KnockoutOutcome::Undecided,
                ops,
                "every MR of the family computes with these operations, and the failure stays"
                    .to_string(),
            ),
        };
        Ok(Knockout {
            place: target.place.clone(),
            call,
            ops,
            by: Some(by),
            outcome,
            why,
        })
    }

    /// The test with `mr` copied in before its first function (in
    /// `metalib::mfppr_knockout::<family>`) and `target` calling the copy.
    fn candidate(&self, target: &Target, mr: &Mr, spec: &SpecFn) -> Vec<u8> {
        let name = format!("metalib::{NAMESPACE}::{}::{}", mr.family, mr.name);
        let mut edits = self.call_edits(target, name);
        let at = self.model.first_definition();
        let copy = format!(
            "namespace metalib {{ namespace {NAMESPACE} {{ namespace {} {{\n{}\n}} }} }}\n",
            mr.family,
            resolved_copy(spec)
        );
        edits.push(Edit::replace(at..at, copy));
        edit::apply(self.text, &edits)
    }

    /// The edits that make `target` call `name`: its callee, and for a wrapped library call its
    /// opening parenthesis with the context first (the arguments' text stays as written).
    fn call_edits(&self, target: &Target, name: String) -> Vec<Edit> {
        let callee = Edit::replace(target.call.callee_span.clone(), name);
        let Some(ctx) = &target.whole_call_with else {
            return vec![callee];
        };
        let after = target.call.callee_span.end;
        let paren = self.text[after..target.call.span.end]
            .iter()
            .position(|&b| b == b'(')
            .map(|i| after + i);
        let sep = if target.call.args.is_empty() {
            ""
        } else {
            ", "
        };
        match paren {
            Some(p) => vec![callee, Edit::replace(p..p + 1, format!("({ctx}{sep}"))],
            None => Vec::new(),
        }
    }
}

/// Why no call of the suspect's body was found needed: the library operations in it that no
/// knockout could reach, or that none made the failure go away.
fn not_decided(function: &Function, targets: &[Target]) -> String {
    let uncovered: BTreeSet<String> = function
        .calls
        .iter()
        .filter(|c| !targets.iter().any(|t| t.call.span == c.span))
        .filter_map(|c| library_op(&c.callee))
        .collect();
    if uncovered.is_empty() {
        return "no call computed another way made the failure go away".to_string();
    }
    let ops: Vec<String> = uncovered.iter().map(|o| format!("`{o}`")).collect();
    format!(
        "the spec gives no other way to compute {} in `{}`",
        ops.join(", "),
        function.name
    )
}
