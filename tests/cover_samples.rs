//! `mfppr cover` on the committed samples in `coverage/` (no compiler needed), and its errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mfppr::coverage::{self, Filters, LoadOptions};

/// `current_working_directory` recorded in the GCC 12 samples (see coverage/README.md).
const SAMPLE_CWD: &str = "/tmp/mfppr-cov-sample.zQkZyx";

fn sample(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("coverage")
        .join(p)
}

fn mfppr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args(args)
        .output()
        .expect("run mfppr")
}

fn new_lines_of(suite: &str, fuzz: &str) -> Vec<(String, u32)> {
    let opts = LoadOptions {
        source_root: Some(PathBuf::from(SAMPLE_CWD)),
    };
    let s = coverage::load(&[sample(suite)], &opts).unwrap();
    let f = coverage::load(&[sample(fuzz)], &opts).unwrap();
    let n = coverage::new_lines(&s, &f, &Filters::default()).unwrap();
    n.files
        .iter()
        .flat_map(|f| f.lines.iter().map(move |l| (f.path.clone(), l.line)))
        .collect()
}

fn expected() -> Vec<(String, u32)> {
    [11, 16, 24, 25]
        .iter()
        .map(|&l| ("tiny.hpp".to_string(), l))
        .collect()
}

#[test]
fn every_format_gives_the_same_new_lines() {
    let pairs = [
        (
            "gcc12/suite/json/prog-main.gcov.json.gz",
            "gcc12/fuzz/json/prog-main.gcov.json.gz",
        ),
        ("gcc12/suite/stdout.jsonl", "gcc12/fuzz/stdout.jsonl"),
        ("gcc12/suite/text", "gcc12/fuzz/text"),
        ("gcc12/suite/text", "gcc12/fuzz/json"),
        (
            "hand-made/suite-gcovr-0.10.json",
            "hand-made/fuzz-gcc14-v2.gcov.json",
        ),
        ("gcc12/suite", "gcc12/fuzz"),
    ];
    for (s, f) in pairs {
        assert_eq!(new_lines_of(s, f), expected(), "{s} vs {f}");
    }
}

#[test]
fn samples_parse_to_the_real_counts() {
    let opts = LoadOptions {
        source_root: Some(PathBuf::from(SAMPLE_CWD)),
    };
    let json = coverage::load(&[sample("gcc12/fuzz/json")], &opts).unwrap();
    let text = coverage::load(&[sample("gcc12/fuzz/text")], &opts).unwrap();
    let v2 = coverage::load(&[sample("hand-made/fuzz-gcc14-v2.gcov.json")], &opts).unwrap();
    // Template instantiations are summed: line 9 runs 3 times for double and 2 for int.
    assert_eq!(json.files["tiny.hpp"].lines[&9], 5);
    for c in [&text, &v2] {
        assert_eq!(c.files["tiny.hpp"].lines, json.files["tiny.hpp"].lines);
    }
    assert!(json.files["tiny.hpp"]
        .functions
        .iter()
        .any(|f| f.name == "tiny::classify(int)" && (f.start_line, f.end_line) == (22, 32)));
}

#[test]
fn cli_json_report_is_stable() {
    let out = mfppr(&[
        "cover",
        "report",
        "--suite",
        sample("gcc12/suite/json").to_str().unwrap(),
        "--fuzz",
        sample("gcc12/fuzz/json").to_str().unwrap(),
        "--source-root",
        SAMPLE_CWD,
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "files": [{
                "path": "tiny.hpp",
                "functions": [
                    {"name": "int tiny::clamp_sum<int>(std::vector<int, std::allocator<int> > const&, int)", "lines": [11, 16]},
                    {"name": "tiny::classify(int)", "lines": [24, 25]}
                ],
                "lines": [11, 16, 24, 25]
            }],
            "total_new_lines": 4
        })
    );
}

#[test]
fn cli_table_filters_and_lcov() {
    let dir = tempfile::tempdir().unwrap();
    let info = dir.path().join("new.info");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "cover".to_string(),
            "report".into(),
            "--suite".into(),
            sample("gcc12/suite/text").display().to_string(),
            "--fuzz".into(),
            sample("gcc12/fuzz/text").display().to_string(),
            "--source-root".into(),
            SAMPLE_CWD.into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let a = args(&["--lcov", info.to_str().unwrap()]);
    let out = mfppr(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("11, 16, 24-25") || table.contains("24-25"),
        "{table}"
    );
    assert!(table.contains("total: 4 new lines in 1 files"), "{table}");
    let lcov = std::fs::read_to_string(&info).unwrap();
    assert!(lcov.contains(&format!("SF:{SAMPLE_CWD}/tiny.hpp\nDA:11,1\nDA:16,1\nDA:24,1\nDA:25,1\nLF:4\nLH:4\nend_of_record\n")), "{lcov}");
    let a = args(&["--exclude", "tiny"]);
    let out = mfppr(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("total: 0 new lines"));
}

fn expect_error(args: &[&str], needle: &str) {
    let out = mfppr(args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

#[test]
fn bad_inputs_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let good = sample("gcc12/suite/json").display().to_string();
    let malformed = w(
        "bad.gcov.json",
        "{\"format_version\": \"1\",\n  \"files\": [ {\"file\": ",
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &malformed],
        "bad.gcov.json: malformed JSON: EOF while parsing",
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &malformed],
        "regenerate it with `gcov --json-format`",
    );
    let wrong_type = w(
        "types.json",
        r#"{"format_version": "1", "current_working_directory": "/x", "files": [{"file": "a.cpp", "lines": [{"line_number": "four", "count": 1}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &wrong_type],
        "types.json: not a gcov JSON document: invalid type: string \"four\", expected i64; regenerate it",
    );
    let files_not_a_list = w("files.json", r#"{"format_version": "1", "files": 7}"#);
    expect_error(
        &[
            "cover",
            "report",
            "--suite",
            &files_not_a_list,
            "--fuzz",
            &good,
        ],
        "files.json: not a gcov JSON document: invalid type: integer `7`",
    );
    let v9 = w("v9.json", r#"{"format_version": "9", "files": []}"#);
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &v9],
        "unsupported gcov JSON format_version \"9\"",
    );
    let gcovr = w("r.json", r#"{"gcovr/format_version": "2.0", "files": []}"#);
    expect_error(
        &["cover", "report", "--suite", &gcovr, "--fuzz", &good],
        "unsupported gcovr/format_version \"2.0\"",
    );
    let neg = w(
        "neg.json",
        r#"{"format_version": "2", "current_working_directory": "/x", "files": [{"file": "a.cpp", "functions": [], "lines": [{"line_number": 4, "count": -7}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &neg],
        "neg.json: negative execution count -7 for a.cpp:4",
    );
    expect_error(
        &["cover", "report", "--suite", &neg, "--fuzz", &good],
        "delete the .gcda files, rerun the tests and gcov",
    );
    let other = w(
        "other.json",
        r#"{"format_version": "1", "current_working_directory": "/elsewhere", "files": [{"file": "b.cpp", "functions": [], "lines": [{"line_number": 4, "count": 1}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &other],
        "share no source file",
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &other],
        "pass --allow-disjoint",
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    expect_error(
        &[
            "cover",
            "report",
            "--suite",
            &good,
            "--fuzz",
            empty.to_str().unwrap(),
        ],
        "no coverage files found",
    );
}

#[test]
fn disjoint_runs_need_allow_disjoint_and_then_every_fuzz_line_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let fuzz = dir.path().join("other.json");
    std::fs::write(
        &fuzz,
        r#"{"format_version": "1", "current_working_directory": "/elsewhere", "files": [{"file": "b.cpp", "functions": [], "lines": [{"line_number": 4, "count": 1}, {"line_number": 5, "count": 0}]}]}"#,
    )
    .unwrap();
    let out = mfppr(&[
        "cover",
        "report",
        "--suite",
        sample("gcc12/suite/json").to_str().unwrap(),
        "--fuzz",
        fuzz.to_str().unwrap(),
        "--allow-disjoint",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"][0]["path"], "/elsewhere/b.cpp");
    assert_eq!(v["files"][0]["lines"], serde_json::json!([4]));
}

#[test]
fn json_and_text_of_the_same_sources_count_each_line_once() {
    // gcc12/suite and gcc12/fuzz each hold gcov JSON (absolute paths) and text .gcov (paths
    // relative to the build directory) of the same run; no --source-root.
    let args = [
        "cover",
        "report",
        "--suite",
        sample("gcc12/suite").to_str().unwrap(),
        "--fuzz",
        sample("gcc12/fuzz").to_str().unwrap(),
        "--json",
    ]
    .map(String::from);
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend_from_slice(extra);
        mfppr(&a)
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec![format!("{SAMPLE_CWD}/tiny.hpp")]);
    assert_eq!(v["total_new_lines"], 4);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("2 relative path(s) read as the absolute path ending with them")
            && stderr.contains(&format!("main.cpp as {SAMPLE_CWD}/main.cpp")),
        "{stderr}"
    );
    // -q keeps the report and silences the note.
    let quiet = run(&["-q"]);
    assert!(quiet.status.success());
    let quiet_report: serde_json::Value = serde_json::from_slice(&quiet.stdout).unwrap();
    assert_eq!(quiet_report, v);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}
