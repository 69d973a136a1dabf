//! Recursion folding (design §4.3): a call to a transplanted instance is folded to its family's
//! base MR (from the catalogue, or, without one, the base another variant calls at the same
//! step, or else the simplest instance of the family the test holds); then chain hoisting: a
//! transitive callee of the same family and signature replaces the call. Every fold comes before
//! every hoist. Each opportunity at a call inside an instance names the fold of that instance's
//! call as its parent: the search tries it only once that fold was found needed (issue 60).

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

use crate::catalogue::Catalogue;
use crate::document::Span;
use crate::edit::Edit;
use crate::model::{parse_qualified_mr, Caller, Instance, TestModel};

use super::{Effect, Opportunity};

/// Hoisting candidates offered per call site, nearest callees first.
const MAX_HOISTS_PER_CALL: usize = 4;
/// Callees looked at per call site when searching for hoisting candidates.
const MAX_HOIST_SEARCH: usize = 64;

/// Recursion folding to the family's base MR, then chain hoisting within a family; with each
/// opportunity, the index of the fold that removes it, for the hierarchical search
/// ([`Gathered::parent`]): the fold of the one call of the instance its call site is in.
///
/// [`Gathered::parent`]: crate::opportunity::Gathered::parent
pub(super) fn recursion_ops(
    model: &TestModel,
    catalogue: &Catalogue,
) -> (Vec<Opportunity>, Vec<Option<usize>>) {
    let folded = fold_sites(model, catalogue, &BTreeSet::new());
    // The fold of each instance called once.
    let mut fold_of: BTreeMap<&str, Option<usize>> = BTreeMap::new();
    for (i, (_, site)) in folded.iter().enumerate() {
        fold_of
            .entry(site.callee)
            .and_modify(|f| *f = None)
            .or_insert(Some(i));
    }
    let parent =
        |within: Option<&str>| within.and_then(|name| fold_of.get(name).copied().flatten());
    let (mut ops, mut parents): (Vec<Opportunity>, Vec<Option<usize>>) = folded
        .into_iter()
        .map(|(op, site)| (op, parent(site.within)))
        .unzip();
    for site in &call_sites(model) {
        if let Some(inst) = model.instance(site.callee) {
            for hoist in hoists(model, inst, &site.span) {
                ops.push(hoist);
                parents.push(parent(site.within));
            }
        }
    }
    (ops, parents)
}

/// The folds of every call of an instance not named in `keep`, in source order.
pub(super) fn folds(
    model: &TestModel,
    catalogue: &Catalogue,
    keep: &BTreeSet<String>,
) -> Vec<Opportunity> {
    fold_sites(model, catalogue, keep)
        .into_iter()
        .map(|(op, _)| op)
        .collect()
}

/// [`folds`], each with its call site.
fn fold_sites<'m>(
    model: &'m TestModel,
    catalogue: &Catalogue,
    keep: &BTreeSet<String>,
) -> Vec<(Opportunity, Site<'m>)> {
    let step_bases = step_bases(model);
    let mut fold = Vec::new();
    for site in call_sites(model) {
        let Some(inst) = model
            .instance(site.callee)
            .filter(|_| !keep.contains(site.callee))
        else {
            continue;
        };
        let target = fold_target(inst, catalogue, &step_bases)
            .or_else(|| simplest_instance(model, inst, &site.span).map(str::to_string));
        if let Some(base) = target {
            let op = Opportunity {
                description: format!("fold {} to {base}", site.callee),
                edits: vec![Edit::replace(site.span.clone(), base)],
                effect: Effect::Rewrite,
            };
            fold.push((op, site));
        }
    }
    fold
}

/// A call of an instance: the callee, the callee's span, and the instance whose body holds the
/// call (`None` for a variant's step).
struct Site<'m> {
    callee: &'m str,
    span: Span,
    within: Option<&'m str>,
}

/// Every call site of an instance, in source order.
fn call_sites(model: &TestModel) -> Vec<Site<'_>> {
    let mut sites = Vec::new();
    for inst in &model.instances {
        for c in &inst.calls {
            sites.push(Site {
                callee: c.callee.as_str(),
                span: c.callee_span.clone(),
                within: Some(inst.name.as_str()),
            });
        }
    }
    for v in &model.variants {
        for s in &v.steps {
            for name in &s.instances {
                if name == &s.callee {
                    sites.push(Site {
                        callee: name.as_str(),
                        span: s.callee_span.clone(),
                        within: None,
                    });
                }
            }
        }
    }
    sites.sort_by_key(|site| site.span.start);
    sites
}

/// Per step position, the first base MR a variant calls there directly.
fn step_bases(model: &TestModel) -> BTreeMap<usize, String> {
    let mut step_bases: BTreeMap<usize, String> = BTreeMap::new();
    for v in &model.variants {
        for (j, s) in v.steps.iter().enumerate() {
            if parse_qualified_mr(&s.callee).is_some() {
                step_bases.entry(j).or_insert_with(|| s.callee.clone());
            }
        }
    }
    step_bases
}

/// The base MR a call to `inst` folds to: its family's base in the catalogue or, without one,
/// the base another variant calls at the same step.
fn fold_target(
    inst: &Instance,
    catalogue: &Catalogue,
    step_bases: &BTreeMap<usize, String>,
) -> Option<String> {
    match (inst.kind, &inst.family) {
        (Some(kind), Some(family)) => catalogue.base_of(kind, family).map(|m| m.qualified()),
        _ => None,
    }
    .or_else(|| match &inst.caller {
        Some(Caller::Step { step, .. }) => step_bases.get(step).cloned(),
        _ => None,
    })
}

/// For a family with no base to fold to (its relations all call placeholders), the simplest
/// instance of it the test already holds: one of the same kind and signature that calls no
/// other instance, defined before the call at `span`, the shortest (issue 60).
fn simplest_instance<'m>(model: &'m TestModel, inst: &Instance, span: &Span) -> Option<&'m str> {
    let family = inst.family.as_ref()?;
    model
        .instances
        .iter()
        .filter(|o| {
            o.name != inst.name
                && o.family.as_ref() == Some(family)
                && o.kind == inst.kind
                && o.callees.is_empty()
                && (o.span.len() < inst.span.len() || !inst.callees.is_empty())
                && o.span.end <= span.start
                && o.param_types == inst.param_types
                && o.return_type == inst.return_type
        })
        .min_by_key(|o| (o.span.len(), o.span.start))
        .map(|o| o.name.as_str())
}

/// Hoists for the call of `inst` at `span`: a transitive callee of the same family and
/// signature replaces the call. Nearest first, a few per call site: deep chains must not make
/// this quadratic.
fn hoists(model: &TestModel, inst: &Instance, span: &Span) -> Vec<Opportunity> {
    let mut ops = Vec::new();
    let Some(family) = &inst.family else {
        return ops;
    };
    let mut queue: VecDeque<&str> = inst.callees.iter().map(String::as_str).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(name) = queue.pop_front() {
        if ops.len() == MAX_HOISTS_PER_CALL || seen.len() == MAX_HOIST_SEARCH {
            break;
        }
        if !seen.insert(name) {
            continue;
        }
        let Some(inner) = model.instance(name) else {
            continue;
        };
        if inner.family.as_ref() == Some(family)
            && inner.kind == inst.kind
            && inner.param_types == inst.param_types
            && inner.return_type == inst.return_type
        {
            ops.push(Opportunity {
                description: format!("hoist {name} into the call of {}", inst.name),
                edits: vec![Edit::replace(span.clone(), name)],
                effect: Effect::Rewrite,
            });
        }
        queue.extend(inner.callees.iter().map(String::as_str));
    }
    ops
}
