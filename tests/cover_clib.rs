//! The build-once flow of `mfppr cover` on a real compiled C library (`fixtures/clib`: plain
//! make, a static library built with `--coverage`, its own suite), with real gcc, g++, gcov and
//! make: suite and fuzz coverage, `inject --inject-into --build` (file times kept, build outputs
//! left out, a continuation-line marker inside a two-line `&&`), `find --marked` with
//! `--reduce-with-run`, `--points`, and `--verify-gcov --gcov-objdir` (issue 14).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::{mfppr, require_tools, run_ok};

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let out = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&out).unwrap();
        } else {
            std::fs::copy(e.path(), &out).unwrap();
        }
    }
}

fn set_mtime(p: &Path, secs: u64) {
    std::fs::File::open(p)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

fn gcov_into(dir: &Path, gcda: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    run_ok(dir, "gcov", &["--json-format", &gcda.to_string_lossy()]);
}

fn ok(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{}\n{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    err
}

#[test]
fn build_once_find_reduce_and_verify_on_a_compiled_c_library() {
    if !require_tools(&["gcc", "g++", "gcov", "make", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let lib = root.join("lib");
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/clib"),
        &lib,
    );
    // As after `configure`: config.h newer than config.h.in (git keeps no file times).
    set_mtime(&lib.join("config.h.in"), 1_000_000_000);
    set_mtime(&lib.join("config.h"), 1_100_000_000);
    run_ok(&lib, "make", &["-s", "CC=gcc"]);
    run_ok(&lib, "make", &["-s", "CC=gcc", "check"]);
    let gcda = lib.join("src/range.gcda");
    gcov_into(&root.join("suite"), &gcda);
    std::fs::remove_file(&gcda).unwrap();
    let flags = "-std=c++17 -O0 -w -DEXECUTE=1";
    for t in ["clib_join_a", "clib_meet_b"] {
        run_ok(
            root,
            "sh",
            &[
                "-c",
                &format!(
                    "g++ {flags} --coverage -I lib/include -I lib/spec lib/tests/{t}.cpp \
                     lib/libclib.a -o {t} && ./{t}"
                ),
            ],
        );
    }
    gcov_into(&root.join("fuzz"), &gcda);
    let fuzz_gcda = std::fs::read(&gcda).unwrap();

    // Inject once into a copy and build it there with the library's own make.
    let base = ["--suite", "suite", "--fuzz", "fuzz", "--source-root", "lib"];
    let failed = mfppr(
        root,
        &[
            &["cover", "inject"][..],
            &base,
            &["--inject-into", "broken", "--build", "make no-such-target"],
        ]
        .concat(),
    );
    assert!(!failed.status.success());
    let msg = String::from_utf8_lossy(&failed.stderr);
    assert!(
        msg.contains("--build `make no-such-target` failed") && msg.contains("untouched"),
        "{msg}"
    );
    let err = ok(&mfppr(
        root,
        &[
            &["cover", "inject"][..],
            &base,
            &[
                "--inject-into",
                "marked",
                "--build",
                "make -s CC=gcc CFLAGS=-O0 libclib.a",
            ],
        ]
        .concat(),
    ));
    assert!(
        err.contains("5 new lines: 5 markers for 5 lines (0 of them folded"),
        "{err}"
    );
    let marked = root.join("marked");
    assert_eq!(
        std::fs::metadata(marked.join("config.h.in"))
            .unwrap()
            .modified()
            .unwrap(),
        std::fs::metadata(lib.join("config.h.in"))
            .unwrap()
            .modified()
            .unwrap()
    );
    assert!(marked.join("libclib.a").exists());
    assert!(
        !marked.join("src/range.gcno").exists(),
        "build outputs copied"
    );
    let source = std::fs::read_to_string(marked.join("src/range.c")).unwrap();
    assert!(
        source.contains(
            "  if (x >= r.lo &&\n      ((void)fprintf(stderr, \"MFPPR-COV src_range_c-L38 \
             src/range.c:38\\n\"), (x <= r.hi)))\n"
        ),
        "{source}"
    );
    // The unmodified suite against the marked library reaches no new line's marker: in
    // particular not line 38's, whose `if` (line 37) the suite runs.
    let suite_run = run_ok(
        root,
        "sh",
        &[
            "-c",
            "gcc -O0 -I marked/include lib/suite/suite.c marked/libclib.a -o s && ./s",
        ],
    );
    assert!(
        !String::from_utf8_lossy(&suite_run.stderr).contains("MFPPR-COV"),
        "{}",
        String::from_utf8_lossy(&suite_run.stderr)
    );

    // Find, reduce and verify against the built tree, for two of the points.
    let lib_abs = lib.to_string_lossy();
    let verify = format!(
        "g++ {flags} --coverage -I {lib_abs}/include -I {lib_abs}/spec {{test}} \
         {lib_abs}/libclib.a -o {{exe}}"
    );
    let out = mfppr(
        root,
        &[
            "cover",
            "find",
            "--marked",
            "marked",
            "--source-root",
            "lib",
            "--corpus",
            "lib/tests",
            "--points",
            "src_range_c-L24,src/range.c:38",
            "--run",
            &format!(
                "g++ {flags} -I \"$MFPPR_INJECTED/include\" -I \"$MFPPR_INJECTED/spec\" {{test}} \
                 \"$MFPPR_INJECTED/libclib.a\" -o t && ./t"
            ),
            "--reduce",
            "--reduce-with-run",
            "--verify-gcov",
            "--verify-cmd",
            &verify,
            "--gcov-objdir",
            "lib",
            "--out",
            "found",
            "-j",
            "2",
            // The include dirs in the generator's form; the flags are also the oracle's CXXFLAGS.
            "--",
            "-I",
            "lib/include",
            "-I",
            "lib/spec",
        ],
    );
    let err = ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.ends_with("cover: 5 new lines, 2 reached, 1 tests, 1 checked (1 metamorphic, 0 value), 1 executed only\n"),
        "{stdout}\n{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("found/summary.json")).unwrap()).unwrap();
    let ids: Vec<&str> = summary["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["src_range_c-L24", "src_range_c-L38"]);
    let reduced = std::fs::read_to_string(root.join("found/src_range_c-L38.cpp")).unwrap();
    assert!(
        reduced.len()
            < std::fs::read(lib.join("tests/clib_join_a.cpp"))
                .unwrap()
                .len()
    );
    // Verification ran with GCOV_PREFIX: the library's own .gcda is untouched.
    assert_eq!(std::fs::read(&gcda).unwrap(), fuzz_gcda);
    // No second copy of the library was made.
    assert!(!root.join("found/injected").exists());
}
