//! Blame (design §10.3): each non-base MR call or instance call of a reduced test is folded to
//! its family's base MR, one at a time, with the oracle; the MRs whose folding makes the failure
//! disappear are the suspects. A failure that survives folding everything implicates the
//! library's base operations. Used by the bug report ([`crate::bug_report`]) and by campaign
//! triage ([`crate::batch`]). The report goes one level deeper into a single suspect
//! ([`super::knockouts`]).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use crate::catalogue::Catalogue;
use crate::document::{Document, Span};
use crate::edit::{self, Edit};
use crate::judge::Trials;
use crate::model::{parse_qualified_mr, Caller, TestModel};
use crate::passes::sweep::{sweep, SweepContext};

use super::knockouts::{Deeper, Suspect};
use super::ways::{library_op, mr_name, qualified_in_metalib, LibraryOps, Look};
use crate::case::Case;

/// One fold tried by blame.
#[derive(Clone, Debug, Serialize)]
pub struct Fold {
    /// The callee as written (an instance or a qualified MR).
    pub callee: String,
    /// The MR it is (`family::name`).
    pub mr: String,
    /// Its family, qualified (`relations::shift`).
    pub family: String,
    /// The base it was folded to.
    pub base: String,
    /// The variant the call belongs to.
    pub variant: usize,
    /// Folding it made the failure disappear.
    pub suspect: bool,
    /// Library operations the callee reaches (directly or through base MRs and instances).
    pub library_ops: Vec<String>,
    /// The instance whose body holds the call (`None` for a variant's step in `main`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inside: Option<String>,
}

/// Blame's findings.
#[derive(Clone, Debug, Serialize)]
pub struct Blame {
    /// Every fold tried, in source order.
    pub folds: Vec<Fold>,
    /// The MRs (`family::name`) whose folding removes the failure.
    pub suspects: Vec<String>,
    /// The variant all suspects belong to, when there is one.
    pub one_variant: Option<usize>,
    /// The failure survives folding everything: the library's base operations suffice.
    pub base_operations_implicated: bool,
    /// Oracle runs blame made (the deeper step's included).
    pub oracle_calls: usize,
    /// Seconds blame took.
    pub secs: f64,
    /// Inside the single suspect: which of its library calls the failure needs (the report's
    /// blame only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deeper: Option<Deeper>,
    /// What each folded MR (`family::name`) brings into the computation (see [`introduced`]).
    #[serde(skip)]
    pub introduces: BTreeMap<String, Vec<String>>,
}

/// A call blame can fold.
struct Foldable {
    callee: String,
    mr: String,
    family: String,
    base: String,
    variant: usize,
    span: Span,
    inside: Option<String>,
}

/// Every call of an instance and every direct call of a non-base MR, in source order.
fn sites(model: &TestModel, catalogue: &Catalogue) -> Vec<Foldable> {
    let mut sites = Vec::new();
    let mut consider = |callee: &str, span: &Span, variant: usize, inside: Option<&str>| {
        if let Some(inst) = model.instance(callee) {
            let (Some(kind), Some(family)) = (inst.kind, &inst.family) else {
                return;
            };
            if let Some(base) = catalogue.base_of(kind, family) {
                sites.push(Foldable {
                    callee: callee.to_string(),
                    mr: mr_name(Some(family), &inst.mr),
                    family: format!("{}::{family}", kind.namespace()),
                    base: base.qualified(),
                    variant,
                    span: span.clone(),
                    inside: inside.map(str::to_string),
                });
            }
        } else if let Some((kind, family, name)) = parse_qualified_mr(callee) {
            if let Some(base) = catalogue.base_of(kind, family) {
                if base.name != name {
                    sites.push(Foldable {
                        callee: callee.to_string(),
                        mr: format!("{family}::{name}"),
                        family: format!("{}::{family}", kind.namespace()),
                        base: base.qualified(),
                        variant,
                        span: span.clone(),
                        inside: inside.map(str::to_string),
                    });
                }
            }
        }
    };
    for v in &model.variants {
        for s in &v.steps {
            consider(&s.callee, &s.callee_span, v.index, None);
        }
    }
    for inst in &model.instances {
        for stmt in &inst.body {
            for c in &stmt.calls {
                consider(&c.callee, &c.callee_span, inst.variant, Some(&inst.name));
            }
        }
    }
    sites.sort_by_key(|s| s.span.start);
    sites.dedup_by_key(|s| s.span.start);
    sites
}

/// Blame (design §10.3): fold each site of `text` (a test the oracle finds interesting) alone,
/// then all together, with the oracle: one run per site, plus one when there are two sites or
/// more (with none, the text itself is interesting; with one, folding all is that fold). With
/// `deeper`, a single suspect is then looked into ([`super::knockouts`]).
pub(crate) fn blame(case: &Case, deeper: bool) -> Result<Blame> {
    let (text, judge) = (case.text(), case.judge);
    let (model, catalogue) = (&case.test.model, &case.test.catalogue);
    let started = Instant::now();
    let mut trials = Trials::new(judge);
    let sites = sites(model, catalogue);
    let ops = LibraryOps::new(text, model, catalogue);
    // A fold whose run does not end by itself counts as removing the failure, as any run that
    // does not show it.
    let folds = trials.each(&sites, |trials, s| {
        let folded = edit::apply(text, &[Edit::replace(s.span.clone(), s.base.clone())]);
        Ok(Fold {
            callee: s.callee.clone(),
            mr: s.mr.clone(),
            family: s.family.clone(),
            base: s.base.clone(),
            variant: s.variant,
            suspect: !trials.run(&folded)?.kept(),
            library_ops: ops.of(&s.callee).into_iter().collect(),
            inside: s.inside.clone(),
        })
    })?;
    let base_operations_implicated = match folds.as_slice() {
        [] => true,
        [one] => !one.suspect,
        _ => {
            let all: Vec<Edit> = sites
                .iter()
                .map(|s| Edit::replace(s.span.clone(), s.base.clone()))
                .collect();
            trials.run(&edit::apply(text, &all))?.kept()
        }
    };
    let (suspects, one_variant) = suspects_of(&folds);
    let introduces = folds
        .iter()
        .map(|f| (f.mr.clone(), introduced(&f.mr, catalogue, &ops)))
        .collect();
    let mut blame = Blame {
        folds,
        suspects,
        one_variant,
        base_operations_implicated,
        oracle_calls: trials.runs(),
        secs: 0.0,
        deeper: None,
        introduces,
    };
    let single = match (
        blame.suspects.as_slice(),
        blame.folds.iter().find(|f| f.suspect),
    ) {
        ([mr], Some(site)) if deeper => Some(Suspect {
            mr,
            callee: &site.callee,
            variant: site.variant,
            base: &site.base,
        }),
        _ => None,
    };
    if let Some(single) = single {
        let looked = Look {
            text,
            model,
            catalogue,
            ops: &ops,
        };
        blame.deeper = looked.suspect(&single, judge, case.compiles)?;
        blame.oracle_calls += blame.deeper.as_ref().map_or(0, |d| d.oracle_calls);
    }
    blame.secs = started.elapsed().as_secs_f64();
    Ok(blame)
}

/// The MRs of the suspect folds, in order, and the variant they all belong to, if one.
fn suspects_of(folds: &[Fold]) -> (Vec<String>, Option<usize>) {
    let mut suspects: Vec<String> = Vec::new();
    for f in folds.iter().filter(|f| f.suspect) {
        if !suspects.contains(&f.mr) {
            suspects.push(f.mr.clone());
        }
    }
    let variants: BTreeSet<usize> = folds
        .iter()
        .filter(|f| f.suspect)
        .map(|f| f.variant)
        .collect();
    let one_variant = (variants.len() == 1).then(|| *variants.first().unwrap_or(&0));
    (suspects, one_variant)
}

/// What blame says triggers the failure (see [`Blame::triggers`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Triggers {
    /// The MRs (`family::name`, sorted) of the innermost suspects.
    pub mrs: Vec<String>,
    /// The MRs (sorted) of the other foldable calls inside them.
    pub within: Vec<String>,
    /// What each of those MRs brings into the computation (see [`introduced`]).
    pub introduces: BTreeMap<String, Vec<String>>,
}

impl Blame {
    /// The innermost suspects: the suspect calls with no other suspect call inside them (in the
    /// callee's body, or in an instance it calls). Folding an instance folds what it calls with
    /// it, so an outer suspect may only hold the call the failure needs; the innermost ones are
    /// the relations that trigger it. With them, the MRs of the calls inside them that blame did
    /// not find needed: folding such a call can change a value so that it reaches another bug of
    /// the library, and then the failure stays although the call triggered it.
    pub(crate) fn triggers(&self, model: &TestModel) -> Triggers {
        let holds =
            |outer: &Fold, inner: &Fold| sits_in(model, inner.inside.as_deref(), &outer.callee);
        let suspects: Vec<&Fold> = self.folds.iter().filter(|f| f.suspect).collect();
        let innermost: Vec<&Fold> = suspects
            .iter()
            .filter(|f| {
                !suspects
                    .iter()
                    .any(|g| !std::ptr::eq(**f, *g) && holds(f, g))
            })
            .copied()
            .collect();
        let mrs: BTreeSet<String> = innermost.iter().map(|f| f.mr.clone()).collect();
        let within: BTreeSet<String> = self
            .folds
            .iter()
            .filter(|g| !g.suspect && innermost.iter().any(|f| holds(f, g)))
            .map(|g| g.mr.clone())
            .filter(|m| !mrs.contains(m))
            .collect();
        let introduces = mrs
            .iter()
            .chain(&within)
            .filter_map(|m| Some((m.clone(), self.introduces.get(m)?.clone())))
            .collect();
        Triggers {
            mrs: mrs.into_iter().collect(),
            within: within.into_iter().collect(),
            introduces,
        }
    }
}

/// Whether a call made inside the instance `inside` (`None`: in `main`) sits in the body of the
/// instance `outer`, or of an instance that one calls.
fn sits_in(model: &TestModel, inside: Option<&str>, outer: &str) -> bool {
    let mut at = inside.map(str::to_string);
    while let Some(name) = at {
        if name == outer {
            return true;
        }
        at = match model.instance(&name).and_then(|i| i.caller.as_ref()) {
            Some(Caller::Instance(up)) if *up != name => Some(up.clone()),
            _ => None,
        };
    }
    false
}

/// What a wrong value localised at `call` (as written, in the function `place`) points at, as
/// blame's [`Triggers`] (triage signs by values without blame, and its slip check folds these):
/// the MR of the call when it calls an instance or a non-base MR, else that of the instance it
/// sits in (a base call cannot be folded, the instance that makes it can); with the MRs of the
/// foldable calls inside it. Empty when neither can be folded (a base call in `main`).
pub(crate) fn value_triggers(
    model: &TestModel,
    catalogue: &Catalogue,
    place: &str,
    call: &str,
) -> Triggers {
    let sites = sites(model, catalogue);
    let callee = call.split('(').next().unwrap_or_default().trim();
    let in_place = |s: &&Foldable| s.inside.as_deref().unwrap_or("main") == place;
    let Some(site) = sites
        .iter()
        .find(|s| s.callee == callee && in_place(s))
        .or_else(|| sites.iter().find(|s| s.callee == place))
    else {
        return Triggers::default();
    };
    let within: BTreeSet<String> = sites
        .iter()
        .filter(|g| sits_in(model, g.inside.as_deref(), &site.callee))
        .map(|g| g.mr.clone())
        .filter(|m| *m != site.mr)
        .collect();
    Triggers {
        mrs: vec![site.mr.clone()],
        within: within.into_iter().collect(),
        introduces: BTreeMap::new(),
    }
}

/// The MR families (`division`) whose calls in `text` (a test the oracle finds interesting) the
/// failure needs: each base MR call and each library call a family's base wraps, computed by
/// another MR of its family, one check run each ([`super::knockouts`]); and the runs made.
pub(crate) fn needs(case: &Case) -> Result<(Vec<String>, usize)> {
    let (text, model, catalogue) = (case.text(), &case.test.model, &case.test.catalogue);
    let ops = LibraryOps::new(text, model, catalogue);
    let look = Look {
        text,
        model,
        catalogue,
        ops: &ops,
    };
    look.everywhere(case.judge, case.compiles)
}

/// How many calls of the MRs `mrs` (`family::name`; instance calls and direct calls) the test
/// of `model` makes.
pub(crate) fn calls_of(model: &TestModel, catalogue: &Catalogue, mrs: &[String]) -> usize {
    sites(model, catalogue)
        .iter()
        .filter(|s| mrs.contains(&s.mr))
        .count()
}

/// `text` with every call of the MRs `mrs` (`family::name`; instance calls and direct calls)
/// folded to its family's base and then swept as every candidate is (the instances the folds
/// leave uncalled go), or `None` when it has no such call. Campaign triage runs the original so
/// to ask whether its failure needs what its result's trigger does, and reduces it again when
/// it still fails.
pub(crate) fn folded_everywhere(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    mrs: &[String],
) -> Option<Vec<u8>> {
    let edits: Vec<Edit> = sites(model, catalogue)
        .into_iter()
        .filter(|s| mrs.contains(&s.mr))
        .map(|s| Edit::replace(s.span, s.base))
        .collect();
    if edits.is_empty() {
        return None;
    }
    let folded = edit::apply(text, &edits);
    let known_instances = model.instances.iter().map(|i| i.name.clone()).collect();
    let ctx = SweepContext {
        catalogue,
        known_instances: &known_instances,
        keep: &HashSet::new(),
    };
    let swept = Document::parse(folded.clone())
        .ok()
        .and_then(|doc| sweep(doc, &ctx));
    Some(swept.unwrap_or(folded))
}

/// What MR `mr` (`family::name`) brings into the computation it replaces, sorted: the families
/// whose placeholders it calls (`subtract`) and the library operations it calls itself
/// (`iset::hull`). A library bug sits in one of them, so two relations that bring the same
/// operations trigger the same bug. Empty when the catalogue does not know the MR.
fn introduced(mr: &str, catalogue: &Catalogue, ops: &LibraryOps) -> Vec<String> {
    let Some(m) = catalogue
        .mrs
        .iter()
        .find(|m| format!("{}::{}", m.family, m.name) == mr)
    else {
        return Vec::new();
    };
    let mut brought: BTreeSet<String> = m
        .placeholder_families
        .iter()
        .map(|(_, family)| family.clone())
        .collect();
    if let Some(spec) = ops.spec.get(&m.qualified()) {
        let library = spec
            .function
            .calls
            .iter()
            .filter(|c| qualified_in_metalib(&c.callee).is_none())
            .filter_map(|c| library_op(&c.callee));
        brought.extend(library);
    }
    brought.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loaded::LoadedTest;

    /// A test whose variant 1 calls `add_by_sub_1_1`, which calls `div_one_1_2`.
    const NESTED: &str = "int\ndiv_one_1_2(fuzz::fuzz_context ctx, int t)\n{\n    return \
        metalib::relations::division::base(ctx, t, 1);\n}\nint\nadd_by_sub_1_1(fuzz::fuzz_context \
        ctx, int a, int b)\n{\n    b = div_one_1_2(ctx, b);\n    return \
        metalib::relations::sub::base(ctx, a, b);\n}\nint\nmain()\n{\n    fuzz::fuzz_context \
        fctx;\n    int output_var_0 = 1;\n\n    // Meta test 0\n    int r_0 = \
        metalib::relations::add::base(fctx, output_var_0, output_var_0);\n\n    // Meta test 1\n    \
        int r_1 = add_by_sub_1_1(fctx, output_var_0, output_var_0);\n    \
        metalib::checks::check_equal(r_1, r_0);\n}\n";

    fn fold(callee: &str, mr: &str, suspect: bool, inside: Option<&str>) -> Fold {
        Fold {
            callee: callee.to_string(),
            mr: mr.to_string(),
            family: String::new(),
            base: String::new(),
            variant: 1,
            suspect,
            library_ops: Vec::new(),
            inside: inside.map(str::to_string),
        }
    }

    #[test]
    fn the_innermost_suspects_trigger_and_an_outer_one_holds_the_rest() {
        let doc = Document::parse(NESTED.as_bytes().to_vec()).unwrap();
        let model = TestModel::build(&doc, &Catalogue::default()).unwrap();
        let blame_of = |outer: bool, inner: bool| Blame {
            folds: vec![
                fold(
                    "div_one_1_2",
                    "identity::div_one",
                    inner,
                    Some("add_by_sub_1_1"),
                ),
                fold("add_by_sub_1_1", "add::add_by_sub", outer, None),
            ],
            suspects: Vec::new(),
            one_variant: None,
            base_operations_implicated: false,
            oracle_calls: 0,
            secs: 0.0,
            deeper: None,
            introduces: BTreeMap::from([(
                "identity::div_one".to_string(),
                vec!["one".to_string()],
            )]),
        };
        let triggers = |mrs: &[&str], within: &[&str]| Triggers {
            mrs: mrs.iter().map(|m| m.to_string()).collect(),
            within: within.iter().map(|m| m.to_string()).collect(),
            introduces: BTreeMap::from([(
                "identity::div_one".to_string(),
                vec!["one".to_string()],
            )]),
        };
        assert_eq!(
            blame_of(true, true).triggers(&model),
            triggers(&["identity::div_one"], &[])
        );
        assert_eq!(
            blame_of(true, false).triggers(&model),
            triggers(&["add::add_by_sub"], &["identity::div_one"])
        );
        assert_eq!(
            blame_of(false, true).triggers(&model),
            triggers(&["identity::div_one"], &[])
        );
        assert!(blame_of(false, false).triggers(&model).mrs.is_empty());
    }

    #[test]
    fn what_an_mr_brings_and_the_test_with_its_calls_folded_everywhere() {
        let (text, catalogue, model) = fixture("fixtures/campaign/t_iset_19.cpp");
        let ops = LibraryOps::new(&text, &model, &catalogue);
        assert_eq!(
            introduced("complement::compl_by_subtract", &catalogue, &ops),
            ["subtract", "universe"]
        );
        assert_eq!(
            introduced("shift::shift_by_parts", &catalogue, &ops),
            [
                "iset::from_interval",
                "iset::intersect",
                "iset::lower",
                "iset::subtract",
                "iset::upper",
                "shift",
                "unite"
            ]
        );
        assert!(introduced("shift::no_such_mr", &catalogue, &ops).is_empty());

        let folded = |mr: &str| folded_everywhere(&text, &model, &catalogue, &[mr.to_string()]);
        let text_of = |t: Vec<u8>| String::from_utf8(t).unwrap();
        let once = text_of(folded("complement::compl_by_subtract").unwrap());
        assert!(once.contains("r_1 = metalib::relations::complement::base(fctx, r_1);"));
        assert!(!once.contains("r_1 = compl_by_subtract_1_5("));
        assert!(
            !once.contains("compl_by_subtract_1_5(fuzz::fuzz_context"),
            "the folded instance's definition is swept away"
        );
        assert!(folded("shift::no_such_mr").is_none());
    }

    #[test]
    fn a_wrong_value_points_at_the_instance_it_calls_or_else_the_one_it_sits_in() {
        let (_, catalogue, model) = fixture("fixtures/campaign/t_iset_19.cpp");
        let points = |place: &str, call: &str| {
            let t = value_triggers(&model, &catalogue, place, call);
            (t.mrs, t.within)
        };
        let mrs = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            points("compl_by_clip_0_1", "intersect_comm_0_2(ctx, a, u)"),
            (mrs(&["intersect::intersect_comm"]), mrs(&[]))
        );
        assert_eq!(
            points(
                "unite_by_subtract_1_0",
                "metalib::relations::unite::base(ctx, d, b)"
            ),
            (
                mrs(&["unite::unite_by_subtract"]),
                mrs(&["subtract::subtract_by_unite"])
            )
        );
        assert_eq!(
            points("main", "compl_by_clip_0_1(fctx, r_0)"),
            (
                mrs(&["complement::compl_by_clip"]),
                mrs(&["intersect::intersect_comm"])
            )
        );
        assert_eq!(
            points(
                "main",
                "metalib::relations::unite::base(fctx, output_var_1, output_var_1)"
            ),
            (mrs(&[]), mrs(&[])),
            "a base call in main: nothing to fold"
        );
    }

    /// The reduced merge golden, loaded.
    fn merge_golden() -> LoadedTest {
        let (text, catalogue, model) = fixture("fixtures/expected/iset_merge_small_b.reduced.cpp");
        LoadedTest {
            doc: Document::parse(text).unwrap(),
            catalogue,
            model,
        }
    }

    /// The fixture test at `rel` (from the repository's root), its catalogue (the iset spec) and
    /// model.
    fn fixture(rel: &str) -> (Vec<u8>, Catalogue, TestModel) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = root.join(rel);
        let text = std::fs::read(&path).unwrap();
        let spec = root.join("fixtures/iset/spec");
        let catalogue = Catalogue::load(&path, &text, &[spec], &[]).unwrap();
        let doc = Document::parse(text.clone()).unwrap();
        let model = TestModel::build(&doc, &catalogue).unwrap();
        (text, catalogue, model)
    }

    #[test]
    fn blame_judges_through_a_fake_judge_and_names_the_fold_that_removes_the_failure() {
        let test = merge_golden();
        // The failure needs the call of shift_by_parts (as ISET_BUG_MERGE's does).
        let judge = crate::judge::FnJudge(|t: &[u8]| {
            Some(String::from_utf8_lossy(t).contains("= shift_by_parts_1_15(fctx"))
        });
        let compiles = |_: &[u8]| -> std::result::Result<(), String> { Ok(()) };
        let case = Case {
            test: &test,
            judge: &judge,
            compiles: &compiles,
        };
        let b = blame(&case, false).unwrap();
        assert_eq!(b.suspects, ["shift::shift_by_parts"]);
        assert_eq!(b.oracle_calls, 1);
        assert!(!b.base_operations_implicated);
        assert!(b.folds[0]
            .library_ops
            .contains(&"iset::subtract".to_string()));
    }

    #[test]
    fn knockouts_whose_check_times_out_are_undecided_not_needed() {
        let test = merge_golden();
        let compiles = |_: &[u8]| -> std::result::Result<(), String> { Ok(()) };
        let case = |judge| Case {
            test: &test,
            judge,
            compiles: &compiles,
        };
        // Every knockout hangs: none can say the failure needs its call.
        let hangs = crate::judge::FnJudge(|t: &[u8]| {
            (!String::from_utf8_lossy(t).contains("mfppr_knockout")).then_some(true)
        });
        let (hung, runs) = needs(&case(&hangs)).unwrap();
        assert!(runs > 0, "the knockouts ran");
        assert!(
            hung.is_empty(),
            "a timed-out knockout decides nothing: {hung:?}"
        );
        // The same knockouts, with a check that passes on each: the failure needs those calls.
        let passes = crate::judge::FnJudge(|t: &[u8]| {
            Some(!String::from_utf8_lossy(t).contains("mfppr_knockout"))
        });
        let (needed, again) = needs(&case(&passes)).unwrap();
        assert_eq!(again, runs);
        assert!(!needed.is_empty());
    }
}
