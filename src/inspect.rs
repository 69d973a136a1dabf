//! `mfppr inspect`: how mfppr reads a test, as a readable summary or a stable JSON report.
//!
//! The JSON schema is documented in the README ("inspect --json"); field names are read by
//! outside checks, so they only ever gain fields.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::catalogue::Catalogue;
use crate::model::{Caller, FuzzRegion, InputBlock, Instance, TestModel, Variant};
use crate::passes;

/// Structure counts, comparable with an MF++ corpus manifest.
#[derive(Debug, Serialize)]
pub(crate) struct StructureCounts {
    /// Number of variants.
    pub variants: usize,
    /// Distinct step counts over the variants.
    pub steps_per_variant: Vec<usize>,
    /// Checks per variant index.
    pub checks_per_variant: BTreeMap<String, usize>,
    /// Number of transplanted instances.
    pub instances: usize,
    /// Instances per variant index.
    pub instances_per_variant: BTreeMap<String, usize>,
    /// Calls from an instance to an instance.
    pub instance_to_instance_calls: usize,
    /// Calls from a step to an instance.
    pub step_to_instance_calls: usize,
    /// Fuzz regions.
    pub fuzz_regions: usize,
    /// Fuzz regions in `main`.
    pub fuzz_regions_in_main: usize,
    /// Input blocks.
    pub input_blocks: usize,
}

/// Catalogue facts shown by `inspect`.
#[derive(Debug, Serialize)]
pub(crate) struct CatalogueReport {
    /// Spec headers read.
    pub headers: Vec<String>,
    /// Quoted includes not found.
    pub missing: Vec<String>,
    /// The same, each with the file that includes it and the directories searched.
    pub missing_includes: Vec<crate::catalogue::MissingInclude>,
    /// Number of relations.
    pub relations: usize,
    /// Number of generators.
    pub generators: usize,
    /// Number of base MRs the `EXECUTE` build can call.
    pub executable_bases: usize,
    /// Check names.
    pub checks: Vec<String>,
    /// Reduction functions (`name -> type`).
    pub reduction_functions: BTreeMap<String, String>,
}

/// The `inspect --json` document.
#[derive(Debug, Serialize)]
pub(crate) struct Inspection<'a> {
    /// The file as given.
    pub file: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Variants with their steps and checks.
    pub variants: &'a [Variant],
    /// Transplanted instances with their callees.
    pub instances: &'a [Instance],
    /// Fuzz regions with their instructions.
    pub fuzz_regions: &'a [FuzzRegion],
    /// Input blocks.
    pub input_blocks: &'a [InputBlock],
    /// Opportunities per kind.
    pub opportunities: BTreeMap<&'static str, usize>,
    /// Structure counts.
    pub summary: StructureCounts,
    /// What the spec catalogue holds.
    pub catalogue: CatalogueReport,
    /// Remarks.
    pub notes: &'a [String],
}

/// Build the report for `model`.
pub(crate) fn report<'a>(
    file: &str,
    text: &[u8],
    model: &'a TestModel,
    catalogue: &Catalogue,
) -> Inspection<'a> {
    Inspection {
        file: file.to_string(),
        bytes: model.bytes,
        variants: &model.variants,
        instances: &model.instances,
        fuzz_regions: &model.regions,
        input_blocks: &model.input_blocks,
        opportunities: passes::count_opportunities(text, model, catalogue)
            .into_iter()
            .map(|(k, n)| (k.name(), n))
            .collect(),
        summary: summary(model),
        catalogue: catalogue_report(catalogue),
        notes: &model.notes,
    }
}

/// Counts of the model's parts.
fn summary(model: &TestModel) -> StructureCounts {
    let mut checks_per_variant = BTreeMap::new();
    let mut instances_per_variant = BTreeMap::new();
    let mut steps: Vec<usize> = Vec::new();
    for v in &model.variants {
        checks_per_variant.insert(v.index.to_string(), v.checks.len());
        instances_per_variant.insert(v.index.to_string(), 0);
        if !steps.contains(&v.steps.len()) {
            steps.push(v.steps.len());
        }
    }
    for i in &model.instances {
        *instances_per_variant
            .entry(i.variant.to_string())
            .or_insert(0) += 1;
    }
    StructureCounts {
        variants: model.variants.len(),
        steps_per_variant: steps,
        checks_per_variant,
        instances: model.instances.len(),
        instances_per_variant,
        instance_to_instance_calls: model.instances.iter().map(|i| i.callees.len()).sum(),
        step_to_instance_calls: model
            .variants
            .iter()
            .flat_map(|v| &v.steps)
            .map(|s| s.instances.len())
            .sum(),
        fuzz_regions: model.regions.len(),
        fuzz_regions_in_main: model
            .regions
            .iter()
            .filter(|r| r.function == "main")
            .count(),
        input_blocks: model.input_blocks.len(),
    }
}

/// What the spec catalogue holds.
fn catalogue_report(catalogue: &Catalogue) -> CatalogueReport {
    CatalogueReport {
        headers: catalogue
            .headers
            .iter()
            .map(|h| h.display().to_string())
            .collect(),
        missing: catalogue.missing.clone(),
        missing_includes: catalogue.missing_includes.clone(),
        relations: catalogue
            .mrs
            .iter()
            .filter(|m| m.kind == crate::catalogue::MrKind::Relation)
            .count(),
        generators: catalogue
            .mrs
            .iter()
            .filter(|m| m.kind == crate::catalogue::MrKind::Generator)
            .count(),
        executable_bases: catalogue
            .mrs
            .iter()
            .filter(|m| m.is_base && m.executable && !m.has_fuzz)
            .count(),
        checks: catalogue.checks.clone(),
        reduction_functions: catalogue
            .reducers
            .iter()
            .map(|r| (r.name.clone(), r.return_type.clone()))
            .collect(),
    }
}

/// The human-readable summary.
pub(crate) fn render(report: &Inspection) -> String {
    let mut out = String::new();
    render_summary(&mut out, report);
    render_variants(&mut out, report);
    render_parts(&mut out, report);
    render_catalogue(&mut out, report);
    for n in report.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// `items` written one after the other with `separator` between them.
fn joined(items: impl Iterator<Item = impl std::fmt::Display>, separator: &str) -> String {
    items
        .map(|item| item.to_string())
        .collect::<Vec<_>>()
        .join(separator)
}

/// The first line: sizes and counts.
fn render_summary(out: &mut String, report: &Inspection) {
    let s = &report.summary;
    let _ = writeln!(
        *out,
        "{}: {} bytes, {} variants × {} steps, {} instances, {} fuzz regions ({} in main), {} input blocks",
        report.file,
        report.bytes,
        s.variants,
        joined(s.steps_per_variant.iter(), "/"),
        s.instances,
        s.fuzz_regions,
        s.fuzz_regions_in_main,
        s.input_blocks
    );
}

/// Each variant with its steps (and their instance trees) and checks.
fn render_variants(out: &mut String, report: &Inspection) {
    let by_name: BTreeMap<&str, &Instance> = report
        .instances
        .iter()
        .map(|i| (i.name.as_str(), i))
        .collect();
    for v in report.variants {
        let _ = writeln!(
            out,
            "\nvariant {}{}  ({} steps, {} checks)",
            v.name,
            if v.index == 0 { " (reference)" } else { "" },
            v.steps.len(),
            v.checks.len()
        );
        for (j, step) in v.steps.iter().enumerate() {
            let _ = writeln!(out, "  step {j:<3} {}", step.callee);
            for name in &step.instances {
                tree(out, &by_name, name, 2);
            }
        }
        for c in &v.checks {
            let _ = writeln!(out, "  check    metalib::checks::{}", c.name);
        }
    }
}

/// Unreached instances, fuzz regions and input blocks.
fn render_parts(out: &mut String, report: &Inspection) {
    let orphans: Vec<&str> = report
        .instances
        .iter()
        .filter(|i| i.caller.is_none())
        .map(|i| i.name.as_str())
        .collect();
    if !orphans.is_empty() {
        let _ = writeln!(out, "\nunreached instances: {}", orphans.join(", "));
    }
    if !report.fuzz_regions.is_empty() {
        let _ = writeln!(out, "\nfuzz regions:");
        for r in report.fuzz_regions {
            let _ = writeln!(
                out,
                "  {:<24} in {:<32} {} instructions",
                r.output,
                r.function,
                r.instructions.len()
            );
        }
    }
    if !report.input_blocks.is_empty() {
        let _ = writeln!(out, "\ninput blocks:");
        for b in report.input_blocks {
            let _ = writeln!(out, "  {} {}", b.index, b.output_var);
        }
    }
}

/// Opportunities per kind and the catalogue.
fn render_catalogue(out: &mut String, report: &Inspection) {
    let _ = writeln!(out, "\nopportunities:");
    for (k, n) in &report.opportunities {
        let _ = writeln!(out, "  {k:<10} {n}");
    }
    let c = &report.catalogue;
    let (relations, generators, bases) = (c.relations, c.generators, c.executable_bases);
    let checks = c.checks.join(", ");
    let functions = c
        .reduction_functions
        .iter()
        .map(|(n, t)| format!("{n} -> {t}"));
    let functions = joined(functions, ", ");
    let _ = writeln!(
        *out,
        "\ncatalogue: {relations} relations, {generators} generators, {bases} executable bases, checks [{checks}], reduction functions [{functions}]"
    );
    if !c.missing.is_empty() {
        let _ = writeln!(out, "  includes not found: {}", c.missing.join(", "));
    }
}

fn tree(out: &mut String, by_name: &BTreeMap<&str, &Instance>, name: &str, depth: usize) {
    let Some(inst) = by_name.get(name) else {
        return;
    };
    let family = match (&inst.kind, &inst.family) {
        (Some(k), Some(f)) => format!("  [{}::{}]", k.namespace(), f),
        _ => String::new(),
    };
    let _ = writeln!(out, "{}└ {}{}", "  ".repeat(depth + 1), name, family);
    if depth > 64 {
        return;
    }
    for c in &inst.callees {
        if by_name
            .get(c.as_str())
            .and_then(|i| i.caller.as_ref())
            .is_some_and(|caller| *caller == Caller::Instance(name.to_string()))
        {
            tree(out, by_name, c, depth + 1);
        }
    }
}
