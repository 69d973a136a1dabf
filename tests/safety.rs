//! The safety matrix of design §7 (issue 8), end to end through the built binary with real
//! scripts: bad output paths, hostile input, scripts that misbehave, flaky checks, a full disk and
//! leaked check directories. Every case ends in a one-line error or a correct result; in every
//! case the input is byte-identical afterwards, nothing panicked, and nothing is left in the
//! run's `TMPDIR`.

use crate::common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{require_tools, root, skip};

const TINY: &str = include_str!("../fixtures/tests/iset_pass_tiny.cpp");

/// One case's sandbox: an input, a private `TMPDIR` for mfppr, and a marker a script can touch.
struct Case {
    dir: tempfile::TempDir,
    tmp: PathBuf,
    input: PathBuf,
    text: Vec<u8>,
}

impl Case {
    fn new(text: &[u8]) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::write(&input, text).unwrap();
        Case {
            dir,
            tmp,
            input,
            text: text.to_vec(),
        }
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

    /// A script that touches `ran` and is interesting while the text keeps `r_0`.
    fn keep_r0(&self) -> PathBuf {
        let ran = self.path("ran");
        self.script(
            "keep.sh",
            &format!("#!/bin/sh\ntouch '{}'\ngrep -q r_0 \"$1\"\n", ran.display()),
        )
    }

    /// Run `mfppr ARGS` with the case's TMPDIR; check the invariants every case shares.
    fn run<A: AsRef<std::ffi::OsStr>>(&self, args: &[A]) -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_mfppr"))
            .args(args)
            .current_dir(self.dir.path())
            .env("TMPDIR", &self.tmp)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "mfppr panicked: {err}");
        assert_eq!(
            std::fs::read(&self.input).unwrap(),
            self.text,
            "the input was modified"
        );
        let left: Vec<_> = std::fs::read_dir(&self.tmp).unwrap().flatten().collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
        out
    }

    /// Run and expect success; return the output.
    fn succeeds<A: AsRef<std::ffi::OsStr>>(&self, args: &[A]) -> Output {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Run and expect one `error:` line (the last line of stderr) and exit `code`; return it.
    fn fails<A: AsRef<std::ffi::OsStr>>(&self, args: &[A], code: i32, says: &str) -> String {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "not one error line: {err}");
        assert_eq!(err.lines().last(), Some(errors[0]), "{err}");
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(
            errors[0].contains(says),
            "{:?} does not say {says:?}",
            errors[0]
        );
        errors[0].to_string()
    }

    fn ran(&self) -> bool {
        self.path("ran").exists()
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn stats_and_output_paths_are_validated_before_any_check() {
    let c = Case::new(TINY.as_bytes());
    let check = c.keep_r0();
    let (input, out) = (s(&c.input), c.path("o.cpp"));
    let check = s(&check).to_string();
    let reduce = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = vec![
            "reduce".into(),
            input.into(),
            "--check".into(),
            check.clone(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    c.fails(&reduce(&["--stats", input]), 1, "is the input");
    c.fails(
        &reduce(&["-o", s(&out), "--stats", s(&out)]),
        1,
        "is also the output",
    );
    c.fails(
        &reduce(&["--stats", s(&c.path("missing/s.json"))]),
        1,
        "does not exist",
    );
    c.fails(&reduce(&["-o", s(&c.path("tmp"))]), 1, "a directory");
    c.fails(&reduce(&["-o", "/dev/null"]), 1, "a device");
    c.fails(&reduce(&["--stats", "/dev/full"]), 1, "a device");
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());

    let fifo = c.path("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let link = c.path("link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    c.fails(&reduce(&["-o", s(&fifo)]), 1, "a FIFO");
    c.fails(&reduce(&["--stats", s(&link)]), 1, "a FIFO");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(!c.ran(), "the check ran before the outputs were validated");

    // A symlink to a regular file: the link stays, its target gets the result.
    let target = c.path("target.cpp");
    std::fs::write(&target, "old").unwrap();
    let to_target = c.path("to_target.cpp");
    std::os::unix::fs::symlink(&target, &to_target).unwrap();
    let out = c.run(&reduce(&["-o", s(&to_target), "-q"]));
    assert!(out.status.success());
    assert!(std::fs::symlink_metadata(&to_target)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&target).unwrap().contains("r_0"));
}

#[test]
fn binary_input_is_refused_at_once() {
    // 36 MB of pseudo-random bytes: refused before any parse.
    let mut bytes = Vec::with_capacity(36 << 20);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while bytes.len() < 36 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let c = Case::new(&bytes);
    let check = c.keep_r0();
    let start = Instant::now();
    c.fails(&["inspect", s(&c.input)], 1, "not UTF-8");
    c.fails(
        &["reduce", s(&c.input), "--check", s(&check)],
        1,
        "not UTF-8",
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert!(!c.ran());
}

#[test]
fn a_script_that_modifies_the_input_is_stopped_and_the_input_put_back() {
    let c = Case::new(TINY.as_bytes());
    let check = c.script(
        "vandal.sh",
        "#!/bin/sh\necho '// mine' >> \"$MFPPR_ORIGINAL\"\nexit 0\n",
    );
    let line = c.fails(
        &["reduce", s(&c.input), "--check", s(&check)],
        4,
        "modified the input",
    );
    assert!(line.contains("put back"), "{line}");
}

#[test]
fn crlf_input_gives_a_crlf_result() {
    let crlf = TINY.replace('\n', "\r\n");
    let c = Case::new(crlf.as_bytes());
    let check = c.keep_r0();
    c.succeeds(&["reduce", s(&c.input), "--check", s(&check), "-q"]);
    let result = std::fs::read(c.path("t.reduced.cpp")).unwrap();
    assert!(result.len() < crlf.len());
    let lf = result.iter().filter(|&&b| b == b'\n').count();
    let crlf_count = result.windows(2).filter(|w| w == b"\r\n").count();
    assert!(
        lf > 0 && lf == crlf_count,
        "mixed line endings in the result"
    );
}

#[test]
fn timeouts_and_flaky_checks_are_in_the_summary() {
    let c = Case::new(TINY.as_bytes());
    // Only the original is interesting; every other candidate hangs past the timeout.
    let hang = c.script(
        "hang.sh",
        "#!/bin/sh\ncmp -s \"$1\" \"$MFPPR_ORIGINAL\" && exit 0\nexec sleep 20\n",
    );
    let out = c.run(&[
        "reduce",
        s(&c.input),
        "--check",
        s(&hang),
        "--timeout",
        "0.2",
        "-j",
        "4",
        "-q",
    ]);
    assert!(out.status.success());
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("timed out"), "{summary}");
    assert!(summary.contains("--timeout"), "{summary}");
    // Nothing was accepted: the summary says why that may be and how to see each verdict.
    assert!(
        summary.contains("no candidate kept the failure") && summary.contains("-vv"),
        "{summary}"
    );

    // Interesting on the original always, on anything else every other call: accepted
    // candidates fail their re-check, and the result falls back to one that passes it.
    let count = c.path("count");
    let flaky = c.script(
        "flaky.sh",
        &format!(
            "#!/bin/sh\ncmp -s \"$1\" \"$MFPPR_ORIGINAL\" && exit 0\ngrep -q r_0 \"$1\" || exit 1\n\
             n=$(cat '{f}' 2>/dev/null || echo 0); echo $((n + 1)) > '{f}'; [ $((n % 2)) = 0 ]\n",
            f = count.display()
        ),
    );
    let out = c.run(&[
        "reduce",
        s(&c.input),
        "--check",
        s(&flaky),
        "-j",
        "1",
        "--recheck",
        "2",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(err.contains("warning: the check is flaky"), "{err}");
    assert!(
        summary.contains("re-checks of the result failed"),
        "{summary}"
    );
    // What is on disk passed every re-check: here, only the original does.
    assert_eq!(std::fs::read(c.path("t.reduced.cpp")).unwrap(), c.text);
}

#[test]
fn check_dirs_are_removed_even_when_a_script_escapes_its_process_group() {
    let c = Case::new(TINY.as_bytes());
    // Like a compiler started with setsid: keeps writing into the check directory after the
    // script ended or was cancelled.
    let pids = c.path("pids");
    let escape = c.script(
        "escape.sh",
        &format!(
            "#!/bin/sh\nsetsid sh -c 'echo $$ >> {p}; while :; do date > f.$$; sleep 0.01; done' &\n\
             sleep 0.2\ngrep -q r_0 \"$1\"\n",
            p = s(&c.path("pids"))
        ),
    );
    c.succeeds(&[
        "reduce",
        s(&c.input),
        "--check",
        s(&escape),
        "-j",
        "4",
        "-q",
    ]);
    assert_all_gone(&pids, Duration::ZERO);
}

/// Every pid listed in the file `pids` (at least one) is gone or a zombie within `grace`.
fn assert_all_gone(pids: &Path, grace: Duration) {
    let listed = std::fs::read_to_string(pids).unwrap();
    assert!(!listed.trim().is_empty(), "no pid listed");
    let deadline = Instant::now() + grace;
    for pid in listed.split_whitespace() {
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").trim().chars().next();
            if stat.is_empty() || state == Some('Z') {
                break;
            }
            assert!(Instant::now() < deadline, "process {pid} outlived the run");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn real_checks_at_four_jobs_leave_no_check_dir() {
    if !require_tools(&["g++"]) {
        return;
    }
    let test = std::fs::read(root().join("fixtures/tests/iset_merge_small_a.cpp")).unwrap();
    let c = Case::new(&test);
    let out = Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args(["reduce", s(&c.input), "--check"])
        .arg(root().join("interestingness/check-failure.py"))
        .args(["-I", s(&root().join("fixtures/iset/spec")), "-j", "4", "-q"])
        .env("TMPDIR", &c.tmp)
        .env("CXXFLAGS", "-std=c++17 -w -DISET_BUG_MERGE")
        .env("MFPPR_INCLUDES", root().join("fixtures/iset/spec"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(&c.tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// A tmpfs mounted for one test (root only), unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, options: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs", s(at)])
            .output()
            .is_ok_and(|o| o.status.success())
            .then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_keeps_the_last_result_that_was_written() {
    // root only: a 24 KiB tmpfs holds the 14 KB input's first copy, its origin record and the
    // output's lock file, and nothing more, so the first accepted candidate cannot be written.
    let c =
        Case::new(&std::fs::read(root().join("fixtures/tests/iset_merge_small_a.cpp")).unwrap());
    let mnt = c.path("small");
    let Some(_unmount) = Tmpfs::mount(&mnt, "size=24k") else {
        return skip("cannot mount a tmpfs (not root?)");
    };
    let check = c.keep_r0();
    let result = mnt.join("r.cpp");
    let line = c.fails(
        &[
            "reduce",
            s(&c.input),
            "--check",
            s(&check),
            "-o",
            s(&result),
        ],
        1,
        "cannot write",
    );
    let on_disk = std::fs::read(&result).unwrap();
    assert_eq!(
        on_disk, c.text,
        "the result on disk is not the last one written"
    );
    assert!(
        line.contains(&format!("best result so far ({} bytes)", on_disk.len())),
        "{line}"
    );
}

#[test]
fn help_names_files_that_exist() {
    let out = Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args(["reduce", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = help
        .split_whitespace()
        .map(|w| w.trim_end_matches([',', '.', ';', ')']))
        .collect();
    let named: Vec<&&str> = words
        .iter()
        .filter(|w| w.starts_with("interestingness/"))
        .collect();
    assert!(!named.is_empty(), "{help}");
    for name in named {
        assert!(
            root().join(name).exists(),
            "--help names {name}, which does not exist"
        );
    }
    // The built-in checks it names exist too.
    let builtins: Vec<&&str> = words
        .iter()
        .filter(|w| w.starts_with("builtin:") && !w.ends_with("NAME"))
        .collect();
    assert!(!builtins.is_empty(), "{help}");
    for name in builtins {
        let shown = Command::new(env!("CARGO_BIN_EXE_mfppr"))
            .args(["checks", "show", name.trim_start_matches("builtin:")])
            .output()
            .unwrap();
        assert!(
            shown.status.success(),
            "--help names {name}, which mfppr lacks"
        );
    }
}

#[test]
fn a_fifo_input_is_refused_without_blocking() {
    let c = Case::new(TINY.as_bytes());
    let check = c.keep_r0();
    let fifo = c.path("fifo.cpp");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let link = c.path("link.cpp");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for input in [&fifo, &link] {
        let start = Instant::now();
        c.fails(
            &["reduce", s(input), "--check", s(&check)],
            1,
            "is a FIFO, not an MF++ test file",
        );
        c.fails(&["inspect", s(input)], 1, "is a FIFO");
        c.fails(
            &["export", s(input), "-o", s(&c.path("e.cpp"))],
            1,
            "is a FIFO",
        );
        assert!(start.elapsed() < Duration::from_secs(20));
    }
    assert!(!c.ran(), "the check ran on a FIFO");
}

#[test]
fn a_statement_of_millions_of_tokens_is_refused_at_once() {
    let at = TINY.find("// Meta test").unwrap();
    let mut text = TINY[..at].to_string();
    text.push_str("int big = 0");
    text.push_str(&"+1".repeat(2_000_000));
    text.push_str(";\n");
    text.push_str(&TINY[at..]);
    let c = Case::new(text.as_bytes());
    let check = c.keep_r0();
    let start = Instant::now();
    let line = c.fails(
        &["reduce", s(&c.input), "--check", s(&check)],
        1,
        "has more than 100000 tokens",
    );
    assert!(start.elapsed() < Duration::from_secs(10), "{line}");
    assert!(!c.ran());
}

#[test]
fn a_function_of_nested_blocks_at_file_scope_reads() {
    let at = TINY.find("int\nmain").unwrap();
    let text = format!("{}void f() {{ {{ }} }}\n{}", &TINY[..at], &TINY[at..]);
    let c = Case::new(text.as_bytes());
    c.succeeds(&["inspect", s(&c.input)]);
}

#[test]
fn a_planted_origin_symlink_is_replaced_not_written_through() {
    let c = Case::new(TINY.as_bytes());
    let check = c.keep_r0();
    let victim = c.path("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let out = c.path("o.cpp");
    std::os::unix::fs::symlink(&victim, c.path("o.cpp.mfppr-origin")).unwrap();
    c.succeeds(&[
        "reduce",
        s(&c.input),
        "--check",
        s(&check),
        "-o",
        s(&out),
        "-q",
    ]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let origin = std::fs::symlink_metadata(c.path("o.cpp.mfppr-origin")).unwrap();
    assert!(origin.is_file(), "the origin record is still a symlink");
}

#[test]
fn a_read_only_report_dir_is_refused_before_any_check() {
    let c = Case::new(TINY.as_bytes());
    let check = c.keep_r0();
    let ro = c.path("ro");
    let Some(_unmount) = Tmpfs::mount(&ro, "ro,size=64k") else {
        return skip("cannot mount a tmpfs (not root?)");
    };
    c.fails(
        &[
            "reduce",
            s(&c.input),
            "--check",
            s(&check),
            "--report",
            s(&ro),
        ],
        1,
        "cannot write",
    );
    c.fails(
        &[
            "reduce",
            s(&c.input),
            "--check",
            s(&check),
            "--report",
            s(&ro.join("new")),
        ],
        1,
        "check that its parent directory is writable",
    );
    c.fails(
        &[
            "reduce",
            s(&c.input),
            "--check",
            s(&check),
            "-o",
            s(&ro.join("o.cpp")),
        ],
        1,
        "cannot write",
    );
    assert!(!c.ran(), "a check ran before the outputs were refused");
}

#[test]
fn a_daemon_started_outside_the_check_dir_does_not_outlive_the_run() {
    let c = Case::new(TINY.as_bytes());
    let pids = c.path("daemons");
    let daemon = c.script(
        "daemon.sh",
        &format!(
            "#!/bin/sh\n(cd / && setsid sleep 600 > /dev/null 2>&1 & echo $! >> {p})\n\
             grep -q r_0 \"$1\"\n",
            p = s(&pids)
        ),
    );
    c.succeeds(&[
        "reduce",
        s(&c.input),
        "--check",
        s(&daemon),
        "-q",
        "--recheck",
        "0",
    ]);
    assert_all_gone(&pids, Duration::from_secs(10));
}

#[test]
fn a_second_reduce_to_the_same_output_is_refused_while_the_first_runs() {
    let c = Case::new(TINY.as_bytes());
    let other = c.path("other.cpp");
    std::fs::write(&other, TINY.replace("r_0", "r_0 ")).unwrap();
    let open = c.path("open");
    let gate = c.script(
        "gate.sh",
        &format!(
            "#!/bin/sh\ntouch '{}'\nwhile [ ! -e '{}' ]; do sleep 0.02; done\ngrep -q r_0 \"$1\"\n",
            s(&c.path("ran")),
            s(&open)
        ),
    );
    let out = c.path("o.cpp");
    // Its own TMPDIR: the second run's checks find the case's TMPDIR empty.
    let first_tmp = c.path("tmp1");
    std::fs::create_dir(&first_tmp).unwrap();
    let mut first = Command::new(env!("CARGO_BIN_EXE_mfppr"))
        .args([
            "reduce",
            s(&c.input),
            "--check",
            s(&gate),
            "-o",
            s(&out),
            "-q",
        ])
        .env("TMPDIR", &first_tmp)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !c.ran() {
        assert!(
            Instant::now() < deadline,
            "the first reduction never ran its check"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let line = c.fails(
        &[
            "reduce",
            s(&other),
            "--check",
            s(&gate),
            "-o",
            s(&out),
            "-q",
        ],
        1,
        "is in use by another mfppr",
    );
    assert!(line.contains(&format!("pid {}", first.id())), "{line}");
    std::fs::write(&open, "").unwrap();
    assert!(first.wait().unwrap().success());
    assert!(
        !c.path("o.cpp.mfppr.lock").exists(),
        "the lock file stayed beside the output"
    );
}

#[test]
fn a_campaign_says_a_missing_header_once_not_once_per_test() {
    let c = Case::new(TINY.as_bytes());
    let check = c.keep_r0();
    let camp = c.path("camp");
    std::fs::create_dir(&camp).unwrap();
    for name in ["a.cpp", "b.cpp", "c.cpp"] {
        std::fs::write(camp.join(name), TINY).unwrap();
    }
    let out = c.run(&[
        "batch",
        s(&camp),
        "--check",
        s(&check),
        "-o",
        s(&c.path("out")),
        "-j",
        "1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let said = err.matches("incomplete MR catalogue").count();
    assert_eq!(said, 1, "{err}");
}
