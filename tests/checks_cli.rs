//! The checks built into the binary: `--check builtin:NAME` reduces exactly like the script's
//! path in `interestingness/`, leaves no temporary directory behind (Ctrl-C included), keeps its
//! name in task files, and `mfppr checks list|show|write`.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, mfppr, mfppr_cached, require_tools, root};

/// The environment of the planted merge bug with check-failure.py in differential mode.
fn merge_bug_env(cmd: &mut Command) -> &mut Command {
    let spec = root().join("fixtures/iset/spec");
    cmd.env("MFPPR_INCLUDES", &spec)
        .env("CXXFLAGS", "-std=c++17 -w -DISET_BUG_MERGE")
        .env("REFERENCE_CXXFLAGS", "-std=c++17 -w")
        .env("CHECK_NAME", "check_equal")
}

/// `mfppr reduce` of `input` with `check`, `-j1`, into `out` with its stats in `out.json`, with
/// `tmp` as TMPDIR.
fn reduce_command(input: &Path, check: &str, out: &Path, tmp: &Path) -> Command {
    let mut cmd = mfppr_cached();
    cmd.arg("reduce")
        .arg(input)
        .args(["--check", check, "-j1", "-o"])
        .arg(out)
        .arg("--stats")
        .arg(out.with_extension("json"))
        .arg("-I")
        .arg(root().join("fixtures/iset/spec"))
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    merge_bug_env(&mut cmd);
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What mfppr left in `tmp`.
fn left_in(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn builtin_failure_reduces_byte_for_byte_like_the_script_path() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("iset_merge_small_b.cpp");
    std::fs::copy(root().join("fixtures/tests/iset_merge_small_b.cpp"), &input).unwrap();
    let script = root().join("interestingness/check-failure.py");
    let (tmp_builtin, tmp_path) = (dir.path().join("tmp-b"), dir.path().join("tmp-p"));
    std::fs::create_dir(&tmp_builtin).unwrap();
    std::fs::create_dir(&tmp_path).unwrap();
    let (out_builtin, out_path) = (dir.path().join("b.cpp"), dir.path().join("p.cpp"));
    // Both at once: one core each.
    let builtin = reduce_command(&input, "builtin:failure", &out_builtin, &tmp_builtin)
        .spawn()
        .unwrap();
    let path = reduce_command(&input, script.to_str().unwrap(), &out_path, &tmp_path)
        .spawn()
        .unwrap();
    let (builtin, path) = (
        builtin.wait_with_output().unwrap(),
        path.wait_with_output().unwrap(),
    );
    assert!(builtin.status.success(), "{}", stderr(&builtin));
    assert!(path.status.success(), "{}", stderr(&path));
    let reduced = std::fs::read(&out_builtin).unwrap();
    assert!(reduced.len() < 13350 / 3, "{} bytes", reduced.len());
    assert_eq!(reduced, std::fs::read(&out_path).unwrap(), "same result");
    let stats = |p: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p.with_extension("json")).unwrap()).unwrap()
    };
    let (mut sb, mut sp) = (stats(&out_builtin), stats(&out_path));
    for field in ["oracle_calls", "candidates", "accepted", "bytes_after"] {
        assert_eq!(sb[field], sp[field], "{field}: the same verdicts");
    }
    // Per kind, everything but the time taken.
    for kinds in [&mut sb["kinds"], &mut sp["kinds"]] {
        for kind in kinds.as_object_mut().unwrap().values_mut() {
            kind.as_object_mut().unwrap().remove("oracle_secs");
        }
    }
    assert_eq!(sb["kinds"], sp["kinds"], "the same verdicts per kind");
    let err = stderr(&builtin);
    assert!(err.contains("interesting with builtin:failure"), "{err}");
    assert!(
        !err.contains("mfppr-checks-"),
        "no temporary path shown: {err}"
    );
    assert!(
        left_in(&tmp_builtin).is_empty(),
        "{:?}",
        left_in(&tmp_builtin)
    );
}

#[test]
fn ctrl_c_removes_the_builtin_scripts() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("iset_merge_small_b.cpp");
    std::fs::copy(root().join("fixtures/tests/iset_merge_small_b.cpp"), &input).unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let child = reduce_command(&input, "builtin:failure", &dir.path().join("o.cpp"), &tmp)
        .spawn()
        .unwrap();
    // Interrupt once the first check runs (its scratch directory is there).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !left_in(&tmp).iter().any(|n| n.starts_with("mfppr-check-")) {
        assert!(
            Instant::now() < deadline,
            "no check started: {:?}",
            left_in(&tmp)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(left_in(&tmp).iter().any(|n| n.starts_with("mfppr-checks-")));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(left_in(&tmp).is_empty(), "{:?}", left_in(&tmp));
}

#[test]
fn an_unknown_builtin_is_a_one_line_usage_error_naming_the_builtins() {
    let dir = tempfile::tempdir().unwrap();
    let input = root().join("fixtures/tests/iset_pass_tiny.cpp");
    let input = input.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let out_dir = out_dir.to_str().unwrap();
    for args in [
        &["reduce", input, "--check", "builtin:fail"][..],
        &["batch", input, "--check", "builtin:fail", "-o", out_dir][..],
        &["report", input, "--check", "builtin:fail", "-o", out_dir][..],
        &["checks", "show", "fail"][..],
    ] {
        let out = mfppr(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: there is no built-in check \"fail\"")
                && err.contains("builtin:failure, builtin:crash, builtin:hang, builtin:same-exit, builtin:coverage-marker"),
            "{err}"
        );
    }
}

#[test]
fn checks_list_show_and_write() {
    let dir = tempfile::tempdir().unwrap();
    let list = mfppr(dir.path(), &["checks", "list"]);
    assert!(list.status.success());
    let list = String::from_utf8(list.stdout).unwrap();
    let names: Vec<&str> = list
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "builtin:failure",
            "builtin:crash",
            "builtin:hang",
            "builtin:same-exit",
            "builtin:coverage-marker"
        ]
    );
    let first = list.lines().next().unwrap();
    assert!(
        first.contains(" check-failure.py ")
            && first.ends_with("interesting iff the test compiles and a metamorphic check fails."),
        "{list}"
    );

    let interestingness = root().join("interestingness");
    for (name, file) in [("failure", "check-failure.py"), ("builtin:hang", "hang.py")] {
        let show = mfppr(dir.path(), &["checks", "show", name]);
        assert!(show.status.success());
        assert_eq!(
            show.stdout,
            std::fs::read(interestingness.join(file)).unwrap()
        );
    }

    let target = dir.path().join("mine");
    let t = target.to_str().unwrap();
    let write = mfppr(dir.path(), &["checks", "write", t]);
    assert!(write.status.success(), "{}", stderr(&write));
    let mut files: Vec<String> = left_in(&target);
    files.sort();
    let mut expected: Vec<String> = left_in(&interestingness)
        .into_iter()
        .filter(|f| f.ends_with(".py"))
        .collect();
    expected.sort();
    assert_eq!(files, expected);
    for f in &files {
        let written = target.join(f);
        assert_eq!(
            std::fs::read(&written).unwrap(),
            std::fs::read(interestingness.join(f)).unwrap()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&written).unwrap().permissions().mode();
        assert_eq!(mode & 0o111 != 0, !f.starts_with('_'), "{f}: {mode:o}");
    }
    // Existing files are kept unless --force.
    std::fs::write(target.join("crash.py"), "mine").unwrap();
    let again = mfppr(dir.path(), &["checks", "write", t]);
    assert_eq!(again.status.code(), Some(1));
    let err = stderr(&again);
    assert!(
        err.contains(".py exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(target.join("crash.py")).unwrap(),
        "mine"
    );
    let forced = mfppr(dir.path(), &["checks", "write", t, "--force"]);
    assert!(forced.status.success());
    assert_eq!(
        std::fs::read(target.join("crash.py")).unwrap(),
        std::fs::read(interestingness.join("crash.py")).unwrap()
    );
}

#[test]
fn task_files_name_builtin_checks_not_their_temporary_path() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.txt");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let emitted = Command::new(bin())
        .args(["batch", "emit"])
        .arg(root().join("fixtures/campaign/t_iset_19.cpp"))
        .args(["--check", "builtin:failure", "-o"])
        .arg(dir.path().join("out"))
        .arg("--tasks")
        .arg(&tasks)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(emitted.status.success(), "{}", stderr(&emitted));
    let text = std::fs::read_to_string(&tasks).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains(" --check=builtin:failure "), "{text}");
    assert!(!text.contains("mfppr-checks-"), "{text}");
    assert!(left_in(&tmp).is_empty(), "{:?}", left_in(&tmp));
}
