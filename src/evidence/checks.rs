//! Which checks fail (issue 60): the test instrumented so that every check statement runs in a
//! child process of its own (a fork, waited for with no time bound of its own) and the run goes
//! on past a failing one, each outcome logged with its position. Until one fails the checks run
//! one at a time, as in the test; after that only the checks of the failing one's function run
//! (the failure the original shows; a solver's other checks can take seconds each), as many at
//! once as there are processors. After the last check the run waits for them all, logs its end
//! and aborts if one failed, as the test would have. The original stops at its first failing
//! check; this run tells every check that fails with the same function, so the search's check
//! cut can keep their variants and drop the rest. No value is compared and nothing is timed, so
//! the outcome does not depend on the machine's load.

use std::path::Path;

use anyhow::Result;

use super::run_log;
use crate::edit::{self, Edit};
use crate::judge::Judge;
use crate::model::TestModel;

/// Why there are no failing checks to read when nothing was run: the test has no check.
pub(crate) const NO_CHECK: &str = "the test has no check";

/// The checks that fail in one run with every check run to its end ([`failing`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Failing {
    /// In text order, each as (variant index, position among the variant's checks).
    pub failed: Vec<(usize, usize)>,
    /// Whether the run reached its end; when it did not, `failed` is its first failing check
    /// only ([`failed`]).
    pub ended: bool,
}

/// Why a run tells no failing check.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NoFailing {
    pub why: String,
    /// The failure is not in a check: the test has none, no check failed, or the run stopped
    /// before any did (a crash or a hang in what the test computes).
    pub elsewhere: bool,
}

impl NoFailing {
    fn new(why: &str, elsewhere: bool) -> NoFailing {
        NoFailing {
            why: why.to_string(),
            elsewhere,
        }
    }
}

/// The checks that fail in one run of `text` (the original, `model` its reading) through `judge`
/// with every check run to its end. `Ok(Err(why))` when the run tells none: no check
/// ([`NO_CHECK`]: then nothing ran), no log (a check that never runs the program), a run that
/// did not reach its end before a check failed, or no check failed.
pub(crate) fn failing(
    text: &[u8],
    model: &TestModel,
    judge: &dyn Judge,
) -> Result<std::result::Result<Failing, NoFailing>> {
    let Some(instrumented) = Instrumented::new(text, model)? else {
        return Ok(Err(NoFailing::new(NO_CHECK, true)));
    };
    let judged = judge.judge(&instrumented.text)?;
    Ok(instrumented.failing(judged, model, judge))
}

/// The original instrumented so that every check runs to its end, and the scratch directory its
/// run writes the log in (removed when this is dropped): what [`failing`] runs, or what a spare
/// slot runs beside the original's own check.
pub(crate) struct Instrumented {
    /// The instrumented text (LF line endings, as the original's).
    pub text: Vec<u8>,
    log: std::path::PathBuf,
    _scratch: tempfile::TempDir,
}

impl Instrumented {
    /// `text` instrumented; `None` when it has no check ([`NO_CHECK`]).
    pub(crate) fn new(text: &[u8], model: &TestModel) -> Result<Option<Instrumented>> {
        let scratch = tempfile::Builder::new().prefix("mfppr-checks-").tempdir()?;
        let log = scratch.path().join("checks.log");
        Ok(instrument(text, model, &log).map(|text| Instrumented {
            text,
            log,
            _scratch: scratch,
        }))
    }

    /// The checks that failed in its run, which ended as `judged` (through `judge`, whose
    /// timeout the reason names), or why the log tells none.
    pub(crate) fn failing(
        &self,
        judged: crate::judge::Judged,
        model: &TestModel,
        judge: &dyn Judge,
    ) -> std::result::Result<Failing, NoFailing> {
        let (lines, cut) = run_log::read(&self.log);
        let logged = run_log::Logged { judged, lines, cut };
        if let Some(why) = logged.why_none(judge, "log of the checks") {
            return Err(NoFailing {
                why,
                elsewhere: false,
            });
        }
        let Some((failed, ended)) = failed(&String::from_utf8_lossy(&logged.lines)) else {
            return Err(NoFailing::new(
                "the run did not reach its end (a check past the time limit, or a crash) and no \
                 check failed before",
                true,
            ));
        };
        let failed: Vec<(usize, usize)> = failed
            .into_iter()
            .filter_map(|k| check_at(model, k))
            .collect();
        match failed.is_empty() {
            true => Err(NoFailing::new(
                "no check failed (the failure is elsewhere)",
                true,
            )),
            false => Ok(Failing { failed, ended }),
        }
    }
}

/// The checks' runtime, inserted before the test's first definition.
const RUNTIME: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>
namespace mfppr_check {
// The check function of the first check that failed; empty until one did.
inline std::string first;
// The checks still running, as (position, child), oldest first.
inline std::vector<std::pair<int, pid_t>> running;
inline void say(const std::string& line) {
    if (std::FILE* log = std::fopen(MFPPR_CHECK_LOG, "a")) {
        std::fprintf(log, "%s\n", line.c_str());
        std::fclose(log);
    }
}
// Wait for the oldest check still running and log whether it held; the first to fail names
// the check function the others are run for.
inline void reap(const char* name) {
    auto [k, pid] = running.front();
    running.erase(running.begin());
    int status = 0;
    bool held = ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                WEXITSTATUS(status) == 0;
    say("check " + std::to_string(k) + (held ? " held" : " failed"));
    if (!held && first.empty()) first = name;
}
// Check `k` (of check function `name`) in a child process. Until one fails they run one at a
// time, as in the test; after that only the checks of the failing one's function run, as many
// at once as there are processors, while the run goes on.
template <class F> void run(int k, const char* name, F check) {
    if (!first.empty() && first != name) {
        say("check " + std::to_string(k) + " skipped");
        return;
    }
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        check();
        std::fflush(nullptr);
        ::_exit(0);
    }
    if (pid < 0) {
        check();
        return;
    }
    running.emplace_back(k, pid);
    long cpus = first.empty() ? 1 : ::sysconf(_SC_NPROCESSORS_ONLN);
    while ((long)running.size() >= (cpus > 0 ? cpus : 1)) reap(name);
}
// After the last check: wait for them all, say the run got here, fail as the test would have.
inline void end() {
    while (!running.empty()) reap("");
    say("end");
    if (!first.empty()) std::abort();
}
}
"#;

/// `text` (read as `model`) with every check statement run by the checks' runtime, logging to
/// `log`; `None` when it has no check.
pub(crate) fn instrument(text: &[u8], model: &TestModel, log: &Path) -> Option<Vec<u8>> {
    let mut checks: Vec<_> = model.variants.iter().flat_map(|v| &v.checks).collect();
    checks.sort_by_key(|c| c.span.start);
    let last = checks.last()?.span.end;
    let mut edits: Vec<Edit> = checks
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let statement = String::from_utf8_lossy(&text[c.span.clone()]);
            let name = crate::cpp_text::string_literal(c.name.as_bytes());
            Edit::replace(
                c.span.clone(),
                format!("mfppr_check::run({k}, {name}, [&] {{ {statement}; }});"),
            )
        })
        .collect();
    edits.push(Edit::replace(last..last, " mfppr_check::end();"));
    let prelude = format!(
        "\n#define MFPPR_CHECK_LOG {}\n{RUNTIME}",
        crate::cpp_text::string_literal(log.as_os_str().as_encoded_bytes())
    );
    let at = model.first_definition();
    edits.push(Edit::replace(at..at, prelude));
    Some(edit::apply(text, &edits))
}

/// The checks that failed, by position in text order, read from the log the instrumented run
/// wrote (a line it did not finish, or one of another shape, tells nothing), and whether the run
/// reached its end; `None` when it tells none. A run that did not reach its end (killed at the
/// check's time limit, say by a slow check after the first failing one, or a crash outside a
/// check) tells only its first failing check: the checks run one at a time until that one, as
/// the original ran them to its failure, so whether the run got there does not depend on the
/// machine; what it logged after that does, and the cut must not.
pub(crate) fn failed(log: &str) -> Option<(Vec<usize>, bool)> {
    let mut failed = log.lines().filter_map(|line| {
        let mut words = line.split(' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("check"), Some(k), Some("failed"), None) => k.parse::<usize>().ok(),
            _ => None,
        }
    });
    if !log.lines().any(|l| l == "end") {
        return failed.next().map(|k| (vec![k], false));
    }
    let mut failed: Vec<usize> = failed.collect();
    failed.sort_unstable();
    failed.dedup();
    Some((failed, true))
}

/// The `k`-th check statement of the test in text order (the order [`instrument`] numbers them
/// in, and the probes' log too), as (variant index, position among the variant's checks).
pub(crate) fn check_at(model: &TestModel, k: usize) -> Option<(usize, usize)> {
    let mut checks: Vec<(usize, usize, usize)> = model
        .variants
        .iter()
        .flat_map(|v| {
            v.checks
                .iter()
                .enumerate()
                .map(move |(c, check)| (check.span.start, v.index, c))
        })
        .collect();
    checks.sort_unstable();
    checks.get(k).map(|&(_, v, c)| (v, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::document::Document;

    #[test]
    fn every_check_runs_in_its_own_child_and_the_run_fails_after_the_last() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/tests/iset_merge_small_a.cpp"
        );
        let text = std::fs::read(path).unwrap();
        let doc = Document::parse(text.clone()).unwrap();
        let model = TestModel::build(&doc, &Catalogue::default()).unwrap();
        let checks: Vec<String> = model
            .variants
            .iter()
            .flat_map(|v| &v.checks)
            .map(|c| String::from_utf8_lossy(&text[c.span.clone()]).into_owned())
            .collect();
        assert!(checks.len() > 1, "{checks:?}");
        let out = instrument(&text, &model, Path::new("/tmp/x.log")).unwrap();
        let out = String::from_utf8(out).unwrap();
        let names: Vec<&str> = model
            .variants
            .iter()
            .flat_map(|v| &v.checks)
            .map(|c| c.name.as_str())
            .collect();
        for (k, check) in checks.iter().enumerate() {
            let wrapped = format!(
                "mfppr_check::run({k}, \"{}\", [&] {{ {check}; }});",
                names[k]
            );
            assert!(out.contains(&wrapped), "{wrapped}");
        }
        assert_eq!(out.matches("mfppr_check::run(").count(), checks.len());
        let end = out.find("mfppr_check::end();").unwrap();
        assert!(end > out.rfind(checks.last().unwrap().as_str()).unwrap());
        assert!(
            out.find("#define MFPPR_CHECK_LOG \"/tmp/x.log\"").unwrap()
                < out.find("main(").unwrap()
        );
    }

    #[test]
    fn the_log_tells_the_checks_that_failed_in_order() {
        let log = "check 0 held\ncheck 3 failed\ncheck 2 skipped\ncheck 1 failed\nend\n";
        assert_eq!(failed(log), Some((vec![1, 3], true)));
        assert_eq!(failed("end"), Some((vec![], true)));
        assert_eq!(
            failed("check x failed\ncheck 1 failed twice\nend\n"),
            Some((vec![], true))
        );
        // A run killed before its end tells its first failing check only: how far it got after
        // that depends on the machine.
        let killed = "check 0 held\ncheck 2 failed\ncheck 3 failed\ncheck 1 fai";
        assert_eq!(failed(killed), Some((vec![2], false)));
        assert_eq!(failed("check 0 held\ncheck 1 fai"), None);
    }
}
