//! End to end with real g++ and gcov: a header library, a "suite" and a "fuzz" driver, `mfppr
//! cover report --json`, then `cover inject` into a copy (markers fire for the fuzz driver, never
//! for the suite), `--marker abort`, and in-place injection undone byte for byte by
//! `cover restore`.

use crate::common;

use std::path::Path;

use common::{mfppr, require_tools, run_ok, write};

const LIB: &str = r#"#pragma once
#include <stdexcept>
#include <vector>

namespace shapes {

inline int area(int w, int h) {
  if (w < 0 || h < 0) {
    throw std::invalid_argument("negative side");
  }
  return w * h;
}

template <typename T>
T largest(const std::vector<T>& v) {
  T best = v.at(0);
  for (const T& x : v) {
    if (x > best)
      best = x;
  }
  return best;
}

inline const char* kind(int sides) {
  switch (sides) {
    case 3:
      return "triangle";
    case 4:
      return "quad";
    default:
      break;
  }
  return "other";
}

}  // namespace shapes
"#;

const SUITE: &str = r#"#include <cstdio>
#include "shapes.hpp"
int main() {
  std::printf("%d %d %s\n", shapes::area(2, 3), shapes::largest(std::vector<int>{4}),
              shapes::kind(3));
  return 0;
}
"#;

const FUZZ: &str = r#"#include <cstdio>
#include <stdexcept>
#include "shapes.hpp"
int main() {
  try {
    shapes::area(-1, 2);
  } catch (const std::invalid_argument&) {
    std::puts("caught");
  }
  std::printf("%d %d %s\n", shapes::area(2, 3), shapes::largest(std::vector<int>{1, 5}),
              shapes::kind(7));
  return 0;
}
"#;

/// Build `driver` with coverage in `build`, run it, and produce gcov JSON there.
fn covered_run(root: &Path, build: &str, driver: &str) {
    let dir = root.join(build);
    std::fs::create_dir_all(&dir).unwrap();
    let src = format!("../drivers/{driver}.cpp");
    run_ok(
        &dir,
        "g++",
        &[
            "--coverage",
            "-O0",
            "-I",
            "../lib/include",
            "-c",
            &src,
            "-o",
            "t.o",
        ],
    );
    run_ok(&dir, "g++", &["--coverage", "t.o", "-o", "t"]);
    run_ok(&dir, "./t", &[]);
    run_ok(&dir, "gcov", &["--json-format", "t.gcda"]);
}

#[test]
fn cover_report_inject_and_restore_with_real_gcc() {
    if !require_tools(&["g++", "gcov"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("lib/include/shapes.hpp"), LIB);
    write(&root.join("lib/README"), "not code\n");
    write(&root.join("drivers/suite.cpp"), SUITE);
    write(&root.join("drivers/fuzz.cpp"), FUZZ);
    covered_run(root, "build-suite", "suite");
    covered_run(root, "build-fuzz", "fuzz");

    let base = [
        "--suite",
        "build-suite",
        "--fuzz",
        "build-fuzz",
        "--source-root",
        "lib",
    ];
    let out = mfppr(
        root,
        &[&["cover", "report"][..], &base, &["--json"]].concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The throw (9), the updated maximum (19), and the default branch (30-31) plus "other" (33).
    assert_eq!(
        report["files"][0]["path"], "include/shapes.hpp",
        "{report:#}"
    );
    assert_eq!(
        report["files"][0]["lines"],
        serde_json::json!([9, 19, 30, 31, 33]),
        "{report:#}"
    );
    assert_eq!(report["total_new_lines"], 5);

    // Markers in a copy of the library.
    let out = mfppr(
        root,
        &[
            &["cover", "inject"][..],
            &base,
            &["--inject-into", "marked"],
        ]
        .concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("marked/README")).unwrap(),
        "not code\n"
    );
    let markers: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("marked/markers.json")).unwrap()).unwrap();
    let ids: Vec<(String, u64)> = markers["markers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [9, 19, 30, 31, 33]
        .iter()
        .map(|&l| (format!("include_shapes_hpp-L{l}"), l))
        .collect();
    assert_eq!(ids, expected, "{markers:#}");
    assert_eq!(markers["skipped"], serde_json::json!([]));

    let run_against = |include: &str, driver: &str, extra: &[&str]| {
        let dir = root.join(format!("run-{driver}"));
        std::fs::create_dir_all(&dir).unwrap();
        let src = format!("../drivers/{driver}.cpp");
        run_ok(
            &dir,
            "g++",
            &[&["-O0", "-I", include, &src, "-o", "t"][..], extra].concat(),
        );
        std::process::Command::new(dir.join("t")).output().unwrap()
    };
    let fuzz = run_against("../marked/include", "fuzz", &[]);
    assert!(fuzz.status.success());
    let stderr = String::from_utf8(fuzz.stderr).unwrap();
    for (id, line) in &expected {
        assert!(
            stderr.contains(&format!("MFPPR-COV {id} include/shapes.hpp:{line}\n")),
            "{id} missing from:\n{stderr}"
        );
    }
    let suite = run_against("../marked/include", "suite", &[]);
    assert!(suite.status.success());
    assert!(
        !String::from_utf8_lossy(&suite.stderr).contains("MFPPR-COV"),
        "the suite reaches no new line"
    );

    // --marker abort: the first marker reached stops the program.
    let out = mfppr(
        root,
        &[
            &["cover", "inject"][..],
            &base,
            &["--inject-into", "aborting", "--marker", "abort"],
        ]
        .concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = root.join("run-abort");
    std::fs::create_dir_all(&dir).unwrap();
    run_ok(
        &dir,
        "g++",
        &[
            "-O0",
            "-I",
            "../aborting/include",
            "../drivers/fuzz.cpp",
            "-o",
            "t",
        ],
    );
    let aborted = std::process::Command::new(dir.join("t")).output().unwrap();
    assert!(!aborted.status.success());
    assert!(String::from_utf8_lossy(&aborted.stderr)
        .starts_with("MFPPR-COV include_shapes_hpp-L9 include/shapes.hpp:9\n"));

    // In place, then restore byte for byte.
    let header = root.join("lib/include/shapes.hpp");
    let out = mfppr(
        root,
        &[
            &["cover", "inject"][..],
            &base,
            &["--in-place", "--manifest", "m.json"],
        ]
        .concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&header)
        .unwrap()
        .contains("MFPPR-COV include_shapes_hpp-L30"));
    assert!(root.join("markers.json").exists() && root.join("m.json").exists());
    let again = mfppr(
        root,
        &[
            &["cover", "inject"][..],
            &base,
            &["--in-place", "--manifest", "m.json"],
        ]
        .concat(),
    );
    assert!(
        !again.status.success(),
        "a second in-place injection must not overwrite the manifest"
    );
    let out = mfppr(root, &["cover", "restore", "m.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&header).unwrap(), LIB);
}
