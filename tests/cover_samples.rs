//! `mfppr cover` on the committed samples in `coverage/` (no compiler needed), and its errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mfppr::coverage::{self, Filters, LoadOptions};

/// `current_working_directory` recorded in the GCC 12 samples (see coverage/README.md).
const SAMPLE_CWD: &str = "/tmp/mfppr-cov-sample.zQkZyx";

/// The gcovr releases of the real samples in coverage/gcovr/, and their JSON format versions.
const GCOVR_RELEASES: [&str; 5] = ["7.0", "8.0", "8.3", "8.4", "8.8"];
const GCOVR_FORMATS: [&str; 5] = ["0.6", "0.10", "0.11", "0.14", "0.15"];

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
    let s = coverage::load(&[sample(suite)], &opts).unwrap().coverage;
    let f = coverage::load(&[sample(fuzz)], &opts).unwrap().coverage;
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
        (
            "hand-made/suite-gcc14-v2.gcov.json",
            "gcovr/fuzz-gcovr-8.8.json",
        ),
        ("gcovr/suite-gcovr-7.0.json", "gcc12/fuzz/json"),
        ("gcc12/suite", "gcc12/fuzz"),
    ];
    for release in GCOVR_RELEASES {
        assert_eq!(
            new_lines_of(
                &format!("gcovr/suite-gcovr-{release}.json"),
                &format!("gcovr/fuzz-gcovr-{release}.json")
            ),
            expected(),
            "gcovr {release}"
        );
    }
    for (s, f) in pairs {
        assert_eq!(new_lines_of(s, f), expected(), "{s} vs {f}");
    }
}

#[test]
fn samples_parse_to_the_real_counts() {
    let opts = LoadOptions {
        source_root: Some(PathBuf::from(SAMPLE_CWD)),
    };
    let json = coverage::load(&[sample("gcc12/fuzz/json")], &opts)
        .unwrap()
        .coverage;
    let text = coverage::load(&[sample("gcc12/fuzz/text")], &opts)
        .unwrap()
        .coverage;
    let v2 = coverage::load(&[sample("hand-made/fuzz-gcc14-v2.gcov.json")], &opts)
        .unwrap()
        .coverage;
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
fn every_gcovr_release_reads_like_gcov_json() {
    let opts = LoadOptions {
        source_root: Some(PathBuf::from(SAMPLE_CWD)),
    };
    let json = coverage::load(&[sample("gcc12/fuzz/json")], &opts)
        .unwrap()
        .coverage;
    let reference = &json.files["tiny.hpp"];
    let ran = |lines: &std::collections::BTreeMap<u32, u64>| -> Vec<(u32, bool)> {
        lines.iter().map(|(&l, &c)| (l, c > 0)).collect()
    };
    for (release, format) in GCOVR_RELEASES.iter().zip(GCOVR_FORMATS) {
        let path = sample(&format!("gcovr/fuzz-gcovr-{release}.json"));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc["gcovr/format_version"], format, "gcovr {release}");
        let c = coverage::load(&[path], &opts).unwrap().coverage;
        let f = &c.files["tiny.hpp"];
        // The same executable lines, run or not run alike (gcovr 7 counts differently).
        assert_eq!(ran(&f.lines), ran(&reference.lines), "gcovr {release}");
        let mut names: Vec<(&str, u32)> = f
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.start_line))
            .collect();
        names.sort();
        assert_eq!(
            names,
            vec![
                ("double tiny::clamp_sum<double>(std::vector<double, std::allocator<double> > const&, double)", 7),
                ("int tiny::clamp_sum<int>(std::vector<int, std::allocator<int> > const&, int)", 7),
                ("tiny::classify(int)", 22),
            ],
            "gcovr {release}"
        );
        assert_eq!(
            f.function_counts["tiny::classify(int)"], 1,
            "gcovr {release}"
        );
        // Branches of `if (x < 0)`, both instantiations summed: the fuzz run took both.
        assert!(f.branches[&10].iter().all(|&n| n > 0), "gcovr {release}");
    }
}

#[test]
fn conditions_and_branches_give_partly_new_lines() {
    // GCC 14 documents (hand-made): line 10 `if (x < 0)` and line 15 `if (total > limit)` ran
    // in both runs, only the fuzz run saw them true; line 23 (`switch`) took a new case.
    let out = mfppr(&[
        "cover",
        "report",
        "--suite",
        sample("hand-made/suite-gcc14-v2.gcov.json")
            .to_str()
            .unwrap(),
        "--fuzz",
        sample("hand-made/fuzz-gcc14-v2.gcov.json")
            .to_str()
            .unwrap(),
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
    assert_eq!(v["total_new_lines"], 4);
    let partly = &v["partly_new"][0];
    assert_eq!(partly["path"], "tiny.hpp");
    let lines: Vec<(u64, &serde_json::Value, &serde_json::Value)> = partly["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["line"].as_u64().unwrap(),
                &l["conditions"],
                &l["branches"],
            )
        })
        .collect();
    let t0 = serde_json::json!([{"expression": 0, "term": 0, "value": true}]);
    let none = serde_json::json!([]);
    assert_eq!(lines.len(), 3, "{partly}");
    assert_eq!((lines[0].0, lines[0].1), (10, &t0));
    assert_eq!((lines[1].0, lines[1].1), (15, &t0));
    assert_eq!((lines[2].0, lines[2].1), (23, &none));
    assert_eq!(lines[2].2, &serde_json::json!([0]), "case 0 of the switch");
    // The same branch gains from the real GCC 12 documents (gcov -b), in the table.
    let out = mfppr(&[
        "cover",
        "report",
        "--suite",
        sample("gcc12/suite/json").to_str().unwrap(),
        "--fuzz",
        sample("gcc12/fuzz/json").to_str().unwrap(),
        "--source-root",
        SAMPLE_CWD,
    ]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("with conditions or branches only the fuzz run covered"),
        "{table}"
    );
    assert!(table.contains(" 23  branch 0\n"), "{table}");
    assert!(table.ends_with("total: 3 partly new lines\n"), "{table}");
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
            "total_new_lines": 4,
            // Lines both ran (the samples have gcov -b branch counts): the fuzz run took the
            // `then` edge of lines 10 and 15 and case 0 of the switch on line 23.
            "partly_new": [{
                "path": "tiny.hpp",
                "lines": [
                    {"line": 10, "function": "int tiny::clamp_sum<int>(std::vector<int, std::allocator<int> > const&, int)", "conditions": [], "branches": [0]},
                    {"line": 15, "function": "int tiny::clamp_sum<int>(std::vector<int, std::allocator<int> > const&, int)", "conditions": [], "branches": [0]},
                    {"line": 23, "function": "tiny::classify(int)", "conditions": [], "branches": [0]}
                ]
            }]
        })
    );
}

#[test]
fn cli_table_filters_and_lcov() {
    let dir = tempfile::tempdir().unwrap();
    let lcov_dir = dir.path().join("lcov");
    let info = lcov_dir.join("new.info");
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
    let a = args(&["--lcov", lcov_dir.to_str().unwrap()]);
    let out = mfppr(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "genhtml --baseline-file {0}/suite.info {0}/fuzz.info -o {0}/html",
            lcov_dir.display()
        )),
        "{err}"
    );
    for run in ["suite", "fuzz"] {
        let t = std::fs::read_to_string(lcov_dir.join(format!("{run}.info"))).unwrap();
        assert!(
            t.starts_with(&format!("TN:{run}\nSF:{SAMPLE_CWD}/main.cpp\n")),
            "{t}"
        );
    }
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("11, 16, 24-25") || table.contains("24-25"),
        "{table}"
    );
    assert!(table.contains("total: 4 new lines in 1 files"), "{table}");
    let lcov = std::fs::read_to_string(&info).unwrap();
    assert!(lcov.contains(&format!("SF:{SAMPLE_CWD}/tiny.hpp\nDA:11,1\nDA:16,1\nDA:24,1\nDA:25,1\nLF:4\nLH:4\nend_of_record\n")), "{lcov}");
    // The previous release's form, one .info file of the new lines, still works, with a warning.
    let old = dir.path().join("old.info");
    let a = args(&["--lcov", old.to_str().unwrap()]);
    let out = mfppr(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: --lcov"));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), lcov);
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
    let odd = w(
        "odd.json",
        r#"{"format_version": "2", "current_working_directory": "/x", "files": [{"file": "a.cpp", "functions": [], "lines": [{"line_number": 4, "count": 1, "conditions": [{"count": 3, "covered": 1, "not_covered_true": [], "not_covered_false": [0]}]}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &odd],
        "odd.json: invalid condition coverage for a.cpp:4 (count 3 is not an even number of outcomes)",
    );
    let term = w(
        "term.json",
        r#"{"format_version": "2", "current_working_directory": "/x", "files": [{"file": "a.cpp", "functions": [], "lines": [{"line_number": 4, "count": 1, "conditions": [{"count": 2, "covered": 1, "not_covered_true": [5], "not_covered_false": []}]}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &term],
        "term 5 outside 0..1); regenerate it with `gcov --json-format --conditions`",
    );
    let cond_type = w(
        "ctype.json",
        r#"{"format_version": "2", "current_working_directory": "/x", "files": [{"file": "a.cpp", "functions": [], "lines": [{"line_number": 4, "count": 1, "conditions": {"count": 2}}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &cond_type],
        "ctype.json: not a gcov JSON document: invalid type: map, expected a sequence",
    );
    let neg_branch = w(
        "negb.json",
        r#"{"gcovr/format_version": "0.14", "files": [{"file": "a.cpp", "functions": [], "lines": [{"line_number": 4, "count": 1, "branches": [{"count": -2}]}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &neg_branch],
        "negb.json: negative execution count -2 for a.cpp:4",
    );
    let nameless = w(
        "nameless.json",
        r#"{"gcovr/format_version": "0.11", "files": [{"file": "a.cpp", "lines": [], "functions": [{"lineno": 3, "execution_count": 1}]}]}"#,
    );
    expect_error(
        &["cover", "report", "--suite", &good, "--fuzz", &nameless],
        "nameless.json: a function of a.cpp has neither name nor demangled_name; re-export",
    );
    let lcov_file = w("not-a-dir", "x");
    let out = mfppr(&[
        "cover", "report", "--suite", &good, "--fuzz", &good, "--lcov", &lcov_file,
    ]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("is a file: give a directory") && err.lines().count() == 1,
        "{err}"
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

/// `mfppr cover` with no subcommand is `mfppr cover report` (as `git stash` is `git stash push`):
/// the same table, the same JSON, on the GCC 12 samples.
#[test]
fn plain_cover_is_cover_report() {
    let suite = sample("gcc12/suite/json").display().to_string();
    let fuzz = sample("gcc12/fuzz/json").display().to_string();
    for extra in [&[][..], &["--json"][..]] {
        let mut args = vec![
            "--suite",
            &suite,
            "--fuzz",
            &fuzz,
            "--source-root",
            SAMPLE_CWD,
        ];
        args.extend_from_slice(extra);
        let plain = mfppr(&[&["cover"][..], &args].concat());
        let report = mfppr(&[&["cover", "report"][..], &args].concat());
        assert!(
            plain.status.success(),
            "{}",
            String::from_utf8_lossy(&plain.stderr)
        );
        assert!(report.status.success());
        assert!(String::from_utf8_lossy(&plain.stdout).contains("tiny.hpp"));
        assert_eq!(plain.stdout, report.stdout, "{extra:?}");
        assert_eq!(plain.stderr, report.stderr, "{extra:?}");
    }
    // The subcommands stay as they are; report options before one are a usage error.
    let out = mfppr(&["cover", "--suite", &suite, "restore", "m.json"]);
    assert_eq!(out.status.code(), Some(2));
}
