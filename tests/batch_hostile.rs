//! A campaign whose file names are shell code (a newline then `$(touch PWNED)`, backticks,
//! quotes, a leading `-`, `--help`, spaces, `é`), under directories (campaign, spec, check
//! script, OUTDIR) whose names hold a newline too, reduced with real g++ and
//! `interestingness/check-failure.py` three ways: the local batch, the task file run by real GNU
//! parallel (`parallel < tasks.txt`, as a user types it in bash) and by `bash tasks.txt`. The
//! three give the same reduced bytes per test, `--collect` counts every test, and nothing runs:
//! no `PWNED` anywhere, the campaign directory is byte for byte what it was, and the directory
//! the task files ran in stays empty.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::batch::{check_args, reduced_bytes};
use common::{assert_ok, memo_check, root};

/// The campaign's file names and fixtures: the passing test once, a merge-bug test otherwise.
const TESTS: &[(&str, &str)] = &[
    ("nl\n$(touch PWNED).cpp", "t_iset_82"),
    ("`touch PWNED`.cpp", "t_iset_82"),
    ("it's \"q\"; touch PWNED.cpp", "t_iset_82"),
    ("-x.cpp", "t_iset_4"),
    ("--help.cpp", "t_iset_82"),
    ("a b  {} c.cpp", "t_iset_82"),
    ("caf\u{e9}.cpp", "t_iset_82"),
];

/// The campaign's options: spec directory, check script and environment under `hostile`.
fn args(hostile: &Path, out: &Path) -> Vec<String> {
    let mut args = check_args(&hostile.join("check.sh"), &hostile.join("spec"));
    args.extend(["-o", &out.display().to_string(), "-j2", "--no-tail", "-q"].map(String::from));
    args
}

/// Every file under `dir` with its bytes (a symbolic link as its target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            let bytes = match std::fs::read_link(e.path()) {
                Ok(target) => target.into_os_string().into_encoded_bytes(),
                Err(_) => std::fs::read(e.path()).unwrap(),
            };
            (e.path().to_path_buf(), bytes)
        })
        .collect()
}

/// Emit the campaign's task file for `out`, run it with `shell_command` (bash, `$1` the task
/// file) in `cwd`, collect; the stdout of `--collect`.
fn through_tasks(
    inputs: &Path,
    hostile: &Path,
    out: &Path,
    cwd: &Path,
    shell_command: &str,
) -> String {
    let tasks = hostile.join(format!("tasks {}.txt", out.file_name().unwrap().display()));
    let emitted = Command::new(common::bin())
        .args(["batch", "emit"])
        .arg(inputs)
        .args(args(hostile, out))
        .arg("--tasks")
        .arg(&tasks)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert_ok("batch emit", &emitted);
    let text = std::fs::read_to_string(&tasks).unwrap();
    assert_eq!(
        text.lines().count(),
        TESTS.len(),
        "one line per test:\n{text}"
    );
    let ran = Command::new("bash")
        .arg("-c")
        .arg(shell_command)
        .arg("bash")
        .arg(&tasks)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert_ok(shell_command, &ran);
    let collected = common::mfppr(cwd, &["batch", "collect", out.to_str().unwrap()]);
    assert_ok("batch collect", &collected);
    String::from_utf8(collected.stdout).unwrap()
}

#[test]
fn hostile_file_names_reduce_alike_through_parallel_bash_and_the_local_batch_and_run_nothing() {
    if !common::require_tools(&["g++", "python3", "parallel"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("h\n$(touch PWNED) 'q'");
    let inputs = hostile.join("in\n`touch PWNED`");
    std::fs::create_dir_all(&inputs).unwrap();
    for (name, fixture) in TESTS {
        std::fs::copy(
            root()
                .join("fixtures/campaign")
                .join(format!("{fixture}.cpp")),
            inputs.join(name),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink(root().join("fixtures/iset/spec"), hostile.join("spec")).unwrap();
    // Remembered verdicts: the tests share their bytes, and the three runs their candidates.
    let check = memo_check(
        &root().join("interestingness/check-failure.py"),
        &dir.path().join("memo"),
    );
    std::os::unix::fs::symlink(check, hostile.join("check.sh")).unwrap();
    let cwd = dir.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let before = snapshot(&inputs);

    let local = hostile.join("out\nlocal");
    let batch = Command::new(common::bin())
        .arg("batch")
        .arg(&inputs)
        .args(args(&hostile, &local))
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert_ok("the local batch", &batch);
    let table = String::from_utf8(batch.stdout).unwrap();
    assert!(
        table.starts_with("7 tests: 1 not_interesting, 6 reduced\n"),
        "{table}"
    );

    let parallel = hostile.join("out\nparallel");
    let collected = through_tasks(&inputs, &hostile, &parallel, &cwd, "parallel < \"$1\"");
    assert_eq!(collected, table, "parallel");
    let bash = hostile.join("out\nbash");
    let collected = through_tasks(&inputs, &hostile, &bash, &cwd, "bash \"$1\"");
    assert_eq!(collected, table, "bash");

    for (name, fixture) in TESTS {
        let stem = name.strip_suffix(".cpp").unwrap();
        if *fixture == "t_iset_4" {
            assert!(!local
                .join(stem)
                .join(format!("{stem}.reduced.cpp"))
                .exists());
            continue;
        }
        let reduced = reduced_bytes(&local, stem);
        assert!(reduced.len() < 3750, "{stem:?} was not reduced");
        assert_eq!(
            reduced_bytes(&parallel, stem),
            reduced,
            "{stem:?}: parallel"
        );
        assert_eq!(reduced_bytes(&bash, stem), reduced, "{stem:?}: bash");
    }
    let pwned: Vec<PathBuf> = walkdir::WalkDir::new(dir.path())
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.file_name().is_some_and(|n| n == "PWNED"))
        .collect();
    assert!(pwned.is_empty(), "a file name ran: {pwned:?}");
    assert_eq!(snapshot(&inputs), before, "the campaign directory changed");
    let left: Vec<_> = std::fs::read_dir(&cwd).unwrap().collect();
    assert!(
        left.is_empty(),
        "the runs wrote into their directory: {left:?}"
    );
}
