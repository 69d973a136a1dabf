//! End-to-end tests of `mfppr reduce`: the built binary with real check scripts in a temp dir.
//!
//! Every test checks that the input is never modified, and every failure that the error is one
//! line starting with `error:` and says what to do next.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const TEST: &str = include_str!("../fixtures/tests/iset_pass_tiny.cpp");

struct Setup {
    dir: tempfile::TempDir,
    input: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("iset_pass_tiny.cpp");
        std::fs::write(&input, TEST).unwrap();
        Setup { dir, input }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Write a script; `executable` sets the x bits.
    fn script(&self, name: &str, body: &str, executable: bool) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, body).unwrap();
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = mfppr()
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap();
        self.assert_input_unchanged();
        out
    }

    fn assert_input_unchanged(&self) {
        assert_eq!(
            std::fs::read_to_string(&self.input).unwrap(),
            TEST,
            "the input was modified"
        );
    }

    fn default_output(&self) -> PathBuf {
        self.path("iset_pass_tiny.reduced.cpp")
    }
}

/// `mfppr reduce`.
fn mfppr() -> Command {
    let mut c = Command::new(common::bin());
    c.arg("reduce");
    c
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The exit code, and the single `error:` line, which must be the last line of stderr.
fn failure(out: &Output) -> (i32, String) {
    let err = stderr(out);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "expected one error line in:\n{err}");
    assert_eq!(
        err.lines().last(),
        Some(errors[0]),
        "the error must be the last line:\n{err}"
    );
    (out.status.code().unwrap_or(-1), errors[0].to_string())
}

#[test]
fn missing_script_is_an_oracle_error() {
    let t = Setup::new();
    let out = t.run(&[s(&t.input), "--check", "no-such-script.sh"]);
    let (code, line) = failure(&out);
    assert_eq!(code, 4, "{line}");
    assert!(line.contains("no-such-script.sh"), "{line}");
    assert!(line.contains("give the path"), "{line}");
    assert!(!t.default_output().exists());
}

#[test]
fn non_executable_script_is_an_oracle_error() {
    let t = Setup::new();
    let script = t.script("check.sh", "#!/bin/sh\nexit 0\n", false);
    let out = t.run(&[s(&t.input), "--check", s(&script)]);
    let (code, line) = failure(&out);
    assert_eq!(code, 4, "{line}");
    assert!(line.contains("chmod +x"), "{line}");
}

#[test]
fn a_crashing_script_is_not_interesting_by_default_but_is_with_auto() {
    let t = Setup::new();
    let script = t.script(
        "crash.sh",
        "#!/bin/sh\nif grep -q r_0 \"$1\"; then kill -SEGV $$; fi\nexit 0\n",
        true,
    );
    let out = t.run(&[s(&t.input), "--check", s(&script), "-q"]);
    let (code, line) = failure(&out);
    assert_eq!(code, 3, "{line}");
    assert!(line.contains("signal 11"), "{line}");
    assert!(line.contains("--interesting-exit auto"), "{line}");

    let out = t.run(&[
        s(&t.input),
        "--check",
        s(&script),
        "--interesting-exit",
        "auto",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // `int main() {}` has no r_0: the check does not accept it, so no warning.
    assert!(
        !stderr(&out).contains("warning: the check accepts"),
        "{}",
        stderr(&out)
    );
    let result = std::fs::read_to_string(t.default_output()).unwrap();
    assert!(result.contains("r_0") && result.len() <= TEST.len());
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("bytes") && summary.contains("oracle calls"));
}

#[test]
fn a_hanging_script_times_out_and_the_original_is_not_interesting() {
    let t = Setup::new();
    let script = t.script("hang.sh", "#!/bin/sh\nsleep 60\nexit 0\n", true);
    let start = Instant::now();
    let out = t.run(&[s(&t.input), "--check", s(&script), "--timeout", "1"]);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    let (code, line) = failure(&out);
    assert_eq!(code, 3, "{line}");
    assert!(line.contains("timed out"), "{line}");
    assert!(line.contains("raise --timeout"), "{line}");
}

#[test]
fn an_always_false_script_prints_a_working_reproduction_command() {
    let t = Setup::new();
    let script = t.script(
        "false.sh",
        "#!/bin/sh\necho \"checked $(basename \"$1\")\" >&2\necho boom >&2\nexit 1\n",
        true,
    );
    let out = t.run(&[s(&t.input), "--check", s(&script)]);
    let (code, line) = failure(&out);
    assert_eq!(code, 3, "{line}");
    assert!(line.contains("exit status 1"), "{line}");
    assert!(line.contains("boom"), "{line}");
    assert!(
        !t.default_output().exists(),
        "nothing is written before the check passes"
    );
    let command = line
        .split_once("reproduce with `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(cmd, _)| cmd.to_string())
        .unwrap_or_else(|| panic!("no reproduction command in {line}"));
    // It runs in a subshell (the shell that pastes it stays where it was) and removes what it
    // made.
    let scratch = tempfile::tempdir().unwrap();
    let repro = Command::new("sh")
        .arg("-c")
        .arg(format!("{command}; pwd"))
        .current_dir(t.dir.path())
        .env("TMPDIR", scratch.path())
        .output()
        .unwrap();
    let repro_out = String::from_utf8_lossy(&repro.stdout);
    let repro_err = String::from_utf8_lossy(&repro.stderr);
    assert!(
        repro_out.contains("exit status 1"),
        "{command}\n{repro_out}"
    );
    assert!(
        repro_err.contains("checked iset_pass_tiny.cpp"),
        "{command}\n{repro_err}"
    );
    let here = t.dir.path().canonicalize().unwrap();
    assert!(
        repro_out.trim_end().ends_with(&*here.to_string_lossy()),
        "{command}\n{repro_out}"
    );
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "{command} left {left:?}");
    t.assert_input_unchanged();
}

#[test]
fn a_script_interesting_for_the_empty_file_warns() {
    // Every candidate keeps r_0, so the search rejects none: the trivial tests that did not run
    // alongside the original run after the search, at every -j.
    for jobs in ["1", "4"] {
        let t = Setup::new();
        // Interesting for the empty file and for anything that still has r_0, not for an empty
        // main.
        let script = t.script(
            "empty.sh",
            "#!/bin/sh\n[ ! -s \"$1\" ] || grep -q r_0 \"$1\"\n",
            true,
        );
        let out = t.run(&[s(&t.input), "--check", s(&script), "-j", jobs]);
        assert!(out.status.success(), "-j{jobs}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("warning: the check accepts the empty file"),
            "-j{jobs}: {}",
            stderr(&out)
        );
        t.assert_input_unchanged();
    }
}

#[test]
fn an_always_true_script_warns_about_the_trivial_test() {
    let t = Setup::new();
    let script = t.script("true.sh", "#!/bin/sh\nexit 0\n", true);
    let stats = t.path("stats.json");
    let out = t.run(&[
        s(&t.input),
        "--check",
        s(&script),
        "--stats",
        s(&stats),
        "-j",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: the check accepts `int main() {}`"),
        "{}",
        stderr(&out)
    );
    assert!(t.default_output().exists());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    for key in [
        "kinds",
        "oracle_calls",
        "cache_hits",
        "candidates",
        "built",
        "wasted",
        "engine_secs",
        "engine_ms_per_candidate",
        "wall_secs",
        "bytes_before",
        "bytes_after",
        "rounds",
    ] {
        assert!(json.get(key).is_some(), "stats lack {key}: {json}");
    }
    assert_eq!(json["bytes_before"], TEST.len());
}

#[test]
fn a_file_that_is_not_an_mfpp_test_is_an_input_error() {
    let t = Setup::new();
    let script = t.script("true.sh", "#!/bin/sh\nexit 0\n", true);
    let other = t.path("other.cpp");
    std::fs::write(&other, "int f() { return 1; }\n").unwrap();
    let out = t.run(&[s(&other), "--check", s(&script)]);
    let (code, line) = failure(&out);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("not an MF++ test"), "{line}");
    assert!(line.contains("give a test generated by MF++"), "{line}");
}

#[test]
fn an_unreadable_input_is_an_input_error() {
    let t = Setup::new();
    let script = t.script("true.sh", "#!/bin/sh\nexit 0\n", true);
    let out = t.run(&["missing.cpp", "--check", s(&script)]);
    let (code, line) = failure(&out);
    assert_eq!(code, 1, "{line}");
    assert!(
        line.contains("missing.cpp") && line.contains("check the path"),
        "{line}"
    );
}

#[test]
fn an_output_in_a_missing_directory_fails_before_running_the_script() {
    let t = Setup::new();
    let marker = t.path("ran");
    let script = t.script(
        "mark.sh",
        &format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display()),
        true,
    );
    let out = t.run(&[
        s(&t.input),
        "--check",
        s(&script),
        "-o",
        s(&t.path("no/such/dir/out.cpp")),
    ]);
    let (code, line) = failure(&out);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("does not exist"), "{line}");
    assert!(!marker.exists(), "the script ran");

    // The output may never be the input.
    let out = t.run(&[s(&t.input), "--check", s(&script), "-o", s(&t.input)]);
    let (code, line) = failure(&out);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("is the input"), "{line}");
    assert!(!marker.exists(), "the script ran");
}

#[test]
fn bad_flag_values_are_usage_errors() {
    let t = Setup::new();
    let script = t.script("true.sh", "#!/bin/sh\nexit 0\n", true);
    for args in [
        ["-j", "0"],
        ["--timeout", "0"],
        ["--interesting-exit", "maybe"],
    ] {
        let out = t.run(&[s(&t.input), "--check", s(&script), args[0], args[1]]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_python_script_gets_the_documented_environment() {
    if !common::require_tools(&["python3"]) {
        return;
    }
    let t = Setup::new();
    let script = t.script(
        "check.py",
        "import os, sys\n\
         cand = sys.argv[1]\n\
         ok = (cand == os.environ['MFPPR_CANDIDATE']\n\
               and os.path.isabs(cand)\n\
               and os.path.basename(cand) == 'iset_pass_tiny.cpp'\n\
               and os.path.samefile(os.getcwd(), os.path.dirname(cand))\n\
               and os.path.isdir(os.environ['TMPDIR'])\n\
               and os.environ['MFPPR_ORIGINAL'].endswith('iset_pass_tiny.cpp')\n\
               and os.path.isdir(os.environ['MFPPR_ORIGINAL_DIR'])\n\
               and 'r_0' in open(os.path.basename(cand)).read())\n\
         sys.exit(0 if ok else 1)\n",
        false,
    );
    let out = t.run(&[s(&t.input), "--check", s(&script), "-o", "result.cpp"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t.path("result.cpp").exists());
}

#[test]
fn resume_continues_from_an_interesting_output() {
    let t = Setup::new();
    let script = t.script("keep.sh", "#!/bin/sh\ngrep -q r_0 \"$1\"\n", true);
    let previous = TEST.replacen("#include <cassert>\n", "", 1);
    // Another input's result (no origin record): refused, the reduction starts from the input.
    std::fs::write(t.default_output(), &previous).unwrap();
    let out = t.run(&[s(&t.input), "--check", s(&script), "--resume"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was not derived from"),
        "{}",
        stderr(&out)
    );
    // This input's result: continued.
    let origin = format!("{}.mfppr-origin", t.default_output().display());
    assert!(std::fs::read_to_string(&origin)
        .unwrap()
        .contains(blake3::hash(TEST.as_bytes()).to_hex().as_str()));
    std::fs::write(t.default_output(), &previous).unwrap();
    let out = t.run(&[s(&t.input), "--check", s(&script), "--resume"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("resuming from"), "{}", stderr(&out));
    let result = std::fs::read_to_string(t.default_output()).unwrap();
    assert!(result.len() <= previous.len());
}

#[test]
fn ctrl_c_keeps_the_best_result_and_exits_130() {
    let t = Setup::new();
    let calls = t.path("calls");
    let script = t.script(
        "slow.sh",
        &format!(
            "#!/bin/sh\necho x >> '{}'\nsleep 1\ngrep -q r_0 \"$1\"\n",
            calls.display()
        ),
        true,
    );
    let child = mfppr()
        .args([s(&t.input), "--check", s(&script), "-j", "1"])
        .current_dir(t.dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the initial check is over (the second script run has started).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n = std::fs::read_to_string(&calls)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if n >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the reduction did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5), "slow to stop");
    let (code, line) = failure(&out);
    assert_eq!(code, 130, "{line}");
    assert!(line.contains("interrupted"), "{line}");
    assert!(line.contains("iset_pass_tiny.reduced.cpp"), "{line}");
    assert!(line.contains("--resume"), "{line}");
    t.assert_input_unchanged();
    let best = std::fs::read_to_string(t.default_output()).unwrap();
    assert!(best.contains("r_0") && best.len() <= TEST.len());
}

/// The stats JSON of a run.
fn stats_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn degenerate_scripts_at_four_jobs_end_within_their_timeouts() {
    let t = Setup::new();
    let start = Instant::now();
    let never = t.script("false.sh", "#!/bin/sh\nexit 1\n", true);
    let out = t.run(&[s(&t.input), "--check", s(&never), "-j", "4"]);
    assert_eq!(failure(&out).0, 3);
    let hang = t.script("hang.sh", "#!/bin/sh\nexec sleep 60\n", true);
    let out = t.run(&[
        s(&t.input),
        "--check",
        s(&hang),
        "-j",
        "4",
        "--timeout",
        "1",
    ]);
    assert_eq!(failure(&out).0, 3);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );

    // Interesting original, every candidate hangs: each run is killed after the timeout (0.3 s)
    // and four run at once, so the whole reduction takes about calls / 4 timeouts.
    let pids = t.path("pids");
    let hang_candidates = t.script(
        "hang_candidates.sh",
        &format!(
            "#!/bin/sh\ncmp -s \"$1\" \"$MFPPR_ORIGINAL\" && exit 0\necho $$ >> '{}'\nexec sleep 60\n",
            pids.display()
        ),
        true,
    );
    let stats = t.path("timeouts.json");
    let start = Instant::now();
    let out = t.run(&[
        s(&t.input),
        "--check",
        s(&hang_candidates),
        "-j",
        "4",
        "--timeout",
        "0.3",
        "-q",
        "--stats",
        s(&stats),
    ]);
    let elapsed = start.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(t.default_output()).unwrap(), TEST);
    let json = stats_of(&stats);
    let calls = json["oracle_calls"].as_u64().unwrap();
    let timeouts: u64 = json["kinds"]
        .as_object()
        .unwrap()
        .values()
        .map(|k| k["timeouts"].as_u64().unwrap())
        .sum();
    assert_eq!(timeouts, json["candidates"].as_u64().unwrap());
    let bound = Duration::from_secs_f64(calls.div_ceil(4) as f64 * 0.3 + 5.0);
    assert!(elapsed < bound, "{elapsed:?} for {calls} calls");
    for pid in std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse::<i32>().ok())
    {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        assert!(!alive, "script {pid} still running");
    }

    // Always interesting, with and without the cache: same result, no hits without it.
    let always = t.script("true.sh", "#!/bin/sh\nexit 0\n", true);
    let mut results = Vec::new();
    for (name, extra) in [("cached", None), ("uncached", Some("--no-cache"))] {
        let output = t.path(&format!("{name}.cpp"));
        let stats = t.path(&format!("{name}.json"));
        let mut args = vec![
            s(&t.input),
            "--check",
            s(&always),
            "-j",
            "4",
            "--timeout",
            "5",
            "-q",
            "-o",
            s(&output),
            "--stats",
            s(&stats),
        ];
        args.extend(extra);
        let out = t.run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        results.push((std::fs::read(&output).unwrap(), stats_of(&stats)));
    }
    assert_eq!(results[0].0, results[1].0);
    assert_eq!(results[1].1["cache_hits"], 0);
}

/// Reduce `fixture` at `-j1`, `-j4` and `-j16` with the latency-only oracle of
/// `scripts/bench-scaling` (sleeps, then interesting iff the candidate keeps every string of
/// `keep`): the result is byte-identical at every job count (speculation decides nothing), `-j1`
/// wastes no run and `-j16` speculates. Returns the result and the `-j1` stats.
fn same_result_with_a_latency_only_oracle(
    fixture: &str,
    keep: &[&str],
) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(fixture);
    std::fs::copy(common::root().join("fixtures/tests").join(fixture), &input).unwrap();
    let check = dir.path().join("latency.sh");
    let strings: Vec<String> = keep.iter().map(|k| format!("'{k}'")).collect();
    std::fs::write(
        &check,
        format!(
            "#!/bin/sh\nsleep 0.02\nfor s in {}; do\ngrep -qF -- \"$s\" \"$1\" || exit 1\ndone\n",
            strings.join(" ")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut results = Vec::new();
    for jobs in ["1", "4", "16"] {
        let output = dir.path().join(format!("j{jobs}.cpp"));
        let stats = dir.path().join(format!("j{jobs}.json"));
        let out = mfppr()
            .args([
                s(&input),
                "--check",
                s(&check),
                "-j",
                jobs,
                "-q",
                "--recheck",
                "0",
            ])
            .args(["-o", s(&output), "--stats", s(&stats)])
            .output()
            .unwrap();
        assert!(out.status.success(), "-j{jobs}: {}", stderr(&out));
        results.push((
            jobs,
            std::fs::read_to_string(&output).unwrap(),
            stats_of(&stats),
        ));
    }
    let (_, reference, stats) = &results[0];
    assert_eq!(stats["wasted"], 0, "-j1 never speculates");
    for (jobs, result, _) in &results[1..] {
        assert_eq!(result, reference, "{fixture}: -j{jobs} differs from -j1");
    }
    assert!(
        results[2].2["wasted"].as_u64().unwrap() > 0,
        "-j16 should speculate"
    );
    (reference.clone(), stats.clone())
}

#[test]
fn a_latency_only_oracle_gives_the_same_result_at_every_job_count() {
    let (result, _) = same_result_with_a_latency_only_oracle(
        "iset_merge_small_a.cpp",
        &[
            "iset::dilate(set_term_13, 3)",
            "unite_by_subtract_0_14",
            "metalib::checks::",
        ],
    );
    assert!(result.len() < 5000, "{} bytes left", result.len());
}

/// `scripts/bench-scaling`'s strings include MR family names that the tail's inlining removes:
/// the combined tail candidate is rejected, and the equivalences batch (each judged alone on one
/// text, the interesting ones merged), which speculation runs at once.
#[test]
fn the_tail_batches_give_the_same_result_at_every_job_count() {
    let (result, stats) = same_result_with_a_latency_only_oracle(
        "iset_merge_medium.cpp",
        &[
            "check_equal(r_2, r_0)",
            "iset::subtract(set_term_35, output_var_1)",
            "iset::upper(set_term_36)",
            "compl_by_subtract",
            "intersect_comm",
        ],
    );
    assert!(result.len() < 5000, "{} bytes left", result.len());
    let kinds = &stats["kinds"];
    assert_eq!(kinds["tail"]["accepted"], 0, "{kinds}");
    let equivalence = &kinds["tail_equivalence"];
    assert!(
        equivalence["candidates"].as_u64().unwrap() >= 4
            && equivalence["accepted"].as_u64().unwrap() >= 1,
        "{equivalence}"
    );
}

/// One run of the check as its script logged it: "start" or "end", the candidate's size and
/// checksum, and the time.
struct Logged {
    event: String,
    size: u64,
    sum: String,
    at: f64,
}

/// `iset_merge_small_a` reduced at `-j1` and at `-j2` with a check script that logs its runs and
/// sleeps as `sleep` says (a shell snippet that sees `$size`, the original's size in place of
/// `ORIGINAL` and the log's path in place of `LOG`); both results must be the same. Returns the
/// `-j2` run's log, raw and parsed, and the original's size.
fn logged_runs_at_j1_and_j2(sleep: &str) -> (String, Vec<Logged>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::root().join("fixtures/tests/iset_merge_small_a.cpp");
    let input = dir.path().join("iset_merge_small_a.cpp");
    std::fs::copy(&fixture, &input).unwrap();
    let original_size = std::fs::metadata(&input).unwrap().len();
    let log = dir.path().join("runs.log");
    let check = dir.path().join("latency.sh");
    let sleep = sleep
        .replace("ORIGINAL", &original_size.to_string())
        .replace("LOG", &log.display().to_string());
    std::fs::write(
        &check,
        format!(
            "#!/bin/sh
size=$(wc -c < \"$1\")
sum=$(cksum < \"$1\" | cut -d' ' -f1)
\
             echo \"start $size $sum $(date +%s.%N)\" >> '{log}'
{sleep}
\
             echo \"end $size $sum $(date +%s.%N)\" >> '{log}'
\
             grep -qF -- 'iset::dilate(set_term_13, 3)' \"$1\"
",
            log = log.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut results = Vec::new();
    for jobs in ["1", "2"] {
        let output = dir.path().join(format!("j{jobs}.cpp"));
        let _ = std::fs::remove_file(&log);
        let out = mfppr()
            .args([s(&input), "--check", s(&check), "-j", jobs, "-q"])
            .args(["--recheck", "0", "-o", s(&output)])
            .output()
            .unwrap();
        assert!(out.status.success(), "-j{jobs}: {}", stderr(&out));
        results.push(std::fs::read(&output).unwrap());
    }
    assert_eq!(results[0], results[1], "-j2 differs from -j1");
    let runs = std::fs::read_to_string(&log).unwrap();
    let logged = runs
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Logged {
                event: f[0].into(),
                size: f[1].parse().unwrap(),
                sum: f[2].into(),
                at: f[3].parse().unwrap(),
            }
        })
        .collect();
    (runs, logged, original_size)
}

/// When the original's run ended in a log of [`logged_runs_at_j1_and_j2`].
fn original_end(logged: &[Logged], original_size: u64) -> f64 {
    logged
        .iter()
        .find(|l| l.event == "end" && l.size == original_size)
        .map(|l| l.at)
        .expect("the original's run ended")
}

/// With a job to spare, candidates the search needs first and then the trivial tests are judged
/// while the original is (the check is slower on the original than on the others, as a compiler
/// is): at `-j2` a candidate and both trivial tests start before the original's run ends, and the
/// result is the one `-j1` gives.
#[test]
fn candidates_ahead_run_alongside_the_original() {
    let (runs, logged, original_size) =
        logged_runs_at_j1_and_j2("if [ \"$size\" = ORIGINAL ]; then sleep 1; else sleep 0.1; fi");
    let original_end = original_end(&logged, original_size);
    for trivial in [0, 14] {
        let starts: Vec<f64> = logged
            .iter()
            .filter(|l| l.event == "start" && l.size == trivial)
            .map(|l| l.at)
            .collect();
        assert!(
            starts.len() == 1 && starts[0] < original_end,
            "the trivial test of {trivial} bytes should run once, alongside the original:\n{runs}"
        );
    }
    let early = candidates_started_before(&logged, original_size, original_end);
    assert!(
        early >= 1,
        "no candidate ran alongside the original:\n{runs}"
    );
}

/// Runs of search candidates (neither the original nor a trivial test) that started before
/// `original_end`.
fn candidates_started_before(logged: &[Logged], original_size: u64, original_end: f64) -> usize {
    logged
        .iter()
        .filter(|l| l.event == "start" && ![0, 14, original_size].contains(&l.size))
        .filter(|l| l.at < original_end)
        .count()
}

/// The spare slots take the candidates ahead before the trivial tests: with every run as slow as
/// the original's, at `-j2` the spare slot judges a candidate alongside the original and no
/// trivial test runs to its end (one the slot starts as the original's run ends is killed: the
/// search does not wait for it; the search rejects candidates, so they are not needed after it,
/// as with `-j1`); the result is the one `-j1` gives.
#[test]
fn the_trivial_tests_wait_for_the_candidates_ahead() {
    let (runs, logged, original_size) = logged_runs_at_j1_and_j2("sleep 0.3");
    let original_end = original_end(&logged, original_size);
    assert!(
        logged
            .iter()
            .all(|l| l.event != "end" || ![0, 14].contains(&l.size)),
        "no trivial test should run to its end:\n{runs}"
    );
    let early = candidates_started_before(&logged, original_size, original_end);
    assert_eq!(
        early, 1,
        "one candidate ran alongside the original:\n{runs}"
    );
}

/// A candidate judged ahead that is still running when the original's run ends goes on in the
/// search instead of being killed or waited for: at `-j2`, with candidates slower than the
/// original while it runs, the first candidate ahead runs once, to its end, after the original's
/// run ended, and the result is the one `-j1` gives.
#[test]
fn a_candidate_ahead_still_running_goes_on_in_the_search() {
    // The original sleeps 1 s; a candidate that starts while it runs, 2 s; the rest 0.05 s.
    let (runs, logged, original_size) = logged_runs_at_j1_and_j2(
        "if [ \"$size\" = ORIGINAL ]; then sleep 1\n\
         elif [ \"$size\" -gt 14 ] && ! grep -q \"^end ORIGINAL \" 'LOG'; then sleep 2\n\
         else sleep 0.05; fi",
    );
    let original_end = original_end(&logged, original_size);
    let ahead: Vec<&Logged> = logged
        .iter()
        .filter(|l| l.event == "start" && l.size > 14 && l.size != original_size)
        .filter(|l| l.at < original_end)
        .collect();
    assert_eq!(
        ahead.len(),
        1,
        "one candidate ran alongside the original:\n{runs}"
    );
    let of_it = |event: &str| -> Vec<f64> {
        logged
            .iter()
            .filter(|l| l.event == event && l.sum == ahead[0].sum)
            .map(|l| l.at)
            .collect()
    };
    assert_eq!(of_it("start").len(), 1, "it ran once:\n{runs}");
    let ends = of_it("end");
    assert!(
        ends.len() == 1 && ends[0] > original_end,
        "it ran to its end, after the original's:\n{runs}"
    );
}

/// Both cuts read what one run of the original tells; with a check that never runs the program
/// each costs that one run, says so, and leaves the result as it was (the check cut is on by
/// default).
#[test]
fn a_cut_with_a_check_that_never_runs_the_program_costs_one_run_and_says_so() {
    let t = Setup::new();
    // A check that reads the text and never builds or runs it: no probe log.
    let script = t.script("grep.sh", "#!/bin/sh\ngrep -q check_equal \"$1\"\n", true);
    let spec = common::root().join("fixtures/iset/spec");
    let reduce = |stats: &Path, extra: &[&str]| {
        let mut args = vec![s(&t.input), "--check", s(&script), "-I", s(&spec), "-j1"];
        args.extend(extra);
        args.extend(["--stats", s(stats)]);
        let out = t.run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    let plain = t.path("plain.json");
    reduce(&plain, &["--no-check-cut"]);
    let first = std::fs::read(t.default_output()).unwrap();
    let plain = stats_of(&plain);
    for (flags, key, said) in [
        (
            &["--no-check-cut", "--guided-cut"][..],
            "guided_cut",
            "guided first cut: none (the check wrote no probe log",
        ),
        (
            &[][..],
            "check_cut",
            "check cut: none (the check wrote no log of the checks",
        ),
    ] {
        let stats = t.path(&format!("{key}.json"));
        let out = reduce(&stats, flags);
        assert!(stderr(&out).contains(said), "{}", stderr(&out));
        let cut = stats_of(&stats);
        assert!(plain.get(key).is_none(), "{plain}");
        let why = said.split_once(": none (").unwrap().1;
        assert!(
            cut[key]
                .as_str()
                .unwrap()
                .starts_with(&format!("no cut: {why}")),
            "{cut}"
        );
        assert_eq!(
            cut["oracle_calls"].as_u64().unwrap(),
            plain["oracle_calls"].as_u64().unwrap() + 1
        );
        assert_eq!(std::fs::read(t.default_output()).unwrap(), first);
    }
}
