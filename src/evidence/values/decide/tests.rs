//! The reading's tests: small logs of the failure shapes met on the seeds, each with the
//! culprit or the knockout order it must give.

use super::super::instrument::Alternative;
use super::*;

fn site(ops: &[&str], alts: &[(&str, &[&str])]) -> Site {
    let ops: Vec<String> = ops.iter().map(|s| s.to_string()).collect();
    Site {
        place: "main".into(),
        call: "metalib::relations::sub::base(fctx, a, b)".into(),
        family: "relations::sub".into(),
        ops: ops.clone(),
        reach: ops,
        alternatives: alts
            .iter()
            .map(|(mr, ops)| Alternative {
                mr: mr.to_string(),
                ops: ops.iter().map(|s| s.to_string()).collect(),
            })
            .collect(),
    }
}

#[test]
fn the_operation_every_differing_pair_involves_is_the_culprit() {
    // unite is wrong for adjacent sets: the other ways that reuse it agree with the call,
    // the one that swaps the operands does not; the enclosing instance differs from both.
    let sites = [
        site(
            &["iset::unite"],
            &[
                (
                    "unite::by_parts",
                    &["iset::intersect", "iset::subtract", "iset::unite"],
                ),
                ("unite::by_subtract", &["iset::subtract", "iset::unite"]),
                ("unite::comm", &["iset::unite"]),
            ],
        ),
        site(
            &["iset::intersect", "iset::unite", "iset::shift"],
            &[
                ("shift::base", &["iset::shift"]),
                ("shift::in_steps", &["iset::shift"]),
            ],
        ),
    ];
    let log = "7 start\n7 enter 1\n7 enter 0\n7 leave 0\n7 record 0 0\n7 leave 1\n7 record 1 1\n\
               7 operand 0 0 {1..2}\n7 operand 0 1 {3..4}\n\
               7 value 0 0 {1..4}\n7 value 0 3 {1..5}\n\
               7 same 0 0 1 1\n7 same 0 0 2 1\n7 same 0 0 3 0\n7 same 0 1 2 1\n\
               7 same 0 1 3 0\n7 same 0 2 3 0\n7 same 1 0 1 0\n7 same 1 0 2 0\n7 same 1 1 2 1\n\
               7 compared\n7 check check_equal\n7 signal 6\n\
               8 start\n8 record 0 0\n8 record 1 1\n8 compared\n8 exit\n";
    let r = read(log, &sites);
    assert_eq!(r.failure.as_deref(), Some("check_equal"));
    assert_eq!(r.culprit, vec!["iset::unite".to_string()]);
    let e = r.evidence.unwrap();
    assert_eq!(e.differs_from, vec!["unite::comm".to_string()]);
    assert_eq!(e.values[0], ("call".to_string(), "{1..4}".to_string()));
    assert_eq!(e.operands, ["a0 = {1..2}", "a1 = {3..4}"]);
}

/// Inside a wrong step (site 2, wrong against two other ways that agree), `one::base` (site
/// 0, wrong against its one other way, which divides) and then `modulo` (site 1).
fn one_then_mod(modulo: Site) -> [Site; 3] {
    [
        site(&["z3::int_val"], &[("one::by_div", &["z3::operator/"])]),
        modulo,
        site(
            &["z3::int_val", "z3::mod"],
            &[
                ("zero::base", &["z3::int_val"]),
                ("zero::by_sub", &["z3::operator-"]),
            ],
        ),
    ]
}

/// The log of [`one_then_mod`]'s failed run, with `modulo`'s comparisons.
fn one_then_mod_log(modulo: &str) -> String {
    format!(
        "7 start\n7 enter 2\n7 enter 0\n7 leave 0\n7 record 0 0\n7 enter 1\n7 leave 1\n\
         7 record 1 1\n7 leave 2\n7 record 2 2\n7 same 0 0 1 0\n{modulo}\
         7 same 2 0 1 0\n7 same 2 0 2 0\n7 same 2 1 2 1\n7 check check_equal\n7 signal 6\n"
    )
}

#[test]
fn a_wrong_value_shown_by_two_other_ways_comes_before_one_shown_by_one() {
    // Inside a wrong step, `one::base` differs from its one other way (which divides, and a
    // faulty `/` makes that way the wrong one) before `modulo::base` differs from two other
    // ways that agree: the second is the culprit, and the first knockout to try.
    let sites = one_then_mod(site(
        &["z3::mod"],
        &[
            ("modulo::a", &["z3::mod", "z3::operator-"]),
            ("modulo::b", &["z3::mod", "z3::operator*"]),
        ],
    ));
    let log = one_then_mod_log("7 same 1 0 1 0\n7 same 1 0 2 0\n7 same 1 1 2 1\n");
    let log = log.as_str();
    let r = read(log, &sites);
    assert_eq!(r.culprit, vec!["z3::mod".to_string()], "{r:?}");
    let order: Vec<usize> = wrong_records(log, &sites).iter().map(|w| w.seq).collect();
    assert_eq!(order, [1, 0, 2]);
}

#[test]
fn a_wrong_value_another_way_shares_is_shown_by_the_operation_that_splits_the_ways() {
    // Seed 71's z3_102, with z3_div and z3_mod on: `zero_by_mod_one(t)` (site 2) computes
    // `mod(x, one::base())`; `mod(1, 1)` gives 1. `zero::zero_by_mod` agrees with it,
    // `zero::base` and `zero::zero_by_div` give 0. Inside, `one::base` differs from
    // `one_by_div` (whose `/` is faulty) and `modulo::base` from `mod_by_sub` (which divides
    // too): one other way each, which computes with the zero generator's operations.
    let mod_ops = [".int_val", "z3::ite", "z3::mod", "z3::operator==(x,y)"];
    let div_ops = [
        ".int_val",
        "z3::ite",
        "z3::operator/(x,y)",
        "z3::operator==(x,y)",
    ];
    let sites = [
        site(&[".int_val"], &[("one::one_by_div", &div_ops)]),
        site(&mod_ops, &[("modulo::mod_by_sub", &div_ops)]),
        site(
            &mod_ops,
            &[
                ("zero::base", &[".int_val"]),
                ("zero::zero_by_div", &div_ops),
                ("zero::zero_by_mod", &mod_ops),
            ],
        ),
    ];
    let log = "4 start\n4 enter 2\n4 enter 0\n4 leave 0\n4 record 0 0\n4 enter 1\n\
               4 leave 1\n4 record 1 1\n4 leave 2\n4 record 2 2\n4 same 0 0 1 0\n\
               4 same 1 0 1 0\n4 same 2 0 1 0\n4 same 2 0 2 0\n4 same 2 0 3 1\n\
               4 same 2 1 2 1\n4 same 2 1 3 0\n4 same 2 2 3 0\n4 check c\n4 signal 6\n";
    // The knockouts replace the zero generator's value before the 1 whose one other way
    // divides: replacing it by -1 would take `mod(x, 1)`'s trigger away too.
    let wrong = wrong_records(log, &sites);
    assert_eq!(wrong.iter().map(|w| w.seq).collect::<Vec<_>>(), [1, 2, 0]);
    assert_eq!(wrong[1].way, 1);
    let r = read_at(log, &sites, 2);
    assert_eq!(r.culprit, ["z3::mod"], "{r:?}");
    assert_eq!(
        r.evidence.unwrap().differs_from,
        ["zero::base", "zero::zero_by_div"]
    );
}

#[test]
fn a_step_wrong_against_a_way_without_library_operations_is_the_wrong_one() {
    // Seed 64's z3_79: the check compares a C++ `if` (which simplifies its operand) with
    // `ite_integer::base`, each step probed against the other; `z3::ite` is faulty. The
    // `if` computes with no library operation, so it cannot be the wrong one.
    let sites = [
        site(
            &[".simplify"],
            &[("ite_integer::base", &[".bool_val", "z3::ite"])],
        ),
        site(
            &[".bool_val", "z3::ite"],
            &[("ite_integer::ite_by_cpp_check", &[])],
        ),
    ];
    let log = "2 record 0 0\n2 record 1 1\n2 same 0 0 1 0\n2 same 1 0 1 0\n2 check c\n\
               2 signal 6\n";
    let r = read(log, &sites);
    assert_eq!(r.culprit, [".bool_val", "z3::ite"], "{r:?}");
    assert_eq!(
        r.evidence.unwrap().differs_from,
        ["ite_integer::ite_by_cpp_check"]
    );
}

#[test]
fn a_call_inside_that_computed_a_right_value_clears_its_operations() {
    // Seed 64's z3_126: `iden_by_ite_true(t)` (site 2) simplifies `t`, makes `true` and
    // returns `ite(true, t, dead)`, which a faulty `z3::ite` gets wrong; the `simplify` and
    // `true` calls inside agree with all their other ways at their operands, and only the
    // `ite`, not probed, is left.
    let sites = [
        site(
            &[".simplify"],
            &[
                ("identity::base", &[]),
                ("identity::add_zero", &[".int_val", "z3::operator+(x,y)"]),
            ],
        ),
        site(
            &[".bool_val"],
            &[
                ("true_expr::by_equal", &["z3::operator==(x,y)"]),
                (
                    "true_expr::by_not_false",
                    &[".bool_val", "z3::operator!(x)"],
                ),
            ],
        ),
        site(
            &[".bool_val", ".simplify", "z3::ite"],
            &[
                ("identity::base", &[]),
                ("identity::add_zero", &[".int_val", "z3::operator+(x,y)"]),
                (
                    "identity::div_one",
                    &[".int_val", "z3::ite", "z3::operator/(x,y)"],
                ),
            ],
        ),
    ];
    let log = "6 enter 2\n6 enter 0\n6 leave 0\n6 record 0 0\n6 enter 1\n6 leave 1\n\
               6 record 1 1\n6 leave 2\n6 record 2 2\n6 same 0 0 1 1\n6 same 0 0 2 1\n\
               6 same 0 1 2 1\n6 same 1 0 1 1\n6 same 1 0 2 1\n6 same 1 1 2 1\n\
               6 same 2 0 1 0\n6 same 2 0 2 0\n6 same 2 0 3 0\n6 same 2 1 2 1\n\
               6 same 2 1 3 1\n6 same 2 2 3 1\n6 check c\n6 signal 6\n";
    assert_eq!(read(log, &sites).culprit, ["z3::ite"]);
}

#[test]
fn a_call_that_agrees_with_most_ways_is_right_when_the_odd_way_computes_with_more() {
    // A z3_div result, `z3_div` and `z3_eq` on: `div_one(t)` (site 1) is `division::base(t,
    // 1)`, opened, so its comparison `1 == 0` (site 0) is probed. It agrees with two of its
    // ways and differs from `0 == 1 - 0`, which subtracts too and which the faulty `0 == b`
    // gets wrong: that difference is no evidence against `==`, and the right value clears
    // it; the choice and the division are left.
    let sites = [
        site(
            &["z3::operator==(x,y)"],
            &[
                (
                    "equal_int::check_equal_by_div_is_one",
                    &["z3::ite", "z3::operator/(x,y)", "z3::operator==(x,y)"],
                ),
                (
                    "equal_int::check_equal_by_sub_is_zero",
                    &["z3::operator-(x,y)", "z3::operator==(x,y)"],
                ),
                ("equal_int::check_equal_comm", &["z3::operator==(x,y)"]),
            ],
        ),
        site(
            &["z3::ite", "z3::operator/(x,y)", "z3::operator==(x,y)"],
            &[
                ("identity::base", &[]),
                ("identity::add_zero", &["z3::operator+(x,y)"]),
                ("identity::double_negative", &["z3::operator-(x)"]),
            ],
        ),
    ];
    let log = "6 enter 1\n6 enter 0\n6 leave 0\n6 record 0 0\n6 leave 1\n6 record 1 1\n\
               6 same 0 0 1 1\n6 same 0 0 2 0\n6 same 0 0 3 1\n6 same 0 1 2 0\n\
               6 same 0 1 3 1\n6 same 0 2 3 0\n6 same 1 0 1 0\n6 same 1 0 2 0\n\
               6 same 1 0 3 0\n6 same 1 1 2 1\n6 same 1 1 3 1\n6 same 1 2 3 1\n\
               6 check c\n6 signal 6\n";
    assert_eq!(read(log, &sites).culprit, ["z3::ite", "z3::operator/(x,y)"]);
}

#[test]
fn a_knocked_out_value_whose_one_difference_is_outvoted_names_nothing() {
    // Seed 88's z3_70: `zero::base`'s 0 differs only from `zero_by_div`, which the other
    // ways outvote (its `/` is faulty; the comparisons with the rest told nothing).
    let sites = [site(
        &[".int_val"],
        &[
            ("zero::zero_by_sub", &["z3::operator-(x,y)"]),
            (
                "zero::zero_by_div",
                &[".int_val", "z3::ite", "z3::operator/(x,y)"],
            ),
            ("zero::zero_by_mod", &[".int_val", "z3::ite", "z3::mod"]),
        ],
    )];
    let log = "8 record 0 0\n8 same 0 0 1 2\n8 same 0 0 2 0\n8 same 0 0 3 2\n\
               8 same 0 1 2 0\n8 same 0 1 3 1\n8 same 0 2 3 0\n8 check c\n8 signal 6\n";
    let r = read_at(log, &sites, 0);
    assert!(r.culprit.is_empty(), "{r:?}");
    assert!(r.undecided.unwrap().contains("differs from another"));
}

#[test]
fn of_two_wrong_values_at_one_depth_the_later_is_knocked_out_first() {
    // `one::base` (1, where its one other way gives -1) then `modulo::base(x, one)`, each
    // wrong by one other way: replacing the 1 would take `mod(x, 1)`'s trigger away too.
    let sites = one_then_mod(site(
        &["z3::mod"],
        &[("modulo::by_sub", &["z3::operator-"])],
    ));
    let log = one_then_mod_log("7 same 1 0 1 0\n");
    let order: Vec<usize> = wrong_records(&log, &sites).iter().map(|w| w.seq).collect();
    assert_eq!(order, [1, 0, 2]);
}

#[test]
fn agreement_elsewhere_narrows_and_two_faults_are_undecided() {
    // sub(0, x) is wrong; the two other ways agree, and both use +.
    let sites = [site(
        &["z3::operator-"],
        &[
            ("sub::a", &["z3::operator+", "z3::operator*"]),
            ("sub::b", &["z3::operator+"]),
        ],
    )];
    let log =
        "5 record 0 0\n5 same 0 0 1 0\n5 same 0 0 2 0\n5 same 0 1 2 1\n5 check c\n5 signal 6\n";
    assert_eq!(read(log, &sites).culprit, vec!["z3::operator-".to_string()]);
    // Two steps, each right by one other way and wrong by another, whose differing pairs
    // share nothing: no step is plainly wrong, and no one operation explains it all.
    let sites = [
        site(
            &["z3::operator<"],
            &[
                ("lt::a", &["z3::operator>"]),
                ("lt::b", &["z3::operator<="]),
            ],
        ),
        site(
            &["z3::operator+"],
            &[
                ("add::a", &["z3::operator*"]),
                ("add::b", &["z3::operator/"]),
            ],
        ),
    ];
    let log = "5 record 0 0\n5 record 1 1\n5 same 0 0 1 0\n5 same 0 0 2 1\n5 same 0 1 2 0\n\
               5 same 1 0 1 1\n5 same 1 0 2 0\n5 same 1 1 2 0\n5 check c\n5 signal 6\n";
    let r = read(log, &sites);
    assert!(r.culprit.is_empty(), "{r:?}");
    assert!(r.undecided.unwrap().contains("share no library operation"));
}

#[test]
fn another_way_that_uses_an_operation_at_other_operands_does_not_clear_it() {
    // A step (site 1: an instance whose value depends on ==, /, ite, int_val and pw) is
    // wrong; its two other ways agree, and one of them computes with ==, / and ite too, at
    // other operands, where the fault does not fire: they stay suspects. Inside the step,
    // a base call of int_val has one other way, which computes with them as well: their
    // difference proves nothing about int_val, so the search stays at the step.
    let mut step = site(
        &[
            "z3::operator==(x,y)",
            "z3::operator/(x,y)",
            "z3::ite",
            ".int_val",
            "z3::pw",
        ],
        &[
            ("one::base", &[".int_val"]),
            (
                "one::one_by_div",
                &[
                    ".int_val",
                    "z3::ite",
                    "z3::operator/(x,y)",
                    "z3::operator==(x,y)",
                ],
            ),
        ],
    );
    step.ops = Vec::new();
    let sites = [
        site(
            &[".int_val"],
            &[(
                "one::one_by_div",
                &[
                    ".int_val",
                    "z3::ite",
                    "z3::operator/(x,y)",
                    "z3::operator==(x,y)",
                ],
            )],
        ),
        step,
    ];
    let log = "3 enter 1\n3 enter 0\n3 leave 0\n3 record 0 0\n3 leave 1\n3 record 1 1\n\
               3 same 0 0 1 0\n3 same 1 0 1 0\n3 same 1 0 2 0\n3 same 1 1 2 1\n\
               3 check c\n3 signal 6\n";
    let r = read(log, &sites);
    assert_eq!(
        r.culprit,
        ["z3::ite", "z3::operator/(x,y)", "z3::operator==(x,y)"],
        "{r:?}"
    );
    assert_eq!(
        r.evidence.unwrap().differs_from,
        ["one::base", "one::one_by_div"]
    );
}

#[test]
fn a_call_that_throws_is_the_culprit_and_nothing_named_is_undecided() {
    let sites = [site(
        &["iset::complement"],
        &[("complement::a", &["iset::subtract"])],
    )];
    let log = "9 start\n9 enter 0\n9 exception std::out_of_range\n9 signal 6\n";
    let r = read(log, &sites);
    assert_eq!(r.failure.as_deref(), Some("exception std::out_of_range"));
    assert_eq!(r.culprit, vec!["iset::complement".to_string()]);
    let log = "9 start\n9 record 0 0\n9 value 0 0 a\n9 check c\n9 signal 6\n";
    let r = read(log, &sites);
    assert!(r.culprit.is_empty());
    assert!(r.undecided.is_some());
    assert!(read("", &sites).undecided.unwrap().contains("no probe log"));
}

#[test]
fn a_check_that_fails_on_values_that_all_agree_is_named_itself() {
    // z3_eval: the model evaluation inside `check_exprs_are_zero` is wrong; every value the
    // variants compute agrees with its other ways, so the wrong step is in the check.
    let sites = [site(
        &["z3::operator-(x)"],
        &[("neg::by_sub", &["z3::operator-(x,y)"])],
    )];
    let log = "9 start\n9 record 0 0\n9 value 0 0 (- x)\n9 value 0 1 (- 0 x)\n9 same 0 0 1 1\n\
               9 check check_expr_same_sat\n9 check check_exprs_are_zero\n9 signal 6\n";
    let r = read(log, &sites);
    assert_eq!(r.failure.as_deref(), Some("check_exprs_are_zero"));
    assert_eq!(r.culprit, vec!["in check_exprs_are_zero".to_string()]);
    let how = r.evidence.unwrap().how;
    assert!(how.contains("check's own library calls"), "{how}");
    // A value that differs keeps the reading on the values, whichever check fired.
    let log = log.replace("same 0 0 1 1", "same 0 0 1 0");
    assert_eq!(
        read(&log, &sites).culprit,
        vec!["z3::operator-(x)".to_string()]
    );
}

/// Two variant steps compared by the check: `modulo::base` (site 0, one other way) and an
/// instance of `mod_by_sub` (site 1, whose only other way is `modulo::base`), with a call
/// inside the instance (site 2) that differs from two other ways that agree.
fn two_steps() -> (Vec<Site>, &'static str) {
    let sites = vec![
        site(
            &["z3::mod"],
            &[("modulo::mod_by_sub", &["z3::/", "z3::*", "z3::-"])],
        ),
        site(
            &["z3::/", "z3::*", "z3::-"],
            &[("modulo::base", &["z3::mod"])],
        ),
        site(
            &["z3::/"],
            &[("identity::base", &[]), ("identity::add_zero", &["z3::+"])],
        ),
    ];
    let log = "3 start\n3 enter 0\n3 leave 0\n3 record 0 0\n3 enter 1\n3 enter 2\n3 leave 2\n\
               3 record 1 2\n3 leave 1\n3 record 2 1\n3 same 0 0 1 0\n3 same 1 0 1 0\n\
               3 same 1 0 2 0\n3 same 1 1 2 1\n3 same 2 0 1 0\n3 check c\n3 signal 6\n";
    (sites, log)
}

#[test]
fn a_step_that_only_differs_from_its_one_other_way_gives_way_to_a_step_shown_wrong_inside() {
    // The first step differs from its one other way, which proves no more against it than
    // against that way; the second step's inner call is plainly wrong: it is named.
    let (sites, log) = two_steps();
    let r = read(log, &sites);
    assert_eq!(r.culprit, vec!["z3::/".to_string()], "{r:?}");
    assert_eq!(r.evidence.unwrap().family, sites[2].family);
}

#[test]
fn value_knockouts_try_the_deepest_first_and_not_a_step_that_differs_from_one_other_way() {
    // A knockout of either step would remove the failure whichever side was wrong (the
    // check compares them): only the inner call is worth a run.
    let (sites, log) = two_steps();
    let wrong = wrong_records(log, &sites);
    let order: Vec<(usize, bool)> = wrong.iter().map(|w| (w.seq, w.telling)).collect();
    assert_eq!(order, [(1, true), (2, false), (0, false)]);
}

#[test]
fn a_difference_only_another_way_is_odd_in_does_not_implicate_the_call() {
    // A step (an instance that coalesces and intersects) is wrong against three other ways
    // that agree. Inside it, `intersect` agrees with its De Morgan way; only the commuted
    // way differs from both (a second fault that way reached): that pair says nothing
    // about the step's operations, so `intersect` is not the one every pair involves.
    let sites = [
        site(
            &[".intersect"],
            &[
                ("intersect::demorgan", &[".complement", ".unite"]),
                ("intersect::commutativity", &[".intersect"]),
            ],
        ),
        site(
            &[".coalesce", ".intersect"],
            &[
                ("identity::base", &[]),
                ("identity::double_complement", &[".complement"]),
                ("identity::intersect_idempotence", &[".intersect"]),
            ],
        ),
    ];
    let log = "4 start\n4 enter 1\n4 enter 0\n4 leave 0\n4 record 0 0\n4 leave 1\n\
               4 record 1 1\n4 same 0 0 1 1\n4 same 0 0 2 0\n4 same 0 1 2 0\n\
               4 same 1 0 1 0\n4 same 1 0 2 0\n4 same 1 0 3 0\n4 same 1 1 2 1\n\
               4 same 1 1 3 1\n4 same 1 2 3 1\n4 check check_is_equal\n4 signal 6\n";
    let r = read(log, &sites);
    assert_eq!(r.culprit, vec![".coalesce".to_string()], "{r:?}");
}

#[test]
fn an_inner_call_that_differs_from_one_other_way_does_not_show_its_step_wrong() {
    // isl's faulty complement of two basic sets: `r_0`'s `complement(s)` differs from its one
    // other way, `universe - s`; `r_5`'s instance `universe - s` differs from its one other
    // way, `complement(s)`, and so does the `subtract` inside it from `u ∩ complement(s)`.
    // Every difference is one against one: the inner call shows the second step no more
    // wrong than the first, which stays the one the search starts from.
    let sites = [
        site(
            &[".complement"],
            &[("complement::universe_subtract", &[".subtract", ".universe"])],
        ),
        site(
            &[".subtract"],
            &[("subtract::by_intersect", &[".complement", ".intersect"])],
        ),
        site(
            &[".subtract", ".universe"],
            &[("complement::base", &[".complement"])],
        ),
    ];
    let log = "5 start\n5 enter 0\n5 leave 0\n5 record 0 0\n5 enter 2\n5 enter 1\n5 leave 1\n\
               5 record 1 1\n5 leave 2\n5 record 2 2\n5 same 0 0 1 0\n5 same 1 0 1 0\n\
               5 same 2 0 1 0\n5 check check_is_equal\n5 signal 6\n";
    let r = read(log, &sites);
    assert_eq!(r.culprit, vec![".complement".to_string()], "{r:?}");
}

#[test]
fn a_value_shown_by_one_way_inside_a_call_its_ways_find_right_is_knocked_out_last() {
    // Seed 123's z3_15 (z3_div, z3_mul, z3_uminus and z3_gt on): inside the step
    // `neg_by_sub_times_two(t)` (record 1), `one::base` (record 0) gives 1 and its one other
    // way `one_by_div` -1 (its `/` is faulty); the step agrees with `neg_by_sub_zero`, so the
    // 1 did not make it wrong. `neg::base` (record 2, the other variant's step) gives 1 where
    // both its other ways give -1 (`-x` is faulty). Replacing the 1 of `one::base` by -1
    // takes the failure away too, by making the first step as wrong as the second: `neg::base`
    // is knocked out first.
    let div_ops = [".int_val", "z3::ite", "z3::operator/(x,y)"];
    let sites = [
        site(&[".int_val"], &[("one::one_by_div", &div_ops)]),
        site(
            &[".int_val", "z3::operator*(x,y)", "z3::operator-(x,y)"],
            &[
                ("neg::base", &["z3::operator-(x)"]),
                ("neg::neg_by_sub_zero", &[".int_val", "z3::operator-(x,y)"]),
            ],
        ),
        site(
            &["z3::operator-(x)"],
            &[
                (
                    "neg::neg_by_sub_times_two",
                    &[".int_val", "z3::operator*(x,y)", "z3::operator-(x,y)"],
                ),
                ("neg::neg_by_sub_zero", &[".int_val", "z3::operator-(x,y)"]),
            ],
        ),
    ];
    let log = "5 start\n5 enter 1\n5 enter 0\n5 leave 0\n5 record 0 0\n5 leave 1\n5 record 1 1\n\
               5 enter 2\n5 leave 2\n5 record 2 2\n5 check check_expr_same_sat\n5 signal 6\n\
               5 same 0 0 1 0\n5 same 1 0 1 0\n5 same 1 0 2 1\n5 same 1 1 2 0\n\
               5 same 2 0 1 0\n5 same 2 0 2 0\n5 same 2 1 2 1\n5 compared\n";
    let order: Vec<usize> = wrong_records(log, &sites).iter().map(|w| w.seq).collect();
    assert_eq!(order, [2, 0]);
    let r = read_at(log, &sites, 2);
    assert_eq!(r.culprit, ["z3::operator-(x)"], "{r:?}");
}

#[test]
fn a_call_built_from_right_values_names_the_other_way_it_differs_from() {
    // Seed 144's isl_24: `unite_assoc_back` computes `s1 ∪ (s2 ∪ s3)` by De Morgan, and every
    // probed call inside it agrees with its other ways at its own operands; `base_front`'s
    // `(s1 ∪ s2) ∪ s3` differs, as a faulty union of an empty set makes it. Union is on both
    // sides, yet the other way is the wrong one.
    let instance = |reach: &[&str], alts: &[(&str, &[&str])]| Site {
        ops: Vec::new(),
        ..site(reach, alts)
    };
    let sites = [
        site(
            &[".unite"],
            &[
                ("unite::unite_demorgan", &[".complement", ".intersect"]),
                ("unite::unite_commutativity", &[".unite"]),
            ],
        ),
        site(
            &[".complement"],
            &[("complement::by_subtract", &[".subtract"])],
        ),
        site(
            &[".intersect"],
            &[("intersect::intersect_commutativity", &[".intersect"])],
        ),
        instance(
            &[".complement", ".intersect"],
            &[
                ("unite::base", &[".unite"]),
                ("unite::unite_commutativity", &[".unite"]),
            ],
        ),
        instance(
            &[".complement", ".intersect", ".unite"],
            &[("unite_assoc::base_front", &[".unite"])],
        ),
    ];
    let log = "7 start\n7 enter 4\n7 enter 0\n7 leave 0\n7 record 0 0\n7 enter 3\n7 enter 1\n\
               7 leave 1\n7 record 1 1\n7 enter 2\n7 leave 2\n7 record 2 2\n7 leave 3\n\
               7 record 3 3\n7 leave 4\n7 record 4 4\n7 kept\n7 check check_is_equal\n\
               7 signal 6\n7 same 0 0 1 1\n7 same 0 0 2 1\n7 same 0 1 2 1\n7 same 1 0 1 1\n\
               7 same 2 0 1 1\n7 same 3 0 1 1\n7 same 3 0 2 1\n7 same 3 1 2 1\n\
               7 same 4 0 1 0\n7 compared\n";
    let r = read(log, &sites);
    assert_eq!(r.culprit, vec![".unite".to_string()], "{r:?}");
    let how = r.evidence.unwrap().how;
    assert!(how.contains("the other way is the wrong one"), "{how}");
    // One probed call inside that differs from its other way: the call is not shown right,
    // and the operations one side applies alone are named, as before.
    let log = log.replace("7 same 1 0 1 1", "7 same 1 0 1 0");
    let r = read(&log, &sites);
    assert_ne!(r.culprit, vec![".unite".to_string()], "{r:?}");
}
