//! The instrumented test of [`super`]: every call that the spec gives other ways to compute
//! (a base MR call, a library call a family's base wraps, a call of a transplanted instance, a
//! call of another spec MR such as `identity::iden_by_coalesce`) becomes a probe that also
//! computes the call's value by up to [`MAX_ALTERNATIVES`] other MRs of its family, at the same
//! operands; at the test's first check that compares two results, the probed values are kept
//! to be compared by every such check of the test. The probes' runtime is `runtime.hpp`; the other MRs are copied in,
//! their placeholders resolved to their families' bases, as the knockouts do.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::open::Opened;
use crate::catalogue::{Catalogue, Mr, MrKind};
use crate::cpp_text::{matching_paren, split_top};
use crate::document::{Call, Document};
use crate::edit::{self, Edit};
use crate::evidence::ways::{library_op, resolved_copy, shown, LibraryOps, Look, Target};
use crate::model::{parse_qualified_mr, TestModel};

/// At most this many other ways per probed call.
const MAX_ALTERNATIVES: usize = 3;
/// The namespace, inside `metalib`, that holds the copies of the other MRs.
const NAMESPACE: &str = "mfppr_value";
/// The probes' runtime.
const RUNTIME: &str = include_str!("runtime.hpp");

/// One probed call.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Site {
    /// Where it is: the test's function.
    pub place: String,
    /// The call as written, whitespace collapsed (cut).
    pub call: String,
    /// The MR family (`relations::lt`) whose other MRs compute it.
    pub family: String,
    /// The library operations it computes with (for an instance call: those its own body calls).
    pub ops: Vec<String>,
    /// Every library operation its value depends on (for an instance call: all it reaches).
    pub reach: Vec<String>,
    /// The other ways, in the order of the probe's values 1, 2, ….
    pub alternatives: Vec<Alternative>,
}

/// Another way to compute a probed call.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Alternative {
    /// The MR (`lt::lt_by_gt`, `lt::base`).
    pub mr: String,
    /// The library operations it computes with.
    pub ops: Vec<String>,
}

/// A test with its probes.
pub(super) struct Instrumented {
    /// The instrumented text.
    pub text: Vec<u8>,
    /// The probed calls, by probe number.
    pub sites: Vec<Site>,
    /// The checks the values are compared with (the test's checks that compare two results,
    /// one per check function), the first first; empty when the test has none.
    pub compared_by: Vec<String>,
}

/// A call to probe, before its alternatives are chosen.
struct Probe<'a> {
    place: String,
    call: Call,
    kind: MrKind,
    family: String,
    ops: BTreeSet<String>,
    /// Every library operation its value depends on.
    reach: BTreeSet<String>,
    /// The context to pass first to an alternative, for a wrapped library call.
    ctx: Option<String>,
    /// The MR the call already computes by (an instance's own MR; a base call's base).
    own: Option<&'a str>,
    /// Whether the family's base is one of the alternatives (an instance call's).
    with_base: bool,
}

/// The instrumented `text`, logging to `log`, the probes' runtime and the other MRs' copies
/// inserted at `at` (before the test's first definition); every call of a base `opened` copies
/// calls its copy. `None` when no call can be probed.
pub(super) fn instrument(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    ops: &LibraryOps,
    at: usize,
    opened: Option<&Opened>,
    log: &Path,
) -> anyhow::Result<Option<Instrumented>> {
    let look = Look {
        text,
        model,
        catalogue,
        ops,
    };
    let inputs = fuzz_inputs(model, catalogue);
    let mut probes: Vec<Probe> = look.all_targets()?.into_iter().map(Probe::of).collect();
    probes.extend(mr_calls(text, model, catalogue, ops, &inputs)?);
    probes.retain(|p| !inputs.contains(&p.place));
    probes.sort_by_key(|p| p.call.span.start);
    let mut copies: BTreeMap<String, String> = BTreeMap::new();
    let mut sites = Vec::new();
    let mut edits = Vec::new();
    for probe in &probes {
        let alternatives = alternatives_of(probe, catalogue, ops);
        let copy = opened.and_then(|o| o.callee(&probe.call.callee));
        if alternatives.is_empty() {
            edits.extend(copy.map(|c| Edit::replace(probe.call.callee_span.clone(), c)));
            continue;
        }
        let id = sites.len();
        let mut calls = Vec::new();
        let mut shown_alts = Vec::new();
        for m in alternatives {
            calls.push(alternative_call(probe, m, &mut copies, ops));
            shown_alts.push(Alternative {
                mr: format!("{}::{}", m.family, m.name),
                ops: ops.of(&m.qualified()).into_iter().collect(),
            });
        }
        let callee = match copy {
            Some(c) => c.into(),
            None => String::from_utf8_lossy(&text[probe.call.callee_span.clone()]),
        };
        edits.push(Edit::replace(
            probe.call.callee_span.clone(),
            probe_lambda(id, &callee, probe.call.args.len(), &calls),
        ));
        sites.push(Site {
            place: probe.place.clone(),
            call: shown(&text[probe.call.span.clone()]),
            family: format!("{}::{}", probe.kind.namespace(), probe.family),
            ops: probe.ops.iter().cloned().collect(),
            reach: probe.reach.iter().cloned().collect(),
            alternatives: shown_alts,
        });
    }
    if sites.is_empty() {
        return Ok(None);
    }
    let compared_by = check_edits(text, model, &mut edits);
    let mut prelude = format!(
        "\n#define MFPPR_VALUE_LOG {}\n{RUNTIME}",
        crate::cpp_text::string_literal(log.as_os_str().as_encoded_bytes())
    );
    for (namespace, body) in &copies {
        prelude.push_str(&format!(
            "namespace metalib {{ namespace {NAMESPACE} {{ namespace {namespace} {{\n{body}\n}} }} }}\n"
        ));
    }
    edits.push(Edit::replace(at..at, prelude));
    Ok(Some(Instrumented {
        text: edit::apply(text, &edits),
        sites,
        compared_by,
    }))
}

impl<'a> Probe<'a> {
    fn of(t: Target) -> Probe<'a> {
        Probe {
            place: t.place,
            call: t.call,
            kind: t.kind,
            family: t.family,
            reach: t.ops.clone(),
            ops: t.ops,
            ctx: t.whole_call_with,
            own: None,
            with_base: false,
        }
    }
}

/// The test's instances that only make a fuzzed input (of an MR that calls `fuzz_new` and no
/// placeholder: `fuzz_int_term::get_expr_by_fuzz`). An MR holds for every value of its fuzzed
/// inputs, so a wrong value made inside one cannot be why the instance that uses it is wrong:
/// their calls are not probed, and their operations are not among the suspects of the
/// instances that call them (unless these reach them another way).
fn fuzz_inputs(model: &TestModel, catalogue: &Catalogue) -> BTreeSet<String> {
    model
        .instances
        .iter()
        .filter(|i| {
            let (Some(kind), Some(family)) = (i.kind, &i.family) else {
                return false;
            };
            catalogue
                .mr(kind, family, &i.mr)
                .is_some_and(|m| m.has_fuzz && m.placeholder_families.is_empty())
        })
        .map(|i| i.name.clone())
        .collect()
}

/// Every call of a transplanted instance (of a known family) in the test's functions: its
/// operations are the library calls its own body makes (its nested MR calls are probed apart),
/// its suspects all it reaches but through the fuzzed inputs it makes (`inputs`); and every call
/// of a spec MR other than a base ([`spec_mr_call`]).
fn mr_calls<'a>(
    text: &[u8],
    model: &'a TestModel,
    catalogue: &'a Catalogue,
    ops: &LibraryOps,
    inputs: &BTreeSet<String>,
) -> anyhow::Result<Vec<Probe<'a>>> {
    let doc = Document::parse(text.to_vec())?;
    let mut out = Vec::new();
    for f in &doc.outline().functions {
        for call in &f.calls {
            if let Some(probe) = spec_mr_call(&f.name, call, catalogue, ops) {
                out.push(probe);
                continue;
            }
            let Some(instance) = model.instance(&call.callee) else {
                continue;
            };
            let (Some(kind), Some(family)) = (instance.kind, &instance.family) else {
                continue;
            };
            let own: BTreeSet<String> = ops
                .calls
                .get(&instance.name)
                .into_iter()
                .flatten()
                .filter(|c| !ops.calls.contains_key(*c))
                .filter_map(|c| library_op(c))
                .collect();
            out.push(Probe {
                place: f.name.clone(),
                call: call.clone(),
                kind,
                family: family.clone(),
                ops: own,
                reach: ops.of_except(&instance.name, inputs),
                ctx: None,
                own: Some(instance.mr.as_str()),
                with_base: true,
            });
        }
    }
    Ok(out)
}

/// A call of a spec MR other than the one its family folds to (`identity::iden_by_coalesce`,
/// which calls `coalesce`, beside `identity::base`): the MR computes with the library, so a
/// fault may make its value the first wrong one, and the family's base and other MRs compute it
/// too.
fn spec_mr_call<'a>(
    place: &str,
    call: &Call,
    catalogue: &'a Catalogue,
    ops: &LibraryOps,
) -> Option<Probe<'a>> {
    let (kind, family, name) = parse_qualified_mr(&call.callee)?;
    let base = catalogue.base_of(kind, family)?;
    let mr = catalogue
        .mr(kind, family, name)
        .filter(|m| m.name != base.name && m.executable && !m.has_fuzz)?;
    let reach = ops.of(&call.callee);
    Some(Probe {
        place: place.to_string(),
        call: call.clone(),
        kind,
        family: family.to_string(),
        ops: reach.clone(),
        reach,
        ctx: None,
        own: Some(mr.name.as_str()),
        with_base: true,
    })
}

/// The other MRs that compute `probe`: its family's MRs that run in the test's build (no fuzzed
/// values, every placeholder's base runs and fuzzes nothing), not the one it computes by, those
/// that avoid most of its operations first, then by name; the base first for an instance call;
/// at most [`MAX_ALTERNATIVES`].
fn alternatives_of<'c>(probe: &Probe, catalogue: &'c Catalogue, ops: &LibraryOps) -> Vec<&'c Mr> {
    let runs = |m: &Mr| {
        m.placeholder_families.iter().all(|(kind, family)| {
            catalogue
                .base_of(*kind, family)
                .is_some_and(|b| b.executable && !b.has_fuzz)
        })
    };
    let mut others: Vec<(&Mr, usize)> = catalogue
        .mrs
        .iter()
        .filter(|m| m.kind == probe.kind && m.family == probe.family)
        .filter(|m| !m.is_base && !m.has_fuzz && Some(m.name.as_str()) != probe.own)
        .filter(|m| runs(m) && ops.spec.contains_key(&m.qualified()))
        .map(|m| (m, probe.ops.difference(&ops.of(&m.qualified())).count()))
        .collect();
    others.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.name.cmp(&b.0.name)));
    let base = catalogue
        .base_of(probe.kind, &probe.family)
        .filter(|b| probe.with_base && b.executable);
    base.into_iter()
        .chain(others.into_iter().map(|(m, _)| m))
        .take(MAX_ALTERNATIVES)
        .collect()
}

/// The call of alternative `m` on the probe's operands (`mfppr_a0`, …), its copy added to
/// `copies` (by namespace) when it is not the base.
fn alternative_call(
    probe: &Probe,
    m: &Mr,
    copies: &mut BTreeMap<String, String>,
    ops: &LibraryOps,
) -> String {
    let callee = if m.is_base {
        m.qualified()
    } else {
        let namespace = format!("{}_{}", m.kind.namespace(), m.family);
        if let Some(spec) = ops.spec.get(&m.qualified()) {
            let body = copies.entry(namespace.clone()).or_default();
            let copy = resolved_copy(spec);
            if !body.contains(&copy) {
                body.push_str(&copy);
                body.push('\n');
            }
        }
        format!("metalib::{NAMESPACE}::{namespace}::{}", m.name)
    };
    let mut args: Vec<String> = probe.ctx.iter().cloned().collect();
    args.extend((0..probe.call.args.len()).map(|i| format!("mfppr_a{i}")));
    format!("{callee}({})", args.join(", "))
}

/// The probe that replaces a call's callee: a generic lambda called with the call's own
/// arguments, which computes the call, then each alternative, and keeps the values (the runtime
/// named from the global namespace: an opened base's probes sit inside `metalib`).
fn probe_lambda(id: usize, callee: &str, arity: usize, alternatives: &[String]) -> String {
    let params: Vec<String> = (0..arity).map(|i| format!("auto&& mfppr_a{i}")).collect();
    let args: Vec<String> = (0..arity).map(|i| format!("mfppr_a{i}")).collect();
    let alts: Vec<String> = alternatives
        .iter()
        .map(|a| format!(", [&] {{ return {a}; }}"))
        .collect();
    format!(
        "[&]({}) {{ ::mfppr_value::enter({id}); auto mfppr_v = {callee}({}); \
         ::mfppr_value::leave({id}); \
         return ::mfppr_value::keep({id}, mfppr_v, std::forward_as_tuple({}){}); }}",
        params.join(", "),
        args.join(", "),
        args.join(", "),
        alts.concat()
    )
}

/// Before each check statement of `main`, a line that logs its name; before the first check
/// that compares two variants' results, the probed values kept to be compared if the run fails
/// (see `runtime.hpp`) by every check of the test that compares two results (the oracle's own
/// comparisons, one per check function). Returns those checks' names, the first first.
fn check_edits(text: &[u8], model: &TestModel, edits: &mut Vec<Edit>) -> Vec<String> {
    let results: BTreeSet<&str> = model.variants.iter().map(|v| v.name.as_str()).collect();
    let mut checks: Vec<_> = model.variants.iter().flat_map(|v| &v.checks).collect();
    checks.sort_by_key(|c| c.span.start);
    let comparing: Vec<(&crate::model::Check, Comparison)> = checks
        .iter()
        .filter_map(|c| Some((*c, comparison(&text[c.span.clone()], &results)?)))
        .collect();
    let mut compared_by: Vec<String> = Vec::new();
    let mut lambdas: Vec<String> = Vec::new();
    if let Some((first, _)) = comparing.first() {
        let before = String::from_utf8_lossy(&text[..first.span.start]);
        for (check, c) in &comparing {
            let in_scope = c.others.iter().all(|a| before.contains(a.as_str()));
            if in_scope && !compared_by.contains(&check.name) {
                compared_by.push(check.name.clone());
                lambdas.push(c.lambda.clone());
            }
        }
    }
    for check in checks {
        let mut line = format!(
            "mfppr_value::at_check({}); ",
            crate::cpp_text::string_literal(check.name.as_bytes())
        );
        if let Some((_, c)) = comparing.first().filter(|(f, _)| f.span == check.span) {
            line = format!(
                "auto mfppr_kept = mfppr_value::compare_later<std::decay_t<decltype({})>>({}); {line}",
                c.result,
                lambdas.join(", ")
            );
        }
        edits.push(Edit::replace(check.span.start..check.span.start, line));
    }
    compared_by
}

/// A check statement that compares two variants' results, as a comparison of two values.
struct Comparison {
    /// The first result it compares (whose type the values compared have).
    result: String,
    /// The statement as a lambda of the two values `mfppr_x` and `mfppr_y`.
    lambda: String,
    /// Its other arguments (the context, the free variables), which must be in scope where the
    /// values are kept.
    others: Vec<String>,
}

/// The check statement `stmt` as a [`Comparison`], when two of its arguments are variants'
/// results.
fn comparison(stmt: &[u8], results: &BTreeSet<&str>) -> Option<Comparison> {
    let open = stmt.iter().position(|&b| b == b'(')?;
    let close = matching_paren(stmt, open)?;
    let callee = String::from_utf8_lossy(&stmt[..open]).trim().to_string();
    let inner = String::from_utf8_lossy(&stmt[open + 1..close]).into_owned();
    let args: Vec<&str> = split_top(&inner, b',').into_iter().map(str::trim).collect();
    let positions: Vec<usize> = (0..args.len())
        .filter(|&i| results.contains(args[i]))
        .collect();
    let [x, y] = positions.as_slice() else {
        return None;
    };
    let mut call_args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    call_args[*x] = "mfppr_x".to_string();
    call_args[*y] = "mfppr_y".to_string();
    Some(Comparison {
        result: args[*x].to_string(),
        lambda: format!(
            "[&](const auto& mfppr_x, const auto& mfppr_y) {{ {callee}({}); }}",
            call_args.join(", ")
        ),
        others: (0..args.len())
            .filter(|i| !positions.contains(i))
            .map(|i| args[i].to_string())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_with_two_results_compares_by_itself() {
        let results = BTreeSet::from(["r_0", "r_1"]);
        let got = comparison(
            b"metalib::checks::check_exprs_are_zero(ctx, fvs, r_1, r_0);",
            &results,
        )
        .unwrap();
        assert_eq!(got.result, "r_1");
        assert_eq!(
            got.lambda,
            "[&](const auto& mfppr_x, const auto& mfppr_y) { \
             metalib::checks::check_exprs_are_zero(ctx, fvs, mfppr_x, mfppr_y); }"
        );
        assert_eq!(got.others, ["ctx", "fvs"]);
        assert!(comparison(b"metalib::checks::check_zero(ctx, r_1);", &results).is_none());
    }

    #[test]
    fn a_probe_computes_the_call_then_each_alternative_on_the_same_operands() {
        let p = probe_lambda(
            3,
            "metalib::relations::lt::base",
            3,
            &["metalib::mfppr_value::relations_lt::lt_by_gt(mfppr_a0, mfppr_a1, mfppr_a2)".into()],
        );
        assert!(p.starts_with("[&](auto&& mfppr_a0, auto&& mfppr_a1, auto&& mfppr_a2)"));
        assert!(p.contains(
            "auto mfppr_v = metalib::relations::lt::base(mfppr_a0, mfppr_a1, mfppr_a2);"
        ));
        assert!(p.contains("return ::mfppr_value::keep(3, mfppr_v, std::forward_as_tuple(mfppr_a0, mfppr_a1, mfppr_a2), [&] { return metalib::mfppr_value::relations_lt::lt_by_gt(mfppr_a0, mfppr_a1, mfppr_a2); });"));
    }
}
