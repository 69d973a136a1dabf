//! Tail equivalences (design §10.1): a call of a spec MR whose family is an identity (the family's
//! base returns its argument, read from the catalogue) becomes that argument, and a call of a
//! transplanted instance whose body only forwards to one call (a wrapper) becomes that call, with
//! the wrapper's parameters replaced by the caller's arguments; a call of an instance whose
//! definition is the same text as an earlier instance's (but for the name) calls that one (the
//! same code computes the same value; the sweep deletes the copy). Checks and fuzz-region markers
//! are left alone.

use crate::catalogue::Catalogue;
use crate::cpp_text::{as_operand, is_primary, param_names};
use crate::document::{Call, Stmt, StmtKind};
use crate::edit::Edit;
use crate::model::{parse_qualified_mr, Instance, TestModel};
use crate::passes::{lines, slice, Effect, Opportunity};

use super::within;
use crate::cpp_text::is_ident;

/// Wrapper inlinings first (they cut whole instances), then identity calls, then calls of
/// copies.
pub(super) fn equivalence_ops(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
) -> Vec<Opportunity> {
    let mut wrappers = Vec::new();
    let mut identities = Vec::new();
    let mut merges = Vec::new();
    let definitions = unnamed_definitions(text, model);
    for stmt in editable_stmts(model) {
        for call in &stmt.calls {
            if let Some(op) = inline_op(text, model, call) {
                wrappers.push(op);
            }
            if let Some(op) = identity_op(text, catalogue, stmt, call) {
                identities.push(op);
            }
            merges.extend(merge_op(&definitions, call));
        }
    }
    wrappers.extend(identities);
    wrappers.extend(merges);
    wrappers
}

/// Each instance's name and its definition with the name taken out and the whitespace
/// squeezed, in definition order.
fn unnamed_definitions<'m>(text: &[u8], model: &'m TestModel) -> Vec<(&'m str, String)> {
    let mut defs: Vec<(usize, &str, String)> = model
        .instances
        .iter()
        .filter_map(|inst| {
            let def = slice(text, &inst.span);
            let at = def.find(inst.name.as_str())?;
            let rest = [&def[..at], &def[at + inst.name.len()..]];
            let squeezed: Vec<&str> = rest.iter().flat_map(|r| r.split_whitespace()).collect();
            Some((inst.span.start, inst.name.as_str(), squeezed.join(" ")))
        })
        .collect();
    defs.sort_by_key(|(start, _, _)| *start);
    defs.into_iter().map(|(_, n, d)| (n, d)).collect()
}

/// `call` of an instance whose definition is an earlier instance's (the name aside) calls the
/// earliest such instance instead (issue 60).
fn merge_op(definitions: &[(&str, String)], call: &Call) -> Option<Opportunity> {
    let at = definitions.iter().position(|(n, _)| *n == call.callee)?;
    let same = &definitions[at].1;
    let (first, _) = definitions[..at].iter().find(|(_, d)| d == same)?;
    Some(Opportunity {
        description: format!("call {first} instead of its copy {}", call.callee),
        edits: vec![Edit::replace(call.callee_span.clone(), first.to_string())],
        effect: Effect::Rewrite,
    })
}

/// The statements of `main` and of the instances, less the checks and the fuzz markers.
fn editable_stmts(model: &TestModel) -> impl Iterator<Item = &Stmt> {
    let checks: Vec<_> = model
        .variants
        .iter()
        .flat_map(|v| v.checks.iter().map(|c| c.span.clone()))
        .collect();
    model
        .main_stmts
        .iter()
        .chain(model.instance_stmts())
        .filter(move |s| !checks.contains(&s.span))
        .filter(|s| {
            !s.calls.first().is_some_and(|c| {
                c.callee.ends_with("mfr_fuzz_start") || c.callee.ends_with("mfr_fuzz_end")
            })
        })
}

/// `call` becomes its argument when it calls a spec MR (`metalib::…`) of an identity family that
/// itself only returns that argument (the family's base). Another MR of the family
/// (`iden_by_coalesce`, whose body calls the library) is not offered: taking its call out takes a
/// library call out of the test, and with several bugs in the library the one the test fails
/// with may go while another takes over the same check (a slip). A transplanted instance of such
/// a family is not offered either: recursion folding already tried its family's base, which
/// returns the same value. When the call is the whole right-hand side of `x = call(…, x, …);`
/// (the identity of `x`), the statement goes instead of becoming `x = x;`.
fn identity_op(
    text: &[u8],
    catalogue: &Catalogue,
    stmt: &Stmt,
    call: &Call,
) -> Option<Opportunity> {
    let (kind, family, name) = parse_qualified_mr(&call.callee)?;
    catalogue.base_of(kind, family)?.identity_arg?;
    let arg = catalogue.mr(kind, family, name)?.identity_arg?;
    let value = as_operand(slice(text, call.args.get(arg)?));
    let squeezed = |s: &str| s.split_whitespace().collect::<String>();
    if let Some((name, _)) = stmt.assigns.as_ref().filter(|(name, _)| *name == value) {
        let whole = format!("{name}={};", squeezed(slice(text, &call.span)));
        if squeezed(slice(text, &stmt.span)) == whole {
            return Some(Opportunity {
                description: format!(
                    "delete `{name} = …` (the identity call {} of {name})",
                    call.callee
                ),
                edits: vec![Edit::delete(lines(text, &stmt.span))],
                effect: Effect::Rewrite,
            });
        }
    }
    Some(Opportunity {
        description: format!("replace the identity call {} by its argument", call.callee),
        edits: vec![Edit::replace(call.span.clone(), value)],
        effect: Effect::Rewrite,
    })
}

/// `call` of a wrapper instance becomes the call the wrapper forwards to.
fn inline_op(text: &[u8], model: &TestModel, call: &Call) -> Option<Opportunity> {
    let wrapper = model.instance(&call.callee)?;
    let (forward, inner) = forwarded_call(text, wrapper)?;
    let name_at = wrapper.span.start
        + slice(text, &wrapper.span)
            .find(&format!("{}(", wrapper.name))
            .or_else(|| slice(text, &wrapper.span).find(wrapper.name.as_str()))?;
    let params = param_names(text, name_at)?;
    if params.len() != call.args.len() || params.iter().any(|p| !is_ident(p)) {
        return None;
    }
    let mut subst: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (name, span) in &forward.idents {
        if !inner.args.iter().any(|a| within(span, a)) {
            continue;
        }
        if let Some(i) = params.iter().position(|p| p == name) {
            let arg = slice(text, &call.args[i]).trim();
            let uses = forward.idents.iter().filter(|(n, _)| n == name).count();
            if uses > 1 && !is_primary(arg) {
                // The argument could have side effects: never evaluate it twice.
                return None;
            }
            subst.push((span.clone(), as_operand(arg)));
        }
    }
    subst.sort_by_key(|(s, _)| s.start);
    let mut value = String::new();
    let mut pos = inner.span.start;
    for (span, with) in subst {
        value.push_str(slice(text, &(pos..span.start)));
        value.push_str(&with);
        pos = span.end;
    }
    value.push_str(slice(text, &(pos..inner.span.end)));
    Some(Opportunity {
        description: format!("inline the wrapper {}", wrapper.name),
        edits: vec![Edit::replace(call.span.clone(), value)],
        effect: Effect::Rewrite,
    })
}

/// The body statement `return <call>;` of a wrapper and that call, when it is the body's only
/// statement and the only call in it.
fn forwarded_call<'m>(text: &[u8], inst: &'m Instance) -> Option<(&'m Stmt, &'m Call)> {
    let mut stmts = inst
        .body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Empty | StmtKind::Comment));
    let stmt = stmts.next()?;
    if stmts.next().is_some() || stmt.kind != StmtKind::Other {
        return None;
    }
    let [call] = stmt.calls.as_slice() else {
        return None;
    };
    let before = slice(text, &(stmt.span.start..call.span.start)).trim();
    let after = slice(text, &(call.span.end..stmt.span.end)).trim();
    (before == "return" && after == ";").then_some((stmt, call))
}
