//! End-to-end campaign mode with real g++ and `interestingness/check-failure.py`: a batch of two
//! merge-bug tests and one passing test of the campaign corpus (`fixtures/campaign`, small tests;
//! `--no-tail`, which the journal and the scale-out do not depend on), stopped by SIGTERM, killed
//! (SIGKILL) mid-run and resumed, then the same campaign as a task file run by real GNU parallel
//! (`batch emit`) and merged with `batch collect`; the Slurm script's task-line selection (a real Slurm:
//! `tests/batch_slurm.rs`); the locks (a second batch on one OUTDIR is refused, tasks into one
//! OUTDIR run at once) and `--collect`'s count of emitted tasks without a result, with a gated
//! shell check. The check is a memo of the script ([`common::memo_check`]): each text is judged by
//! the real script once, and the campaign's later reductions see those verdicts. Hostile file
//! names: `tests/batch_hostile.rs`; the whole corpus: `tests/campaign.rs`. A copy of the campaign
//! localised again with a check that hangs on instrumented tests leaves each result `undecided`
//! with the reason, and nothing else changed.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::batch::{campaign_args, copy_tests, groups, reduced_bytes};
use common::root;
use serde_json::Value;

/// Smallest first: the passing test, then two tests of the merge bug (blame: `relations::shift`).
const TESTS: &[&str] = &["t_iset_4", "t_iset_82", "t_iset_16"];
const PASSING: &str = "t_iset_4";
/// The signature of both merge tests: blame's innermost suspect, the transplant that triggers
/// the failure.
const MERGE_SIGNATURE: &str = "check_equal | triggered by shift::shift_by_parts";
/// Their signature by the library operations their standalone exports call (where neither blame
/// nor a knockout decided, or in a journal of an mfppr without either).
const MERGE_OPERATIONS: &str =
    "check_equal | iset::from_interval iset::intersect iset::lower iset::shift iset::subtract iset::unite iset::upper";

fn mfppr() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mfppr"))
}

fn journal_lines(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn records(out: &Path) -> Vec<Value> {
    journal_lines(out)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn record<'a>(records: &'a [Value], stem: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["stem"] == stem)
        .unwrap_or_else(|| panic!("no record for {stem}"))
}

#[test]
fn batch_killed_and_resumed_then_the_same_through_parallel_and_collect() {
    if !common::require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Every reduction of the campaign after the first judges only candidates not judged before.
    let check = common::memo_check(
        &root().join("interestingness/check-failure.py"),
        &dir.path().join("memo"),
    );
    let inputs = copy_tests(dir.path(), TESTS);
    let out = dir.path().join("out");

    // SIGTERM stops the campaign with exit 130 and a consistent journal.
    let stopped = dir.path().join("stopped");
    let child = mfppr()
        .arg("batch")
        .arg(&inputs)
        .args(campaign_args(&stopped, &check))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while !stopped
        .join(TESTS[1])
        .join(format!("{}.reduced.cpp", TESTS[1]))
        .exists()
    {
        assert!(
            began.elapsed() < Duration::from_secs(120),
            "the batch did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let ended = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("continue with --resume"), "{stderr}");
    let finished = records(&stopped);
    assert!(finished.len() < TESTS.len());
    assert!(finished.iter().all(|r| r["outcome"] != "reduced"));
    assert!(stopped.join("summary.json").is_file());

    // Kill the batch once the passing test and one merge test are journaled; one test at a time,
    // so the last one is still being reduced then (two at once can finish within one poll).
    let mut one_at_a_time = campaign_args(&out, &check);
    let at_once = one_at_a_time
        .iter()
        .position(|a| a == "--tests-at-once")
        .unwrap();
    one_at_a_time[at_once + 1] = "1".into();
    // SIGKILL leaves the runs' scratch and cache directories behind: in the test's directory.
    let scratch = dir.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let mut child = mfppr()
        .arg("batch")
        .arg(&inputs)
        .args(&one_at_a_time)
        .env("TMPDIR", &scratch)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    // Two tests journaled and the third with a best result so far on disk.
    let third_has_a_result = || {
        let journaled = journal_lines(&out).join("\n");
        TESTS.iter().any(|t| {
            !journaled.contains(&format!("\"{t}\""))
                && out.join(t).join(format!("{t}.reduced.cpp")).exists()
        })
    };
    while journal_lines(&out).len() < 2 || !third_has_a_result() {
        assert!(
            began.elapsed() < Duration::from_secs(400),
            "two tests did not finish (and the third start) in time"
        );
        assert!(child.try_wait().unwrap().is_none(), "the batch ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = journal_lines(&out);
    assert_eq!(before.len(), 2, "the kill came after every test finished");
    let first = records(&out);
    assert_eq!(record(&first, PASSING)["outcome"], "not_interesting");
    let done = TESTS[1..]
        .iter()
        .copied()
        .find(|t| first.iter().any(|r| r["stem"] == *t))
        .expect("a merge test finished");
    assert_eq!(record(&first, done)["outcome"], "reduced");
    let cut = TESTS[1..].iter().copied().find(|t| *t != done).unwrap();
    let unfinished = out.join(cut).join(format!("{cut}.reduced.cpp"));
    let partial = std::fs::metadata(&unfinished)
        .expect("a best result so far")
        .len();

    // A batch without --resume refuses the existing journal.
    let refused = mfppr()
        .arg("batch")
        .arg(&inputs)
        .args(campaign_args(&out, &check))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));

    let resumed = mfppr()
        .arg("batch")
        .arg(&inputs)
        .args(campaign_args(&out, &check))
        .arg("--resume")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "resume failed: {stderr}");
    assert!(
        stderr.contains("2 of 3 tests already finished"),
        "finished tests were not skipped: {stderr}"
    );
    assert!(
        stderr.contains("mfppr batch: 3/3 tests done, 1 groups"),
        "no progress line: {stderr}"
    );
    let after = journal_lines(&out);
    assert_eq!(after.len(), 3, "finished tests were redone: {after:?}");
    assert_eq!(
        after[..2],
        before[..],
        "the journal's finished lines changed"
    );
    let all = records(&out);
    let a = record(&all, cut);
    assert_eq!(a["outcome"], "reduced");
    assert!(a["bytes_after"].as_u64().unwrap() <= partial);
    assert_eq!(a["hash"].as_str().unwrap().len(), 64);
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        stdout.starts_with("3 tests: 1 not_interesting, 2 reduced"),
        "{stdout}"
    );

    // Both merge tests are one bug: one group, by the library operations their standalone
    // exports call (those blame's shift MR reaches), and by the MR family with --group-by mrs.
    let local = groups(&out);
    let merge_tests = vec![TESTS[2].to_string(), TESTS[1].to_string()];
    let passing = ("not_interesting".to_string(), vec![PASSING.to_string()]);
    assert_eq!(
        local,
        vec![
            (MERGE_SIGNATURE.to_string(), merge_tests.clone()),
            passing.clone()
        ]
    );
    let summary = std::fs::read(out.join("summary.json")).unwrap();
    let retriage = |by: &str| {
        let ran = mfppr()
            .args(["batch", "retriage"])
            .arg(&out)
            .args(["--group-by", by])
            .arg("-I")
            .arg(root().join("fixtures/iset/spec"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
        assert!(ran.status.success(), "{stderr}");
        stderr
    };
    retriage("mrs");
    assert_eq!(
        groups(&out),
        vec![
            (
                "check_equal | relations::shift".to_string(),
                merge_tests.clone()
            ),
            passing.clone()
        ]
    );
    // By the wrong value (localised in every result, whatever the grouping): the merge bug's
    // operation, and explain shows the culprit call and the other ways that differ from it.
    retriage("value");
    assert_eq!(
        groups(&out),
        vec![
            ("wrong value | iset::unite".to_string(), merge_tests.clone()),
            passing.clone()
        ]
    );
    let valued = mfppr()
        .args(["batch", "explain", "1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&valued.stdout);
    assert!(
        said.starts_with("group 1: 2 test(s), grouped by value")
            && said.contains("culprit: iset::unite in `metalib::relations::unite::base(")
            && said.contains("unite::unite_comm"),
        "{said}"
    );
    // Localised again with the check (`retriage --check`): one instrumented run per result,
    // journaled anew (the latest record of a test counts), the same groups and culprit.
    let journaled = journal_lines(&out).len();
    let again = mfppr()
        .args(["batch", "retriage"])
        .arg(&out)
        .args(["--group-by", "value"])
        .args(common::batch::check_args(
            &check,
            &root().join("fixtures/iset/spec"),
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(stderr.contains("localising the wrong value of"), "{stderr}");
    assert_eq!(journal_lines(&out).len(), journaled + 2);
    let latest = records(&out);
    assert_eq!(
        groups(&out),
        vec![
            ("wrong value | iset::unite".to_string(), merge_tests.clone()),
            passing.clone()
        ],
        "{:?}",
        latest.last().unwrap()["value"]
    );
    let value = &latest.last().unwrap()["value"];
    assert_eq!(value["runs"], 1, "{value}");
    assert_eq!(value["culprit"][0], "iset::unite", "{value}");
    // An instrumented run that hangs (a copy of the campaign, localised again with a check that
    // sleeps on instrumented tests): killed after four times the timeout, each result undecided
    // with the reason in the journal; the reduced results, their calls and the passing test's
    // record stay as they were.
    let hung = dir.path().join("hung");
    assert!(Command::new("cp")
        .arg("-r")
        .arg(&out)
        .arg(&hung)
        .status()
        .unwrap()
        .success());
    let sleepy = dir.path().join("sleepy.sh");
    common::write_script(
        &sleepy,
        &format!(
            "#!/bin/sh\nif grep -q MFPPR_VALUE_LOG \"$1\"; then sleep 60; fi\nexec python3 {} \"$@\"\n",
            root().join("interestingness/check-failure.py").display()
        ),
    );
    let before = records(&hung);
    let began = Instant::now();
    let hangs = mfppr()
        .args(["batch", "retriage"])
        .arg(&hung)
        .args(["--group-by", "value", "--timeout", "1"])
        .args(common::batch::check_args(
            &sleepy,
            &root().join("fixtures/iset/spec"),
        ))
        .output()
        .unwrap();
    assert!(hangs.status.success(), "{hangs:?}");
    assert!(
        began.elapsed() < Duration::from_secs(40),
        "{:?}",
        began.elapsed()
    );
    let after = records(&hung);
    assert_eq!(after.len(), before.len() + 2);
    for t in &merge_tests {
        let r = after
            .iter()
            .rev()
            .find(|r| r["stem"] == t.as_str())
            .unwrap();
        let why = r["value"]["undecided"].as_str().unwrap_or_default();
        assert!(
            why.starts_with("the instrumented run: the check timed out"),
            "{r}"
        );
        assert_eq!(r["oracle_calls"], record(&before, t)["oracle_calls"]);
        assert_eq!(r["output"], record(&before, t)["output"]);
    }
    assert_eq!(
        after.iter().filter(|r| r["stem"] == PASSING).count(),
        1,
        "the passing test is not run again"
    );
    assert_eq!(groups(&hung).len(), 3, "{:?}", groups(&hung));
    retriage("library");
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), summary);

    // The old flag form is refused in one line that names the subcommand, touching nothing.
    let old = mfppr()
        .args(["batch", "--group-by", "library", "--triage-only"])
        .arg(&out)
        .arg("-I")
        .arg(root().join("fixtures/iset/spec"))
        .output()
        .unwrap();
    assert_eq!(old.status.code(), Some(2), "{old:?}");
    let said = String::from_utf8_lossy(&old.stderr);
    assert!(
        said.contains("use `mfppr batch retriage OUTDIR`"),
        "{old:?}"
    );
    assert_eq!(said.trim().lines().count(), 1, "{old:?}");
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), summary);

    // explain: the group's signature, what every member calls, each member, and the
    // representative's standalone export (the library's header included, no spec header).
    let explain = |group: &str| {
        mfppr()
            .args(["batch", "explain", group, "-o"])
            .arg(&out)
            .arg("-I")
            .arg(root().join("fixtures/iset/spec"))
            .output()
            .unwrap()
    };
    let ran = explain("1");
    let text = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(
        text.starts_with(&format!(
            "group 1: 2 test(s), grouped by library — signature `{MERGE_SIGNATURE}`\nwhy: every \
             member fails with `check_equal` and calls the MR shift::shift_by_parts as the \
             innermost call whose folding to its family's base makes the failure go away, or \
             inside that call"
        )),
        "{text}"
    );
    for t in &merge_tests {
        assert!(text.contains(&format!("\n  {t} ")), "{text}");
    }
    assert!(
        text.contains("#include \"iset.h\"") && !text.contains("spec_fuzz.hpp"),
        "{text}"
    );
    let ran = explain("7");
    assert_eq!(ran.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&ran.stderr).contains("explain takes 1 to 1"),
        "{ran:?}"
    );
    let r = record(&all, TESTS[1]);
    assert_eq!(r["signature_from"], "triggers");
    assert_eq!(r["library_signature"], MERGE_SIGNATURE);
    assert_eq!(r["triggers"], serde_json::json!(["shift::shift_by_parts"]));
    // Blame named the trigger, so no knockout ran.
    assert_eq!(r["knockout_calls"], 0);

    // A journal of an older mfppr (no library signature, triggers or knockouts): the results give
    // the library operations' signature, and a result that is gone keeps its MR-family signature,
    // with a warning.
    let journal = out.join("results.jsonl");
    let current = std::fs::read(&journal).unwrap();
    let older: String = journal_lines(&out)
        .iter()
        .map(|line| {
            let mut v: Value = serde_json::from_str(line).unwrap();
            let fields = v.as_object_mut().unwrap();
            for k in [
                "library_ops",
                "library_signature",
                "signature_from",
                "needs",
                "knockout_calls",
                "triggers",
                "within_triggers",
                "introduces",
                "value",
                "value_signature",
            ] {
                fields.remove(k);
            }
            format!("{v}\n")
        })
        .collect();
    std::fs::write(&journal, &older).unwrap();
    assert_eq!(retriage("library"), "");
    assert_eq!(
        groups(&out),
        vec![
            (MERGE_OPERATIONS.to_string(), merge_tests.clone()),
            passing.clone()
        ]
    );
    let gone = format!("{}.reduced.cpp", TESTS[1]);
    std::fs::write(&journal, older.replace(&gone, "gone.reduced.cpp")).unwrap();
    let warned = retriage("library");
    assert!(
        warned.contains(&format!("cannot re-triage {}", TESTS[1])),
        "{warned}"
    );
    assert_eq!(groups(&out).len(), 3, "{:?}", groups(&out));
    std::fs::write(&journal, current).unwrap();
    retriage("library");
    for t in &TESTS[1..] {
        let r = record(&all, t);
        let text = reduced_bytes(&out, t);
        assert_eq!(r["bytes_after"].as_u64().unwrap(), text.len() as u64);
        assert!(r["bytes_after"].as_u64() < r["bytes_before"].as_u64());
        assert!(String::from_utf8_lossy(&text).contains("check_equal"));
        assert!(out.join(t).join("stats.json").is_file());
    }

    // Grouped by value, the slip check (on by default since issue 62; `--repair-slips` is still
    // taken) folds the MR the wrong value points at (blame's trigger here): the original, run
    // once with it folded away, passes (the merge bug needs it), so nothing is flagged or
    // reduced again. The reduction's verdicts are the memo's, so only the localisation and that
    // run are new.
    let valued = dir.path().join("valued");
    let ran = mfppr()
        .arg("batch")
        .arg(inputs.join(format!("{}.cpp", TESTS[1])))
        .args(common::batch::check_args(
            &check,
            &root().join("fixtures/iset/spec"),
        ))
        .arg("-o")
        .arg(&valued)
        .args(["-j2", "--no-tail", "--group-by", "value", "--repair-slips"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let v = &records(&valued)[0];
    assert_eq!(v["slip_check_calls"], 1, "{v}");
    assert_eq!(v["slip_suspect"], false, "{v}");
    assert_eq!(
        v["triggers"],
        serde_json::json!(["shift::shift_by_parts"]),
        "{v}"
    );
    assert_eq!(v["value_signature"], "wrong value | iset::unite", "{v}");
    assert_eq!(
        v["triage_calls"].as_u64().unwrap(),
        2 + v["value"]["runs"].as_u64().unwrap(),
        "the failure run, the localisation's and the slip check's: {v}"
    );

    // The same campaign as tasks for GNU parallel, merged with --collect.
    if !common::require_tools(&["parallel"]) {
        return;
    }
    let out2 = dir.path().join("out2");
    let tasks = dir.path().join("tasks.txt");
    let emitted = mfppr()
        .args(["batch", "emit"])
        .arg(&inputs)
        .args(campaign_args(&out2, &check))
        .arg("--tasks")
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(emitted.status.success());
    let lines = std::fs::read_to_string(&tasks).unwrap();
    assert_eq!(lines.lines().count(), 3);
    assert!(lines
        .lines()
        .next()
        .unwrap()
        .contains(&format!("{PASSING}.cpp")));
    let ran = Command::new(root().join("scripts/batch-parallel"))
        .arg(&tasks)
        .arg("-j2")
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "parallel: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tasks.txt.joblog"))
            .unwrap()
            .lines()
            .count(),
        4
    );
    let collected = mfppr()
        .args(["batch", "collect"])
        .arg(&out2)
        .args(["--group-by", "library"])
        .output()
        .unwrap();
    assert!(collected.status.success());
    assert_eq!(groups(&out2), local);
    assert_eq!(journal_lines(&out2).len(), 3);
    // The test the kill did not touch gives the same bytes.
    assert_eq!(reduced_bytes(&out2, done), reduced_bytes(&out, done));
    // Collecting twice adds nothing; the old flag form is refused, naming the subcommand.
    let again = mfppr()
        .args(["batch", "collect"])
        .arg(&out2)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert_eq!(journal_lines(&out2).len(), 3);
    let old = mfppr()
        .args(["batch", "--collect"])
        .arg(&out2)
        .output()
        .unwrap();
    assert_eq!(old.status.code(), Some(2), "{old:?}");
    assert!(String::from_utf8_lossy(&old.stderr).contains("use `mfppr batch collect OUTDIR`"));
}

#[test]
fn the_slurm_script_runs_the_line_of_its_array_index() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.txt");
    let mark = |n: usize| dir.path().join(format!("ran-{n}"));
    let mut text: String = (1..=3)
        .map(|n| format!("echo {n} > '{}'\n", mark(n).display()))
        .collect();
    // A task line quotes a newline as bash does ($'…'): the script runs its line with bash.
    text.push_str(&format!(
        "printf %s $'4\\n$(x)' > '{}'\n",
        mark(4).display()
    ));
    std::fs::write(&tasks, text).unwrap();
    let script = root().join("scripts/batch-slurm.sbatch");
    let status = Command::new("bash")
        .arg(&script)
        .arg(&tasks)
        .env("SLURM_ARRAY_TASK_ID", "2")
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(mark(2)).unwrap(), "2\n");
    assert!(!mark(1).exists() && !mark(3).exists());
    let status = Command::new("bash")
        .arg(&script)
        .arg(&tasks)
        .env("SLURM_ARRAY_TASK_ID", "4")
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(mark(4)).unwrap(), "4\n$(x)");
    for bad in ["0", "5", "x"] {
        let out = Command::new("bash")
            .arg(&script)
            .arg(&tasks)
            .env("SLURM_ARRAY_TASK_ID", bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "index {bad}");
    }
}

/// A check script in `dir` that marks its start (`dir/started.<pid>`), waits for `dir/open`,
/// then keeps what still has `r_0`; three copies of the tiny passing test in `dir/in`.
fn gated_campaign(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let check = dir.join("gate.sh");
    common::write(
        &check,
        &format!(
            "#!/bin/sh\ntouch '{d}'/started.$$\nwhile [ ! -e '{d}/open' ]; do sleep 0.05; done\n\
             grep -q r_0 \"$1\"\n",
            d = dir.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
    let inputs = dir.join("in");
    for t in ["a", "b", "c"] {
        common::write(
            &inputs.join(format!("{t}.cpp")),
            &std::fs::read_to_string(root().join("fixtures/tests/iset_pass_tiny.cpp")).unwrap(),
        );
    }
    (check, inputs)
}

fn started(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("started.")
        })
        .count()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let began = Instant::now();
    while !done() {
        assert!(began.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_batch_on_the_same_outdir_is_refused_naming_the_first_ones_pid() {
    let dir = tempfile::tempdir().unwrap();
    let (check, inputs) = gated_campaign(dir.path());
    let out = dir.path().join("out");
    let spec = root().join("fixtures/iset/spec");
    let batch = || {
        let mut cmd = mfppr();
        cmd.arg("batch")
            .arg(&inputs)
            .arg("--check")
            .arg(&check)
            .arg("-I")
            .arg(&spec)
            .arg("-o")
            .arg(&out)
            .args(["-j1", "-q"]);
        cmd
    };
    let first = batch()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the first batch did not start its check", || {
        started(dir.path()) > 0
    });
    let second = batch().output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("in use by another mfppr (pid {},", first.id())),
        "{stderr}"
    );
    std::fs::write(dir.path().join("open"), "").unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success());
    assert_eq!(journal_lines(&out).len(), 3, "each test once");
}

#[test]
fn tasks_run_at_once_and_collect_counts_those_without_a_result_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (check, inputs) = gated_campaign(dir.path());
    let out = dir.path().join("out");
    let tasks = dir.path().join("tasks.txt");
    let emitted = mfppr()
        .args(["batch", "emit"])
        .arg(&inputs)
        .arg("--check")
        .arg(&check)
        .arg("-I")
        .arg(root().join("fixtures/iset/spec"))
        .arg("-o")
        .arg(&out)
        .arg("--tasks")
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(emitted.status.success());
    let lines: Vec<String> = std::fs::read_to_string(&tasks)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 3);
    // Two tasks into one OUTDIR at once: both reach their check (each locks its test only).
    let run = |line: &String| {
        Command::new("bash")
            .arg("-c")
            .arg(line)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (run(&lines[0]), run(&lines[1]));
    wait_for("two tasks did not run at once", || started(dir.path()) >= 2);
    std::fs::write(dir.path().join("open"), "").unwrap();
    for task in [a, b] {
        let ended = task.wait_with_output().unwrap();
        assert!(
            ended.status.success(),
            "{}",
            String::from_utf8_lossy(&ended.stderr)
        );
    }
    let collect = || {
        mfppr()
            .args(["batch", "collect"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let partial = collect();
    let stdout = String::from_utf8_lossy(&partial.stdout);
    let stderr = String::from_utf8_lossy(&partial.stderr);
    assert_eq!(partial.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.starts_with("3 tests: 1 missing, 2 reduced\n"),
        "{stdout}"
    );
    assert!(stdout.contains(" missing\n"), "{stdout}");
    assert!(
        stderr.contains("1 emitted tasks have no result (the first: \"c\")"),
        "{stderr}"
    );
    assert_eq!(
        journal_lines(&out).len(),
        2,
        "a missing task is never journaled"
    );
    let last = Command::new("bash")
        .arg("-c")
        .arg(&lines[2])
        .status()
        .unwrap();
    assert!(last.success());
    let whole = collect();
    assert!(whole.status.success());
    assert!(String::from_utf8_lossy(&whole.stdout).starts_with("3 tests: 3 reduced\n"));
}
