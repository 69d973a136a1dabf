//! The passes: pure functions from a [`TestModel`] to opportunities and candidate texts
//! (design §4). They never run processes or touch files; the engine decides what to try.
//!
//! Each [`Kind`] lists its opportunities in enumeration order; a candidate is the edits of a
//! window of them, checked against the invariants a valid MF++ test must keep (`r_0` stays, one
//! non-reference variant and a check stay unless `--drop-oracle`, one step stays), then swept
//! ([`sweep`]). A candidate equal to the current text is never offered.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::catalogue::Catalogue;
use crate::document::{Document, Span};
use crate::edit::Edit;
use crate::model::{parse_qualified_mr, Caller, TestModel};
use crate::reduction::{Gathered, Kind, Reduction};

pub(crate) mod sweep;

use sweep::{sweep, whole_lines, SweepContext};

/// Options that change what the passes may remove.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassOptions {
    /// Every remaining variant keeps its checks (checks go only with their variant).
    pub keep_checks: bool,
    /// Allow removing every non-reference variant and every check (the oracle is the user's).
    pub drop_oracle: bool,
}

/// The MF++-aware reduction: the four opportunity kinds plus the sweep.
#[derive(Debug)]
pub struct MfppReduction {
    catalogue: Catalogue,
    options: PassOptions,
    /// The last text read: the engine gathers every kind from the same text in turn.
    last: Mutex<Option<Arc<Read>>>,
}

/// A text read into a document and a model.
#[derive(Debug)]
struct Read {
    doc: Document,
    model: TestModel,
}

impl MfppReduction {
    /// A reduction that folds to base MRs of `catalogue`.
    pub fn new(catalogue: Catalogue, options: PassOptions) -> MfppReduction {
        MfppReduction {
            catalogue,
            options,
            last: Mutex::new(None),
        }
    }

    fn read(&self, text: &[u8]) -> anyhow::Result<Arc<Read>> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(read) = last.as_ref().filter(|r| r.doc.text() == text) {
            return Ok(Arc::clone(read));
        }
        let doc = Document::parse(text.to_vec())?;
        let model = TestModel::build(&doc, &self.catalogue)?;
        let read = Arc::new(Read { doc, model });
        *last = Some(Arc::clone(&read));
        Ok(read)
    }

    /// The catalogue in use.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }
}

/// What an opportunity removes, for the window-level invariants.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Effect {
    RemoveVariant(usize),
    RemoveCheck { variant: usize, check: usize },
    RemoveStep(usize),
    Rewrite,
}

/// One opportunity: its edits (on the gathered text) and what it removes.
#[derive(Clone, Debug)]
struct Opportunity {
    description: String,
    edits: Vec<Edit>,
    effect: Effect,
}

/// Opportunities of one kind in one text.
struct Gathering<'a> {
    text: &'a [u8],
    read: Arc<Read>,
    ops: Vec<Opportunity>,
    catalogue: &'a Catalogue,
    options: PassOptions,
    known_instances: HashSet<String>,
}

impl Reduction for MfppReduction {
    fn gather<'a>(&'a self, text: &'a [u8], kind: Kind) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        let read = self.read(text)?;
        let ops = opportunities(text, &read.model, &self.catalogue, &self.options, kind);
        let known_instances = read
            .model
            .instances
            .iter()
            .map(|i| i.name.clone())
            .collect();
        Ok(Box::new(Gathering {
            text,
            read,
            ops,
            catalogue: &self.catalogue,
            options: self.options,
            known_instances,
        }))
    }
}

impl Gathered for Gathering<'_> {
    fn len(&self) -> usize {
        self.ops.len()
    }

    fn candidate(&self, window: Range<usize>) -> Option<Vec<u8>> {
        let chosen = self.ops.get(window)?;
        let edits = self.window_edits(chosen)?;
        let edited = self.read.doc.edited(&edits).ok()?;
        let ctx = SweepContext {
            catalogue: self.catalogue,
            known_instances: &self.known_instances,
        };
        let swept = sweep(edited, &ctx)?;
        (swept != self.text).then_some(swept)
    }

    fn describe(&self, i: usize) -> String {
        self.ops
            .get(i)
            .map(|o| o.description.clone())
            .unwrap_or_default()
    }
}

impl Gathering<'_> {
    /// The edits of a window, or `None` when the window would break an invariant.
    fn window_edits(&self, chosen: &[Opportunity]) -> Option<Vec<Edit>> {
        let removed_variants: HashSet<usize> = chosen
            .iter()
            .filter_map(|o| match o.effect {
                Effect::RemoveVariant(i) => Some(i),
                _ => None,
            })
            .collect();
        let removed_checks: HashSet<(usize, usize)> = chosen
            .iter()
            .filter_map(|o| match o.effect {
                Effect::RemoveCheck { variant, check } => Some((variant, check)),
                _ => None,
            })
            .collect();
        if !self.options.drop_oracle && (!removed_variants.is_empty() || !removed_checks.is_empty())
        {
            // At least one non-reference variant with at least one check must remain.
            let oracle_left = self.read.model.variants.iter().any(|v| {
                v.index != 0
                    && !removed_variants.contains(&v.index)
                    && (0..v.checks.len()).any(|c| !removed_checks.contains(&(v.index, c)))
            });
            if !oracle_left {
                return None;
            }
        }
        let removed_steps: Vec<usize> = chosen
            .iter()
            .filter_map(|o| match o.effect {
                Effect::RemoveStep(j) => Some(j),
                _ => None,
            })
            .collect();
        let mut edits: Vec<Edit> = chosen.iter().flat_map(|o| o.edits.clone()).collect();
        if removed_steps.contains(&0) {
            edits.extend(self.redeclare(&removed_steps)?);
        }
        Some(edits)
    }

    /// When step 0 goes, the first remaining step becomes the declaration: `<T> r_i = CALL;` with
    /// its use of `r_i` replaced by the metamorphic input step 0 used (identical in all variants).
    fn redeclare(&self, removed: &[usize]) -> Option<Vec<Edit>> {
        let first = (0..self.read.model.step_count()).find(|j| !removed.contains(j))?;
        let mut edits = Vec::new();
        for v in &self.read.model.variants {
            let step0 = v.steps.first()?;
            let input = step0
                .args
                .iter()
                .map(|a| slice(self.text, a))
                .find(|a| is_input_var(a))?;
            let head = slice(self.text, step0.decl_head.as_ref()?);
            let step = v.steps.get(first)?;
            let call = &step.call_span;
            let mut call_text = String::new();
            let mut pos = call.start;
            let stmt = self
                .read
                .model
                .main_stmts
                .iter()
                .find(|s| s.span == step.span)?;
            for (name, span) in &stmt.idents {
                if name == &v.name && span.start >= call.start && span.end <= call.end {
                    call_text.push_str(slice(self.text, &(pos..span.start)));
                    call_text.push_str(input);
                    pos = span.end;
                }
            }
            call_text.push_str(slice(self.text, &(pos..call.end)));
            edits.push(Edit::replace(
                step.span.clone(),
                format!("{head} = {call_text};"),
            ));
        }
        Some(edits)
    }
}

fn slice<'t>(text: &'t [u8], span: &Span) -> &'t str {
    std::str::from_utf8(&text[span.clone()]).unwrap_or("")
}

fn is_input_var(arg: &str) -> bool {
    arg.strip_prefix("output_var_")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Number of opportunities of each kind in `model` (read from `text`).
pub fn count_opportunities(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
) -> BTreeMap<Kind, usize> {
    let options = PassOptions::default();
    Kind::ALL
        .iter()
        .map(|&k| (k, opportunities(text, model, catalogue, &options, k).len()))
        .collect()
}

fn opportunities(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    options: &PassOptions,
    kind: Kind,
) -> Vec<Opportunity> {
    match kind {
        Kind::Variant => variant_ops(text, model, options),
        Kind::Sequence => sequence_ops(text, model),
        Kind::Recursion => recursion_ops(model, catalogue),
        Kind::Fuzz => fuzz_ops(text, model, catalogue),
    }
}

fn lines(text: &[u8], span: &Span) -> Span {
    whole_lines(text, span.clone())
}

/// Variant elimination (never `r_0`), then, unless `--keep-checks`, single checks.
fn variant_ops(text: &[u8], model: &TestModel, options: &PassOptions) -> Vec<Opportunity> {
    let mut ops: Vec<Opportunity> = model
        .variants
        .iter()
        .filter(|v| v.index != 0)
        .map(|v| Opportunity {
            description: format!("remove variant {}", v.name),
            edits: vec![Edit::delete(lines(text, &v.span()))],
            effect: Effect::RemoveVariant(v.index),
        })
        .collect();
    if !options.keep_checks {
        for v in model.variants.iter().filter(|v| v.index != 0) {
            for (c, check) in v.checks.iter().enumerate() {
                ops.push(Opportunity {
                    description: format!("remove check {} of {}", check.name, v.name),
                    edits: vec![Edit::delete(lines(text, &check.span))],
                    effect: Effect::RemoveCheck {
                        variant: v.index,
                        check: c,
                    },
                });
            }
        }
    }
    ops
}

/// Sequence shortening: step position j in every variant.
fn sequence_ops(text: &[u8], model: &TestModel) -> Vec<Opportunity> {
    let n = model.step_count();
    if n < 2 {
        return Vec::new();
    }
    let aligned = model.variants.iter().all(|v| v.steps.len() == n);
    if !aligned {
        return Vec::new();
    }
    (0..n)
        .filter(|&j| {
            // Step 0 can go only when it names a metamorphic input for the next step to take.
            j > 0
                || model.variants[0]
                    .steps
                    .first()
                    .is_some_and(|s| s.args.iter().any(|a| is_input_var(slice(text, a))))
        })
        .map(|j| Opportunity {
            description: format!("remove step {j} from every variant"),
            edits: model
                .variants
                .iter()
                .map(|v| Edit::delete(lines(text, &v.steps[j].span)))
                .collect(),
            effect: Effect::RemoveStep(j),
        })
        .collect()
}

/// Hoisting candidates offered per call site, nearest callees first.
const MAX_HOISTS_PER_CALL: usize = 4;
/// Callees looked at per call site when searching for hoisting candidates.
const MAX_HOIST_SEARCH: usize = 64;

/// Recursion folding to the family's base MR, then chain hoisting within a family.
fn recursion_ops(model: &TestModel, catalogue: &Catalogue) -> Vec<Opportunity> {
    // Every call site of an instance: (callee, callee span), in source order.
    let mut sites: Vec<(&str, Span)> = Vec::new();
    for inst in &model.instances {
        for c in &inst.calls {
            sites.push((c.callee.as_str(), c.callee_span.clone()));
        }
    }
    let mut step_bases: BTreeMap<usize, String> = BTreeMap::new();
    for v in &model.variants {
        for (j, s) in v.steps.iter().enumerate() {
            if parse_qualified_mr(&s.callee).is_some() {
                step_bases.entry(j).or_insert_with(|| s.callee.clone());
            }
            for name in &s.instances {
                if name == &s.callee {
                    sites.push((name.as_str(), s.callee_span.clone()));
                }
            }
        }
    }
    sites.sort_by_key(|(_, span)| span.start);
    let mut fold = Vec::new();
    let mut hoist = Vec::new();
    for (callee, span) in &sites {
        let Some(inst) = model.instance(callee) else {
            continue;
        };
        let base = match (inst.kind, &inst.family) {
            (Some(kind), Some(family)) => catalogue.base_of(kind, family).map(|m| m.qualified()),
            _ => None,
        }
        .or_else(|| match &inst.caller {
            // Without a catalogue: the base another variant calls at the same step.
            Some(Caller::Step { step, .. }) => step_bases.get(step).cloned(),
            _ => None,
        });
        if let Some(base) = base {
            fold.push(Opportunity {
                description: format!("fold {callee} to {base}"),
                edits: vec![Edit::replace(span.clone(), base)],
                effect: Effect::Rewrite,
            });
        }
        // Hoist: a transitive callee of the same family and signature replaces this call.
        let Some(family) = &inst.family else {
            continue;
        };
        // Nearest first, a few per call site: deep chains must not make this quadratic.
        let mut queue: std::collections::VecDeque<&str> =
            inst.callees.iter().map(String::as_str).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut offered = 0;
        while let Some(name) = queue.pop_front() {
            if offered == MAX_HOISTS_PER_CALL || seen.len() == MAX_HOIST_SEARCH {
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
                hoist.push(Opportunity {
                    description: format!("hoist {name} into the call of {callee}"),
                    edits: vec![Edit::replace(span.clone(), name)],
                    effect: Effect::Rewrite,
                });
                offered += 1;
            }
            queue.extend(inner.callees.iter().map(String::as_str));
        }
    }
    fold.extend(hoist);
    fold
}

/// Fuzzing reduction: reduction-function values, then hoisting earlier same-typed region
/// variables, then deleting region statements that define nothing.
fn fuzz_ops(text: &[u8], model: &TestModel, catalogue: &Catalogue) -> Vec<Opportunity> {
    let mut reduce = Vec::new();
    let mut hoist = Vec::new();
    let mut delete = Vec::new();
    let mut alias = Vec::new();
    for region in &model.regions {
        for (k, ins) in region.instructions.iter().enumerate() {
            if let Some(op) = alias_op(text, model, region, ins) {
                alias.push(op);
            }
            let (Some(name), Some(ty), Some(init)) = (&ins.defines, &ins.type_text, &ins.init)
            else {
                if ins.defines.is_none() {
                    delete.push(Opportunity {
                        description: format!("delete a statement of region {}", region.output),
                        edits: vec![Edit::delete(lines(text, &ins.span))],
                        effect: Effect::Rewrite,
                    });
                }
                continue;
            };
            let wrap = |value: &str| {
                if ins.direct_init {
                    format!("({value})")
                } else {
                    value.to_string()
                }
            };
            let current = slice(text, init);
            if !ins.reduced {
                if let Some(reducer) = catalogue.reducer_for(ty) {
                    let args: Option<Vec<&str>> = reducer
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
                        .collect();
                    if let Some(args) = args {
                        let value = wrap(&format!("{}({})", reducer.name, args.join(", ")));
                        if value != current {
                            reduce.push(Opportunity {
                                description: format!("reduce {name} to {}", reducer.name),
                                edits: vec![Edit::replace(init.clone(), value)],
                                effect: Effect::Rewrite,
                            });
                        }
                    }
                }
            }
            // Hoisting: the first and the nearest earlier same-typed variable of the region.
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
            for var in picks {
                let value = wrap(var);
                if value != current {
                    hoist.push(Opportunity {
                        description: format!("hoist {var} into {name}"),
                        edits: vec![Edit::replace(init.clone(), value)],
                        effect: Effect::Rewrite,
                    });
                }
            }
        }
    }
    reduce.extend(hoist);
    reduce.extend(alias);
    reduce.extend(delete);
    reduce
}

/// Copy propagation: `T x = y;` goes, and every use of `x` in the function reads `y` instead.
/// The region output keeps its name (the markers and the consumer name it).
fn alias_op(
    text: &[u8],
    model: &TestModel,
    region: &crate::model::FuzzRegion,
    ins: &crate::model::Instruction,
) -> Option<Opportunity> {
    let (name, init) = (ins.defines.as_ref()?, ins.init.as_ref()?);
    if ins.type_text.is_none() || ins.direct_init {
        return None;
    }
    let source = slice(text, init).trim();
    let is_ident = !source.is_empty()
        && source
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !source.as_bytes()[0].is_ascii_digit();
    if !is_ident {
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

#[cfg(test)]
mod tests;
