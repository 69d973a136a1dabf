//! Pass tests on a real MF++-format fixture (`fixtures/tests/iset_pass_tiny.cpp` with its spec):
//! golden diffs per kind against the fixture (`tests/golden/<kind>.diff`, `MFPPR_BLESS=1` rewrites them), the
//! invariants every candidate keeps, and whole reductions driven by in-process fake oracles.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use super::*;

#[allow(dead_code)] // the integration tests use the rest
#[path = "../../tests/common/golden.rs"]
mod golden_files;
use crate::engine::{Engine, EngineOptions};
use crate::oracle::{Oracle, Verdict};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> (Vec<u8>, Catalogue) {
    fixture_named("iset_pass_tiny.cpp")
}

/// The fixture `fixtures/tests/<name>` and its catalogue (the iset spec).
fn fixture_named(name: &str) -> (Vec<u8>, Catalogue) {
    let path = root().join("fixtures/tests").join(name);
    let text = std::fs::read(&path).unwrap();
    let cat = Catalogue::load(&path, &text, &[root().join("fixtures/iset/spec")], &[]).unwrap();
    (text, cat)
}

fn reduction(options: PassOptions) -> (Vec<u8>, MfppOpportunities) {
    let (text, cat) = fixture();
    (text, MfppOpportunities::new(cat, options))
}

fn model_of(text: &[u8], cat: &Catalogue) -> TestModel {
    let doc = Document::parse(text.to_vec()).unwrap();
    TestModel::build(&doc, cat).unwrap()
}

/// The golden diff `tests/golden/<name>.diff`: `got` against the fixture it came from.
fn golden(name: &str, got: &[u8]) {
    let (input, _) = fixture();
    let path = root().join("tests/golden").join(format!("{name}.diff"));
    golden_files::assert_golden_diff(&path, "iset_pass_tiny.cpp", &input, got);
}

#[test]
fn golden_first_candidate_of_each_kind() {
    let (text, red) = reduction(PassOptions {
        tail: true,
        ..PassOptions::default()
    });
    for kind in OpportunityKind::ALL {
        let g = red.gather(&text, kind).unwrap();
        assert!(!g.is_empty(), "{} has opportunities", kind.name());
        let candidate = (0..g.len())
            .find_map(|i| g.candidate(&[i]))
            .expect("an opportunity makes a candidate");
        golden(kind.name(), &candidate);
    }
}

#[test]
fn golden_step_zero_removal_redeclares_the_next_step() {
    let (text, red) = reduction(PassOptions::default());
    let g = red.gather(&text, OpportunityKind::Sequence).unwrap();
    assert_eq!(g.describe(0), "remove step 0 from every variant");
    let c = String::from_utf8(g.candidate(&[0]).unwrap()).unwrap();
    assert!(c.contains(
        "class iset::Set r_0 = subtract_by_unite_0_4(fctx, output_var_0, output_var_0);"
    ));
    assert!(c.contains(
        "class iset::Set r_1 = subtract_by_intersect_1_4(fctx, output_var_0, output_var_0);"
    ));
    // The instances only step 0 reached are swept.
    assert!(!c.contains("iden_by_fuzz_split_0_0"));
    assert!(!c.contains("unite_by_parts_1_2"));
}

#[test]
fn every_single_candidate_is_a_valid_smaller_or_changed_test() {
    let (text, red) = reduction(PassOptions {
        tail: true,
        ..PassOptions::default()
    });
    let (_, cat) = fixture();
    for kind in OpportunityKind::ALL {
        let g = red.gather(&text, kind).unwrap();
        for i in 0..g.len() {
            if let Some(c) = g.candidate(&[i]) {
                assert_ne!(c, text, "{}: no-op candidate", g.describe(i));
                let m = model_of(&c, &cat);
                assert!(m.variants.iter().any(|v| v.index == 0), "r_0 kept");
                assert!(
                    m.variants
                        .iter()
                        .any(|v| v.index != 0 && !v.checks.is_empty()),
                    "{}: an oracle is kept",
                    g.describe(i)
                );
                assert!(
                    m.instances.iter().all(|i| i.caller.is_some()),
                    "no orphan left"
                );
            }
        }
    }
}

#[test]
fn the_last_variant_and_the_last_step_cannot_go() {
    let (text, red) = reduction(PassOptions::default());
    let g = red.gather(&text, OpportunityKind::Variant).unwrap();
    // r_1 is the only non-reference variant: removing it alone, or with its checks, is refused.
    assert_eq!(g.describe(0), "remove variant r_1");
    assert!(g.candidate(&[0]).is_none());
    assert!(g.candidate(&(0..g.len()).collect::<Vec<_>>()).is_none());
    // One of the two checks may go.
    assert!(g.candidate(&[1]).is_some());
    let s = red.gather(&text, OpportunityKind::Sequence).unwrap();
    assert!(
        s.candidate(&(0..s.len()).collect::<Vec<_>>()).is_none(),
        "at least one step stays"
    );
}

#[test]
fn a_variant_no_check_reads_is_offered_first() {
    let (text, cat) = fixture_named("iset_subtract_small_b.cpp");
    let red = MfppOpportunities::new(cat, PassOptions::default());
    let g = red.gather(&text, OpportunityKind::Variant).unwrap();
    // Every variant is checked: in index order, then the checks.
    assert_eq!(g.describe(0), "remove variant r_1");
    assert_eq!(g.describe(1), "remove variant r_2");
    let r_2_checks: Vec<usize> = (0..g.len())
        .filter(|&i| g.describe(i).ends_with("of r_2"))
        .collect();
    assert_eq!(r_2_checks.len(), 2);
    let unchecked = g.candidate(&r_2_checks).expect("r_1 keeps the oracle");
    // r_2 has no check left: its removal comes first, so a window of the first half of the
    // opportunities removes it and keeps r_1 with its checks.
    let g = red.gather(&unchecked, OpportunityKind::Variant).unwrap();
    assert_eq!(g.describe(0), "remove variant r_2");
    assert_eq!(g.describe(1), "remove variant r_1");
    assert!(g.candidate(&[0]).is_some());
}

#[test]
fn drop_oracle_allows_removing_every_variant_but_r_0() {
    let (text, red) = reduction(PassOptions {
        drop_oracle: true,
        ..PassOptions::default()
    });
    let g = red.gather(&text, OpportunityKind::Variant).unwrap();
    let c = g.candidate(&[0]).expect("allowed with --drop-oracle");
    let m = model_of(&c, &fixture().1);
    assert_eq!(m.variants.len(), 1);
    assert_eq!(m.variants[0].index, 0);
}

#[test]
fn keep_checks_offers_no_check_removal() {
    let (text, red) = reduction(PassOptions {
        keep_checks: true,
        ..PassOptions::default()
    });
    let g = red.gather(&text, OpportunityKind::Variant).unwrap();
    assert_eq!(g.len(), 1, "only the variant itself");
}

#[test]
fn folding_uses_the_family_base_and_sweeps_the_chain() {
    let (text, red) = reduction(PassOptions::default());
    let g = red.gather(&text, OpportunityKind::Recursion).unwrap();
    let i = (0..g.len())
        .find(|&i| {
            g.describe(i) == "fold subtract_by_unite_0_4 to metalib::relations::subtract::base"
        })
        .expect("fold of a step-level instance");
    let c = String::from_utf8(g.candidate(&[i]).unwrap()).unwrap();
    assert!(c.contains("r_0 = metalib::relations::subtract::base(fctx, r_0, output_var_0);"));
    assert!(!c.contains("subtract_by_unite_0_4"));
    assert!(
        !c.contains("subtract_by_unite_0_6"),
        "its callee is swept too"
    );
    let h = (0..g.len())
        .find(|&i| {
            g.describe(i) == "hoist subtract_by_unite_0_6 into the call of subtract_by_unite_0_4"
        })
        .expect("same-family hoist");
    let c = String::from_utf8(g.candidate(&[h]).unwrap()).unwrap();
    assert!(c.contains("r_0 = subtract_by_unite_0_6(fctx, r_0, output_var_0);"));
    assert!(!c.contains("subtract_by_unite_0_4("));
}

#[test]
fn fuzz_reduction_uses_the_reduction_function_and_sweeps_dead_instructions() {
    let (text, red) = reduction(PassOptions::default());
    let g = red.gather(&text, OpportunityKind::Fuzz).unwrap();
    let i = (0..g.len())
        .find(|&i| g.describe(i) == "reduce set_term_14 to mfr_set_term")
        .expect("reduction of a region output");
    let c = String::from_utf8(g.candidate(&[i]).unwrap()).unwrap();
    assert!(c.contains("fuzz::set_term set_term_14 = mfr_set_term(fctx);"));
    for dead in [
        "set_term_8",
        "int_term_9",
        "int_term_10",
        "int_term_11",
        "int_term_12",
    ] {
        assert!(!c.contains(dead), "{dead} is swept");
    }
    // Inside an instance the context variable is the MR's parameter.
    let j = (0..g.len())
        .find(|&i| g.describe(i) == "reduce set_term_22 to mfr_set_term")
        .unwrap();
    let c = String::from_utf8(g.candidate(&[j]).unwrap()).unwrap();
    assert!(c.contains("fuzz::set_term set_term_22 = mfr_set_term(ctx);"));
}

/// The test runs a computation nothing reads all the same: where the failure is one of them, the
/// sweep keeps it when told to, with what it reads, and no other.
#[test]
fn the_sweep_keeps_an_unread_computation_it_is_told_to_keep_with_what_it_reads() {
    let (text, red) = reduction(PassOptions::default());
    let unread = red.unread_computations(&text);
    assert!(
        unread.contains(&vec!["int_term_12".to_string()]),
        "{unread:?}"
    );
    let decl = |c: &str, name: &str| c.contains(&format!(" {name} = "));
    let all = String::from_utf8(red.swept(&text, &HashSet::new()).unwrap()).unwrap();
    assert!(!decl(&all, "int_term_12"));
    let keep: HashSet<String> = ["int_term_12".to_string()].into();
    let kept = String::from_utf8(red.swept(&text, &keep).unwrap()).unwrap();
    assert!(decl(&kept, "int_term_12"));
    assert!(kept.len() < text.len(), "the other unread computations go");

    red.keep_computations(["int_term_10".to_string()].into());
    let g = red.gather(&text, OpportunityKind::Fuzz).unwrap();
    let i = (0..g.len())
        .find(|&i| g.describe(i) == "reduce set_term_14 to mfr_set_term")
        .unwrap();
    let c = String::from_utf8(g.candidate(&[i]).unwrap()).unwrap();
    for name in ["int_term_10", "int_term_9", "set_term_8"] {
        assert!(decl(&c, name), "{name} is kept");
    }
    for name in ["int_term_11", "int_term_12", "int_term_13"] {
        assert!(!decl(&c, name), "{name} is swept");
    }
}

/// An in-process oracle: interesting iff the predicate holds on the text.
struct Fake<F: Fn(&str) -> bool + Sync>(F);

impl<F: Fn(&str) -> bool + Sync> Oracle for Fake<F> {
    fn verdict(&self, candidate: &[u8], _cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        Ok(if (self.0)(&String::from_utf8_lossy(candidate)) {
            Verdict::Interesting
        } else {
            Verdict::Uninteresting
        })
    }
}

fn reduce_with(pred: impl Fn(&str) -> bool + Sync, jobs: usize) -> Vec<u8> {
    reduce_with_options(pred, jobs, PassOptions::default())
}

fn reduce_with_options(
    pred: impl Fn(&str) -> bool + Sync,
    jobs: usize,
    options: PassOptions,
) -> Vec<u8> {
    let (text, red) = reduction(options);
    run_engine(&red, text, &Fake(pred), jobs)
}

/// The engine's result on `text` with `oracle`, quiet.
fn run_engine(red: &MfppOpportunities, text: Vec<u8>, oracle: &dyn Oracle, jobs: usize) -> Vec<u8> {
    let stop = AtomicBool::new(false);
    let options = EngineOptions {
        jobs,
        quiet: true,
        ..EngineOptions::default()
    };
    let mut engine = Engine::new(red, oracle, options, &stop).unwrap();
    engine.run(text, &mut |_: &[u8]| Ok(())).unwrap()
}

#[test]
fn fake_oracles_drive_whole_reductions_to_small_valid_tests() {
    let cat = fixture().1;
    type Predicate = Box<dyn Fn(&str) -> bool + Sync>;
    let predicates: Vec<(&str, Predicate)> = vec![
        (
            "check_equal kept",
            Box::new(|t: &str| t.contains("check_equal")),
        ),
        ("hull kept", Box::new(|t: &str| t.contains("iset::hull"))),
        ("anything", Box::new(|_: &str| true)),
    ];
    let original = fixture().0;
    for (name, pred) in predicates {
        let out = reduce_with(|t| pred(t), 2);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(pred(&text), "{name}: result is interesting");
        assert!(out.len() < original.len(), "{name}: smaller");
        let m = model_of(&out, &cat);
        assert!(m.variants.len() >= 2, "{name}: r_0 and another variant");
        assert!(
            m.variants.iter().any(|v| !v.checks.is_empty()),
            "{name}: a check"
        );
    }
}

#[test]
fn the_same_fake_reduction_for_every_job_count() {
    let pred = |t: &str| t.contains("iset::subtract(a, b)") && t.contains("check_card");
    let original = fixture().0;
    let one = reduce_with(pred, 1);
    // A search that reduced nothing would give the same bytes at every job count.
    assert!(
        one.len() < original.len(),
        "-j1 reduced nothing: {} of {} bytes left",
        one.len(),
        original.len()
    );
    assert!(
        pred(&String::from_utf8_lossy(&one)),
        "-j1 result is interesting"
    );
    for jobs in [2, 4] {
        assert_eq!(reduce_with(pred, jobs), one, "jobs = {jobs}");
    }
}

#[test]
fn counts_match_what_gather_lists() {
    let (text, cat) = fixture();
    let m = model_of(&text, &cat);
    let counts = count_opportunities(&text, &m, &cat);
    let red = MfppOpportunities::new(cat, PassOptions::default());
    for kind in OpportunityKind::ALL {
        let listed = red.gather(&text, kind).unwrap().len();
        assert_eq!(counts.get(&kind).copied().unwrap_or(0), listed);
        assert!(
            !kind.is_tail() || listed == 0,
            "tail kinds only with tail on"
        );
    }
}

fn tail_on() -> PassOptions {
    PassOptions {
        tail: true,
        ..PassOptions::default()
    }
}

/// The candidate of the first opportunity of `kind` whose description starts with `what`.
fn tail_candidate(
    red: &MfppOpportunities,
    text: &[u8],
    kind: OpportunityKind,
    what: &str,
) -> String {
    let g = red.gather(text, kind).unwrap();
    let i = (0..g.len())
        .find(|&i| g.describe(i).starts_with(what))
        .unwrap_or_else(|| {
            panic!(
                "no `{what}` among {:?}",
                (0..g.len()).map(|i| g.describe(i)).collect::<Vec<_>>()
            )
        });
    String::from_utf8(g.candidate(&[i]).expect("a candidate")).unwrap()
}

#[test]
fn tail_identity_calls_become_their_argument() {
    let (text, red) = reduction(tail_on());
    // An instance of an identity family is recursion folding's: its base was tried already.
    let g = red.gather(&text, OpportunityKind::TailEquivalence).unwrap();
    assert!((0..g.len()).all(|i| !g.describe(i).contains("iden_by_fuzz_split_0_0")));
    // A call of the family's base MR becomes its argument.
    let t = String::from_utf8(text.clone()).unwrap().replace(
        "r_0 = iden_by_fuzz_split_0_0(",
        "r_0 = metalib::relations::identity::base(",
    );
    let c = tail_candidate(
        &red,
        t.as_bytes(),
        OpportunityKind::TailEquivalence,
        "replace the identity call metalib::relations::identity::base by its argument",
    );
    assert!(c.contains("class iset::Set r_0 = output_var_0;\n"));
    // The chain only the replaced call reached is swept.
    assert!(!c.contains("iden_by_fuzz_split_0_0"));
    assert!(
        c.contains("unite_by_parts_1_2"),
        "the other variant's chain stays"
    );
}

#[test]
fn tail_leaves_a_call_of_an_identity_mr_that_calls_the_library() {
    // `iden_by_unite_self` is of the identity family but computes `unite(a, a)`: taking its call
    // out takes a library call out, and with several bugs on, the test's own may go (a slip).
    let (text, red) = reduction(tail_on());
    let t = String::from_utf8(text).unwrap().replace(
        "r_0 = iden_by_fuzz_split_0_0(",
        "r_0 = metalib::relations::identity::iden_by_unite_self(",
    );
    assert!(t.contains("identity::iden_by_unite_self("));
    let g = red
        .gather(t.as_bytes(), OpportunityKind::TailEquivalence)
        .unwrap();
    let offered: Vec<String> = (0..g.len()).map(|i| g.describe(i)).collect();
    assert!(
        offered.iter().all(|d| !d.contains("iden_by_unite_self")),
        "{offered:?}"
    );
    // The family's base, which only returns its argument, still goes.
    let base = t.replace("identity::iden_by_unite_self(", "identity::base(");
    tail_candidate(
        &red,
        base.as_bytes(),
        OpportunityKind::TailEquivalence,
        "replace the identity call metalib::relations::identity::base by its argument",
    );
}

#[test]
fn tail_identity_of_the_assigned_variable_deletes_the_assignment() {
    // Folding `r_0 = iden_…(fctx, r_0)` to the family's base leaves an identity call of the
    // variable it assigns: the statement goes rather than becoming `r_0 = r_0;`.
    let (text, red) = reduction(tail_on());
    let t = String::from_utf8(text).unwrap().replace(
        "r_0 = subtract_by_unite_0_4(fctx, r_0, output_var_0);",
        "r_0 = metalib::relations::identity::base(fctx, r_0);\n\
         r_0 = subtract_by_unite_0_4(fctx, r_0, output_var_0);",
    );
    let c = tail_candidate(
        &red,
        t.as_bytes(),
        OpportunityKind::TailEquivalence,
        "delete `r_0 = …` (the identity call metalib::relations::identity::base of r_0)",
    );
    assert!(!c.contains("identity::base"));
    assert!(!c.contains("r_0 = r_0;"));
    assert!(c.contains("\nr_0 = subtract_by_unite_0_4(fctx, r_0, output_var_0);"));
}

#[test]
fn tail_tidy_moves_a_block_with_its_statement() {
    // Real MF++ instances hold blocks (`if (b) { return …; }`), indented with their body: the
    // block's lines move as far as its first line does.
    let (text, red) = reduction(tail_on());
    let t = String::from_utf8(text).unwrap().replace(
        "        fuzz::set_term f = set_term_22;\n",
        "        fuzz::set_term f = set_term_22;\n        if (true)\n        {\n            \
         f = set_term_22;\n        }\n",
    );
    let c = tail_candidate(
        &red,
        t.as_bytes(),
        OpportunityKind::TailTidy,
        "reindent the definitions and main",
    );
    assert!(
        c.contains("    fuzz::set_term f = set_term_22;\n    if (true)\n    {\n        f = set_term_22;\n    }\n"),
        "{c}"
    );
}

#[test]
fn tail_wrappers_are_inlined_with_the_callers_arguments() {
    let (text, cat) = fixture_named("iset_pass_small.cpp");
    let red = MfppOpportunities::new(cat, tail_on());
    let c = tail_candidate(
        &red,
        &text,
        OpportunityKind::TailEquivalence,
        "inline the wrapper empty_by_subtract_self_0_2",
    );
    assert!(c.contains("fuzz::set_term e = metalib::relations::subtract::base(ctx, a, a);"));
    assert!(!c.contains("empty_by_subtract_self_0_2"));
}

#[test]
fn tail_a_call_of_a_copy_of_an_instance_calls_the_first_one() {
    let (text, red) = reduction(tail_on());
    let copy = "fuzz::set_term\n  subtract_by_unite_1_9(fuzz::fuzz_context ctx, fuzz::set_term a, \
                fuzz::set_term b)\n  {\n    fuzz::set_term u = metalib::relations::unite::base(ctx, \
                a, b);\n    return subtract_by_unite_0_6(ctx, u, b);\n  }\n";
    let t = String::from_utf8(text.clone())
        .unwrap()
        .replacen(
            "    fuzz::set_term\n    unite_by_parts_1_2(",
            &format!("{copy}    fuzz::set_term\n    unite_by_parts_1_2("),
            1,
        )
        .replace(
            "r_1 = subtract_by_intersect_1_4(",
            "r_1 = subtract_by_unite_1_9(",
        );
    assert!(t.contains("subtract_by_unite_1_9(fuzz::fuzz_context"));
    let c = tail_candidate(
        &red,
        t.as_bytes(),
        OpportunityKind::TailEquivalence,
        "call subtract_by_unite_0_4 instead of its copy subtract_by_unite_1_9",
    );
    assert!(c.contains("r_1 = subtract_by_unite_0_4(fctx, r_1, output_var_0);"));
    // The copy, called no more, is swept.
    assert!(!c.contains("subtract_by_unite_1_9"), "{c}");
    // The fixture holds one copy already (MF++ transplants the same MR twice): only that one is
    // offered, not instances that differ in more than their name.
    let g = red.gather(&text, OpportunityKind::TailEquivalence).unwrap();
    let copies: Vec<String> = (0..g.len())
        .map(|i| g.describe(i))
        .filter(|d| d.contains("instead of its copy"))
        .collect();
    assert_eq!(
        copies,
        ["call unite_by_parts_0_2 instead of its copy unite_by_parts_1_2"]
    );
}

#[test]
fn tail_inputs_go_with_what_only_they_read_but_only_before_the_first_variant() {
    let (text, red) = reduction(tail_on());
    let c = tail_candidate(
        &red,
        &text,
        OpportunityKind::TailInputs,
        "delete the input statement `output_var_0 = iset::unite(output_var_0, set_term_14);` \
         and the ",
    );
    assert!(!c.contains("output_var_0 = iset::unite"));
    assert!(
        !c.contains("set_term_14 ="),
        "what only it read goes with it"
    );
    assert!(!c.contains("int_term_13 ="), "and what only that read");
    let g = red.gather(&text, OpportunityKind::TailInputs).unwrap();
    let t = String::from_utf8(text.clone()).unwrap();
    let from = t.find("// Meta test 0").unwrap();
    let to = t.find("check_equal(r_1, r_0);").unwrap();
    let variants = &t[from..to];
    for i in 0..g.len() {
        assert!(!g.describe(i).contains("literal"), "{}", g.describe(i));
        if let Some(c) = g.candidate(&[i]) {
            let c = String::from_utf8(c).unwrap();
            assert!(c.contains(variants), "{} keeps the variants", g.describe(i));
        }
    }
    // A single-use value moves into its reader (a value-preserving rewrite).
    let g = red.gather(&text, OpportunityKind::TailEquivalence).unwrap();
    assert!((0..g.len()).any(|i| g.describe(i).starts_with("move the value of ")));
}

#[test]
fn the_combined_tail_candidate_is_every_value_preserving_kind_at_once() {
    let (text, red) = reduction(tail_on());
    let g = red.gather(&text, OpportunityKind::Tail).unwrap();
    assert_eq!(g.len(), 1);
    let c = g.candidate(&[0]).unwrap();
    crate::model::check_is_mfpp_test(&c).unwrap();
    // Nothing of the three kinds is left on its result; the input deletions are not in it.
    for kind in [
        OpportunityKind::TailEquivalence,
        OpportunityKind::TailText,
        OpportunityKind::TailTidy,
    ] {
        let left = red.gather(&c, kind).unwrap();
        assert!(
            left.is_empty(),
            "{} left: {}",
            kind.name(),
            left.describe(0)
        );
    }
    let inputs = |t: &[u8]| red.gather(t, OpportunityKind::TailInputs).unwrap().len();
    assert!(inputs(&c) > 0);
    assert!(g.describe(0).starts_with("every tail edit at once: "));
    // Without the tail there is nothing to combine.
    let off = MfppOpportunities::new(fixture().1, PassOptions::default());
    assert!(off.gather(&text, OpportunityKind::Tail).unwrap().is_empty());
}

#[test]
fn the_tail_all_candidate_is_every_input_deletion_then_the_combined_candidate() {
    let (text, red) = reduction(tail_on());
    let inputs = red.gather(&text, OpportunityKind::TailInputs).unwrap();
    let all: Vec<usize> = (0..inputs.len()).collect();
    let deleted = inputs.candidate(&all).unwrap();
    let combined = red.gather(&deleted, OpportunityKind::Tail).unwrap();
    let g = red.gather(&text, OpportunityKind::TailAll).unwrap();
    assert_eq!(g.len(), 1);
    assert_eq!(g.candidate(&[0]), combined.candidate(&[0]));
    assert!(
        g.describe(0).starts_with(&format!(
            "{} input deletions, then every tail edit at once: ",
            all.len()
        )),
        "{}",
        g.describe(0)
    );
    // Without the tail there is nothing to combine.
    let off = MfppOpportunities::new(fixture().1, PassOptions::default());
    assert!(off
        .gather(&text, OpportunityKind::TailAll)
        .unwrap()
        .is_empty());
}

#[test]
fn golden_whole_window_of_each_text_and_tidy_kind() {
    let (text, red) = reduction(tail_on());
    for kind in [OpportunityKind::TailText, OpportunityKind::TailTidy] {
        let g = red.gather(&text, kind).unwrap();
        let c = g
            .candidate(&(0..g.len()).collect::<Vec<_>>())
            .expect("the whole window is a valid test");
        crate::model::check_is_mfpp_test(&c).unwrap();
        golden(&format!("{}_all", kind.name()), &c);
    }
}

#[test]
fn golden_fake_reduction_with_tail_is_smaller_and_the_same_for_every_job_count() {
    let pred = |t: &str| {
        t.contains("iset::subtract(a, b)")
            && t.contains("check_card")
            && t.contains("#include \"iset.h\"")
            && t.contains("iset::from_point(")
    };
    let without = reduce_with_options(pred, 2, PassOptions::default());
    let with = reduce_with_options(pred, 1, tail_on());
    assert!(
        with.len() < without.len(),
        "{} < {}",
        with.len(),
        without.len()
    );
    for jobs in [2, 4] {
        assert_eq!(
            reduce_with_options(pred, jobs, tail_on()),
            with,
            "jobs = {jobs}"
        );
    }
    let t = String::from_utf8(with.clone()).unwrap();
    assert!(!t.contains("mfr_fuzz_start"), "markers gone");
    assert!(
        !t.contains("Template initialisation"),
        "template comments gone"
    );
    assert!(t.contains("// Meta test 1"), "variant headers stay");
    crate::model::check_is_mfpp_test(&with).unwrap();
    golden("tail_reduction", &with);
}

/// A step's fingerprint does not depend on its position: after an earlier step goes, the same
/// step (now one position earlier) is the same opportunity for edit caching.
#[test]
fn a_step_keeps_its_fingerprint_when_an_earlier_step_goes() {
    // A test with three steps in each variant.
    let (text, cat) = fixture_named("iset_merge_small_a.cpp");
    let red = MfppOpportunities::new(cat, PassOptions::default());
    let find = |g: &dyn Gathered, what: &str| {
        (0..g.len())
            .find(|&i| g.describe(i) == format!("remove step {what} from every variant"))
            .unwrap_or_else(|| panic!("no opportunity to remove step {what}"))
    };
    let g = red.gather(&text, OpportunityKind::Sequence).unwrap();
    let fingerprint = g.fingerprint(find(&*g, "2")).unwrap();
    let shorter = g.candidate(&[find(&*g, "1")]).unwrap();
    let g2 = red.gather(&shorter, OpportunityKind::Sequence).unwrap();
    let moved = find(&*g2, "1");
    assert_eq!(g2.fingerprint(moved), Some(fingerprint));
    // The other step keeps another fingerprint.
    let other = find(&*g2, "0");
    assert_ne!(g2.fingerprint(other), Some(fingerprint));
}

/// A deletion takes its line's newline with it, so a neighbouring line is not part of what it
/// touches: once the line below or above it goes, an input deletion is the same opportunity
/// (the same fingerprint) for edit caching and implied rejections (yices_14: `yices_init();`
/// was judged again after the line below it went).
#[test]
fn an_input_deletion_keeps_its_fingerprint_when_a_neighbouring_line_goes() {
    let (text, red) = reduction(tail_on());
    let setup = "    fuzz::fuzz_context fctx(-48, 48);\n";
    let lines = "    iset::Set unread_a = iset::from_point(1);\n    \
                 iset::Set unread_b = iset::from_point(2);\n    \
                 iset::Set unread_c = iset::from_point(3);\n";
    let text = String::from_utf8(text)
        .unwrap()
        .replacen(setup, &format!("{setup}{lines}"), 1);
    let find = |g: &dyn Gathered, name: &str| {
        let what = format!("delete the input declaration `iset::Set {name} = ");
        (0..g.len())
            .find(|&i| g.describe(i).starts_with(&what))
            .unwrap_or_else(|| panic!("no deletion of {name}"))
    };
    let g = red
        .gather(text.as_bytes(), OpportunityKind::TailInputs)
        .unwrap();
    let before = |name| g.fingerprint(find(&*g, name)).unwrap();
    let (a, c) = (before("unread_a"), before("unread_c"));
    assert_ne!(a, c);
    let without_b = g.candidate(&[find(&*g, "unread_b")]).unwrap();
    assert!(!String::from_utf8_lossy(&without_b).contains("unread_b"));
    let g2 = red.gather(&without_b, OpportunityKind::TailInputs).unwrap();
    assert_eq!(
        g2.fingerprint(find(&*g2, "unread_a")),
        Some(a),
        "the line below went"
    );
    assert_eq!(
        g2.fingerprint(find(&*g2, "unread_c")),
        Some(c),
        "the line above went"
    );
}

/// Region variables of `model`'s original text that `candidate` still names but no longer
/// defines (a read of a variable that is gone: the test no longer compiles).
fn dangling_region_reads(original: &TestModel, candidate: &[u8], cat: &Catalogue) -> Vec<String> {
    let text = String::from_utf8_lossy(candidate);
    let defined: HashSet<String> = model_of(candidate, cat)
        .regions
        .iter()
        .flat_map(|r| r.instructions.iter().filter_map(|i| i.defines.clone()))
        .collect();
    let named = |name: &str| {
        text.match_indices(name).any(|(at, _)| {
            let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            let bytes = text.as_bytes();
            (at == 0 || !ident(bytes[at - 1]))
                && bytes.get(at + name.len()).is_none_or(|&b| !ident(b))
        })
    };
    let mut dangling: Vec<String> = original
        .regions
        .iter()
        .flat_map(|r| r.instructions.iter().filter_map(|i| i.defines.clone()))
        .filter(|name| !defined.contains(name) && named(name))
        .collect();
    dangling.sort();
    dangling.dedup();
    dangling
}

#[test]
fn fuzz_opportunities_taken_together_leave_no_read_of_a_deleted_variable() {
    // Real MF++ regions have copies (`T x = y;`) in chains, and outputs that copy a value read
    // nowhere else: copy propagation and moving a value copy names and initialisers that another
    // opportunity of the same window may delete the definition of.
    let (text, cat) = fixture();
    let region = "\tfuzz::int_term int_term_17 = -8;
\tfuzz::set_term set_term_18 = iset::intersect(a, a);
\tfuzz::set_term set_term_19 = iset::unite(a, set_term_18);
\t
\tfuzz::int_term int_term_20 = 4;
\tfuzz::int_term int_term_21 = iset::upper(set_term_19);
\tfuzz::set_term set_term_22 = iset::subtract(a, a);
";
    let chains = "\tfuzz::set_term set_term_17 = iset::intersect(a, a);
\tfuzz::set_term set_term_18 = set_term_17;
\tfuzz::set_term set_term_19 = set_term_18;
\tfuzz::set_term set_term_20 = set_term_19;
\tfuzz::set_term set_term_21 = iset::unite(set_term_20, set_term_18);
\tfuzz::set_term set_term_22 = set_term_21;
";
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(region));
    let text = text.replace(region, chains).into_bytes();
    let original = model_of(&text, &cat);
    let red = MfppOpportunities::new(cat.clone(), PassOptions::default());
    let g = red.gather(&text, OpportunityKind::Fuzz).unwrap();
    let n = g.len();
    let describe = |w: &[usize]| w.iter().map(|&i| g.describe(i)).collect::<Vec<_>>();
    for what in [
        "replace set_term_18 by set_term_17",
        "move the value of set_term_21 into set_term_22",
    ] {
        assert!(
            describe(&(0..n).collect::<Vec<_>>())
                .iter()
                .any(|d| d == what),
            "{what}"
        );
    }
    let mut windows: Vec<Vec<usize>> = vec![(0..n).collect()];
    for i in 0..n {
        for j in i + 1..n {
            windows.push(vec![i, j]);
        }
    }
    for window in windows {
        let Some(c) = g.candidate(&window) else {
            continue;
        };
        let dangling = dangling_region_reads(&original, &c, &cat);
        assert!(
            dangling.is_empty(),
            "{:?} together read {dangling:?}, which they delete",
            describe(&window)
        );
    }
}

#[test]
fn no_candidate_of_a_whole_reduction_reads_a_deleted_variable() {
    // Every candidate the engine offers, on fixtures whose regions hold copies and outputs that
    // copy a value, with oracles that keep a value (so that fuzz windows of copies and moves are
    // taken on later texts). Each oracle here was offered such candidates before windows left
    // out conflicting opportunities.
    let cases = [
        (
            "iset_bound_small_b.cpp",
            ["lo_3 + len_3", "iset::complement", "set_term_20"],
        ),
        (
            "iset_subtract_small_a.cpp",
            ["iset::intersect", "= 4;", "set_term_20"],
        ),
    ];
    for (name, keeps) in cases {
        let (text, cat) = fixture_named(name);
        let original = model_of(&text, &cat);
        for keep in keeps {
            let red = MfppOpportunities::new(cat.clone(), PassOptions::default());
            let seen = std::sync::Mutex::new((0, Vec::new()));
            let oracle = Fake(|t: &str| {
                let dangling = dangling_region_reads(&original, t.as_bytes(), &cat);
                let mut seen = seen.lock().unwrap();
                seen.0 += 1;
                if !dangling.is_empty() {
                    seen.1.push(dangling);
                }
                t.contains(keep)
            });
            let out = run_engine(&red, text.clone(), &oracle, 1);
            let (judged, dangling) = std::mem::take(&mut *seen.lock().unwrap());
            assert!(judged > 10, "{name}, {keep}: {judged} candidates");
            assert!(out.len() < text.len() / 4, "{name}, {keep}: reduced");
            assert!(
                dangling.is_empty(),
                "{name}, {keep}: candidates read {dangling:?}"
            );
        }
    }
}

#[test]
fn a_declaration_read_by_a_context_built_from_names_stays() {
    // Real MF++ output for z3 builds the context from names: `fuzz::fuzz_context fctx(ctx, fvs);`
    // after a setup loop that fills `fvs` (tree-sitter reads the declaration as a function's).
    let (text, red) = reduction(tail_on());
    let t = String::from_utf8(text).unwrap().replace(
        "    fuzz::fuzz_context fctx(-48, 48);\n",
        "    long lo = -48;\n    long hi = 0;\n    for (int i = 0; i < 48; ++i)\n    {\n        \
         hi = hi + 1;\n    }\n    fuzz::fuzz_context fctx(lo, hi);\n",
    );
    assert!(t.contains("fctx(lo, hi)"));
    let g = red
        .gather(t.as_bytes(), OpportunityKind::TailInputs)
        .unwrap();
    let loop_op = (0..g.len())
        .find(|&i| {
            g.describe(i)
                .starts_with("delete the input setup statement `for")
        })
        .expect("the setup loop may go");
    let c = String::from_utf8(g.candidate(&[loop_op]).unwrap()).unwrap();
    assert!(!c.contains("for (int i"), "{c}");
    assert!(c.contains("long hi = 0;"), "the context still reads hi");
    for i in 0..g.len() {
        if let Some(c) = g.candidate(&[i]) {
            let c = String::from_utf8(c).unwrap();
            for decl in ["long lo = -48;", "long hi = 0;"] {
                assert!(
                    c.contains(decl) || !c.contains("fctx(lo, hi)"),
                    "{}: {decl} goes, fctx still reads it",
                    g.describe(i)
                );
            }
        }
    }
}

#[test]
fn the_guided_cut_keeps_the_failing_check_and_the_calls_the_wrong_value_is_computed_in() {
    let (text, red) = reduction(PassOptions::default());
    let has = |t: &[u8], s: &str| String::from_utf8_lossy(t).contains(s);
    // The program failed in r_1's second check; the wrong value is computed in
    // `unite_by_parts_0_2`, called from `iden_by_fuzz_split_0_0`.
    let keep: BTreeSet<String> = ["unite_by_parts_0_2", "iden_by_fuzz_split_0_0"]
        .map(String::from)
        .into();
    let cut = red.guided_cut(&text, &[(1, 1)], Some(&keep)).unwrap();
    assert!(!has(&cut, "check_card(r_1, r_0)"));
    assert!(has(&cut, "check_equal(r_1, r_0)"));
    assert!(has(
        &cut,
        "r_0 = iden_by_fuzz_split_0_0(fctx, output_var_0)"
    ));
    assert!(has(&cut, "return unite_by_parts_0_2(ctx, in, out)"));
    // Every other instance call is folded to its family's base.
    for folded in ["subtract_by_unite_0_4(fctx", "iden_by_unite_empty_1_0(fctx"] {
        assert!(!has(&cut, folded), "{folded}");
    }
    assert!(model_of(&cut, red.catalogue()).variants.len() == 2);
    // With no culprit named, nothing is folded; the variant's other check still goes.
    let cut = red.guided_cut(&text, &[(1, 1)], None).unwrap();
    assert!(has(&cut, "subtract_by_unite_0_4(fctx") && !has(&cut, "check_card(r_1"));
    // Nothing to cut: no check known and no culprit.
    assert_eq!(red.guided_cut(&text, &[], None), None);
}

/// The check cut keeps every failing check's variant, each with only those checks; every other
/// variant goes (issue 60).
#[test]
fn the_check_cut_keeps_each_failing_checks_variant_with_only_that_check() {
    let (text, cat) = fixture_named("iset_merge_small_a.cpp");
    let red = MfppOpportunities::new(cat, PassOptions::default());
    let cut = |kept: &[(usize, usize)]| {
        String::from_utf8(red.guided_cut(&text, kept, None).unwrap()).unwrap()
    };
    let both = cut(&[(1, 1), (2, 1)]);
    for (kept, gone) in [
        ("check_equal(r_1, r_0)", "check_card(r_1, r_0)"),
        ("check_equal(r_2, r_0)", "check_card(r_2, r_0)"),
    ] {
        assert!(both.contains(kept) && !both.contains(gone), "{kept}");
    }
    let indices = |t: &str| -> Vec<usize> {
        let model = model_of(t.as_bytes(), red.catalogue());
        model.variants.iter().map(|v| v.index).collect()
    };
    assert_eq!(indices(&both), vec![0, 1, 2]);
    let second = cut(&[(2, 1)]);
    assert_eq!(indices(&second), vec![0, 2]);
    assert!(second.contains("check_equal(r_2, r_0)") && !second.contains("check_card"));
}

/// A `#define` the build reads is not offered: one a header of the `EXECUTE` build names
/// (`iset.h`'s fault switch), one the test's own code reads; one only the other build's header
/// names, and one nothing reads, are (issue 60).
#[test]
fn tail_text_keeps_a_define_the_build_reads() {
    let (text, red) = reduction(tail_on());
    let text = String::from_utf8(text).unwrap();
    let defines =
        "#define ISET_BUG_MERGE\n#define _ISET_SPEC_DEFS_HPP\n#define UNREAD 3\n#define BOUND 48\n";
    let text = format!("{defines}{}", text).replace("fctx(-48, 48)", "fctx(-BOUND, BOUND)");
    let g = red
        .gather(text.as_bytes(), OpportunityKind::TailText)
        .unwrap();
    let offered: Vec<String> = (0..g.len())
        .map(|i| g.describe(i))
        .filter(|d| d.contains("#define"))
        .collect();
    assert_eq!(
        offered,
        [
            "delete `#define _ISET_SPEC_DEFS_HPP`",
            "delete `#define UNREAD 3`"
        ]
    );
}
