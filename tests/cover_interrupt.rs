//! Ctrl-C during `mfppr cover inject --in-place` (issue 8): SIGINT arrives while files are being
//! marked; mfppr puts back what it changed, removes its manifest and backups, leaves no
//! `.mfppr-tmp-*` file in the source tree and exits 130 with one line. No compiler needed.
//!
//! The signal lands at the same point every run: `MFPPR_TEST_STOP_AT_POLL` (see
//! `src/interrupt.rs`) stops mfppr at its `STOP_AT`-th look at the interrupt flag, the one
//! before file `STOP_AT` is marked; the test sends SIGINT to the stopped process, then SIGCONT.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 50;
/// mfppr looks at the flag once before marking each file: it stops with `STOP_AT - 1` marked.
const STOP_AT: usize = 20;

fn source(i: usize) -> String {
    format!("int f{i}(int x) {{\n  return x + {i};\n}}\n")
}

/// A gcov JSON document naming every file, with `count` for line 2.
fn coverage(root: &Path, count: u32) -> String {
    let files: Vec<String> = (0..FILES)
        .map(|i| {
            format!(
                r#"{{"file": "f{i:04}.cpp", "functions": [], "lines": [{{"line_number": 2, "count": {count}}}]}}"#
            )
        })
        .collect();
    format!(
        r#"{{"format_version": "1", "current_working_directory": "{}", "files": [{}]}}"#,
        root.display(),
        files.join(", ")
    )
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walkdir_names(dir);
    names.sort();
    names
}

fn walkdir_names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            out.extend(
                walkdir_names(&e.path())
                    .into_iter()
                    .map(|n| format!("{name}/{n}")),
            );
        } else {
            out.push(name);
        }
    }
    out
}

#[test]
fn sigint_during_in_place_injection_restores_everything_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..FILES {
        std::fs::write(src.join(format!("f{i:04}.cpp")), source(i)).unwrap();
    }
    std::fs::write(tmp.path().join("suite.json"), coverage(&src, 0)).unwrap();
    std::fs::write(tmp.path().join("fuzz.json"), coverage(&src, 1)).unwrap();
    let before = entries(tmp.path());

    let child = Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args([
            "cover",
            "inject",
            "--suite",
            "suite.json",
            "--fuzz",
            "fuzz.json",
            "--source-root",
            "src",
            "--in-place",
            "--manifest",
            "m.json",
        ])
        .current_dir(tmp.path())
        .env("MFPPR_TEST_STOP_AT_POLL", STOP_AT.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until mfppr has stopped itself (state `T`), mid-way through the edits.
    let stat = format!("/proc/{}/stat", child.id());
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&stat).unwrap();
        let state = text
            .rsplit_once(") ")
            .map_or(' ', |(_, rest)| rest.chars().next().unwrap_or(' '));
        match state {
            'T' => break,
            'Z' => panic!("mfppr ended before it stopped at poll {STOP_AT}"),
            _ => {}
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "mfppr did not stop within 120 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(
        tmp.path().join("m.json").is_file(),
        "the manifest is written"
    );
    let marked = (0..FILES)
        .filter(|i| {
            std::fs::read_to_string(src.join(format!("f{i:04}.cpp"))).unwrap() != source(*i)
        })
        .count();
    assert_eq!(marked, STOP_AT - 1, "files marked when the signal lands");
    for signal in ["-INT", "-CONT"] {
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {signal}");
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!(
            "error: interrupted after marking {} of {FILES} files",
            STOP_AT - 1
        )) && last.ends_with("they were restored and the sources are unchanged"),
        "{stderr}"
    );
    for i in 0..FILES {
        let path = src.join(format!("f{i:04}.cpp"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            source(i),
            "{}",
            path.display()
        );
    }
    // No manifest, backup, markers.json or temporary file is left behind.
    assert_eq!(entries(tmp.path()), before);
}
