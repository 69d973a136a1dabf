//! The coverage page (`--html`) in a real browser: `cover find --reduce --verify-gcov` on the
//! fixture library (real g++ and gcov, the flow of `cover_pipeline.rs`) and `cover report` write
//! their pages, headless Chromium renders them (`--dump-dom`), and the DOM it reports must hold
//! the counts of `summary.json` / `--json`, the statuses, and links that each resolve to a file.
//! Skips without Chromium unless `MFPPR_REQUIRE_TOOLS=1`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::browser::{check_links, dump_dom, CHROMIUM};
use common::{covered_build, mfppr, require_tools};

const CXXFLAGS: &str = "-std=c++17 -O0 -w";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `data-col` counts of the summary's total row.
fn totals(dom: &str) -> BTreeMap<String, u64> {
    let start = dom.find("<tr class=\"total\">").expect("a total row");
    let row = &dom[start..start + dom[start..].find("</tr>").unwrap()];
    row.split("data-col=\"")
        .skip(1)
        .map(|cell| {
            let (col, rest) = cell.split_once('"').unwrap();
            let n = rest[1..rest.find('<').unwrap()].parse().unwrap();
            (col.to_string(), n)
        })
        .collect()
}

/// The lines of the points of `summary.json` whose check starts with `prefix` (all reached
/// points when `None`).
fn lines_where(summary: &serde_json::Value, pick: impl Fn(&serde_json::Value) -> bool) -> u64 {
    summary["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| pick(p))
        .map(|p| p["lines"].as_array().unwrap().len() as u64)
        .sum()
}

fn check_find_page(dom: &str, summary: &serde_json::Value, last_line: &str) {
    assert!(dom.contains(last_line), "headline {last_line:?} missing");
    let t = totals(dom);
    let check = |p: &serde_json::Value, prefix: &str| {
        p["check"].as_str().is_some_and(|c| c.starts_with(prefix))
    };
    let reached = |p: &serde_json::Value| !p["source_test"].is_null();
    let marked = lines_where(summary, |_| true);
    let want = [
        ("new", summary["new_lines"].as_u64().unwrap()),
        ("reached", lines_where(summary, reached)),
        (
            "checked-metamorphic",
            lines_where(summary, |p| check(p, "checked (metamorphic")),
        ),
        (
            "checked-value",
            lines_where(summary, |p| check(p, "checked (value")),
        ),
        (
            "executed-only",
            lines_where(summary, |p| check(p, "executed only")),
        ),
        ("unreached", lines_where(summary, |p| !reached(p))),
        ("no-marker", summary["new_lines"].as_u64().unwrap() - marked),
    ];
    for (col, n) in want {
        assert_eq!(t.get(col), Some(&n), "column {col}: {t:?}");
        if !["new", "reached"].contains(&col) {
            let rows = dom.matches(&format!("data-status=\"{col}\"")).count() as u64;
            assert_eq!(rows, n, "rows with status {col}");
        }
    }
    assert!(t["reached"] > 0 && t["checked-metamorphic"] + t["checked-value"] > 0);
    for status in [
        "checked metamorphic",
        "checked value",
        "executed only",
        "unreached",
    ] {
        assert!(dom.contains(status), "legend lacks {status}");
    }
}

/// `cover report --json --html`: the page's total is the JSON's, and every new line is marked.
fn check_report_page(root: &Path, coverage: &[&str]) {
    let mut report = vec!["cover", "report", "--json", "--html", "report.html"];
    report.extend(coverage);
    let out = mfppr(root, &report);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dom = dump_dom(&root.join("report.html"), root);
    let t = totals(&dom);
    assert_eq!(t["new"], json["total_new_lines"].as_u64().unwrap(), "{t:?}");
    assert_eq!(
        dom.matches("data-status=\"new\"").count() as u64,
        t["new"],
        "every new line is marked"
    );
    check_links(&dom, root);
}

#[test]
fn the_find_and_report_pages_render_in_chromium_with_the_json_counts_and_live_links() {
    if !require_tools(&["g++", "gcov", "python3", CHROMIUM]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let spec = repo().join("fixtures/iset/spec");
    for t in ["basic", "setops"] {
        let src = repo().join(format!("fixtures/iset/suite/{t}.cpp"));
        covered_build(&root.join("suite").join(t), &src, &[&spec], CXXFLAGS);
    }
    let tiny = repo().join("fixtures/tests/iset_pass_tiny.cpp");
    covered_build(&root.join("fuzz/tiny"), &tiny, &[&spec], CXXFLAGS);
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::copy(&tiny, corpus.join("iset_pass_tiny.cpp")).unwrap();
    let coverage = [
        "--suite",
        "suite",
        "--fuzz",
        "fuzz",
        "--source-root",
        spec.to_str().unwrap(),
        "--include",
        "iset\\.h$",
    ];

    check_report_page(root, &coverage);

    let run = format!("g++ {CXXFLAGS} -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {{test}} -o t && ./t");
    let mut find = vec!["cover", "find"];
    find.extend(coverage);
    find.extend([
        "--corpus",
        "corpus",
        "--run",
        &run,
        "--reduce",
        "--timeout",
        "30",
        "--cxxflags",
        CXXFLAGS,
        "--out",
        "out",
        "--html",
        "out/index.html",
        "-j",
        "2",
    ]);
    let out = mfppr(root, &find);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("out/summary.json")).unwrap()).unwrap();
    let dom = dump_dom(&root.join("out/index.html"), root);
    check_find_page(&dom, &summary, stdout.lines().last().unwrap());
    let files = check_links(&dom, &root.join("out"));
    assert!(dom.contains("suite test ") && dom.contains("standalone export"));
    assert!(files >= 3, "{files} file links");
}

#[test]
fn a_page_over_an_input_or_a_file_find_writes_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    common::write(&root.join("suite/s.gcov"), "        -:    0:Source:a.c\n");
    common::write(&root.join("fuzz/f.gcov"), "        -:    0:Source:a.c\n");
    let refused = |args: &[&str], what: &str| {
        let out = mfppr(root, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(what),
            "{args:?}: {err}"
        );
    };
    let report = ["cover", "report", "--suite", "suite", "--fuzz", "fuzz"];
    refused(
        &[&report[..], &["--html", "suite/s.gcov"]].concat(),
        "lies in --suite",
    );
    let file_input = [
        "cover",
        "report",
        "--suite",
        "suite/s.gcov",
        "--fuzz",
        "fuzz",
    ];
    refused(
        &[&file_input[..], &["--html", "suite/s.gcov"]].concat(),
        "is the input",
    );
    refused(&[&report[..], &["--html", "suite"]].concat(), "a directory");
    let find = [
        "cover",
        "find",
        "--suite",
        "suite",
        "--fuzz",
        "fuzz",
        "--source-root",
        ".",
        "--corpus",
        "c",
        "--run",
        "false {test}",
        "--out",
        "out",
        "--html",
    ];
    refused(&[&find[..], &["out/summary.json"]].concat(), ".html name");
    assert!(!root.join("out/find.json").exists());
}
