//! The flags MF++ and C-Vise users bring, through the built binary: the compiler's flags after
//! `--`, the incomplete-catalogue warning and `--strict-spec`, `-n`, `-v`, `--print-diff`,
//! `--save-temps`, the test on standard input, shell completions, and `MFPPR_CXXFLAGS` in the
//! bundled scripts (with g++).
//!
//! The spec is split over two directories as in the issue: `a/` holds every header but
//! `spec.hpp` (which `iset_spec_defs.hpp` includes), `b/` holds `spec.hpp`.

use crate::common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{bin, require_tools, root};

const TEST: &str = include_str!("../fixtures/tests/iset_pass_tiny.cpp");

/// Interesting while a metamorphic check is left.
const ORACLE: &str = "#!/bin/sh\ngrep -q 'metalib::checks::' \"$1\"\n";

struct Setup {
    dir: tempfile::TempDir,
    input: PathBuf,
    a: String,
    b: String,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::write(&input, TEST).unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        for entry in std::fs::read_dir(root().join("fixtures/iset/spec")).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            let to = if name == "spec.hpp" { &b } else { &a };
            std::fs::copy(&path, to.join(name)).unwrap();
        }
        let s = Setup {
            input,
            a: a.display().to_string(),
            b: b.display().to_string(),
            dir,
        };
        s.script("check.sh", ORACLE);
        s
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Run `mfppr args…` in the temp dir, with `stdin` on standard input.
    fn run_with_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = Command::new(bin())
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            std::fs::read_to_string(&self.input).unwrap(),
            TEST,
            "the input was modified"
        );
        out
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with_stdin(args, b"")
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }
}

fn ok(out: &Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn flags_after_dashdash_find_the_spec_like_dash_i() {
    let t = Setup::new();
    let with_i = ok(&t.run(&["inspect", "t.cpp", "--json", "-I", &t.a, "-I", &t.b])).0;
    let joined_b = format!("-I{}", t.b);
    let after = ok(&t.run(&[
        "inspect",
        "t.cpp",
        "--json",
        "--",
        "-std=c++17",
        "-DEXECUTE",
        "-I",
        &t.a,
        &joined_b,
    ]));
    assert_eq!(with_i, after.0);
    assert!(!after.1.contains("warning"), "{}", after.1);
    let report: serde_json::Value = serde_json::from_str(&with_i).unwrap();
    assert_eq!(report["catalogue"]["missing"], serde_json::json!([]));
    assert!(report["catalogue"]["relations"].as_u64().unwrap() > 0);
}

#[test]
fn the_same_result_with_dash_i_and_with_flags_after_dashdash() {
    let t = Setup::new();
    let (_, plain) = ok(&t.run(&[
        "reduce", "t.cpp", "--check", "check.sh", "-j", "1", "-o", "i.cpp", "-I", &t.a, "-I", &t.b,
    ]));
    assert!(!plain.contains("warning"), "{plain}");
    // The script sees the flags, include dirs made absolute.
    let want = format!("-std=c++17 -I {} -I {} -DX=1", t.a, t.b);
    t.script(
        "flags.sh",
        &format!("#!/bin/sh\n[ \"$MFPPR_CXXFLAGS\" = '{want}' ] || exit 1\n{ORACLE}"),
    );
    let (diff, stderr) = ok(&t.run(&[
        "reduce",
        "t.cpp",
        "--check",
        "flags.sh",
        "-n",
        "2",
        "-v",
        "--print-diff",
        "-o",
        "flags.cpp",
        "--",
        "-std=c++17",
        "-I",
        "a",
        "-Ib",
        "-DX=1",
    ]));
    let result = t.read("flags.cpp");
    assert_eq!(t.read("i.cpp"), result, "flags changed the result");
    assert!(result.len() < TEST.len());
    // -v: each accepted candidate with its kind, sizes and diff size.
    assert!(stderr.contains("round 1,"), "{stderr}");
    assert!(stderr.contains("diff -"), "{stderr}");
    // --print-diff: the unified diff alone on stdout, the summary on stderr.
    assert!(diff.starts_with("--- t.cpp\n+++ "), "{diff}");
    assert!(diff.contains("\n@@ -"), "{diff}");
    let removed = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .count();
    assert!(removed > 0, "{diff}");
    assert!(stderr.contains("mfppr: ") && stderr.contains(" bytes (-"));
}

#[test]
fn a_missing_spec_directory_is_said_loudly_and_in_the_stats() {
    let t = Setup::new();
    let (_, stderr) = ok(&t.run(&[
        "reduce", "t.cpp", "--check", "check.sh", "--stats", "s.json", "-q", "--", "-I", &t.a,
    ]));
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("warning: incomplete MR catalogue"))
        .unwrap_or_else(|| panic!("no warning in {stderr}"));
    assert!(warning.contains("\"spec.hpp\""), "{warning}");
    assert!(
        warning.contains(&format!("included from {}/iset_spec_defs.hpp", t.a)),
        "{warning}"
    );
    assert!(warning.contains(&format!("searched {}", t.a)), "{warning}");
    assert!(
        warning.contains("recursion folding is limited to"),
        "{warning}"
    );
    assert!(warning.contains("-- -I DIR"), "{warning}");
    let stats: serde_json::Value = serde_json::from_str(&t.read("s.json")).unwrap();
    let cat = &stats["catalogue"];
    assert_eq!(cat["complete"], false);
    assert_eq!(cat["missing"][0]["name"], "spec.hpp");
    let unknown = cat["instances_unknown_family"].as_u64().unwrap();
    assert!(unknown > 0 && unknown <= cat["instances"].as_u64().unwrap());
}

#[test]
fn strict_spec_stops_before_any_check_run() {
    let t = Setup::new();
    t.script(
        "marker.sh",
        "#!/bin/sh\ntouch \"$MFPPR_ORIGINAL_DIR/ran\"\nexit 0\n",
    );
    let out = t.run(&[
        "reduce",
        "t.cpp",
        "--check",
        "marker.sh",
        "--strict-spec",
        "--",
        "-I",
        &t.a,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: incomplete MR catalogue"),
        "{stderr}"
    );
    assert!(stderr.contains("spec.hpp") && stderr.contains("--strict-spec"));
    assert!(!t.path("ran").exists(), "a check ran");
    assert!(!t.path("t.reduced.cpp").exists());
    let inspect = t.run(&["inspect", "t.cpp", "--strict-spec", "-I", &t.a]);
    assert_eq!(inspect.status.code(), Some(1));
}

#[test]
fn save_temps_keeps_the_check_directories_of_interesting_runs() {
    let t = Setup::new();
    t.script(
        "card.sh",
        "#!/bin/sh\ngrep -q 'subtract_by_intersect_1_4' \"$1\"\n",
    );
    let (_, stderr) = ok(&t.run(&[
        "reduce",
        "t.cpp",
        "--check",
        "card.sh",
        "-j",
        "1",
        "-vv",
        "--save-temps",
        "kept",
        "-I",
        &t.a,
        "-I",
        &t.b,
    ]));
    // -vv: each candidate tried, with its verdict.
    assert!(stderr.contains(": tried ") && stderr.contains("): Uninteresting"));
    assert!(stderr.contains("): Interesting"), "{stderr}");
    let kept: Vec<PathBuf> = std::fs::read_dir(t.path("kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(kept.len() >= 2, "{kept:?}");
    let first = t.path("kept/1");
    assert_eq!(std::fs::read_to_string(first.join("t.cpp")).unwrap(), TEST);
    assert_eq!(
        std::fs::read_to_string(first.join(".mfppr-verdict")).unwrap(),
        "interesting\n"
    );
    for dir in &kept {
        let cand = std::fs::read_to_string(dir.join("t.cpp")).unwrap();
        assert!(
            cand.contains("subtract_by_intersect_1_4"),
            "{}",
            dir.display()
        );
    }
    // A used directory is refused.
    let out = t.run(&[
        "reduce",
        "t.cpp",
        "--check",
        "check.sh",
        "--save-temps",
        "kept",
        "-o",
        "again.cpp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not empty"));
}

#[test]
fn the_test_can_come_from_standard_input() {
    let t = Setup::new();
    t.script(
        "named.sh",
        &format!("#!/bin/sh\n[ \"$(basename \"$1\")\" = mine.cpp ] || exit 1\n{ORACLE}"),
    );
    ok(&t.run(&[
        "reduce", "t.cpp", "--check", "check.sh", "-o", "file.cpp", "-q", "-I", &t.a, "-I", &t.b,
    ]));
    ok(&t.run_with_stdin(
        &[
            "reduce",
            "-",
            "--name",
            "mine.cpp",
            "--check",
            "named.sh",
            "-o",
            "stdin.cpp",
            "-q",
            "--",
            "-I",
            &t.a,
            "-I",
            &t.b,
        ],
        TEST.as_bytes(),
    ));
    assert_eq!(t.read("stdin.cpp"), t.read("file.cpp"));
    let out = t.run(&["reduce", "-", "--check", "check.sh"]);
    assert_eq!(out.status.code(), Some(2), "-o is required with -");
    let inspect = ok(&t.run_with_stdin(
        &["inspect", "-", "--json", "-I", &t.a, "-I", &t.b],
        TEST.as_bytes(),
    ));
    let report: serde_json::Value = serde_json::from_str(&inspect.0).unwrap();
    assert_eq!(report["file"], "-");
    assert_eq!(report["catalogue"]["missing"], serde_json::json!([]));
}

#[test]
fn completions_print_a_script_per_shell() {
    let t = Setup::new();
    let bash = ok(&t.run(&["completions", "bash"])).0;
    assert!(bash.contains("complete -F _mfppr"), "{bash}");
    assert!(bash.contains("--strict-spec") && bash.contains("--save-temps"));
    assert!(ok(&t.run(&["completions", "zsh"]))
        .0
        .starts_with("#compdef mfppr"));
    assert!(ok(&t.run(&["completions", "fish"]))
        .0
        .contains("complete -c mfppr"));
    assert_eq!(t.run(&["completions", "tcsh"]).status.code(), Some(2));
}

/// check-failure.py on `cand`, with `MFPPR_CXXFLAGS=flags` and the cache `cache`: its exit
/// status.
fn check_failure(cand: &Path, flags: &str, cache: &Path) -> i32 {
    let work = tempfile::tempdir().unwrap();
    Command::new("python3")
        .arg(root().join("interestingness/check-failure.py"))
        .arg(cand)
        .current_dir(work.path())
        .env("TMPDIR", work.path())
        .env("MFPPR_ORIGINAL_DIR", cand.parent().unwrap())
        .env("MFPPR_CXXFLAGS", flags)
        .env("MFPPR_CACHE_DIR", cache)
        .env("CHECK_NAME", "check_equal")
        .env_remove("CXXFLAGS")
        .env_remove("REFERENCE_CXXFLAGS")
        .env_remove("MFPPR_INCLUDES")
        .env_remove("MFPPR_PCH")
        .env_remove("CXX")
        .status()
        .unwrap()
        .code()
        .unwrap()
}

#[test]
fn the_bundled_scripts_compile_with_the_flags_after_dashdash() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let t = Setup::new();
    let cand = t.path("m.cpp");
    std::fs::copy(root().join("fixtures/tests/iset_merge_small_a.cpp"), &cand).unwrap();
    let cache = t.path("cache");
    let bug = format!("-I {} -I {} -DISET_BUG_MERGE", t.a, t.b);
    let fixed = format!("-I {} -I {}", t.a, t.b);
    // Without the spec dirs it does not compile; with them and the bug macro the check fails
    // (twice: the second run builds and uses the precompiled include block); without the macro
    // it passes, so the flags are part of the precompiled block's key.
    assert_eq!(check_failure(&cand, "", &cache), 1);
    assert_eq!(check_failure(&cand, &bug, &cache), 0);
    assert_eq!(check_failure(&cand, &bug, &cache), 0);
    assert_eq!(check_failure(&cand, &fixed, &cache), 1);
    let built = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pch-") && !n.contains('.'))
        .count();
    assert_eq!(
        built, 1,
        "the second run should build one precompiled block"
    );
}

/// On a terminal (a real pseudo-terminal from util-linux `script`) the progress is one line
/// redrawn in place — bytes now / at start, percentage, round, kind — and erased before the other
/// messages; without a terminal no escape sequence is printed.
#[test]
fn progress_is_one_updating_line_on_a_terminal() {
    if !require_tools(&["script"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.cpp");
    std::fs::copy(root().join("fixtures/tests/iset_pass_tiny.cpp"), &input).unwrap();
    let check = dir.path().join("slow.sh");
    std::fs::write(&check, "#!/bin/sh\nsleep 0.3\ngrep -q r_0 \"$1\"\n").unwrap();
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
    let command = format!(
        "{} reduce {} --check {} -j1 --no-tail",
        bin().display(),
        input.display(),
        check.display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let tty = String::from_utf8_lossy(&out.stdout);
    let size = std::fs::metadata(&input).unwrap().len();
    assert!(
        tty.contains("\r\x1b[2Kmfppr: ") && tty.contains(&format!(" of {size} bytes (-")),
        "no updating status line: {tty:?}"
    );
    let plain = Command::new(bin())
        .args(["reduce", input.to_str().unwrap(), "--check"])
        .arg(&check)
        .args(["-j1", "--no-tail", "-o"])
        .arg(dir.path().join("plain.cpp"))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stderr).contains('\x1b'));
}

/// `export` and `batch` take the generator's flag list after `--` as `reduce` does: `export`
/// finds the spec through it (same export as with `-I`), and `batch emit` writes task
/// lines that search the same directory and carry the flags to the scripts.
#[test]
fn export_and_batch_take_compiler_flags_after_dashdash() {
    let dir = tempfile::tempdir().unwrap();
    let spec = root().join("fixtures/iset/spec");
    let reduced = root().join("fixtures/expected/iset_merge_small_a.reduced.cpp");
    let export = |out: &str, flags: &[&str]| {
        let out = dir.path().join(out);
        let status = Command::new(bin())
            .arg("export")
            .arg(&reduced)
            .arg("-o")
            .arg(&out)
            .args(flags)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        std::fs::read(out).unwrap()
    };
    let spec_s = spec.to_str().unwrap();
    assert_eq!(
        export("a.cpp", &["-I", spec_s]),
        export("b.cpp", &["--", "-std=c++17", "-I", spec_s])
    );

    let tasks = dir.path().join("tasks.txt");
    let out = Command::new(bin())
        .args(["batch", "emit"])
        .arg(root().join("fixtures/tests/iset_pass_tiny.cpp"))
        .arg("--check")
        .arg(root().join("interestingness/check-failure.py"))
        .arg("-o")
        .arg(dir.path().join("campaign"))
        .arg("--tasks")
        .arg(&tasks)
        .args(["--", "-DISET_BUG_MERGE", &format!("-I{spec_s}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = std::fs::read_to_string(&tasks).unwrap();
    assert!(line.contains(&format!("-I {spec_s}")), "{line}");
    assert!(line.contains("MFPPR_CXXFLAGS=-DISET_BUG_MERGE"), "{line}");
}

/// The trivial tests (`int main() {}`, the empty file): on a spare slot, after the candidates
/// ahead, while the original runs; those that did not run, after the search, and only when it
/// found no candidate uninteresting (always so with `-j 1`).
#[test]
fn the_trivial_tests_warn_on_a_check_that_accepts_them() {
    let s = Setup::new();
    let warning = "results may be meaningless";
    // A check that accepts anything: the warning at every -j.
    s.script("any.sh", "#!/bin/sh\nexit 0\n");
    for jobs in ["1", "2"] {
        let out = s.run(&[
            "reduce", "t.cpp", "--check", "any.sh", "-o", "any.cpp", "-j", jobs,
        ]);
        let (_, stderr) = ok(&out);
        assert!(
            stderr.contains("the check accepts `int main() {}`") && stderr.contains(warning),
            "-j {jobs}: {stderr}"
        );
    }
    // A check that accepts the empty file but tells the test's own candidates apart: a spare
    // slot free while the original runs (slower here, as a compiler is on the whole test) still
    // finds it out; -j 1 trusts the rejected candidates and saves the two runs.
    s.script(
        "empty.sh",
        "#!/bin/sh\n! cmp -s \"$1\" \"$MFPPR_ORIGINAL\" || sleep 1\n[ -s \"$1\" ] || exit 0\n\
         grep -q 'check_equal(r_1' \"$1\"\n",
    );
    let out = s.run(&[
        "reduce", "t.cpp", "--check", "empty.sh", "-o", "e2.cpp", "-j", "2",
    ]);
    let (_, stderr) = ok(&out);
    assert!(
        stderr.contains("the check accepts the empty file"),
        "{stderr}"
    );
    let out = s.run(&[
        "reduce", "t.cpp", "--check", "empty.sh", "-o", "e1.cpp", "-j", "1",
    ]);
    let (_, stderr) = ok(&out);
    assert!(!stderr.contains(warning), "{stderr}");
    assert_eq!(
        s.read("e1.cpp"),
        s.read("e2.cpp"),
        "the same result at -j 1 and -j 2"
    );
}
