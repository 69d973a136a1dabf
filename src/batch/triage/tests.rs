//! Triage's unit tests: signatures, groups and their merges.

use super::*;

fn rec(stem: &str, outcome: Outcome, signature: &str, bytes_after: u64) -> Record {
    let mut r = Record {
        hash: stem.to_string(),
        bytes_after,
        oracle_calls: 1,
        wall_secs: 1.0,
        ..Record::new(
            PathBuf::from(format!("/t/{stem}.cpp")),
            stem.to_string(),
            1000,
            outcome,
        )
    };
    r.sign.signature = signature.to_string();
    r
}

#[test]
fn failure_names_the_check_then_the_exception_then_the_signal() {
    let end = RunEnd::Exited {
        status: 0,
        signal: None,
    };
    assert_eq!(
        failure_of(
            "check-failure.py: matched: metalib::checks::check_equal failed (status 134)",
            end
        ),
        "check_equal"
    );
    assert_eq!(
        failure_of(
            "terminate called after throwing an instance of 'std::out_of_range' \
             crash.py: matched: killed by signal 6",
            end
        ),
        "exception std::out_of_range"
    );
    assert_eq!(
        failure_of(
            "check-failure.py: matched: exception std::out_of_range (status 134)",
            end
        ),
        "exception std::out_of_range"
    );
    assert_eq!(
        failure_of("crash.py: matched: killed by signal 11", end),
        "signal 11"
    );
    assert_eq!(failure_of("it died (status 139)", end), "signal 11");
    assert_eq!(failure_of("", end), "exit status 0");
}

#[test]
fn groups_by_signature_with_the_smallest_representative() {
    let records = vec![
        rec("a", Outcome::Reduced, "check_equal | relations::shift", 900),
        rec("b", Outcome::Reduced, "check_equal | relations::shift", 700),
        rec(
            "c",
            Outcome::Reduced,
            "check_card | relations::subtract",
            500,
        ),
        rec("d", Outcome::NotInteresting, "not_interesting", 1000),
    ];
    let s = summarise(&records, GroupBy::Mrs);
    assert_eq!(s.tests, 4);
    assert_eq!(s.outcomes["reduced"], 3);
    assert_eq!(s.outcomes["not_interesting"], 1);
    assert_eq!(s.groups.len(), 2);
    assert_eq!(s.groups[0].id, 1);
    assert_eq!(s.groups[0].members, ["a", "b"]);
    assert_eq!(s.groups[0].representative.stem, "b");
    assert_eq!(s.groups[1].members, ["c"]);
    assert_eq!(s.not_reduced.len(), 1);
    let table = render(&s);
    assert!(table.starts_with("4 tests: 1 not_interesting, 3 reduced\n"));
    assert!(table.contains("check_card | relations::subtract"));
}

fn by_library(stem: &str, failure: &str, ops: &[&str]) -> Record {
    let ops: Vec<String> = ops.iter().map(|o| o.to_string()).collect();
    let mut r = Record {
        failure: Some(failure.to_string()),
        ..rec(
            stem,
            Outcome::Reduced,
            &format!("{failure} | relations::{stem}"),
            900,
        )
    };
    r.sign.library_signature = format!("{failure} | {}", ops.join(" "));
    r.sign.library_ops = ops;
    r.sign.signature_from = FROM_LIBRARY.to_string();
    r
}

/// Each group's signature and members, in table order.
fn signatures_and_members(s: &CampaignSummary) -> Vec<(&str, &[String])> {
    s.groups
        .iter()
        .map(|g| (g.signature.as_str(), g.members.as_slice()))
        .collect()
}

#[test]
fn library_groups_merge_into_same_failure_subsets_whatever_the_order() {
    let mut records = vec![
        by_library("a", "check_card", &["iset::subtract"]),
        by_library(
            "b",
            "check_card",
            &["iset::from_interval", "iset::subtract"],
        ),
        by_library("c", "check_equal", &["iset::subtract", "iset::unite"]),
        by_library("d", "check_card", &["iset::complement"]),
        by_library("e", "check_card", &[]),
        {
            let mut r = by_library("f", "check_card", &[]);
            r.sign.signature_from = "mrs".into();
            r.sign.library_signature = "check_card | relations::x".into();
            r
        },
    ];
    let s = summarise(&records, GroupBy::Library);
    let groups = signatures_and_members(&s);
    assert_eq!(groups[0].0, "check_card | iset::subtract");
    assert_eq!(groups[0].1, ["a", "b"]);
    assert_eq!(groups.len(), 5, "{groups:?}");
    assert_eq!(s.group_by, "library");
    records.reverse();
    assert_eq!(summarise(&records, GroupBy::Library), s);
    assert_eq!(summarise(&records, GroupBy::Mrs).groups.len(), 6);
}

/// A reduced record localised to `culprit` (undecided when empty), signed by value.
fn by_value(stem: &str, failure: &str, culprit: &[&str]) -> Record {
    let mut r = Record {
        failure: Some(failure.to_string()),
        ..rec(stem, Outcome::Reduced, &format!("{failure} | mrs"), 900)
    };
    r.triage.value = Some(crate::batch::value_record::ValueRecord {
        failure: Some(failure.to_string()),
        culprit: culprit.iter().map(|c| c.to_string()).collect(),
        ..Default::default()
    });
    sign_by_value(&mut r);
    r
}

#[test]
fn value_groups_merge_into_subsets_and_the_undecided_stay_alone_whatever_the_order() {
    let mut records = vec![
        by_value("a", "check_sat", &["z3::operator/(x,y)"]),
        // Its evidence could not tell `ite` from `/`: it joins the group named by `/` alone.
        by_value("b", "check_sat", &["z3::ite", "z3::operator/(x,y)"]),
        by_value("c", "check_sat", &["z3::operator==(x,y)"]),
        by_value("d", "check_sat", &[]),
        by_value("e", "check_sat", &[]),
        // Another class of failure: counted apart.
        by_value(
            "f",
            "exception z3::exception",
            &["z3::ite", "z3::operator/(x,y)"],
        ),
    ];
    assert_eq!(
        records[3].sign.value_signature,
        "wrong value | undecided: d"
    );
    let s = summarise(&records, GroupBy::Value);
    let groups = signatures_and_members(&s);
    let owned = |m: &[&str]| m.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let expected = [
        ("wrong value | z3::operator/(x,y)", owned(&["a", "b"])),
        ("exception | z3::ite z3::operator/(x,y)", owned(&["f"])),
        ("wrong value | undecided: d", owned(&["d"])),
        ("wrong value | undecided: e", owned(&["e"])),
        ("wrong value | z3::operator==(x,y)", owned(&["c"])),
    ];
    let expected: Vec<(&str, &[String])> =
        expected.iter().map(|(g, m)| (*g, m.as_slice())).collect();
    assert_eq!(groups, expected);
    for _ in 0..records.len() {
        records.rotate_left(1);
        assert_eq!(summarise(&records, GroupBy::Value), s);
    }
    records.reverse();
    assert_eq!(summarise(&records, GroupBy::Value), s);
}

#[test]
fn one_operation_caught_by_two_checks_signs_one_group_and_a_crash_another() {
    let records = vec![
        by_value("a", "check_expr_same_sat", &["z3::operator-(x,y)"]),
        by_value("b", "check_exprs_are_zero", &["z3::operator-(x,y)"]),
        by_value("c", "signal 11", &["z3::operator-(x,y)"]),
        by_value("d", "killed", &["z3::operator-(x,y)"]),
    ];
    let s = summarise(&records, GroupBy::Value);
    let groups = signatures_and_members(&s);
    assert_eq!(groups.len(), 3, "{groups:?}");
    assert_eq!(groups[0].0, "wrong value | z3::operator-(x,y)");
    assert_eq!(groups[0].1, ["a", "b"]);
    assert_eq!(groups[1].0, "crash | z3::operator-(x,y)");
    assert_eq!(groups[2].0, "hang | z3::operator-(x,y)");
}

#[test]
fn a_record_journaled_with_the_check_in_its_value_signature_is_signed_again() {
    let mut old = by_value("a", "check_expr_same_sat", &["z3::mod"]);
    old.sign.value_signature = "check_expr_same_sat | z3::mod".into();
    let new = by_value("b", "check_exprs_are_zero", &["z3::mod"]);
    let s = summarise(&[old, new], GroupBy::Value);
    assert_eq!(
        signatures_and_members(&s),
        [(
            "wrong value | z3::mod",
            &["a".to_string(), "b".to_string()][..]
        )]
    );
}

#[test]
fn failures_fall_in_four_classes() {
    assert_eq!(failure_class("check_equal"), "wrong value");
    assert_eq!(failure_class("exit status 1"), "wrong value");
    assert_eq!(failure_class("exception z3::exception"), "exception");
    assert_eq!(failure_class("signal 11"), "crash");
    assert_eq!(failure_class("killed by signal 9 (status 137)"), "crash");
    assert_eq!(failure_class("killed"), "hang");
    assert_eq!(failure_class("timed out"), "hang");
}

/// A record whose knockouts decided: the failure needs the calls of `needs`' families.
fn by_knockouts(stem: &str, failure: &str, needs: &[&str]) -> Record {
    let mut r = by_library(stem, failure, &["z3::operator-", "z3::operator/"]);
    r.triage.needs = needs.iter().map(|n| n.to_string()).collect();
    assert!(sign_by_knockouts(&mut r));
    r
}

#[test]
fn knockouts_sign_by_the_families_the_failure_needs_and_merge_into_subsets() {
    let records = vec![
        by_knockouts("a", "check_eq", &["division"]),
        by_knockouts("b", "check_eq", &["division", "one"]),
        by_knockouts("c", "check_eq", &["sub", "zero"]),
        by_knockouts("d", "check_lt", &["division"]),
        by_knockouts("e", "check_eq", &["add"]),
        // Two groups hold a subset of its families: it joins the most specific one.
        by_knockouts("f", "check_eq", &["add", "sub", "zero"]),
    ];
    assert_eq!(
        records[1].sign.library_signature,
        "check_eq | needs division one"
    );
    assert_eq!(records[1].sign.signature_from, FROM_KNOCKOUTS);
    let s = summarise(&records, GroupBy::Library);
    let groups = signatures_and_members(&s);
    assert_eq!(
        groups,
        [
            (
                "check_eq | needs division",
                &["a".to_string(), "b".to_string()][..]
            ),
            (
                "check_eq | needs sub zero",
                &["c".to_string(), "f".to_string()][..]
            ),
            ("check_eq | needs add", &["e".to_string()][..]),
            ("check_lt | needs division", &["d".to_string()][..]),
        ]
    );
}

/// A record blame signed: `triggers` are its innermost suspects, `within` the MRs inside them.
fn by_triggers(stem: &str, failure: &str, triggers: &[&str], within: &[&str]) -> Record {
    let mut r = by_library(stem, failure, &["z3::operator/"]);
    r.triage.triggers = triggers.iter().map(|t| t.to_string()).collect();
    r.triage.within_triggers = within.iter().map(|t| t.to_string()).collect();
    assert!(sign_by_triggers(&mut r));
    r
}

#[test]
fn triggers_sign_first_and_a_suspect_joins_the_trigger_it_holds() {
    let mut records = vec![
        by_triggers("a", "check_eq", &["identity::div_one"], &[]),
        by_triggers("b", "check_eq", &["identity::div_one"], &[]),
        // Its suspect holds `div_one`, the trigger of two others: it joins them.
        by_triggers(
            "c",
            "check_eq",
            &["add::add_by_sub"],
            &["identity::div_one"],
        ),
        by_triggers("d", "check_eq", &["neg::neg_by_sub_zero"], &[]),
        // Their suspect holds `neg_by_sub_zero`, which triggers `d` alone: counting `add_by_sub`
        // (found three times, never alone) would keep them, and take `c`, apart.
        by_triggers(
            "h",
            "check_eq",
            &["add::add_by_sub"],
            &["neg::neg_by_sub_zero"],
        ),
        by_triggers(
            "i",
            "check_eq",
            &["add::add_by_sub"],
            &["neg::neg_by_sub_zero"],
        ),
        // It holds MRs that trigger nothing alone: it keeps its own trigger.
        by_triggers(
            "e",
            "check_eq",
            &["sub::sub_by_add"],
            &["identity::double_negative"],
        ),
        by_triggers("f", "check_eq", &["sub::sub_by_add"], &[]),
        // Another failure: counted apart.
        by_triggers(
            "g",
            "check_lt",
            &["add::add_by_sub"],
            &["identity::div_one"],
        ),
    ];
    assert_eq!(records[2].sign.signature_from, FROM_TRIGGERS);
    assert_eq!(
        records[2].sign.library_signature,
        "check_eq | triggered by add::add_by_sub"
    );
    let s = summarise(&records, GroupBy::Library);
    let groups = signatures_and_members(&s);
    let owned = |m: &[&str]| m.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let expected = [
        (
            "check_eq | triggered by identity::div_one",
            owned(&["a", "b", "c"]),
        ),
        (
            "check_eq | triggered by neg::neg_by_sub_zero",
            owned(&["d", "h", "i"]),
        ),
        (
            "check_eq | triggered by sub::sub_by_add",
            owned(&["e", "f"]),
        ),
        ("check_lt | triggered by add::add_by_sub", owned(&["g"])),
    ];
    let expected: Vec<(&str, &[String])> =
        expected.iter().map(|(g, m)| (*g, m.as_slice())).collect();
    assert_eq!(groups, expected);
    records.reverse();
    assert_eq!(summarise(&records, GroupBy::Library), s);
}

#[test]
fn a_trigger_group_joins_the_one_whose_mr_brings_a_subset_of_its_operations() {
    let brings = |stem: &str, failure: &str, mr: &str, ops: &[&str]| {
        let mut r = by_triggers(stem, failure, &[mr], &[]);
        let ops = ops.iter().map(|o| o.to_string()).collect();
        r.triage.introduces = BTreeMap::from([(mr.to_string(), ops)]);
        r
    };
    let records = vec![
        brings(
            "p",
            "check_card",
            "intersect::intersect_by_subtract",
            &["subtract"],
        ),
        // Brings `subtract` and more: joins `p` although it has more members.
        brings(
            "q",
            "check_card",
            "complement::compl_by_subtract",
            &["subtract", "universe"],
        ),
        brings(
            "r",
            "check_card",
            "complement::compl_by_subtract",
            &["subtract", "universe"],
        ),
        // The library's `iset::subtract` is not the family `subtract`.
        brings(
            "s",
            "check_card",
            "shift::shift_by_parts",
            &["iset::subtract", "shift"],
        ),
        // Brings nothing: stays alone.
        brings("t", "check_card", "identity::iden_by_simplify", &[]),
        brings(
            "u",
            "check_lt",
            "complement::compl_by_subtract",
            &["subtract", "universe"],
        ),
    ];
    let s = summarise(&records, GroupBy::Library);
    let got: Vec<(&str, Vec<&str>)> = s
        .groups
        .iter()
        .map(|g| {
            (
                g.signature.as_str(),
                g.members.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "check_card | triggered by intersect::intersect_by_subtract",
                vec!["p", "q", "r"]
            ),
            (
                "check_card | triggered by identity::iden_by_simplify",
                vec!["t"]
            ),
            ("check_card | triggered by shift::shift_by_parts", vec!["s"]),
            (
                "check_lt | triggered by complement::compl_by_subtract",
                vec!["u"]
            ),
        ]
    );
}

#[test]
fn signature_joins_failure_and_families() {
    let mrs = vec![
        "relations::complement".to_string(),
        "relations::shift".into(),
    ];
    assert_eq!(
        signature("check_equal", &mrs, "blame"),
        "check_equal | relations::complement relations::shift"
    );
    assert_eq!(
        signature("exception std::out_of_range", &[], BASE_OPERATIONS),
        "exception std::out_of_range | base operations"
    );
}
