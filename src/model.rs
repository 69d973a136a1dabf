//! `TestModel`: an MF++ test read into plain data with byte spans (design §3).
//!
//! Built from a [`Document`] outline; identifies everything by names and positions, never by
//! type text: variants `r_<i>` with steps aligned by position and their checks, transplanted
//! instances matched by exact name with the call graph, fuzz regions with per-instruction
//! definitions and uses, and input blocks.

use std::collections::{HashMap, HashSet};

use anyhow::{bail, Result};
use serde::Serialize;

use crate::catalogue::{Catalogue, Completeness, MrKind};
use crate::document::{Call, Document, Function, Span, Stmt, StmtKind};

/// A metamorphic variant `r_<index>`.
#[derive(Clone, Debug, Serialize)]
pub struct Variant {
    /// `i` of `r_i`; 0 is the reference.
    pub index: usize,
    /// `r_<i>`.
    pub name: String,
    /// The `// Meta test <i>` comment, if present.
    #[serde(skip)]
    pub comment: Option<Span>,
    /// Step 0 is the declaration, steps ≥ 1 the reassignments.
    pub steps: Vec<Step>,
    /// The `metalib::checks::…` calls after the last step.
    pub checks: Vec<Check>,
}

impl Variant {
    /// From the comment (or declaration) to the end of the last step or check.
    pub fn span(&self) -> Span {
        let start = self
            .comment
            .as_ref()
            .map(|c| c.start)
            .unwrap_or(self.steps[0].span.start);
        let end = self
            .checks
            .last()
            .map(|c| c.span.end)
            .unwrap_or(0)
            .max(self.steps.last().map(|s| s.span.end).unwrap_or(0));
        start..end
    }
}

/// One step of a variant.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The statement.
    #[serde(skip)]
    pub span: Span,
    /// The step's MR call: callee text.
    pub callee: String,
    /// Span of the callee expression.
    #[serde(skip)]
    pub callee_span: Span,
    /// Span of the whole call expression.
    #[serde(skip)]
    pub call_span: Span,
    /// Argument spans of the MR call.
    #[serde(skip)]
    pub args: Vec<Span>,
    /// Transplanted instances the step calls directly.
    pub instances: Vec<String>,
    /// For step 0: span of the declaration's type and name, `<T> r_i` (kept when step 1 becomes
    /// the declaration).
    #[serde(skip)]
    pub decl_head: Option<Span>,
}

/// A check call.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The check's unqualified name.
    pub name: String,
    /// The statement.
    #[serde(skip)]
    pub span: Span,
}

/// A call from one function to a transplanted instance.
#[derive(Clone, Debug, Serialize)]
pub struct CallSite {
    /// The called instance.
    pub callee: String,
    /// Span of the callee name.
    #[serde(skip)]
    pub callee_span: Span,
    /// Span of the call expression.
    #[serde(skip)]
    pub span: Span,
}

/// Who calls an instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    /// A step of a variant.
    Step {
        /// Variant index.
        variant: usize,
        /// Step position.
        step: usize,
    },
    /// Another instance.
    Instance(String),
}

/// A transplanted MR instance `<mr>_<variant>_<n>`.
#[derive(Clone, Debug, Serialize)]
pub struct Instance {
    /// Full name.
    pub name: String,
    /// The MR it instantiates (unqualified).
    pub mr: String,
    /// The variant index in its name.
    pub variant: usize,
    /// The per-variant counter in its name.
    pub number: usize,
    /// MR family, when known (catalogue or evident from the test).
    pub family: Option<String>,
    /// `relation` or `generator`, when known.
    pub kind: Option<MrKind>,
    /// Instances it calls, in call order.
    pub callees: Vec<String>,
    /// Call sites inside its body.
    #[serde(skip)]
    pub calls: Vec<CallSite>,
    /// Its caller, `None` for an orphan (only after edits).
    pub caller: Option<Caller>,
    /// The definition, from return type to closing brace.
    #[serde(skip)]
    pub span: Span,
    /// Return type text.
    #[serde(skip)]
    pub return_type: String,
    /// Parameter types.
    #[serde(skip)]
    pub param_types: Vec<String>,
    /// The body's direct statements.
    #[serde(skip)]
    pub body: Vec<Stmt>,
}

/// One instruction of a fuzz region.
#[derive(Clone, Debug, Serialize)]
pub struct Instruction {
    /// The statement.
    #[serde(skip)]
    pub span: Span,
    /// Variable defined (declared or assigned).
    pub defines: Option<String>,
    /// Declared type, for declarations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_text: Option<String>,
    /// Initializer span, for declarations with one.
    #[serde(skip)]
    pub init: Option<Span>,
    /// True for `T x(args)` declarations.
    #[serde(skip)]
    pub direct_init: bool,
    /// Region variables it reads (defined earlier in the region).
    pub uses: Vec<String>,
    /// Whether the initializer already calls a reduction function.
    #[serde(skip)]
    pub reduced: bool,
}

/// A fuzz region `mfr_fuzz_start("X")` … `mfr_fuzz_end("X")`.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzRegion {
    /// `X`: the region's output variable.
    pub output: String,
    /// `"main"` or the instance name.
    pub function: String,
    /// The start marker statement.
    #[serde(skip)]
    pub start_marker: Span,
    /// The end marker statement.
    #[serde(skip)]
    pub end_marker: Span,
    /// Instructions between the markers.
    pub instructions: Vec<Instruction>,
    /// Variables of the enclosing function declared before the region (name, type), usable as
    /// reduction-function arguments.
    #[serde(skip)]
    pub context: Vec<(String, String)>,
}

/// An input-variable block `/* Template initialisation for output var <k> */` … `output_var_<k>`.
#[derive(Clone, Debug, Serialize)]
pub struct InputBlock {
    /// `k`.
    pub index: usize,
    /// `output_var_<k>`.
    pub output_var: String,
    /// From the comment to the end of the `output_var_<k>` declaration.
    #[serde(skip)]
    pub span: Span,
}

/// An MF++ test read into plain data.
#[derive(Clone, Debug)]
pub struct TestModel {
    /// Size of the text.
    pub bytes: usize,
    /// Span of `main`'s body.
    pub main_body: Span,
    /// Span of `main`'s definition.
    pub main_span: Span,
    /// Variants in source order.
    pub variants: Vec<Variant>,
    /// Transplanted instances in source order.
    pub instances: Vec<Instance>,
    /// Index of each instance in `instances`, by name.
    instance_index: HashMap<String, usize>,
    /// Fuzz regions in source order.
    pub regions: Vec<FuzzRegion>,
    /// Input blocks in source order.
    pub input_blocks: Vec<InputBlock>,
    /// Top-level statements of `main` (for the sweep and usage checks).
    pub main_stmts: Vec<Stmt>,
    /// Remarks on what could not be determined.
    pub notes: Vec<String>,
}

/// The instances `main` reaches through its steps and their calls.
struct Reach {
    /// The first caller found of each reached instance.
    callers: HashMap<String, Caller>,
    /// The instance call sites of each reached definition.
    calls_of: HashMap<String, Vec<CallSite>>,
}

/// Follow the calls from every step of `variants` through the instance definitions `defs`.
fn reach(variants: &[Variant], defs: &HashMap<&str, &Function>) -> Reach {
    let mut callers: HashMap<String, Caller> = HashMap::new();
    let mut queue: Vec<String> = Vec::new();
    for v in variants {
        for (j, s) in v.steps.iter().enumerate() {
            for name in &s.instances {
                if !callers.contains_key(name) {
                    callers.insert(
                        name.clone(),
                        Caller::Step {
                            variant: v.index,
                            step: j,
                        },
                    );
                    queue.push(name.clone());
                }
            }
        }
    }
    let mut calls_of: HashMap<String, Vec<CallSite>> = HashMap::new();
    while let Some(name) = queue.pop() {
        let Some(f) = defs.get(name.as_str()) else {
            continue;
        };
        let sites = instance_calls(&f.calls, defs);
        for site in &sites {
            if !callers.contains_key(&site.callee) && site.callee != name {
                callers.insert(site.callee.clone(), Caller::Instance(name.clone()));
                queue.push(site.callee.clone());
            }
        }
        calls_of.insert(name, sites);
    }
    Reach { callers, calls_of }
}

/// Family and kind of the instance `f` of `mr`: those of the catalogue MR it resolves to, else,
/// for an instance a step calls, the family evident at that step.
fn family_of(
    catalogue: &Catalogue,
    f: &Function,
    mr: &str,
    param_types: &[String],
    caller: Option<&Caller>,
    step_family: &HashMap<usize, (MrKind, String)>,
) -> (Option<String>, Option<MrKind>) {
    let caller_mr = match caller {
        Some(Caller::Instance(c)) => split_instance_name(c).map(|(m, _, _)| m),
        _ => None,
    };
    match catalogue.resolve(mr, &f.return_type, param_types, caller_mr) {
        Some(m) => (Some(m.family.clone()), Some(m.kind)),
        None => match caller {
            Some(Caller::Step { step, .. }) => match step_family.get(step) {
                Some((k, fam)) => (Some(fam.clone()), Some(*k)),
                None => (None, None),
            },
            _ => (None, None),
        },
    }
}

/// `<name>_<variant>_<n>` parts of a transplanted instance name.
pub fn split_instance_name(name: &str) -> Option<(&str, usize, usize)> {
    let (rest, n) = name.rsplit_once('_')?;
    let (mr, v) = rest.rsplit_once('_')?;
    if mr.is_empty()
        || v.is_empty()
        || n.is_empty()
        || !v.bytes().all(|b| b.is_ascii_digit())
        || !n.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((mr, v.parse().ok()?, n.parse().ok()?))
}

/// Check that `text` looks like an MF++ test; the error names what is missing.
pub fn check_is_mfpp_test(text: &[u8]) -> Result<()> {
    crate::input::check_text(text)?;
    let doc = Document::parse(text.to_vec())?;
    TestModel::build(&doc, &Catalogue::default()).map(|_| ())
}

impl TestModel {
    /// The completeness of `catalogue` (the one this model was built with) for this test: its
    /// instances, and those whose MR family the catalogue leaves unknown.
    pub fn completeness(&self, catalogue: &Catalogue) -> Completeness {
        let unknown = self.instances.iter().filter(|i| i.family.is_none()).count();
        Completeness::new(catalogue, self.instances.len(), unknown)
    }

    /// Where the first definition (an instance, or `main`) starts: the end of the preamble.
    pub fn first_definition(&self) -> usize {
        self.instances
            .iter()
            .map(|i| i.span.start)
            .chain(std::iter::once(self.main_span.start))
            .min()
            .unwrap_or(0)
    }

    /// Read `doc` as an MF++ test.
    pub fn build(doc: &Document, catalogue: &Catalogue) -> Result<TestModel> {
        TestModel::build_with(doc, catalogue, None)
    }

    /// Like [`TestModel::build`]; functions named in `known_instances` count as instances even
    /// when nothing calls them and the catalogue does not know their MR (orphans left by edits).
    pub fn build_with(
        doc: &Document,
        catalogue: &Catalogue,
        known_instances: Option<&HashSet<String>>,
    ) -> Result<TestModel> {
        let text = doc.text();
        crate::input::check_text(text)?;
        let outline = doc.outline();
        let main_idx = outline
            .functions
            .iter()
            .position(|f| f.name == "main" && f.namespaces.is_empty());
        if let (Some(_), Some(braces)) = (outline.first_error, crate::input::unbalanced_brace(text))
        {
            bail!("{braces}: mfppr reads only valid MF++ tests");
        }
        let Some(main_idx) = main_idx else {
            if let Some(at) = outline.first_error {
                bail!(
                    "no `main` function found (syntax error at line {}): not an MF++ test",
                    crate::input::line_of(text, at)
                );
            }
            bail!("no `main` function found: not an MF++ test");
        };
        if let Some(at) = outline.first_error {
            bail!(
                "syntax error at line {} (not C++?): mfppr reads only valid MF++ tests",
                crate::input::line_of(text, at)
            );
        }
        let main = &outline.functions[main_idx];
        let defs: HashMap<&str, &Function> = outline.functions[..main_idx]
            .iter()
            .filter(|f| f.namespaces.is_empty() && split_instance_name(&f.name).is_some())
            .map(|f| (f.name.as_str(), f))
            .collect();
        let variants = read_variants(text, main, &defs)?;
        let mut model = TestModel {
            bytes: text.len(),
            main_body: main.body_span.clone(),
            main_span: main.span.clone(),
            variants,
            instances: Vec::new(),
            instance_index: HashMap::new(),
            regions: Vec::new(),
            input_blocks: read_input_blocks(text, main),
            main_stmts: main.body.clone(),
            notes: Vec::new(),
        };
        model.read_instances(
            &outline.functions[..main_idx],
            &defs,
            catalogue,
            known_instances,
        );
        model.regions = read_regions(main, "main", catalogue);
        let mut instance_regions = Vec::new();
        for inst in &model.instances {
            if let Some(f) = defs.get(inst.name.as_str()) {
                instance_regions.extend(read_regions(f, &inst.name, catalogue));
            }
        }
        model.regions.extend(instance_regions);
        model.regions.sort_by_key(|r| r.start_marker.start);
        Ok(model)
    }

    /// The transplanted instances among the functions `before_main`: those `main` reaches, and
    /// unreached ones the catalogue or `known_instances` names (orphans for the sweep).
    fn read_instances(
        &mut self,
        before_main: &[Function],
        defs: &HashMap<&str, &Function>,
        catalogue: &Catalogue,
        known_instances: Option<&HashSet<String>>,
    ) {
        let Reach {
            callers,
            mut calls_of,
        } = reach(&self.variants, defs);
        let step_family = self.step_families(catalogue);
        for f in before_main {
            let Some((mr, variant, number)) = split_instance_name(&f.name) else {
                continue;
            };
            if !f.namespaces.is_empty() {
                continue;
            }
            let caller = callers.get(&f.name).cloned();
            if caller.is_none()
                && !catalogue.has_mr_named(mr)
                && !known_instances.is_some_and(|k| k.contains(&f.name))
            {
                // Not reached and not a known MR: an ordinary function of the preamble.
                continue;
            }
            let calls = calls_of
                .remove(&f.name)
                .unwrap_or_else(|| instance_calls(&f.calls, defs));
            let param_types: Vec<String> = f.params.iter().map(|p| p.type_text.clone()).collect();
            let (family, kind) = family_of(
                catalogue,
                f,
                mr,
                &param_types,
                caller.as_ref(),
                &step_family,
            );
            self.instances.push(Instance {
                name: f.name.clone(),
                mr: mr.to_string(),
                variant,
                number,
                family,
                kind,
                callees: calls.iter().map(|c| c.callee.clone()).collect(),
                calls,
                caller,
                span: f.span.clone(),
                return_type: f.return_type.clone(),
                param_types,
                body: f.body.clone(),
            });
        }
        self.index_instances();
    }

    /// Index the instances by name, and note how many have no known family.
    fn index_instances(&mut self) {
        self.instance_index = self
            .instances
            .iter()
            .enumerate()
            .map(|(i, inst)| (inst.name.clone(), i))
            .collect();
        let unknown = self.instances.iter().filter(|i| i.family.is_none()).count();
        if unknown > 0 {
            self.notes.push(format!(
                "family unknown for {unknown} of {} instances (their MRs are in no spec header read; a quoted include not found is warned about, with the directories searched); recursion folding is limited to families evident from the test",
                self.instances.len()
            ));
        }
    }

    /// Family per step position, as evident from qualified base calls in any variant.
    fn step_families(&self, catalogue: &Catalogue) -> HashMap<usize, (MrKind, String)> {
        let mut out = HashMap::new();
        for v in &self.variants {
            for (j, s) in v.steps.iter().enumerate() {
                if out.contains_key(&j) {
                    continue;
                }
                if let Some((kind, family, _)) = parse_qualified_mr(&s.callee) {
                    out.insert(j, (kind, family.to_string()));
                } else if let Some((mr, _, _)) = split_instance_name(&s.callee) {
                    let fams = catalogue.families_of(mr);
                    if fams.len() == 1 {
                        out.insert(j, fams[0].clone());
                    }
                }
            }
        }
        out
    }

    /// Every identifier use in the body of `function` (`"main"` or an instance name), with the
    /// span of the statement it is in.
    pub fn function_idents<'s>(
        &'s self,
        function: &str,
    ) -> impl Iterator<Item = (&'s str, Span)> + 's {
        self.function_stmts(function).iter().flat_map(|s| {
            s.idents
                .iter()
                .map(move |(name, _)| (name.as_str(), s.span.clone()))
        })
    }

    /// The direct statements of `function` (`"main"` or an instance name).
    pub fn function_stmts(&self, function: &str) -> &[Stmt] {
        if function == "main" {
            &self.main_stmts
        } else {
            self.instance(function)
                .map(|i| i.body.as_slice())
                .unwrap_or(&[])
        }
    }

    /// The direct statements of every instance body.
    pub fn instance_stmts(&self) -> impl Iterator<Item = &Stmt> {
        self.instances.iter().flat_map(|i| i.body.iter())
    }

    /// The instance named `name`.
    pub fn instance(&self, name: &str) -> Option<&Instance> {
        self.instance_index.get(name).map(|&i| &self.instances[i])
    }

    /// Number of step positions (all variants share them).
    pub fn step_count(&self) -> usize {
        self.variants
            .iter()
            .map(|v| v.steps.len())
            .max()
            .unwrap_or(0)
    }
}

/// `metalib::{relations|generators}::<family>::<name>` → (kind, family, name).
pub fn parse_qualified_mr(callee: &str) -> Option<(MrKind, &str, &str)> {
    let rest = callee
        .strip_prefix("::")
        .unwrap_or(callee)
        .strip_prefix("metalib::")?;
    let mut parts = rest.split("::");
    let kind = match parts.next()? {
        "relations" => MrKind::Relation,
        "generators" => MrKind::Generator,
        _ => return None,
    };
    let family = parts.next()?;
    let name = parts.next()?;
    if parts.next().is_some() {
        return None;
    }
    Some((kind, family, name))
}

fn instance_calls(calls: &[Call], defs: &HashMap<&str, &Function>) -> Vec<CallSite> {
    calls
        .iter()
        .filter(|c| defs.contains_key(c.callee.as_str()))
        .map(|c| CallSite {
            callee: c.callee.clone(),
            callee_span: c.callee_span.clone(),
            span: c.span.clone(),
        })
        .collect()
}

fn meta_test_index(stmt: &Stmt, text: &[u8]) -> Option<usize> {
    if stmt.kind != StmtKind::Comment {
        return None;
    }
    let c = std::str::from_utf8(&text[stmt.span.clone()]).ok()?;
    let rest = c
        .strip_prefix("//")?
        .trim_start()
        .strip_prefix("Meta test")?;
    rest.trim().parse().ok()
}

fn variant_index(name: &str) -> Option<usize> {
    let d = name.strip_prefix("r_")?;
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    d.parse().ok()
}

fn is_check(callee: &str) -> Option<&str> {
    callee
        .strip_prefix("::")
        .unwrap_or(callee)
        .strip_prefix("metalib::checks::")
}

fn step_from(stmt: &Stmt, defs: &HashMap<&str, &Function>, decl_head: Option<Span>) -> Step {
    let call = stmt.calls.first();
    let instances = stmt
        .calls
        .iter()
        .filter(|c| defs.contains_key(c.callee.as_str()))
        .map(|c| c.callee.clone())
        .collect();
    Step {
        span: stmt.span.clone(),
        callee: call.map(|c| c.callee.clone()).unwrap_or_default(),
        callee_span: call.map(|c| c.callee_span.clone()).unwrap_or(0..0),
        call_span: call.map(|c| c.span.clone()).unwrap_or(0..0),
        args: call.map(|c| c.args.clone()).unwrap_or_default(),
        instances,
        decl_head,
    }
}

fn read_variants(
    text: &[u8],
    main: &Function,
    defs: &HashMap<&str, &Function>,
) -> Result<Vec<Variant>> {
    let body = &main.body;
    let first_comment = body.iter().position(|s| meta_test_index(s, text).is_some());
    let start = first_comment.unwrap_or(0);
    let mut variants: Vec<Variant> = Vec::new();
    let mut current: Option<Variant> = None;
    let mut pending_comment: Option<Span> = None;
    for stmt in &body[start..] {
        if meta_test_index(stmt, text).is_some() {
            variants.extend(current.take());
            pending_comment = Some(stmt.span.clone());
            continue;
        }
        match stmt.kind {
            StmtKind::Empty | StmtKind::Comment => continue,
            StmtKind::Decl => {
                if let Some((d, index)) = stmt
                    .decl
                    .as_ref()
                    .and_then(|d| variant_index(&d.name).map(|i| (d, i)))
                {
                    variants.extend(current.take());
                    let head = stmt.span.start..d.name_span.end;
                    current = Some(Variant {
                        index,
                        name: d.name.clone(),
                        comment: pending_comment.take(),
                        steps: vec![step_from(stmt, defs, Some(head))],
                        checks: Vec::new(),
                    });
                    continue;
                }
            }
            StmtKind::Expr => {
                if let Some(v) = current.as_mut() {
                    let assigns_variant = stmt.assigns.as_ref().map(|(n, _)| n == &v.name);
                    if assigns_variant == Some(true) && v.checks.is_empty() {
                        v.steps.push(step_from(stmt, defs, None));
                        continue;
                    }
                    if let Some(name) = stmt.calls.first().and_then(|c| is_check(&c.callee)) {
                        v.checks.push(Check {
                            name: name.to_string(),
                            span: stmt.span.clone(),
                        });
                        continue;
                    }
                }
            }
            _ => {}
        }
        variants.extend(current.take());
        pending_comment = None;
    }
    variants.extend(current.take());
    if variants.is_empty() {
        bail!(
            "`main` (line {}) has no metamorphic variants (`// Meta test <i>` blocks declaring `r_<i>`): not an MF++ test",
            crate::input::line_of(text, main.span.start)
        );
    }
    if !variants.iter().any(|v| v.index == 0) {
        bail!("no reference variant `r_0` in `main`: not an MF++ test");
    }
    let mut seen = HashSet::new();
    for v in &variants {
        if !seen.insert(v.index) {
            bail!("variant `{}` is declared twice in `main`", v.name);
        }
    }
    Ok(variants)
}

fn input_comment_index(comment: &[u8]) -> Option<usize> {
    let c = std::str::from_utf8(comment).ok()?;
    let inner = c.strip_prefix("/*")?.strip_suffix("*/")?.trim();
    inner
        .strip_prefix("Template initialisation for output var")?
        .trim()
        .parse()
        .ok()
}

/// Input blocks: from the `/* Template initialisation for output var <k> */` comment through the
/// `output_var_<k>` declaration and every later statement, before the next block or the meta
/// tests, that reads a name the block declares (templates may use the input after declaring it).
fn read_input_blocks(text: &[u8], main: &Function) -> Vec<InputBlock> {
    let body = &main.body;
    let is_boundary = |s: &Stmt| {
        meta_test_index(s, text).is_some()
            || (s.kind == StmtKind::Comment && input_comment_index(&text[s.span.clone()]).is_some())
            || s.decl
                .as_ref()
                .is_some_and(|d| variant_index(&d.name).is_some())
    };
    let mut out = Vec::new();
    for (i, stmt) in body.iter().enumerate() {
        if stmt.kind != StmtKind::Comment {
            continue;
        }
        let Some(k) = input_comment_index(&text[stmt.span.clone()]) else {
            continue;
        };
        let output_var = format!("output_var_{k}");
        let mut declared: HashSet<&str> = HashSet::new();
        let mut end = None;
        for s in body[i + 1..].iter().take_while(|s| !is_boundary(s)) {
            let declares = s.decl.as_ref().map(|d| d.name.as_str());
            let reads_block = s.idents.iter().any(|(n, _)| declared.contains(n.as_str()));
            if let Some(d) = declares {
                declared.insert(d);
            }
            if end.is_none() {
                if declares == Some(output_var.as_str()) {
                    end = Some(s.span.end);
                }
            } else if reads_block {
                end = Some(s.span.end);
            }
        }
        if let Some(end) = end {
            out.push(InputBlock {
                index: k,
                output_var,
                span: stmt.span.start..end,
            });
        }
    }
    out
}

fn read_regions(f: &Function, function: &str, catalogue: &Catalogue) -> Vec<FuzzRegion> {
    let mut out = Vec::new();
    let mut context: Vec<(String, String)> = f
        .params
        .iter()
        .map(|p| (p.name.clone(), p.type_text.clone()))
        .collect();
    let mut open: Option<FuzzRegion> = None;
    let mut defined: HashSet<String> = HashSet::new();
    for stmt in &f.body {
        let marker = stmt.calls.first().and_then(|c| {
            let name = c.callee.rsplit("::").next().unwrap_or("");
            match name {
                "mfr_fuzz_start" | "mfr_fuzz_end" => Some((
                    name == "mfr_fuzz_start",
                    c.string_arg.clone().unwrap_or_default(),
                )),
                _ => None,
            }
        });
        if stmt.kind == StmtKind::Expr {
            if let Some((is_start, id)) = marker {
                if is_start {
                    out.extend(open.take());
                    defined.clear();
                    open = Some(FuzzRegion {
                        output: id,
                        function: function.to_string(),
                        start_marker: stmt.span.clone(),
                        end_marker: stmt.span.clone(),
                        instructions: Vec::new(),
                        context: context.clone(),
                    });
                } else if let Some(mut r) = open.take() {
                    r.end_marker = stmt.span.clone();
                    out.push(r);
                }
                continue;
            }
        }
        if let Some(r) = open.as_mut() {
            if matches!(stmt.kind, StmtKind::Empty | StmtKind::Comment) {
                continue;
            }
            let defines = stmt
                .decl
                .as_ref()
                .map(|d| d.name.clone())
                .or_else(|| stmt.assigns.as_ref().map(|(n, _)| n.clone()));
            let mut uses: Vec<String> = Vec::new();
            for (name, _) in &stmt.idents {
                if defined.contains(name) && !uses.contains(name) {
                    uses.push(name.clone());
                }
            }
            let reduced = stmt
                .calls
                .first()
                .map(|c| catalogue.is_reduction_fn(&c.callee))
                .unwrap_or(false);
            if let Some(d) = &defines {
                defined.insert(d.clone());
            }
            r.instructions.push(Instruction {
                span: stmt.span.clone(),
                defines,
                type_text: stmt.decl.as_ref().map(|d| d.type_text.clone()),
                init: stmt.decl.as_ref().and_then(|d| d.init.clone()),
                direct_init: stmt.decl.as_ref().map(|d| d.direct_init).unwrap_or(false),
                uses,
                reduced,
            });
        } else if let Some(d) = &stmt.decl {
            context.push((d.name.clone(), d.type_text.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_split_from_the_right() {
        assert_eq!(
            split_instance_name("add_zero_2_3"),
            Some(("add_zero", 2, 3))
        );
        assert_eq!(
            split_instance_name("get_expr_by_fuzz_0_6"),
            Some(("get_expr_by_fuzz", 0, 6))
        );
        assert_eq!(split_instance_name("main"), None);
        assert_eq!(split_instance_name("a_b_3"), None);
        assert_eq!(split_instance_name("_1_2"), None);
    }

    #[test]
    fn qualified_mr_calls_parse() {
        assert_eq!(
            parse_qualified_mr("metalib::relations::add::base"),
            Some((MrKind::Relation, "add", "base"))
        );
        assert_eq!(parse_qualified_mr("metalib::checks::check_equal"), None);
    }
}
