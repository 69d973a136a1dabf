//! Hostile inputs to `mfppr cover` through the built binary (no compiler needed): a gzip bomb, a
//! FIFO where a coverage file or manifest belongs, coverage naming files outside `--source-root`,
//! and symlinks in the source tree that lead out of it (`inject` must never write through them).

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, write};

/// Run `mfppr args` in `dir`, failing the test (instead of hanging) after 60 s.
fn mfppr(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mfppr");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("mfppr {args:?} still runs after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The last line on stderr, which must be the one-line error of a failed run.
fn error_line(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure:\n{}",
        stderr(out)
    );
    stderr(out).lines().last().unwrap_or_default().to_string()
}

/// A gcov JSON document (cwd `cwd`) with line `line` of each of `files` run `count` times.
fn gcov_json(cwd: &Path, files: &[&str], line: u32, count: u64) -> String {
    let files: Vec<String> = files
        .iter()
        .map(|f| {
            format!(
                r#"{{"file": "{f}", "functions": [], "lines": [{{"line_number": {line}, "count": {count}}}]}}"#
            )
        })
        .collect();
    format!(
        r#"{{"format_version": "1", "current_working_directory": "{}", "files": [{}]}}"#,
        cwd.display(),
        files.join(", ")
    )
}

/// `suite.json` (line 2 of `files` never run) and `fuzz.json` (run once) in `dir`.
fn suite_and_fuzz(dir: &Path, cwd: &Path, files: &[&str]) {
    write(&dir.join("suite.json"), &gcov_json(cwd, files, 2, 0));
    write(&dir.join("fuzz.json"), &gcov_json(cwd, files, 2, 1));
}

#[test]
fn a_gzip_bomb_is_refused_before_it_inflates_and_names_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // 70 gzip members of 1 MiB of spaces: 70 KiB on disk, 70 MiB inflated, past the 64 MiB
    // that any gzip input may inflate to.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![b' '; 1 << 20]).unwrap();
    std::fs::write(
        dir.join("bomb.gcov.json.gz"),
        enc.finish().unwrap().repeat(70),
    )
    .unwrap();
    suite_and_fuzz(dir, dir, &["a.c"]);
    let out = mfppr(
        dir,
        &[
            "cover",
            "report",
            "--suite",
            "bomb.gcov.json.gz",
            "--fuzz",
            "fuzz.json",
        ],
    );
    let line = error_line(&out);
    assert!(
        line.contains("bomb.gcov.json.gz: gzip data inflates past 64 MiB")
            && line.contains("gunzip it"),
        "{line}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_fifo_as_coverage_input_or_manifest_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    suite_and_fuzz(dir, dir, &["a.c"]);
    nix::unistd::mkfifo(&dir.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("fifo", dir.join("fifolink")).unwrap();
    for input in ["fifo", "fifolink"] {
        let out = mfppr(
            dir,
            &["cover", "report", "--suite", input, "--fuzz", "fuzz.json"],
        );
        let line = error_line(&out);
        assert!(
            line.contains(&format!("coverage input {input} is a FIFO"))
                && line.contains("write the data to a regular file"),
            "{line}"
        );
    }
    let line = error_line(&mfppr(dir, &["cover", "restore", "fifo"]));
    assert!(line.contains("manifest fifo is a FIFO"), "{line}");
}

#[test]
fn report_says_which_files_outside_the_source_root_it_leaves_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(&dir.join("lib/a.c"), "int a(int x) {\n  return x;\n}\n");
    let outside = [
        "/usr/include/c++/13/bits/stl_vector.h",
        "/usr/include/c++/13/bits/stl_map.h",
        "../other/b.c",
        "/usr/include/stdio.h",
        "lib/a.c",
    ];
    suite_and_fuzz(dir, dir, &outside);
    let out = mfppr(
        dir,
        &[
            "cover",
            "report",
            "--suite",
            "suite.json",
            "--fuzz",
            "fuzz.json",
            "--source-root",
            "lib",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let other = dir.parent().unwrap().join("other/b.c");
    let note = format!(
        "coverage: 4 file(s) outside --source-root {} left out ({}, /usr/include/c++/13/bits/stl_map.h, \
         /usr/include/c++/13/bits/stl_vector.h, …); give a --source-root that contains them to \
         report them",
        dir.join("lib").display(),
        other.display()
    );
    assert!(err.lines().any(|l| l == note), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.c"));
}

const SOURCE: &str = "int f(int x) {\n  return x;\n}\n";

/// `lib/` with one real file `a.c` and links out of it: `abs.c` (absolute) and `rel.c`
/// (`../victim.c`) to `victim.c`, the directory `sub` to `victims/dir` (holding `d.c`), and
/// `alias.c` to `a.c` (the same file, inside). Coverage names all five, line 2 new in each.
fn tree_with_links_out(dir: &Path) -> [std::path::PathBuf; 2] {
    let victims = [dir.join("victim.c"), dir.join("victims/dir/d.c")];
    for v in &victims {
        write(v, SOURCE);
    }
    write(&dir.join("lib/a.c"), SOURCE);
    let link = |target: &Path, name: &str| {
        std::os::unix::fs::symlink(target, dir.join("lib").join(name)).unwrap()
    };
    link(&victims[0], "abs.c");
    link(Path::new("../victim.c"), "rel.c");
    link(Path::new("../victims/dir"), "sub");
    link(Path::new("a.c"), "alias.c");
    let lib = dir.join("lib");
    suite_and_fuzz(dir, &lib, &["a.c", "abs.c", "alias.c", "rel.c", "sub/d.c"]);
    victims
}

/// What markers.json says: the marker ids, and each skipped `file:line: reason` with the part
/// of the reason before ` (`.
fn markers_json(path: &Path) -> (Vec<String>, Vec<String>) {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let ids = v["markers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    let skipped = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let reason = s["reason"].as_str().unwrap();
            format!(
                "{}:{}: {}",
                s["file"].as_str().unwrap(),
                s["line"],
                reason.split(" (").next().unwrap()
            )
        })
        .collect();
    (ids, skipped)
}

const EXPECTED_SKIPPED: [&str; 4] = [
    "abs.c:2: outside --source-root",
    "rel.c:2: outside --source-root",
    "sub/d.c:2: outside --source-root",
    "alias.c:2: counted under a.c",
];

const ACCOUNTING: &str = "5 new lines: 1 markers for 1 lines (0 of them folded into a marker of \
                          the same statement), 4 skipped (3: outside --source-root; 1: counted \
                          under a.c)";

fn inject(dir: &Path, target: &[&str]) -> Output {
    let base = [
        "cover",
        "inject",
        "--suite",
        "suite.json",
        "--fuzz",
        "fuzz.json",
        "--source-root",
        "lib",
    ];
    mfppr(dir, &[&base[..], target].concat())
}

#[test]
fn inject_into_a_copy_never_writes_through_a_link_out_of_the_source_root() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let victims = tree_with_links_out(dir);
    let out = inject(dir, &["--inject-into", "marked"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for v in &victims {
        assert_eq!(
            std::fs::read_to_string(v).unwrap(),
            SOURCE,
            "{}",
            v.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("lib/a.c")).unwrap(),
        SOURCE
    );
    assert!(std::fs::read_to_string(dir.join("marked/a.c"))
        .unwrap()
        .contains("MFPPR-COV a_c-L2 a.c:2"));
    let (ids, skipped) = markers_json(&dir.join("marked/markers.json"));
    assert_eq!(ids, ["a_c-L2"]);
    assert_eq!(skipped, EXPECTED_SKIPPED);
    assert!(err.lines().any(|l| l == ACCOUNTING), "{err}");
    let victim = std::fs::canonicalize(&victims[0]).unwrap();
    let note = format!(
        "skipped rel.c:2: outside --source-root (it resolves to {})",
        victim.display()
    );
    assert!(err.lines().any(|l| l == note), "{err}");
}

#[test]
fn in_place_checks_every_target_before_the_first_edit_and_marks_only_inside_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let victims = tree_with_links_out(dir);
    let out = inject(dir, &["--in-place", "--manifest", "m.json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for v in &victims {
        assert_eq!(
            std::fs::read_to_string(v).unwrap(),
            SOURCE,
            "{}",
            v.display()
        );
    }
    assert!(std::fs::read_to_string(dir.join("lib/a.c"))
        .unwrap()
        .contains("MFPPR-COV a_c-L2 a.c:2"));
    for name in ["abs.c", "rel.c", "sub", "alias.c"] {
        let meta = std::fs::symlink_metadata(dir.join("lib").join(name)).unwrap();
        assert!(meta.file_type().is_symlink(), "{name} was replaced");
    }
    let (ids, skipped) = markers_json(&dir.join("markers.json"));
    assert_eq!(ids, ["a_c-L2"]);
    assert_eq!(skipped, EXPECTED_SKIPPED);
    assert!(err.lines().any(|l| l == ACCOUNTING), "{err}");
    let out = mfppr(dir, &["cover", "restore", "m.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("lib/a.c")).unwrap(),
        SOURCE
    );
}

#[test]
fn in_place_needs_a_source_root() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Real gcov JSON names system headers by absolute path: without a root they would be edited.
    write(&dir.join("victim.c"), SOURCE);
    let victim = dir.join("victim.c");
    suite_and_fuzz(dir, dir, &[victim.to_str().unwrap()]);
    let out = mfppr(
        dir,
        &[
            "cover",
            "inject",
            "--suite",
            "suite.json",
            "--fuzz",
            "fuzz.json",
            "--in-place",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--source-root"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), SOURCE);
    assert!(!dir.join("mfppr-cover-manifest.json").exists());
}
