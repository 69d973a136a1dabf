//! Localising the wrong value (issue 44, design §11): in a failing test, the first library call
//! whose value is wrong at the very operands of the failing run.
//!
//! The test is instrumented once ([`instrument`]): every call the spec gives other ways to
//! compute (a base MR call, a library call a family's base wraps, a transplanted instance) also
//! computes its value by the other MRs of its family at the same operands, and the values made
//! before the test's first check are compared with that check (Z3's solver equivalence, isl's
//! set equality) in child processes, only in a run that fails (the check's reference run, which
//! passes, compares nothing). One run through the judge (the user's check builds and runs it as
//! it runs the test, faults and all); the probes write a log of their own, which [`probe_log`]
//! reads into plain data and [`decide`] reads the verdict from: the program's own failure, and
//! the culprit call with its library operations, or why none can be named (`undecided`). A value
//! knockout is the instrumented text with the value to replace defined in it
//! (`MFPPR_VALUE_FIXES`), so its verdict depends on the candidate alone; it compares nothing.
//! The compiler is asked only when the run wrote no log, for the reason.
//!
//! The test itself is never changed; the instrumented text and its log live in a temporary
//! directory removed on every path.

mod decide;
mod guide;
mod instrument;
mod open;
mod probe_log;
#[cfg(test)]
mod runtime_tests;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub(crate) use decide::Evidence;
pub(crate) use guide::{guide, NOTHING_TO_PROBE};

use crate::case::{Case, Compiles};
use crate::catalogue::Catalogue;
use crate::evidence::run_log;
use crate::evidence::ways::LibraryOps;
use crate::judge::{unfinished, Judge, Trials, Tried};
use crate::model::TestModel;

/// What localising found.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Localised {
    /// The program's own failure (the failing check, the uncaught exception, the signal), read
    /// from the probes' log; `None` when the instrumented test did not fail or wrote no log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The library operations of the culprit call, sorted; empty when undecided.
    #[serde(default)]
    pub culprit: Vec<String>,
    /// The culprit call, how it is wrong, and the values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// Why no culprit could be named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// The culprit's operations that no probed call of the test computes alone another way (the
    /// spec gives none at their operands, as for Z3's `ite` and `/` inside `division::base`):
    /// the values could not show them wrong one by one, nor tell them apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// Calls probed.
    #[serde(default)]
    pub probes: u64,
    /// Check runs made: the instrumented run, then the value knockouts.
    #[serde(default)]
    pub runs: u64,
    /// Seconds it took: instrumenting, compiling, the run and reading the log (set by the
    /// caller, which times it).
    #[serde(default)]
    pub secs: f64,
    /// The probe log passed [`MAX_LOG`](crate::evidence::run_log::MAX_LOG) bytes and was read
    /// to there only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_cut: bool,
}

/// How many times the reduction's timeout an instrumented run is given (the probes compare
/// every value in child processes): the localisation and the guided first cut judge it with a
/// judge this many times as patient.
pub(crate) const PATIENCE: u32 = 4;

impl Localised {
    fn undecided(why: String, probes: usize, runs: u64) -> Localised {
        Localised {
            undecided: Some(why),
            probes: probes as u64,
            runs,
            ..Localised::default()
        }
    }
}

/// With `MFPPR_KEEP_PROBES=DIR` (an existing directory), the localisation of the test `name`
/// keeps there its instrumented test, its probe log and its probed calls
/// (`NAME.instrumented.cpp`, `NAME.probes.log`, `NAME.sites.json`), to see how a culprit was
/// named; a file that cannot be written is warned about.
fn keep_probes(instrumented: &instrument::Instrumented, log: &[u8], name: &str) {
    let Some(dir) = std::env::var_os("MFPPR_KEEP_PROBES").map(std::path::PathBuf::from) else {
        return;
    };
    let sites = serde_json::to_vec_pretty(&instrumented.sites).unwrap_or_default();
    let files: [(&str, &[u8]); 3] = [
        ("instrumented.cpp", &instrumented.text),
        ("probes.log", log),
        ("sites.json", &sites),
    ];
    for (kind, bytes) in files {
        let file = format!("{name}.{kind}");
        if let Err(e) = crate::atomic::write_atomic(&dir.join(&file), bytes) {
            crate::messages::warn(format!("MFPPR_KEEP_PROBES: cannot write {file}: {e}"));
        }
    }
}

/// Localise the wrong value of `text` (a test the judge finds interesting; `name` names it in
/// the kept probes): instrument it, run it once through `judge`, and read the probes' log (with
/// no log, ask `compiles` why).
pub(crate) fn localise(name: &str, case: &Case) -> Result<Localised> {
    let (text, judge, compiles) = (case.text(), case.judge, case.compiles);
    let (model, catalogue) = (&case.test.model, &case.test.catalogue);
    let scratch = tempfile::Builder::new().prefix("mfppr-values-").tempdir()?;
    let log = scratch.path().join("probes.log");
    let Some(instrumented) = open_and_instrument(text, model, catalogue, &log)? else {
        return Ok(Localised::undecided(
            "no call in it that the spec gives another way to compute".to_string(),
            0,
            0,
        ));
    };
    let probes = instrumented.sites.len();
    let run_log::Logged {
        judged,
        lines,
        cut: log_cut,
    } = run_log::run(&instrumented.text, judge, &log)?;
    if log_cut {
        crate::messages::warn(format!(
            "{}: the probe log passed {} MiB; read to there only",
            crate::messages::printable(name),
            run_log::MAX_LOG >> 20
        ));
    }
    if lines.is_empty() && !judged.interesting() {
        let why = why_no_log(&instrumented.text, &judged, judge, compiles);
        return Ok(Localised::undecided(why, probes, 1));
    }
    keep_probes(&instrumented, &lines, name);
    let lines = match String::from_utf8(lines) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let (reading, runs) = if judged.interesting() {
        read_knocking_out(&instrumented, &lines, judge, &log)?
    } else {
        (decide::read(&lines, &instrumented.sites), 1)
    };
    let unchecked = unchecked(&reading.culprit, &instrumented.sites);
    let mut found = Localised {
        failure: reading.failure,
        culprit: reading.culprit,
        evidence: reading.evidence,
        undecided: reading.undecided,
        unchecked,
        probes: probes as u64,
        runs,
        secs: 0.0,
        log_cut,
    };
    if found.culprit.is_empty() {
        if let Some(why) = unfinished(&judged, judge.timeout()) {
            found.undecided = Some(format!("the instrumented run: {why}"));
        } else if instrumented.compared_by.is_empty() {
            found.undecided = Some(
                "the test has no check comparing two results, and no probed call throws or dies"
                    .to_string(),
            );
        }
    }
    Ok(found)
}

/// Open the bases of `text` ([`open::open_bases`]) and instrument the result to write its probes'
/// log to `log`; `None` when no call in it has another way to compute.
fn open_and_instrument(
    text: &[u8],
    model: &TestModel,
    catalogue: &Catalogue,
    log: &std::path::Path,
) -> Result<Option<instrument::Instrumented>> {
    let at = model.first_definition();
    let mut ops = LibraryOps::new(text, model, catalogue);
    let opened = open::open_bases(text, at, catalogue, &ops)?;
    let (text, model) = match &opened {
        Some(o) => {
            ops.read_test(&o.text, &o.model);
            (&o.text[..], &o.model)
        }
        None => (text, model),
    };
    instrument::instrument(text, model, catalogue, &ops, at, opened.as_ref(), log)
}

/// Why the instrumented test (`instrumented`, run as `judged`) wrote no probe log: the program
/// never ran. The compiler is asked, only now (not before every localisation).
fn why_no_log(
    instrumented: &[u8],
    judged: &crate::judge::Judged,
    judge: &dyn Judge,
    compiles: Compiles,
) -> String {
    match compiles(instrumented) {
        Err(why) => format!("the instrumented test does not compile ({why})"),
        Ok(()) => match unfinished(judged, judge.timeout()) {
            Some(why) => format!("the instrumented run: {why}"),
            None => "the instrumented test built but did not run (no probe log)".to_string(),
        },
    }
}

/// The reading of the failed run's log `lines`, after the value [`knockouts`], the two weighed
/// ([`weigh`]); and the check runs made (the instrumented run and the knockouts).
fn read_knocking_out(
    instrumented: &instrument::Instrumented,
    lines: &str,
    judge: &dyn Judge,
    log: &std::path::Path,
) -> Result<(decide::Reading, u64)> {
    let mut reading = decide::read(lines, &instrumented.sites);
    let (needed, tried) = knockouts(instrumented, lines, judge, log)?;
    let Some(w) = needed else {
        if let Some(e) = reading.evidence.as_mut().filter(|_| tried > 0) {
            e.decided_by = Some(format!(
                "the values ({tried} value knockouts tried, none took the failure away)"
            ));
        }
        return Ok((reading, 1 + tried));
    };
    let narrowed = decide::read_at(lines, &instrumented.sites, w.seq);
    let s = &instrumented.sites[w.site];
    let knocked = format!(
        "with the value of `{}` replaced by {}'s the failure goes ({tried} value knockouts)",
        s.call,
        s.alternatives[w.way - 1].mr
    );
    Ok((weigh(reading, narrowed, s, &knocked), 1 + tried))
}

/// The whole run's `reading` weighed against a value knockout (`knocked` says which value the
/// failure needs, that of a call of site `s`; `narrowed` reads the values from there). The
/// knockout is evidence of cause, the values of difference: when the values read from the
/// needed value name a culprit, it stands (whether it agrees with the whole run's or not); when
/// they name none (its differences are outvoted), the whole run's culprit stands if the needed
/// value computes with it, else the knockout decides: the operations the needed call computes
/// with. The evidence says which decided.
fn weigh(
    reading: decide::Reading,
    mut narrowed: decide::Reading,
    s: &instrument::Site,
    knocked: &str,
) -> decide::Reading {
    let whole = reading.culprit.join(" ");
    if let Some(e) = narrowed
        .evidence
        .as_mut()
        .filter(|_| !narrowed.culprit.is_empty())
    {
        e.how = format!("{}; {knocked}", e.how);
        e.decided_by = Some(if narrowed.culprit == reading.culprit {
            "the values and a value knockout, which agree".to_string()
        } else if whole.is_empty() {
            "a value knockout (the values of the whole run named none)".to_string()
        } else {
            format!("a value knockout (the values of the whole run named {whole})")
        });
        return narrowed;
    }
    let within =
        !reading.culprit.is_empty() && reading.culprit.iter().all(|op| s.reach.contains(op));
    if within || s.ops.is_empty() {
        let mut reading = reading;
        if let Some(e) = reading.evidence.as_mut() {
            e.decided_by = Some(format!(
                "the values ({knocked}, a value that computes with the culprit)"
            ));
        }
        return reading;
    }
    decide::Reading {
        culprit: s.ops.clone(),
        evidence: Some(Evidence {
            place: s.place.clone(),
            call: s.call.clone(),
            family: s.family.clone(),
            how: knocked.to_string(),
            decided_by: Some(if whole.is_empty() {
                "a value knockout (the values named none)".to_string()
            } else {
                format!("a value knockout (the values named {whole}, which the needed value does not compute with)")
            }),
            ..Evidence::default()
        }),
        undecided: None,
        ..reading
    }
}

/// The operations of `culprit` that no probed call of `sites` computes alone (its value depends
/// on that operation only).
fn unchecked(culprit: &[String], sites: &[instrument::Site]) -> Vec<String> {
    let checked: std::collections::BTreeSet<&String> = sites
        .iter()
        .filter_map(|s| match &s.reach[..] {
            [op] => Some(op),
            _ => None,
        })
        .collect();
    culprit
        .iter()
        .filter(|op| !checked.contains(op))
        .cloned()
        .collect()
}

/// At most this many value knockouts per localisation.
const MAX_KNOCKOUTS: usize = 4;

/// Value knockouts, when the failed run (its log `lines`) shows more than one wrong value: the
/// test run again with one wrong value replaced by the other way that agrees with most others,
/// deepest first (a variant step that differs from only one other way is not tried: see
/// [`decide::Wrong`]), until the failure goes (at most [`MAX_KNOCKOUTS`] runs). Several faults can
/// fire in one run; the one the failure needs is the one whose wrong value it cannot do
/// without; the run's reading may have named an operation or not (the wrong values share
/// none). Returns that record and the runs made.
fn knockouts(
    instrumented: &instrument::Instrumented,
    lines: &str,
    judge: &dyn Judge,
    log: &std::path::Path,
) -> Result<(Option<decide::Wrong>, u64)> {
    let wrong = decide::wrong_records(lines, &instrumented.sites);
    if wrong.len() < 2 {
        return Ok((None, 0));
    }
    let mut trials = Trials::new(judge);
    let mut needed = None;
    for &w in wrong.iter().filter(|w| w.telling).take(MAX_KNOCKOUTS) {
        // Each run appends to the log; the first run's lines are read already.
        let _ = std::fs::remove_file(log);
        if trials.run(&knocked_out(&instrumented.text, w))? == Tried::Gone {
            needed = Some(w);
            break;
        }
    }
    Ok((needed, trials.runs() as u64))
}

/// The instrumented `text` with the value of record `w` replaced by its other way's: the pair
/// `record way` defined in the text itself (`MFPPR_VALUE_FIXES`, after the log's define), so
/// that the verdict and its cache key depend on the candidate alone.
fn knocked_out(text: &[u8], w: decide::Wrong) -> Vec<u8> {
    let define = format!("#define MFPPR_VALUE_FIXES \"{} {}\"\n", w.seq, w.way);
    let log_define = b"\n#define MFPPR_VALUE_LOG ";
    let at = text
        .windows(log_define.len())
        .position(|b| b == log_define)
        .and_then(|at| {
            text[at + 1..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|n| at + n + 2)
        })
        .unwrap_or(0);
    crate::edit::apply(text, &[crate::edit::Edit::replace(at..at, define)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::FnJudge;
    use crate::loaded::{LoadedTest, SpecPaths};
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    /// The reduced merge fixture, loaded with its spec.
    fn merge() -> LoadedTest {
        merge_as(None, &[])
    }

    /// The reduced merge fixture, or `text` in its place, loaded with its spec and `specs`.
    fn merge_as(text: Option<Vec<u8>>, specs: &[PathBuf]) -> LoadedTest {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let path = root.join("fixtures/expected/iset_merge_small_a.reduced.cpp");
        let dirs = [root.join("fixtures/iset/spec")];
        let paths = SpecPaths {
            include_dirs: &dirs,
            specs,
        };
        match text {
            Some(text) => LoadedTest::load(&path, text, &paths).unwrap(),
            None => LoadedTest::read(&path, &paths).unwrap(),
        }
    }

    /// The merge fixture with `from` replaced by `to`, loaded with its spec and a header of `spec`
    /// (kept in the returned directory).
    fn merge_with(spec: &str, from: &str, to: &str) -> (tempfile::TempDir, LoadedTest) {
        let dir = tempfile::tempdir().unwrap();
        let header = dir.path().join("extra_spec.hpp");
        std::fs::write(&header, spec).unwrap();
        let text = String::from_utf8(merge().text().to_vec())
            .unwrap()
            .replace(from, to);
        let t = merge_as(Some(text.into()), &[header]);
        (dir, t)
    }

    /// The probed calls of `t`.
    fn probed(t: &LoadedTest) -> Vec<instrument::Site> {
        let ops = LibraryOps::new(t.text(), &t.model, &t.catalogue);
        let log = std::path::Path::new("/dev/null");
        instrument::instrument(
            t.text(),
            &t.model,
            &t.catalogue,
            &ops,
            t.model.first_definition(),
            None,
            log,
        )
        .unwrap()
        .unwrap()
        .sites
    }

    fn localised(judge: &dyn Judge, compiles: Compiles) -> Localised {
        let t = merge();
        let case = Case {
            test: &t,
            judge,
            compiles,
        };
        localise("t", &case).unwrap()
    }

    /// The value knockouts the instrumented `text` defines, if any (`record way`, a line each).
    fn fixes_of(text: &[u8]) -> Option<String> {
        let text = String::from_utf8_lossy(text);
        let line = text
            .lines()
            .find(|l| l.starts_with("#define MFPPR_VALUE_FIXES"))?;
        Some(format!("{}\n", line.split('"').nth(1)?))
    }

    /// The log path the instrumented `text` writes to.
    fn log_of(text: &[u8]) -> PathBuf {
        let text = String::from_utf8_lossy(text);
        let line = text
            .lines()
            .find(|l| l.starts_with("#define MFPPR_VALUE_LOG"))
            .unwrap();
        PathBuf::from(line.split('"').nth(1).unwrap())
    }

    #[test]
    fn a_call_of_a_spec_mr_other_than_the_base_is_probed_against_the_base() {
        // Like isl's `identity::iden_by_coalesce` beside `identity::base`, an identity MR that
        // calls the library (here `unite(a, a)`): its value may be the first wrong one, so it is
        // probed like a base call, the family's base (which returns `a`) its other way.
        let (_dir, t) = merge_with(
            "namespace metalib { namespace relations { namespace identity {\n\
             fuzz::set_term iden_by_self_unite(fuzz::fuzz_context ctx, fuzz::set_term a) {\n\
             return iset::unite(a, a); }\n} } }\n",
            "    r_0 = metalib::relations::shift::base(fctx, r_0, 17);",
            "    r_0 = metalib::relations::identity::iden_by_self_unite(fctx, r_0);\n    \
             r_0 = metalib::relations::shift::base(fctx, r_0, 17);",
        );
        let sites = probed(&t);
        let site = sites
            .iter()
            .find(|s| s.call.contains("iden_by_self_unite"))
            .unwrap_or_else(|| panic!("not probed: {sites:?}"));
        assert_eq!(site.family, "relations::identity");
        assert_eq!(site.alternatives[0].mr, "identity::base");
        assert!(site.alternatives[0].ops.is_empty(), "{site:?}");
        assert_eq!(site.reach, ["iset::unite"]);
    }

    #[test]
    fn a_base_of_several_library_calls_is_opened_and_its_library_calls_probed() {
        // Like Z3's `division::base` (`ite(t2 == 0, t1, t1 / t2)`, the one MR of its family):
        // its copy is called instead, and the library calls in it that other families' bases
        // wrap are probed at their own operands.
        let (_dir, t) = merge_with(
            "namespace metalib { namespace relations { namespace shift_unite {\n\
             fuzz::set_term base(fuzz::fuzz_context ctx, fuzz::set_term a, long k) {\n\
             return iset::unite(iset::shift(a, k), a); }\n} } }\n",
            "    r_0 = metalib::relations::shift::base(fctx, r_0, 17);",
            "    r_0 = metalib::relations::shift_unite::base(fctx, r_0, 17);",
        );
        let at = t.model.first_definition();
        let ops = LibraryOps::new(t.text(), &t.model, &t.catalogue);
        let opened = open::open_bases(t.text(), at, &t.catalogue, &ops)
            .unwrap()
            .expect("shift_unite::base is opened");
        assert_eq!(
            opened.copies.values().collect::<Vec<_>>(),
            ["metalib::mfppr_open::relations_shift_unite_base"],
            "a base of one library call is not opened"
        );
        let ops = LibraryOps::new(&opened.text, &opened.model, &t.catalogue);
        let log = std::path::Path::new("/dev/null");
        let sites = instrument::instrument(
            &opened.text,
            &opened.model,
            &t.catalogue,
            &ops,
            at,
            Some(&opened),
            log,
        )
        .unwrap()
        .unwrap();
        let shown = String::from_utf8_lossy(&sites.text);
        assert!(
            shown.contains("r_0 = metalib::mfppr_open::relations_shift_unite_base(fctx, r_0, 17);"),
            "{shown}"
        );
        let sites = sites.sites;
        let inside: Vec<(&str, &str)> = sites
            .iter()
            .filter(|s| s.place == "relations_shift_unite_base")
            .map(|s| (s.family.as_str(), s.call.as_str()))
            .collect();
        assert_eq!(
            inside,
            [
                ("relations::unite", "iset::unite(iset::shift(a, k), a)"),
                ("relations::shift", "iset::shift(a, k)")
            ]
        );
    }

    #[test]
    fn a_library_call_is_probed_by_the_wrapping_base_its_argument_types_fit() {
        // Z3's `z3::ite(c, t, e)` is wrapped by `ite_bool::base` and by
        // `ite_integer_term_cond::base`; of two such bases, the one whose parameter types are
        // those of the arguments (here `long`, parameters of the calling function) probes it.
        let (_dir, t) = merge_with(
            "namespace metalib { namespace relations { namespace unite_longs {\n\
             fuzz::set_term base(fuzz::fuzz_context ctx, long a, long b) {\n\
             return iset::unite(a, b); }\n\
             fuzz::set_term swapped(fuzz::fuzz_context ctx, long a, long b) {\n\
             return relations::unite_longs::placeholder(ctx, b, a); }\n} } }\n",
            "    long p = (iset::lower(a) + iset::upper(a)) / 2;",
            "    long p = (iset::lower(a) + iset::upper(a)) / 2;\n    iset::Set q = iset::unite(k, k);",
        );
        let sites = probed(&t);
        let site = sites
            .iter()
            .find(|s| s.call == "iset::unite(k, k)")
            .unwrap_or_else(|| panic!("not probed: {sites:?}"));
        assert_eq!(site.family, "relations::unite_longs");
    }

    #[test]
    fn a_fuzzed_input_is_not_probed_nor_among_the_suspects_of_the_instance_using_it() {
        // Like Z3's `zero_by_div_fuzz`, whose fuzzed input comes from an instance of
        // `fuzz_int_term::get_expr_by_fuzz` (`-x + y` after MF++ expanded it): the MR holds for
        // every value of the input, so a wrong value inside it cannot be why the instance is
        // wrong, and the operations only it calls are not suspects.
        let (_dir, t) = merge_with(
            "namespace metalib { namespace generators { namespace fuzz_set {\n\
             fuzz::set_term get_by_fuzz(fuzz::fuzz_context ctx) {\n\
             fuzz::set_term f = fuzz::fuzz_new<fuzz::set_term>(); return f; }\n} } }\n",
            "fuzz::set_term\nshift_by_parts_2_6(fuzz::fuzz_context ctx, fuzz::set_term a, long k)\n{\n    \
             long p = (iset::lower(a)",
            "fuzz::set_term\nget_by_fuzz_2_7(fuzz::fuzz_context ctx)\n{\n    fuzz::set_term f = \
             iset::complement(iset::from_point(3));\n    return f;\n}\n\
             fuzz::set_term\nshift_by_parts_2_6(fuzz::fuzz_context ctx, fuzz::set_term a, long k)\n{\n    \
             fuzz::set_term f = get_by_fuzz_2_7(ctx);\n    long p = (iset::lower(f)",
        );
        assert!(t.model.instance("get_by_fuzz_2_7").is_some());
        let sites = probed(&t);
        assert!(
            sites.iter().all(|s| s.place != "get_by_fuzz_2_7"),
            "a call inside the fuzzed input is probed: {sites:?}"
        );
        let site = sites
            .iter()
            .find(|s| s.call.starts_with("shift_by_parts_2_6("))
            .unwrap_or_else(|| panic!("not probed: {sites:?}"));
        assert!(
            !site
                .reach
                .iter()
                .any(|op| op == "iset::complement" || op == "iset::from_point"),
            "{:?}",
            site.reach
        );
        assert!(
            site.reach.iter().any(|op| op == "iset::lower"),
            "{:?}",
            site.reach
        );
    }

    #[test]
    fn culprit_operations_no_probed_call_computes_alone_are_unchecked() {
        // Z3's `division::base(t, 1)`, opened: its `==` is probed (by `equal_int`'s other ways),
        // its `ite` and `/` are not (no other MR takes an integer condition, or divides), so a
        // culprit `ite or /` is a gap in the spec, not two bugs; `==` was checked.
        let site = |ops: &[&str]| instrument::Site {
            place: "relations_division_base".to_string(),
            call: String::new(),
            family: String::new(),
            ops: ops.iter().map(|o| o.to_string()).collect(),
            reach: ops.iter().map(|o| o.to_string()).collect(),
            alternatives: Vec::new(),
        };
        let sites = [
            site(&["z3::operator==(x,y)"]),
            site(&["z3::ite", "z3::operator/(x,y)", "z3::operator==(x,y)"]),
        ];
        let culprit = ["z3::ite", "z3::operator/(x,y)", "z3::operator==(x,y)"].map(String::from);
        assert_eq!(
            unchecked(&culprit, &sites),
            ["z3::ite", "z3::operator/(x,y)"]
        );
        assert!(unchecked(&culprit[2..], &sites).is_empty());
    }

    #[test]
    fn a_call_that_throws_in_the_run_is_named_through_the_judge() {
        // The judge plays the check: it "runs" the instrumented test, whose first probe throws.
        let judge = FnJudge(|text: &[u8]| {
            let log = "41 start\n41 enter 0\n41 exception std::out_of_range\n41 signal 6\n";
            std::fs::write(log_of(text), log).unwrap();
            Some(true)
        });
        let found = localised(&judge, &|_| Ok(()));
        assert_eq!(
            found.failure.as_deref(),
            Some("exception std::out_of_range")
        );
        assert!(!found.culprit.is_empty(), "{found:?}");
        assert_eq!(found.runs, 1);
        assert!(found.probes >= 3, "{found:?}");
    }

    #[test]
    fn of_two_wrong_values_the_one_the_failure_needs_is_named_by_a_knockout() {
        // Two probed calls (inside a call that logged no value, so neither is a variant's
        // step) are wrong in the run; the later is knocked out first, but the failure goes only
        // when the first one's value is replaced by its other way's.
        let judge = FnJudge(|text: &[u8]| {
            let Some(fixes) = fixes_of(text) else {
                let log = "7 start\n7 enter 2\n7 record 0 0\n7 record 1 1\n7 leave 2\n\
                           7 value 0 0 a\n7 value 0 1 b\n7 value 1 0 c\n7 value 1 1 d\n\
                           7 same 0 0 1 0\n7 same 1 0 1 0\n7 check check_equal\n7 signal 6\n";
                std::fs::write(log_of(text), log).unwrap();
                return Some(true);
            };
            Some(fixes != "0 1\n")
        });
        let found = localised(&judge, &|_| Ok(()));
        assert_eq!(found.runs, 3, "{found:?}");
        let e = found.evidence.unwrap();
        assert!(
            e.how.contains("the failure goes (2 value knockouts)"),
            "{}",
            e.how
        );
        assert_eq!(e.values[0], ("call".to_string(), "a".to_string()));
        // The whole run's values could not tell the two faults apart: the knockout decided.
        let by = e.decided_by.unwrap();
        assert!(
            by.starts_with("a value knockout (the values of the whole run named iset::complement"),
            "{by}"
        );
    }

    #[test]
    fn a_knockout_decides_when_the_values_name_an_operation_the_needed_value_does_not_compute_with()
    {
        let site = instrument::Site {
            place: "main".into(),
            call: "metalib::relations::modulo::base(fctx, r_0, 3)".into(),
            family: "relations::modulo".into(),
            ops: vec!["z3::mod".into()],
            reach: vec!["z3::mod".into()],
            alternatives: vec![instrument::Alternative {
                mr: "modulo::mod_by_sub".into(),
                ops: vec!["z3::operator-(x,y)".into()],
            }],
        };
        let whole = decide::Reading {
            failure: Some("check_expr_same_sat".into()),
            culprit: vec!["z3::operator==(x,y)".into()],
            evidence: Some(Evidence::default()),
            undecided: None,
        };
        let knocked = "with the value of `modulo::base` replaced by modulo::mod_by_sub's";
        // The values read from the needed value name nothing: the knockout decides.
        let got = weigh(whole.clone(), decide::Reading::default(), &site, knocked);
        assert_eq!(got.culprit, ["z3::mod"]);
        assert_eq!(got.failure.as_deref(), Some("check_expr_same_sat"));
        let by = got.evidence.unwrap().decided_by.unwrap();
        assert!(
            by.starts_with("a value knockout (the values named z3::operator==(x,y)"),
            "{by}"
        );
        // A whole-run culprit the needed value computes with stands.
        let within = decide::Reading {
            culprit: vec!["z3::mod".into()],
            ..whole
        };
        let got = weigh(within, decide::Reading::default(), &site, knocked);
        assert_eq!(got.culprit, ["z3::mod"]);
        assert!(got
            .evidence
            .unwrap()
            .decided_by
            .unwrap()
            .starts_with("the values ("));
    }

    #[test]
    fn two_wrong_values_that_share_no_operation_are_told_apart_by_a_knockout() {
        // Two faults fire in the run, at calls that share no library operation: the reading
        // alone is undecided; the second value is knocked out first, in vain, and the knockout
        // of the first removes the failure.
        let sites = probed(&merge());
        // One side of a differing pair: a call and one of its other ways (1, 2, …).
        let side = |i: usize, k: usize| -> BTreeSet<String> {
            let s = &sites[i];
            s.ops
                .iter()
                .chain(&s.alternatives[k - 1].ops)
                .cloned()
                .collect()
        };
        let pairs =
            (0..sites.len()).flat_map(|i| (1..=sites[i].alternatives.len()).map(move |k| (i, k)));
        let ((a, ka), (b, kb)) = pairs
            .clone()
            .flat_map(|x| pairs.clone().map(move |y| (x, y)))
            .find(|&((a, ka), (b, kb))| a < b && side(a, ka).is_disjoint(&side(b, kb)))
            .expect("two probed calls whose ways share no operation");
        // Both inside a call that logged no value, so that neither is a variant's step.
        let c = (0..sites.len()).find(|&c| c != a && c != b).unwrap();
        let first_log = format!(
            "7 start\n7 enter {c}\n7 record 0 {a}\n7 record 1 {b}\n7 leave {c}\n\
             7 value 0 0 a\n7 value 0 {ka} b\n\
             7 value 1 0 c\n7 value 1 {kb} d\n7 same 0 0 {ka} 0\n7 same 1 0 {kb} 0\n\
             7 check check_equal\n7 signal 6\n"
        );
        let needed = format!("0 {ka}\n");
        let judge = FnJudge(|text: &[u8]| {
            let Some(fixes) = fixes_of(text) else {
                std::fs::write(log_of(text), &first_log).unwrap();
                return Some(true);
            };
            Some(fixes != needed)
        });
        let found = localised(&judge, &|_| Ok(()));
        assert_eq!(found.undecided, None, "{found:?}");
        let e = found.evidence.unwrap();
        assert_eq!(e.call, sites[a].call);
        assert!(
            e.how.contains("the failure goes (2 value knockouts)"),
            "{}",
            e.how
        );
        assert!(
            found.culprit.iter().all(|c| side(a, ka).contains(c)),
            "{:?}",
            found.culprit
        );
    }

    #[test]
    fn an_instrumented_test_that_does_not_build_or_hangs_is_undecided_with_why() {
        // The check finds it not interesting and no probe wrote a line: the compiler says why.
        let fails = FnJudge(|_: &[u8]| Some(false));
        let found = localised(&fails, &|_| Err("exit status 1: error: boom".into()));
        assert_eq!(found.runs, 1);
        assert!(found.culprit.is_empty());
        assert!(
            found
                .undecided
                .as_deref()
                .unwrap()
                .contains("does not compile (exit status 1"),
            "{found:?}"
        );
        let hangs = FnJudge(|_: &[u8]| None);
        let found = localised(&hangs, &|_| Ok(()));
        assert_eq!(found.runs, 1);
        assert_eq!(
            found.undecided.as_deref(),
            Some("the instrumented run: the check timed out after 1 s")
        );
    }
}
