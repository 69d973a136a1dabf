//! Conformance with real MF++ output: `inspect --json` must agree with the structure manifests of
//! `../shared/mfpp-corpus/` and of the bundled fixture corpus, and no candidate a reduction of a
//! real test offers reads a name it no longer declares. It skips (with a message) what is absent
//! (fails under `MFPPR_REQUIRE_TOOLS=1`); never copies the shared files into the repository.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use common::{bin, root, shared};
use mfppr::catalogue::Catalogue;
use mfppr::document::Document;
use mfppr::engine::{Engine, EngineOptions};
use mfppr::model::TestModel;
use mfppr::oracle::{Oracle, Verdict};
use mfppr::passes::{MfppOpportunities, PassOptions};
use serde_json::Value;

const FIELDS: [&str; 10] = [
    "variants",
    "steps_per_variant",
    "checks_per_variant",
    "instances",
    "instances_per_variant",
    "instance_to_instance_calls",
    "step_to_instance_calls",
    "fuzz_regions",
    "fuzz_regions_in_main",
    "input_blocks",
];

fn inspect(file: &Path, includes: &[PathBuf]) -> Value {
    let mut cmd = Command::new(bin());
    cmd.arg("inspect").arg(file).arg("--json");
    for i in includes {
        cmd.arg("-I").arg(i);
    }
    let out = cmd.output().expect("run mfppr");
    assert!(
        out.status.success(),
        "inspect {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON")
}

/// Compare every manifest entry with `inspect --json`; returns the mismatches.
fn check_manifest(dir: &Path, includes: &[PathBuf]) -> Vec<String> {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("manifest is JSON");
    let entries = manifest
        .as_array()
        .cloned()
        .or_else(|| manifest.get("tests").and_then(|t| t.as_array()).cloned())
        .expect("manifest is a list of files");
    let mut problems = Vec::new();
    for entry in &entries {
        let file = entry["file"].as_str().expect("file name");
        let report = inspect(&dir.join(file), includes);
        for field in FIELDS {
            let Some(expected) = entry.get(field) else {
                continue;
            };
            let got = &report["summary"][field];
            if got != expected {
                problems.push(format!("{file}: {field}: expected {expected}, got {got}"));
            }
        }
    }
    assert!(!entries.is_empty(), "empty manifest in {}", dir.display());
    problems
}

#[test]
fn agrees_with_the_real_mfpp_corpus_manifest() {
    let Some(dir) = shared("mfpp-corpus") else {
        return;
    };
    let problems = check_manifest(&dir, &[]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn reads_the_shared_bigint_examples() {
    let Some(dir) = shared("examples") else {
        return;
    };
    let spec = dir.join("bigint-spec");
    let r = inspect(&dir.join("t_bigint_452.cpp"), std::slice::from_ref(&spec));
    assert_eq!(r["summary"]["variants"], 3);
    assert_eq!(r["summary"]["instances"], 11);
    assert_eq!(r["summary"]["instance_to_instance_calls"], 6);
    assert_eq!(r["summary"]["fuzz_regions"], 2);
    assert_eq!(r["summary"]["input_blocks"], 2);
    let fams: Vec<&str> = r["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["family"].as_str().unwrap_or("?"))
        .collect();
    assert!(!fams.contains(&"?"), "every family resolved: {fams:?}");
    let fz = inspect(&dir.join("t_bigint_fz_4.cpp"), &[spec]);
    let in_instances = fz["fuzz_regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["function"] != "main")
        .count();
    assert!(in_instances >= 1, "a region inside an instance");
}

#[test]
fn agrees_with_the_fixture_manifest() {
    let dir = root().join("fixtures/tests");
    assert!(
        dir.join("manifest.json").is_file(),
        "fixtures/tests/manifest.json is part of the repository"
    );
    let problems = check_manifest(&dir, &[root().join("fixtures/iset/spec")]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Names that a function of `candidate` still reads (identifier tokens of its text, string
/// literals and comments aside) which the same function of the original declared in one of its
/// statements and the candidate declares in none: the candidate would not compile. Textual on
/// purpose: it does not share the reader's view of which names a statement reads.
fn undeclared_reads(original: &TestModel, candidate: &[u8], catalogue: &Catalogue) -> Vec<String> {
    let Ok(doc) = Document::parse(candidate.to_vec()) else {
        return vec!["<unreadable candidate>".to_string()];
    };
    let Ok(model) = TestModel::build(&doc, catalogue) else {
        return vec!["<not an MF++ test>".to_string()];
    };
    let declared = |m: &TestModel, function: &str| -> HashSet<String> {
        m.function_stmts(function)
            .iter()
            .filter_map(|s| s.decl.as_ref().map(|d| d.name.clone()))
            .collect()
    };
    let strings = regex::Regex::new(r#""(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*(?s:.*?)\*/"#).unwrap();
    let ident = regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap();
    let mut functions: Vec<(String, std::ops::Range<usize>)> = model
        .instances
        .iter()
        .map(|i| (i.name.clone(), i.span.clone()))
        .collect();
    functions.push(("main".to_string(), model.main_span.clone()));
    let mut dangling = Vec::new();
    for (function, span) in functions {
        let before = declared(original, &function);
        let now = declared(&model, &function);
        let body = String::from_utf8_lossy(&candidate[span]).into_owned();
        let code = strings.replace_all(&body, " ");
        for token in ident.find_iter(&code) {
            let name = token.as_str();
            if before.contains(name) && !now.contains(name) {
                dangling.push(format!("{function}: {name}"));
            }
        }
    }
    dangling.sort();
    dangling.dedup();
    dangling
}

/// Interesting iff the candidate keeps every string; remembers the undeclared reads of every
/// candidate it is asked about.
struct KeepsStrings<'a> {
    keep: Vec<String>,
    original: &'a TestModel,
    catalogue: &'a Catalogue,
    seen: Mutex<(usize, Vec<Vec<String>>)>,
}

impl Oracle for KeepsStrings<'_> {
    fn verdict(&self, candidate: &[u8], _cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        let dangling = undeclared_reads(self.original, candidate, self.catalogue);
        let mut seen = self.seen.lock().unwrap();
        seen.0 += 1;
        if !dangling.is_empty() {
            seen.1.push(dangling);
        }
        let text = String::from_utf8_lossy(candidate);
        Ok(match self.keep.iter().all(|k| text.contains(k.as_str())) {
            true => Verdict::Interesting,
            false => Verdict::Uninteresting,
        })
    }
}

#[test]
fn no_candidate_of_a_real_mfpp_test_reads_a_name_it_no_longer_declares() {
    // Real MF++ output has what the generated fixtures lack: copy chains in fuzz regions, a
    // context built from names (`fuzz::fuzz_context fctx(ctx, fvs);`), setup loops. Each test is
    // reduced in-process with the tail on and an oracle that keeps the middle variant's check and
    // an instance of that variant, so that windows stay large and every kind and the tail run.
    let Some(dir) = shared("mfpp-corpus") else {
        return;
    };
    for name in ["z3_seed10.cpp", "z3_seed1202.cpp", "isl_point_seed2.cpp"] {
        let path = dir.join(name);
        let text = std::fs::read(&path).unwrap();
        let catalogue = Catalogue::load(&path, &text, &[], &[]).unwrap();
        let original =
            TestModel::build(&Document::parse(text.clone()).unwrap(), &catalogue).unwrap();
        let checks: Vec<String> = original
            .variants
            .iter()
            .flat_map(|v| &v.checks)
            .map(|c| String::from_utf8_lossy(&text[c.span.clone()]).into_owned())
            .collect();
        let check = checks[checks.len() / 2].clone();
        let variant = original
            .variants
            .iter()
            .find(|v| {
                v.checks
                    .iter()
                    .any(|c| text[c.span.clone()] == *check.as_bytes())
            })
            .unwrap()
            .index;
        let in_variant: Vec<&str> = original
            .instances
            .iter()
            .filter(|i| i.variant == variant)
            .map(|i| i.name.as_str())
            .collect();
        let instance = in_variant[in_variant.len() / 3].to_string();
        let oracle = KeepsStrings {
            keep: vec![check.clone(), format!("{instance}(")],
            original: &original,
            catalogue: &catalogue,
            seen: Mutex::new((0, Vec::new())),
        };
        let reduction = MfppOpportunities::new(
            catalogue.clone(),
            PassOptions {
                tail: true,
                ..PassOptions::default()
            },
        );
        let stop = AtomicBool::new(false);
        let options = EngineOptions {
            jobs: 1,
            quiet: true,
            ..EngineOptions::default()
        };
        let out = Engine::new(&reduction, &oracle, options, &stop)
            .unwrap()
            .run(text.clone(), &mut |_: &[u8]| Ok(()))
            .unwrap();
        let (judged, dangling) = std::mem::take(&mut *oracle.seen.lock().unwrap());
        assert!(judged > 10, "{name}: {judged} candidates");
        assert!(
            out.len() * 5 < text.len(),
            "{name}: {} -> {} bytes",
            text.len(),
            out.len()
        );
        assert!(
            dangling.is_empty(),
            "{name}: {} of {judged} candidates read names they no longer declare, e.g. {:?}",
            dangling.len(),
            dangling[0]
        );
    }
}
