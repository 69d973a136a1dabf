//! `mfppr report` and `reduce --report` end to end with real g++ and the bundled scripts: blame
//! names the MR behind each planted bug (its suspects reach the broken library operation), a
//! failure of base operations alone is said so, report.json has every field, the standalone
//! export compiles against the library alone and reproduces the failure, the reproduction
//! command reproduces it, a non-empty report directory is refused without `--force`. The inputs
//! are the committed reduced goldens (a reduction is not the point here). Skips without
//! g++/python3 (fails under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{require_tools, root};
use serde_json::Value;

fn spec() -> std::path::PathBuf {
    root().join("fixtures/iset/spec")
}

/// Run `mfppr report` on golden `name` with the check for `bug`; return report.json.
fn report(name: &str, bug: &str, check: Option<&str>, dir: &Path) -> Value {
    let mut cmd = common::mfppr_cached();
    cmd.arg("report")
        .arg(root().join(format!("fixtures/expected/{name}.reduced.cpp")))
        .arg("-I")
        .arg(spec())
        .arg("-o")
        .arg(dir)
        .args(["--library-version", "echo iset-fixture 1"])
        .env("MFPPR_INCLUDES", spec())
        .env("CXXFLAGS", format!("-std=c++17 -w -D{bug}"))
        .env("REFERENCE_CXXFLAGS", "-std=c++17 -w");
    match check {
        Some(c) => cmd
            .arg("--check")
            .arg(root().join("interestingness/check-failure.py"))
            .env("CHECK_NAME", c),
        None => cmd
            .arg("--check")
            .arg(root().join("interestingness/crash.py"))
            .env("CRASH_PATTERN", "out_of_range"),
    };
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{name}: {}", String::from_utf8_lossy(&out.stdout).trim());
    for f in ["standalone.cpp", "reduced.cpp", "README.md"] {
        assert!(dir.join(f).is_file(), "{name}: {f}");
    }
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// The suspects of `r` and the library operations they reach.
fn suspect_ops(r: &Value) -> Vec<String> {
    r["blame"]["folds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["suspect"] == true)
        .flat_map(|f| f["library_ops"].as_array().unwrap().clone())
        .map(|o| o.as_str().unwrap().to_string())
        .collect()
}

/// The report of `name` (None when the tools are missing), after checking that blame names an
/// MR whose library operations include `op`.
fn blame_names(name: &str, bug: &str, check: Option<&str>, op: &str) -> Option<Value> {
    if !require_tools(&["g++", "python3"]) {
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let r = report(name, bug, check, &tmp.path().join("rep"));
    for field in [
        "source",
        "check_end",
        "message",
        "reproduction",
        "library_version",
        "variants",
        "blame",
        "export",
    ] {
        assert!(!r[field].is_null(), "{name}: {field} missing");
    }
    assert_eq!(r["library_version"], "iset-fixture 1");
    assert_eq!(r["export"]["verified"], true, "{name}");
    assert!(
        !r["blame"]["suspects"].as_array().unwrap().is_empty(),
        "{name}: {r}"
    );
    assert!(r["blame"]["one_variant"].is_number(), "{name}: {r}");
    let ops = suspect_ops(&r);
    assert!(
        ops.iter().any(|o| o == op),
        "{name}: suspects reach {ops:?}, not {op}"
    );
    assert!(r["variants"].as_array().unwrap().len() >= 2);
    Some(r)
}

/// The knockouts of the deeper look with `outcome`, as (where, operations).
fn knockouts(r: &Value, outcome: &str) -> Vec<(String, Vec<Value>)> {
    r["blame"]["deeper"]["knockouts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["outcome"] == outcome)
        .map(|k| {
            (
                k["place"].as_str().unwrap().to_string(),
                k["ops"].as_array().unwrap().clone(),
            )
        })
        .collect()
}

/// One level deeper: inside `shift_by_parts`, the union of the shifted halves computed another
/// way makes the failure go away (the merge bug is in `iset::unite`); the intersection and the
/// subtraction computed without their operations keep it.
#[test]
fn blame_merge_reaches_unite() {
    let Some(r) = blame_names(
        "iset_merge_small_a",
        "ISET_BUG_MERGE",
        Some("check_equal"),
        "iset::unite",
    ) else {
        return;
    };
    let deeper = &r["blame"]["deeper"];
    assert_eq!(deeper["mr"], "shift::shift_by_parts", "{r}");
    assert_eq!(deeper["needs"], serde_json::json!(["iset::unite"]), "{r}");
    let not_needed: Vec<Value> = knockouts(&r, "not_needed")
        .into_iter()
        .flat_map(|(_, ops)| ops)
        .collect();
    assert_eq!(
        not_needed,
        serde_json::json!(["iset::intersect", "iset::subtract"])
            .as_array()
            .unwrap()
            .clone(),
        "{r}"
    );
}

/// Two suspects: there is no single MR to look into.
#[test]
fn blame_subtract_reaches_subtract() {
    let Some(r) = blame_names(
        "iset_subtract_small_b",
        "ISET_BUG_SUBTRACT",
        Some("check_card"),
        "iset::subtract",
    ) else {
        return;
    };
    assert!(r["blame"]["deeper"].is_null(), "{r}");
}

/// The bound bug crashes in `iset::complement`, which no family's base is: the deeper look says
/// it cannot decide and names that operation; what it could compute another way is not needed.
#[test]
fn blame_bound_reaches_complement() {
    let Some(r) = blame_names(
        "iset_bound_small_b",
        "ISET_BUG_BOUND",
        None,
        "iset::complement",
    ) else {
        return;
    };
    let deeper = &r["blame"]["deeper"];
    assert_eq!(deeper["needs"], serde_json::json!([]), "{r}");
    assert!(
        deeper["undecided"]
            .as_str()
            .unwrap()
            .contains("`iset::complement`"),
        "{r}"
    );
    assert!(knockouts(&r, "needed").is_empty(), "{r}");
    assert!(!knockouts(&r, "not_needed").is_empty(), "{r}");
}

#[test]
fn base_operations_alone_are_implicated() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let r = report(
        "iset_bound_small_a",
        "ISET_BUG_BOUND",
        None,
        &tmp.path().join("rep"),
    );
    assert_eq!(r["blame"]["base_operations_implicated"], true, "{r}");
    assert!(r["blame"]["suspects"].as_array().unwrap().is_empty());
    assert!(!r["message"].as_str().unwrap().is_empty(), "{r}");
}

#[test]
fn a_non_empty_report_dir_is_refused_before_any_check() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("keep.txt"), "x").unwrap();
    let out = common::mfppr_cached()
        .arg("report")
        .arg(root().join("fixtures/expected/iset_merge_small_a.reduced.cpp"))
        .arg("--check")
        .arg(tmp.path().join("no-such-script"))
        .arg("-o")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not empty") && err.contains("--force"),
        "{err}"
    );
}

/// Build `file` with only a directory holding `iset.h` on the include path (and `flags`); run it.
fn build_with_library_alone(file: &Path, flags: &[&str]) -> (bool, bool) {
    let dir = file.parent().unwrap().join(format!("lib{}", flags.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(spec().join("iset.h"), dir.join("iset.h")).unwrap();
    let exe = dir.join("standalone");
    let built = Command::new("g++")
        .args(["-std=c++17", "-w"])
        .args(flags)
        .arg("-I")
        .arg(&dir)
        .arg(file)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap()
        .success();
    (
        built,
        built && Command::new(&exe).status().unwrap().success(),
    )
}

#[test]
fn reduce_with_report_writes_a_report_that_reproduces_the_failure() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("iset_merge_small_a.cpp");
    std::fs::copy(
        root().join("fixtures/expected/iset_merge_small_a.reduced.cpp"),
        &input,
    )
    .unwrap();
    // --force writes into a directory that is not empty.
    let dir = tmp.path().join("rep");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let out = common::mfppr_cached()
        .arg("reduce")
        .arg(&input)
        .arg("--check")
        .arg(root().join("interestingness/check-failure.py"))
        .arg("-o")
        .arg(tmp.path().join("out.cpp"))
        .arg("--report")
        .arg(&dir)
        .args([
            "--force",
            "-q",
            "-j2",
            "--library-version",
            "echo iset-fixture 1",
        ])
        .args(["--", "-std=c++17", "-I"])
        .arg(spec())
        .env("CXXFLAGS", "-w -DISET_BUG_MERGE")
        .env("REFERENCE_CXXFLAGS", "-w")
        .env("CHECK_NAME", "check_equal")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("report in"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    for f in ["standalone.cpp", "reduced.cpp", "README.md", "report.json"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let r: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert!(
        r["message"].as_str().unwrap().contains("check_equal"),
        "{r}"
    );
    assert_eq!(r["library_version"], "iset-fixture 1");
    assert_eq!(r["export"]["verified"], true, "{r}");
    assert!(r["stats"].as_str().unwrap().contains("oracle calls"), "{r}");
    // The planted merge bug lives in iset::unite, behind shift_by_parts (a shift done as a
    // union of shifted halves): blame names that MR.
    assert_eq!(
        r["blame"]["suspects"],
        serde_json::json!(["shift::shift_by_parts"]),
        "{r}"
    );
    assert!(suspect_ops(&r).iter().any(|o| o == "iset::unite"), "{r}");

    // The standalone export: the library alone, fails with the bug, passes without it.
    let standalone = dir.join("standalone.cpp");
    let text = std::fs::read_to_string(&standalone).unwrap();
    assert!(
        !text.contains("#include \"spec") && !text.contains("fuzz::set_term"),
        "{text}"
    );
    assert_eq!(
        build_with_library_alone(&standalone, &[]),
        (true, true),
        "{text}"
    );
    assert_eq!(
        build_with_library_alone(&standalone, &["-DISET_BUG_MERGE"]),
        (true, false),
        "{text}"
    );

    // The reproduction command reproduces the failure (the check says interesting: exit 0) and
    // leaves no directory behind.
    let repro = r["reproduction"].as_str().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let run = Command::new("sh")
        .arg("-c")
        .arg(repro)
        .env("TMPDIR", scratch.path())
        .env("CXXFLAGS", "-w -DISET_BUG_MERGE")
        .env("REFERENCE_CXXFLAGS", "-w")
        .env("CHECK_NAME", "check_equal")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(said.contains("exit status 0"), "{repro}\n{said}");
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "{repro} left {left:?}");
}

#[test]
fn reduce_refuses_a_non_empty_report_dir_before_any_check() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("t.cpp");
    std::fs::copy(
        root().join("fixtures/expected/iset_merge_small_a.reduced.cpp"),
        &input,
    )
    .unwrap();
    std::fs::write(tmp.path().join("keep.txt"), "x").unwrap();
    let output = tmp.path().join("out.cpp");
    let out = common::mfppr_cached()
        .arg("reduce")
        .arg(&input)
        .arg("--check")
        .arg(tmp.path().join("no-such-script"))
        .arg("-o")
        .arg(&output)
        .arg("--report")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not empty") && err.contains("--force"),
        "{err}"
    );
    assert!(!output.exists(), "nothing written");
}

/// A check that rejects the standalone (here: it wants MF++'s `#ifdef EXECUTE`, which the export
/// resolves away): the report is still written, `standalone.cpp` marked unverified in the
/// README and report.json, with a warning.
#[test]
fn a_standalone_the_check_rejects_is_written_with_a_warning() {
    if !require_tools(&["g++"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let check = tmp.path().join("wants-execute.sh");
    common::write_script(&check, "#!/bin/sh\ngrep -q '^#ifdef EXECUTE' \"$1\"\n");
    let dir = tmp.path().join("rep");
    let out = common::mfppr_cached()
        .arg("report")
        .arg(root().join("fixtures/expected/iset_merge_small_a.reduced.cpp"))
        .arg("--check")
        .arg(&check)
        .arg("-I")
        .arg(spec())
        .arg("-o")
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: the check rejects the standalone export")
            && err.contains("unverified"),
        "{err}"
    );
    let r: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["export"]["verified"], false, "{r}");
    assert!(dir.join("standalone.cpp").is_file());
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(readme.contains("NOT verified"), "{readme}");
}

/// The compiler flags after `--` of the merge golden (the spec's `-I`).
fn merge_bug_flags() -> Vec<std::ffi::OsString> {
    vec!["--".into(), "-std=c++17".into(), "-I".into(), spec().into()]
}

/// The check's environment for the planted merge bug (differential: the reference build has
/// none).
const MERGE_BUG_ENV: [(&str, &str); 3] = [
    ("CXXFLAGS", "-w -DISET_BUG_MERGE"),
    ("REFERENCE_CXXFLAGS", "-w"),
    ("CHECK_NAME", "check_equal"),
];

/// Write an executable shell script `name` into `dir` with `body` after the shebang.
fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Issue 41: an MF++R-style check (interesting = the original's non-zero exit) reduces with
/// `--interesting-exit auto`, and the report judges its result by the same rule (it refused its
/// own result before: its check took exit 0 as interesting).
#[test]
fn reduce_report_keeps_the_reductions_exit_rule() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("iset_merge_small_a.cpp");
    std::fs::copy(
        root().join("fixtures/expected/iset_merge_small_a.reduced.cpp"),
        &input,
    )
    .unwrap();
    let check = root().join("interestingness/check-failure.py");
    let inverted = script(
        tmp.path(),
        "inv.sh",
        &format!(
            "python3 '{}' \"$1\" >/dev/null 2>&1 && exit 3\nexit 0",
            check.display()
        ),
    );
    let dir = tmp.path().join("rep");
    let out = common::mfppr_cached()
        .arg("reduce")
        .arg(&input)
        .arg("--check")
        .arg(&inverted)
        .args(["--interesting-exit", "auto", "-q", "-o"])
        .arg(tmp.path().join("out.cpp"))
        .arg("--report")
        .arg(&dir)
        .args(merge_bug_flags())
        .envs(MERGE_BUG_ENV)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["check_end"], "exit 3", "{r}");
    assert_eq!(r["blame"]["suspects"][0], "shift::shift_by_parts", "{r}");
    // `report` takes the same rule: with the default (exit 0) it refuses this test, with
    // `--interesting-exit auto` it reports it.
    let report = |auto: bool, to: &str| {
        let mut cmd = common::mfppr_cached();
        cmd.arg("report")
            .arg(&input)
            .arg("--check")
            .arg(&inverted)
            .arg("-o")
            .arg(tmp.path().join(to))
            .args(merge_bug_flags())
            .envs(MERGE_BUG_ENV);
        if auto {
            cmd.args(["--interesting-exit", "auto"]);
        }
        cmd.output().unwrap()
    };
    let refused = report(false, "zero");
    assert_eq!(
        refused.status.code(),
        Some(3),
        "not interesting under exit 0"
    );
    let auto = report(true, "auto");
    assert!(
        auto.status.success(),
        "{}",
        String::from_utf8_lossy(&auto.stderr)
    );
}

/// Issue 41: a check that hangs on the deeper look's knockouts is killed after `--timeout`; the
/// report is still written, the knockouts marked undecided with the reason, and stderr says so.
#[test]
fn a_hanging_knockout_ends_within_the_timeout_and_is_undecided() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let check = root().join("interestingness/check-failure.py");
    let hangs = script(
        tmp.path(),
        "hangs.sh",
        &format!(
            "grep -q mfppr_knockout \"$1\" && exec sleep 600\nexec python3 '{}' \"$1\"",
            check.display()
        ),
    );
    let dir = tmp.path().join("rep");
    let began = std::time::Instant::now();
    let out = common::mfppr_cached()
        .arg("report")
        .arg(root().join("fixtures/expected/iset_merge_small_a.reduced.cpp"))
        .arg("--check")
        .arg(&hangs)
        .args(["--timeout", "8", "-o"])
        .arg(&dir)
        .args(merge_bug_flags())
        .envs(MERGE_BUG_ENV)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Uncut, one hanging run alone would take 600 s; cut, at most 6 knockouts take 8 s each.
    assert!(
        began.elapsed() < std::time::Duration::from_secs(300),
        "the hanging runs were not cut at the timeout"
    );
    assert!(stderr.contains("timed out after 8 s"), "{stderr}");
    let r: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let knockouts = r["blame"]["deeper"]["knockouts"].as_array().unwrap();
    assert!(!knockouts.is_empty(), "{r}");
    for k in knockouts.iter().filter(|k| k["by"].is_string()) {
        assert_eq!(k["outcome"], "undecided", "{k}");
    }
    assert!(knockouts
        .iter()
        .any(|k| k["why"] == "the check timed out after 8 s"));
    assert!(dir.join("standalone.cpp").is_file());
}
