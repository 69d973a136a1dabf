//! The probes' runtime (`runtime.hpp`) built with g++ and run: how it compares two values
//! (issue 62), read back through [`super::probe_log`].

use super::probe_log::{runs_of, ProcessLog};

/// A program on the runtime: a term type with two printed forms of one value (`(= 1 0)` and
/// `(= 0 1)`), the spec's comparison of terms (`check_same`, which aborts when they differ)
/// and a check that applies to no term (it fails a term against itself); one probed term call,
/// one probed `int` call (no check compares ints), then a failing check.
const PROGRAM: &str = r#"
#include <algorithm>
#include <ostream>
struct Term { int a, b; bool flipped; };
std::ostream& operator<<(std::ostream& o, const Term& t) {
    return o << "(= " << (t.flipped ? t.b : t.a) << " " << (t.flipped ? t.a : t.b) << ")";
}
void check_same(const Term& x, const Term& y) {
    if (std::min(x.a, x.b) != std::min(y.a, y.b) || std::max(x.a, x.b) != std::max(y.a, y.b))
        std::abort();
}
void check_never(const Term&, const Term&) { std::abort(); }
int main() {
    auto term = [](int a) {
        Term v{a, 0, false};
        return mfppr_value::keep(0, v, std::forward_as_tuple(a),
            [&] { return Term{a, 0, true}; }, [&] { return Term{a + 1, 0, false}; });
    };
    auto number = [](int a) {
        int v = a;
        return mfppr_value::keep(1, v, std::forward_as_tuple(a), [&] { return a; },
            [&] { return a + 1; });
    };
    Term r = term(1);
    number(3);
    auto kept = mfppr_value::compare_later<Term>(
        [&](const auto& x, const auto& y) { check_same(x, y); },
        [&](const auto& x, const auto& y) { check_never(x, y); });
    mfppr_value::at_check("check_same");
    check_same(r, Term{2, 0, false});
}
"#;

/// The run of [`PROGRAM`] on the runtime, from its probe log; `None` without g++.
fn ran() -> Option<ProcessLog> {
    if !crate::tools::available("g++") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("probes.log");
    let source = format!(
        "#define MFPPR_VALUE_LOG {}\n{}\n{PROGRAM}",
        crate::cpp_text::string_literal(log.as_os_str().as_encoded_bytes()),
        include_str!("runtime.hpp")
    );
    let cpp = dir.path().join("t.cpp");
    std::fs::write(&cpp, source).unwrap();
    let exe = dir.path().join("t");
    let built = std::process::Command::new("g++")
        .args(["-std=c++17", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let run = std::process::Command::new(&exe).output().unwrap();
    assert!(!run.status.success(), "the program's own check fails");
    let mut runs = runs_of(&std::fs::read_to_string(&log).unwrap());
    assert_eq!(runs.len(), 1, "the comparisons' children log nothing");
    runs.pop()
}

#[test]
fn two_printed_forms_of_one_value_are_the_same_value_and_a_failing_comparison_is_recorded() {
    let Some(run) = ran() else {
        return;
    };
    assert_eq!(run.values[&(0, 0)], "(= 1 0)");
    assert_eq!(run.values[&(0, 1)], "(= 0 1)");
    // `(= 1 0)` and `(= 0 1)`: one value, by the spec's check (the check that applies to no
    // term tells nothing and is not asked).
    assert_eq!(run.same[&(0, 0, 1)], 1);
    // `check_same` aborts for `(= 2 0)`: recorded as a difference, and the run goes on.
    assert_eq!(run.same[&(0, 0, 2)], 0);
    assert_eq!(run.same[&(0, 1, 2)], 0);
    assert!(
        run.printed.iter().all(|&(seq, _, _)| seq == 1),
        "{:?}",
        run.printed
    );
    // No check compares ints: their printed forms do, and the log says so.
    assert_eq!(run.same[&(1, 0, 1)], 1);
    assert_eq!(run.same[&(1, 0, 2)], 0);
    assert!(run.printed.contains(&(1, 0, 2)));
    assert_eq!(run.signal.as_deref(), Some("6"));
}
