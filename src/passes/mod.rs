//! The passes: pure functions from a [`TestModel`] to opportunities and candidate texts
//! (design §4). They never run processes or touch files; the engine decides what to try.
//!
//! There are ten opportunity kinds: four main kinds, one file each (`variant`, `sequence`,
//! `recursion`, `fuzz`), and six tail kinds under `tail/`. This module owns what they share:
//! reading a text once for every kind, and turning a window of opportunities into a candidate.
//! Each [`OpportunityKind`] lists its opportunities in enumeration order; a candidate is the
//! edits of a window of them, checked against the invariants a valid MF++ test must keep (`r_0`
//! stays, one non-reference variant and a check stay unless `--drop-oracle`, one step stays),
//! then swept (module `sweep`). A candidate equal to the current text is never offered.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::catalogue::Catalogue;
use crate::cpp_text::is_ident;
use crate::document::{Document, Span};
use crate::edit::Edit;
use crate::model::TestModel;
use crate::opportunity::{Gathered, Opportunities, OpportunityKind};

mod fuzz;
mod recursion;
mod sequence;
pub(crate) mod sweep;
mod tail;
mod variant;

use sweep::{sweep, whole_lines, SweepContext};

/// Options that change what the passes may remove.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassOptions {
    /// Every remaining variant keeps its checks (checks go only with their variant).
    pub keep_checks: bool,
    /// Allow removing every non-reference variant and every check (the oracle is the user's).
    pub drop_oracle: bool,
    /// Gather the tail kinds (design §4.6); without it they have no opportunities.
    pub tail: bool,
}

/// The MF++-aware reduction: the ten opportunity kinds (the four main kinds and the six tail
/// kinds of [`OpportunityKind::ALL`]) plus the sweep.
#[derive(Debug)]
pub struct MfppOpportunities {
    catalogue: Catalogue,
    options: PassOptions,
    /// The last text read: the engine gathers every kind from the same text in turn.
    last: Mutex<Option<Arc<ParsedTest>>>,
    /// Names whose unread computation the sweep keeps ([`MfppOpportunities::keep_computations`]).
    keep: RwLock<Arc<HashSet<String>>>,
}

/// A text read into a document and a model.
#[derive(Debug)]
struct ParsedTest {
    doc: Document,
    model: TestModel,
}

impl MfppOpportunities {
    /// A reduction that folds to base MRs of `catalogue`.
    pub fn new(catalogue: Catalogue, options: PassOptions) -> MfppOpportunities {
        MfppOpportunities {
            catalogue,
            options,
            last: Mutex::new(None),
            keep: RwLock::default(),
        }
    }

    fn read(&self, text: &[u8]) -> anyhow::Result<Arc<ParsedTest>> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(read) = last.as_ref().filter(|r| r.doc.text() == text) {
            return Ok(Arc::clone(read));
        }
        let doc = Document::parse(text.to_vec())?;
        let model = TestModel::build(&doc, &self.catalogue)?;
        let read = Arc::new(ParsedTest { doc, model });
        *last = Some(Arc::clone(&read));
        Ok(read)
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
    read: Arc<ParsedTest>,
    ops: Vec<Opportunity>,
    /// Per opportunity, the one whose edit removes it ([`Gathered::parent`]); empty: none.
    parents: Vec<Option<usize>>,
    catalogue: &'a Catalogue,
    options: PassOptions,
    known_instances: HashSet<String>,
    /// Names whose unread computation the sweep keeps.
    keep: Arc<HashSet<String>>,
    /// Region instructions that define a variable, as (span, region, instruction), by start:
    /// built when a window first needs them ([`Gathering::compatible`]).
    definitions: OnceLock<Vec<(Span, usize, usize)>>,
}

impl Opportunities for MfppOpportunities {
    fn gather<'a>(
        &'a self,
        text: &[u8],
        kind: OpportunityKind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        if matches!(kind, OpportunityKind::Tail | OpportunityKind::TailAll) {
            let combined = match (self.options.tail, kind) {
                (false, _) => None,
                (true, OpportunityKind::Tail) => tail::combined(text, self),
                (true, _) => tail::combined_with_inputs(text, self),
            };
            return Ok(Box::new(combined.unwrap_or_default()));
        }
        let read = self.read(text)?;
        let (ops, parents) = match kind {
            OpportunityKind::Recursion => recursion::recursion_ops(&read.model, &self.catalogue),
            _ => (
                opportunities(text, &read.model, &self.catalogue, &self.options, kind),
                Vec::new(),
            ),
        };
        let mut gathering = self.gathering(read, ops);
        gathering.parents = parents;
        Ok(Box::new(gathering))
    }
}

/// The names of `model`'s instances: an unreached function with one of them is an orphan the
/// sweep deletes.
fn instance_names(model: &TestModel) -> HashSet<String> {
    model.instances.iter().map(|i| i.name.clone()).collect()
}

impl MfppOpportunities {
    /// `ops`, gathered from `read`, ready to be turned into candidates.
    fn gathering(&self, read: Arc<ParsedTest>, ops: Vec<Opportunity>) -> Gathering<'_> {
        let known_instances = instance_names(&read.model);
        Gathering {
            read,
            ops,
            parents: Vec::new(),
            catalogue: &self.catalogue,
            options: self.options,
            known_instances,
            keep: Arc::clone(&self.keep.read().unwrap_or_else(|e| e.into_inner())),
            definitions: OnceLock::new(),
        }
    }

    /// The computations `text` runs though nothing reads them, each as the names it defines: what
    /// the sweep deletes with every candidate, unless told to keep them.
    pub fn unread_computations(&self, text: &[u8]) -> Vec<Vec<String>> {
        let Ok(read) = self.read(text) else {
            return Vec::new();
        };
        sweep::unread_computations(text, &read.model, &HashSet::new())
            .into_iter()
            .map(|(names, _)| names)
            .collect()
    }

    /// `text` swept as a candidate is, keeping the unread computations of the names in `keep`;
    /// `None` when that changes nothing or `text` cannot be read.
    pub fn swept(&self, text: &[u8], keep: &HashSet<String>) -> Option<Vec<u8>> {
        let read = self.read(text).ok()?;
        let known_instances = instance_names(&read.model);
        let ctx = SweepContext {
            catalogue: &self.catalogue,
            known_instances: &known_instances,
            keep,
        };
        let swept = sweep(read.doc.edited(&[]).ok()?, &ctx)?;
        (swept != text).then_some(swept)
    }

    /// From now on the sweep of every candidate keeps the unread computations of the names in
    /// `keep` (the failure is in one of them).
    pub fn keep_computations(&self, keep: HashSet<String>) {
        *self.keep.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(keep);
    }

    /// The catalogue the passes fold to.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// The model of `text`; `Err` when it cannot be read as a test.
    pub fn model(&self, text: &[u8]) -> anyhow::Result<TestModel> {
        Ok(self.read(text)?.model.clone())
    }

    /// The guided first cut of `text` (issue 60): every variant but the reference and those of
    /// the checks `kept` removed, with those variants' other checks (unless `--keep-checks`);
    /// then, when `keep` names the instances the wrong value is computed in, every call of
    /// another instance folded to its base, all in one window of each kind (its invariants and
    /// the sweep as for any candidate). `None` when that changes nothing.
    pub fn guided_cut(
        &self,
        text: &[u8],
        kept: &[(usize, usize)],
        keep: Option<&BTreeSet<String>>,
    ) -> Option<Vec<u8>> {
        let mut cut = text.to_vec();
        if !kept.is_empty() {
            let read = self.read(&cut).ok()?;
            let ops = variant::variant_ops(&cut, &read.model, &self.options);
            let window: Vec<usize> = (0..ops.len())
                .filter(|&i| match ops[i].effect {
                    Effect::RemoveVariant(v) => kept.iter().all(|&(k, _)| k != v),
                    Effect::RemoveCheck {
                        variant: v,
                        check: c,
                    } => kept.iter().any(|&(k, _)| k == v) && !kept.contains(&(v, c)),
                    _ => false,
                })
                .collect();
            if let Some(t) = self.gathering(read, ops).candidate(&window) {
                cut = t;
            }
        }
        if let Some(keep) = keep {
            let read = self.read(&cut).ok()?;
            let ops = recursion::folds(&read.model, &self.catalogue, keep);
            let window: Vec<usize> = (0..ops.len()).collect();
            if let Some(t) = self.gathering(read, ops).candidate(&window) {
                cut = t;
            }
        }
        (cut != text).then_some(cut)
    }
}

impl Gathered for Gathering<'_> {
    fn len(&self) -> usize {
        self.ops.len()
    }

    fn candidate(&self, window: &[usize]) -> Option<Vec<u8>> {
        let chosen: Vec<&Opportunity> = window
            .iter()
            .map(|&i| self.ops.get(i))
            .collect::<Option<_>>()?;
        let edits = self.window_edits(&chosen)?;
        let edited = self.read.doc.edited(&edits).ok()?;
        let ctx = SweepContext {
            catalogue: self.catalogue,
            known_instances: &self.known_instances,
            keep: &self.keep,
        };
        let swept = sweep(edited, &ctx)?;
        (swept != self.text()).then_some(swept)
    }

    fn describe(&self, i: usize) -> String {
        self.ops
            .get(i)
            .map(|o| o.description.clone())
            .unwrap_or_default()
    }

    fn parent(&self, i: usize) -> Option<usize> {
        self.parents.get(i).copied().flatten()
    }

    fn fingerprint(&self, i: usize) -> Option<u64> {
        let op = self.ops.get(i)?;
        let text = self.text();
        let mut hasher = blake3::Hasher::new();
        let mut field = |bytes: &[u8]| {
            let kept: Vec<u8> = bytes
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            hasher.update(&kept.len().to_le_bytes());
            hasher.update(&kept);
        };
        // A step's position is not part of it: removing an earlier step renumbers the others.
        match op.effect {
            Effect::RemoveStep(_) => field(b"remove step"),
            _ => field(op.description.as_bytes()),
        }
        for edit in &op.edits {
            let span = text.get(edit.span.clone())?;
            // The rest of the lines the edit touches; a span that takes a line's newline with it
            // touches nothing of the next line (nor, starting with one, of the previous line), so
            // deleting a neighbouring line leaves the opportunity's fingerprint as it was.
            let line_start = match span.first() {
                Some(b'\n') => edit.span.start,
                _ => text[..edit.span.start]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1),
            };
            let line_end = match span.last() {
                Some(b'\n') => edit.span.end,
                _ => text[edit.span.end..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |p| edit.span.end + p),
            };
            // What a replacement leaves is what counts (the same value put in place of another
            // one is the same opportunity); what a deletion removes is.
            field(&text[line_start..edit.span.start]);
            if edit.text.is_empty() {
                field(span);
            }
            field(&text[edit.span.end..line_end]);
            field(edit.text.as_bytes());
        }
        let bytes: [u8; 8] = hasher.finalize().as_bytes()[..8].try_into().ok()?;
        Some(u64::from_le_bytes(bytes))
    }
}

impl Gathering<'_> {
    /// The text the opportunities were gathered from.
    fn text(&self) -> &[u8] {
        self.read.doc.text()
    }

    /// The edits of a window, or `None` when the window would break an invariant.
    fn window_edits(&self, chosen: &[&Opportunity]) -> Option<Vec<Edit>> {
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
        let mut edits: Vec<Edit> = self
            .compatible(chosen)
            .iter()
            .flat_map(|o| o.edits.clone())
            .collect();
        if removed_steps.contains(&0) {
            edits.extend(sequence::redeclare(
                self.text(),
                &self.read.model,
                &removed_steps,
            )?);
        }
        Some(edits)
    }

    /// The opportunities of a window that go in together, in order. Each alone keeps every read
    /// of a region variable defined, but together they may not: copy propagation and hoisting
    /// write a variable's name, moving a value copies its initialiser, and another opportunity
    /// may delete that variable's definition (its own renaming inside the copied text is lost).
    /// An opportunity that writes a name whose definition an earlier one deletes, or deletes a
    /// definition whose name an earlier one writes, is left out of the window.
    fn compatible<'o>(&self, chosen: &[&'o Opportunity]) -> Vec<&'o Opportunity> {
        if chosen.len() < 2 {
            return chosen.to_vec();
        }
        let mut deleted: HashSet<&str> = HashSet::new();
        let mut written: HashSet<&str> = HashSet::new();
        let mut kept = Vec::with_capacity(chosen.len());
        for op in chosen {
            let deletes = self.deleted_definitions(op);
            let writes: HashSet<&str> = op.edits.iter().flat_map(|e| idents(&e.text)).collect();
            if writes.iter().any(|n| deleted.contains(n))
                || deletes.iter().any(|n| written.contains(n))
            {
                continue;
            }
            deleted.extend(deletes);
            written.extend(writes);
            kept.push(*op);
        }
        kept
    }

    /// The region variables whose definitions `op` deletes.
    fn deleted_definitions(&self, op: &Opportunity) -> Vec<&str> {
        let definitions = self.definitions.get_or_init(|| {
            let mut all: Vec<(Span, usize, usize)> = self
                .read
                .model
                .regions
                .iter()
                .enumerate()
                .flat_map(|(r, region)| {
                    region
                        .instructions
                        .iter()
                        .enumerate()
                        .filter(|(_, i)| i.defines.is_some())
                        .map(move |(k, i)| (i.span.clone(), r, k))
                })
                .collect();
            all.sort_by_key(|(span, _, _)| span.start);
            all
        });
        let mut names = Vec::new();
        for deletion in op.edits.iter().filter(|e| e.text.is_empty()) {
            let d = &deletion.span;
            let from = definitions.partition_point(|(span, _, _)| span.start < d.start);
            for (span, r, k) in definitions[from..]
                .iter()
                .take_while(|(span, _, _)| span.start < d.end)
            {
                if span.end <= d.end {
                    let ins = &self.read.model.regions[*r].instructions[*k];
                    names.extend(ins.defines.as_deref());
                }
            }
        }
        names
    }
}

/// The identifiers in `text`.
fn idents(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| is_ident(w))
}

/// The text of `span`, or `""` when it is not UTF-8.
fn slice<'t>(text: &'t [u8], span: &Span) -> &'t str {
    std::str::from_utf8(&text[span.clone()]).unwrap_or("")
}

/// Whether `arg` names a metamorphic input, `output_var_<k>`.
fn is_input_var(arg: &str) -> bool {
    arg.strip_prefix("output_var_")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Number of opportunities of each of the four kinds (not the tail kinds) in `model` (read
/// from `text`).
pub fn count_opportunities(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
) -> BTreeMap<OpportunityKind, usize> {
    let options = PassOptions::default();
    OpportunityKind::ALL
        .iter()
        .filter(|k| !k.is_tail())
        .map(|&k| (k, opportunities(text, model, catalogue, &options, k).len()))
        .collect()
}

/// The opportunities of `kind`, in enumeration order.
fn opportunities(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    options: &PassOptions,
    kind: OpportunityKind,
) -> Vec<Opportunity> {
    match kind {
        OpportunityKind::Variant => variant::variant_ops(text, model, options),
        OpportunityKind::Sequence => sequence::sequence_ops(text, model),
        OpportunityKind::Recursion => recursion::recursion_ops(model, catalogue).0,
        OpportunityKind::Fuzz => fuzz::fuzz_ops(text, model, catalogue),
        _ if options.tail => tail::tail_ops(text, model, catalogue, kind),
        _ => Vec::new(),
    }
}

/// `span` extended to whole lines where that leaves no empty line ([`whole_lines`]).
fn lines(text: &[u8], span: &Span) -> Span {
    whole_lines(text, span.clone())
}

#[cfg(test)]
mod tests;
