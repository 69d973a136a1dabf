//! Fuzzing reduction (design §4.4), inside the `mfr_fuzz_start`/`mfr_fuzz_end` regions: replace
//! a value by a call to the type's reduction function, hoist an earlier same-typed region
//! variable into an initialiser, propagate copies (`T x = y;`), and delete statements that define
//! nothing — in that order.

use crate::catalogue::Catalogue;
use crate::edit::Edit;
use crate::model::{FuzzRegion, Instruction, TestModel};

use super::{lines, slice, Effect, Opportunity};
use crate::cpp_text::is_ident;

/// Fuzzing reduction: reduction-function values, then hoisting earlier same-typed region
/// variables, then copy propagation, then deleting region statements that define nothing.
pub(super) fn fuzz_ops(text: &[u8], model: &TestModel, catalogue: &Catalogue) -> Vec<Opportunity> {
    let mut reduce = Vec::new();
    let mut hoist = Vec::new();
    let mut delete = Vec::new();
    let mut alias = Vec::new();
    for region in &model.regions {
        for (k, ins) in region.instructions.iter().enumerate() {
            if let Some(op) = alias_op(text, model, region, ins) {
                alias.push(op);
            }
            if ins.defines.is_none() {
                delete.push(Opportunity {
                    description: format!("delete a statement of region {}", region.output),
                    edits: vec![Edit::delete(lines(text, &ins.span))],
                    effect: Effect::Rewrite,
                });
            }
            reduce.extend(reduce_op(text, catalogue, region, ins));
            hoist.extend(hoist_ops(text, region, k));
        }
    }
    reduce.extend(hoist);
    reduce.extend(alias);
    reduce.extend(delete);
    reduce
}

/// `value` as the initialiser of `ins`: parenthesised for `T x(args)` declarations.
fn as_init(ins: &Instruction, value: &str) -> String {
    if ins.direct_init {
        format!("({value})")
    } else {
        value.to_string()
    }
}

/// The initialiser of `ins` becomes a call of its type's reduction function, with the nearest
/// region context variables of the parameter types as arguments.
fn reduce_op(
    text: &[u8],
    catalogue: &Catalogue,
    region: &FuzzRegion,
    ins: &Instruction,
) -> Option<Opportunity> {
    let (Some(name), Some(ty), Some(init)) = (&ins.defines, &ins.type_text, &ins.init) else {
        return None;
    };
    if ins.reduced {
        return None;
    }
    let reducer = catalogue.reducer_for(ty)?;
    let args: Vec<&str> = reducer
        .param_types
        .iter()
        .map(|pt| {
            region
                .context
                .iter()
                .rev()
                .find(|(_, t)| same_type(t, pt))
                .map(|(n, _)| n.as_str())
        })
        .collect::<Option<_>>()?;
    let value = as_init(ins, &format!("{}({})", reducer.name, args.join(", ")));
    (value != slice(text, init)).then(|| Opportunity {
        description: format!("reduce {name} to {}", reducer.name),
        edits: vec![Edit::replace(init.clone(), value)],
        effect: Effect::Rewrite,
    })
}

/// Hoisting into instruction `k`: the first and the nearest earlier same-typed variable of the
/// region replace its initialiser.
fn hoist_ops(text: &[u8], region: &FuzzRegion, k: usize) -> Vec<Opportunity> {
    let ins = &region.instructions[k];
    let (Some(name), Some(ty), Some(init)) = (&ins.defines, &ins.type_text, &ins.init) else {
        return Vec::new();
    };
    let current = slice(text, init);
    let earlier: Vec<&str> = region.instructions[..k]
        .iter()
        .filter(|e| e.type_text.as_deref() == Some(ty.as_str()))
        .filter_map(|e| e.defines.as_deref())
        .collect();
    let mut picks: Vec<&str> = earlier.first().copied().into_iter().collect();
    if let Some(last) = earlier.last() {
        if !picks.contains(last) {
            picks.push(last);
        }
    }
    picks
        .into_iter()
        .map(|var| (var, as_init(ins, var)))
        .filter(|(_, value)| value != current)
        .map(|(var, value)| Opportunity {
            description: format!("hoist {var} into {name}"),
            edits: vec![Edit::replace(init.clone(), value)],
            effect: Effect::Rewrite,
        })
        .collect()
}

/// Copy propagation: `T x = y;` goes, and every use of `x` in the function reads `y` instead.
/// The region output keeps its name (the markers and the consumer name it).
fn alias_op(
    text: &[u8],
    model: &TestModel,
    region: &FuzzRegion,
    ins: &Instruction,
) -> Option<Opportunity> {
    let (name, init) = (ins.defines.as_ref()?, ins.init.as_ref()?);
    if ins.type_text.is_none() || ins.direct_init {
        return None;
    }
    let source = slice(text, init).trim();
    if !is_ident(source) {
        return None;
    }
    if *name == region.output {
        // The output keeps its name: take over the value of a source read nowhere else.
        let def = region.instructions.iter().find(|d| {
            d.defines.as_deref() == Some(source) && d.type_text == ins.type_text && !d.direct_init
        })?;
        let readers = model
            .function_idents(&region.function)
            .filter(|(n, _)| *n == source)
            .count();
        if readers != 1 {
            return None;
        }
        return Some(Opportunity {
            description: format!("move the value of {source} into {name}"),
            edits: vec![
                Edit::delete(lines(text, &def.span)),
                Edit::replace(init.clone(), slice(text, def.init.as_ref()?)),
            ],
            effect: Effect::Rewrite,
        });
    }
    let mut edits = vec![Edit::delete(lines(text, &ins.span))];
    for stmt in model.function_stmts(&region.function) {
        if stmt.span == ins.span {
            continue;
        }
        for (ident, span) in &stmt.idents {
            if ident == name {
                edits.push(Edit::replace(span.clone(), source));
            }
        }
    }
    Some(Opportunity {
        description: format!("replace {name} by {source}"),
        edits,
        effect: Effect::Rewrite,
    })
}

fn same_type(a: &str, b: &str) -> bool {
    let strip = |s: &str| {
        s.trim_start_matches("const ")
            .trim_end_matches('&')
            .trim()
            .to_string()
    };
    let (a, b) = (strip(a), strip(b));
    a == b || a.rsplit("::").next() == b.rsplit("::").next()
}
