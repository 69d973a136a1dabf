//! Hostile inputs to `mfppr cover` through the built binary (no compiler needed): a gzip bomb, a
//! FIFO where a coverage file or manifest belongs, coverage naming files outside `--source-root`,
//! and symlinks in the source tree that lead out of it (`inject` must never write through them).

mod common;

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
