//! End to end with real g++ and gcov on the fixture library: suite coverage from
//! `fixtures/iset/suite`, fuzz coverage from `fixtures/tests/iset_pass_tiny.cpp`, then
//! `mfppr cover find --reduce --verify-gcov` over a two-test corpus. Also the usage errors of
//! `cover find` and of each subcommand, which need no compiler.

use crate::common;

use std::path::{Path, PathBuf};

use common::{covered_build, mfppr, require_tools, run_ok};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const CXXFLAGS: [&str; 3] = ["-std=c++17", "-O0", "-w"];

/// Build `src` with coverage in `dir/<stem>/` against the fixture library, run it, and write
/// gcov JSON there.
fn covered_run(dir: &Path, src: &Path) {
    let stem = src.file_stem().unwrap().to_str().unwrap();
    let spec = repo().join("fixtures/iset/spec");
    covered_build(&dir.join(stem), src, &[&spec], &CXXFLAGS.join(" "));
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or_default()
}

#[test]
fn find_reduce_and_verify_on_the_fixture_library() {
    if !require_tools(&["g++", "gcov", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let spec = repo().join("fixtures/iset/spec");
    for t in ["basic", "setops"] {
        covered_run(
            &root.join("suite"),
            &repo().join(format!("fixtures/iset/suite/{t}.cpp")),
        );
    }
    let tiny = repo().join("fixtures/tests/iset_pass_tiny.cpp");
    covered_run(&root.join("fuzz"), &tiny);
    // The corpus: the tiny test and a bigger one that reaches the same markers (and more).
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for t in ["iset_pass_tiny.cpp", "iset_pass_small.cpp"] {
        std::fs::copy(repo().join("fixtures/tests").join(t), corpus.join(t)).unwrap();
    }
    let flags = CXXFLAGS.join(" ");
    let run = format!("g++ {flags} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {{test}} -o t && ./t");
    let out = mfppr(
        root,
        &[
            "cover",
            "find",
            "--suite",
            "suite",
            "--fuzz",
            "fuzz",
            "--source-root",
            spec.to_str().unwrap(),
            "--include",
            "iset\\.h$",
            "--corpus",
            "corpus",
            "--run",
            &run,
            "--reduce",
            "--timeout",
            "30",
            "--cxxflags",
            &flags,
            "--verify-gcov",
            "--out",
            "out",
            "-j",
            "2",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mfppr failed:\n{stdout}\n{stderr}");
    eprintln!("{stdout}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("out/summary.json")).unwrap()).unwrap();
    let count = |k: &str| summary[k].as_u64().unwrap();
    assert!(count("reached") >= 1, "{stdout}\n{stderr}");
    assert_eq!(count("tests"), 2);
    assert_eq!(count("reduced"), count("reached"));
    assert_eq!(count("verified"), count("reduced"));
    let suite = |k: &str| summary["suite"][k].as_u64().unwrap();
    assert_eq!(
        last_line(&stdout),
        format!(
            "cover: {} new lines, {} reached, {} tests, {} checked ({} metamorphic, {} value), {} executed only",
            count("new_lines"),
            count("reached"),
            suite("tests"),
            suite("metamorphic") + suite("value"),
            suite("metamorphic"),
            suite("value"),
            suite("executed_only")
        )
    );
    assert_eq!(
        suite("metamorphic") + suite("value") + suite("executed_only"),
        count("reached")
    );
    let points = summary["points"].as_array().unwrap();
    let reduced: Vec<&serde_json::Value> =
        points.iter().filter(|p| !p["reduced"].is_null()).collect();
    assert!(!reduced.is_empty(), "{stdout}\n{stderr}");
    let injected = root.join("out/injected");
    for p in reduced {
        let id = p["id"].as_str().unwrap();
        // The fuzz coverage came from the tiny test: it is the smallest test for every marker.
        assert_eq!(p["source_test"]["name"], "iset_pass_tiny.cpp", "{p}");
        let path = PathBuf::from(p["reduced"].as_str().unwrap());
        assert_eq!(path, root.join("out").join(format!("{id}.cpp")));
        let text = std::fs::read_to_string(&path).unwrap();
        let before = p["source_test"]["bytes"].as_u64().unwrap();
        assert!((text.len() as u64) < before, "{id}: not smaller");
        assert_eq!(p["bytes_after"].as_u64().unwrap(), text.len() as u64);
        assert!(text.contains("metalib::checks::"), "{id}: checks lost");
        assert!(text.contains("r_0"), "{id}: reference variant lost");
        assert_eq!(p["verified"], true, "{id}: {p}");
        // It still compiles against the marked library and reaches its marker.
        let build = root.join(format!("check-{id}"));
        std::fs::create_dir_all(&build).unwrap();
        let mut args: Vec<&str> = CXXFLAGS.to_vec();
        args.extend([
            "-DEXECUTE=1",
            "-I",
            injected.to_str().unwrap(),
            path.to_str().unwrap(),
            "-o",
            "t",
        ]);
        run_ok(&build, "g++", &args);
        let ran = run_ok(&build, "./t", &[]);
        let err = String::from_utf8_lossy(&ran.stderr);
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("MFPPR-COV {id} "))),
            "{id} not reached by the reduced test: {err}"
        );
    }
    // find.json records both runs and every marker each reached.
    let found: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("out/find.json")).unwrap()).unwrap();
    let names: Vec<&str> = found["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["iset_pass_small.cpp", "iset_pass_tiny.cpp"]);
    // The repository is never written.
    assert!(!spec.join("markers.json").exists());
}

#[test]
fn find_usage_errors_exit_with_code_2_and_say_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--corpus", "c", "--run", "make", "--out", "o"],
            "has no {test}",
        ),
        (&["--run", "x {test}", "--out", "o"], "--corpus"),
        (
            &[
                "--generate",
                "gen {seed}",
                "--budget",
                "3",
                "--run",
                "x {test}",
                "--out",
                "o",
            ],
            "has no {out}",
        ),
        (&["--corpus", "c", "--out", "o"], "--run"),
        (
            &[
                "--corpus",
                "c",
                "--generate",
                "g {seed} {out}",
                "--budget",
                "2",
            ],
            "cannot be used with",
        ),
        (
            &[
                "--corpus",
                "c",
                "--run",
                "x {test}",
                "--out",
                "o",
                "--verify-gcov",
            ],
            "--reduce",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec![
            "cover",
            "find",
            "--suite",
            "s",
            "--fuzz",
            "f",
            "--source-root",
            ".",
        ];
        all.extend_from_slice(args);
        let out = mfppr(tmp.path(), &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // find needs the library to mark.
    let out = mfppr(
        tmp.path(),
        &[
            "cover", "find", "--suite", "s", "--fuzz", "f", "--corpus", "c", "--run", "x {test}",
            "--out", "o",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--source-root"));
}

#[test]
fn each_subcommand_reports_its_usage_error_and_old_flag_forms_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "find",
                "--suite",
                "s",
                "--fuzz",
                "f",
                "--source-root",
                ".",
                "--corpus",
                "c",
                "--run",
                "make",
                "--out",
                "o",
            ],
            "has no {test}",
        ),
        (&["inject", "--suite", "s", "--fuzz", "f"], "--inject-into"),
        (
            &["restore", "missing.json"],
            "cannot read manifest missing.json",
        ),
    ];
    for (args, expected) in cases {
        let all = [&["cover"][..], args].concat();
        let out = mfppr(tmp.path(), &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("deprecated"), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_ne!(out.status.code(), Some(0));
    }
    // The flag form of an earlier release (`mfppr cover --suite … --inject`) is gone.
    let out = mfppr(
        tmp.path(),
        &["cover", "--suite", "s", "--fuzz", "f", "--inject"],
    );
    assert_eq!(out.status.code(), Some(2));
}
