//! End-to-end campaign on a real Slurm: `scripts/slurm-localhost` starts a private single-node
//! cluster on localhost, `mfppr batch emit` writes the task file, `sbatch --array --wait`
//! runs it through `scripts/batch-slurm.sbatch`, and `mfppr batch collect` merges the results,
//! which must equal the same campaign run locally (real g++ and `check-failure.py`, through a
//! memo of its verdicts that both runs share: each text is judged by the real script once).
//!
//! Needs root (the daemons run as root) and Slurm (the script installs `slurm-wlm` and `munge`
//! with apt-get when they are missing); without them it skips, or fails under
//! `MFPPR_REQUIRE_TOOLS=1`. The cluster is always stopped and its directory removed.

use crate::common;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::batch::{campaign_args, copy_tests, groups, reduced_bytes};
use common::root;

/// A passing test and a merge-bug test of the campaign corpus (small tests): the cheapest
/// campaign with both outcomes.
const TESTS: &[&str] = &["t_iset_4", "t_iset_82"];

/// How long each campaign may take (the job array took 26 s on the shared 2-core development
/// machine under a load of 6 with the campaign tests, 42–74 s with the bigger fixture test before,
/// `sbatch --wait` polling every 8 s).
const LIMIT: Duration = Duration::from_secs(400);

fn mfppr() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mfppr"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// (signature, members) of every group of the summary, in order.
/// A cluster started by `scripts/slurm-localhost start DIR`, stopped (and DIR removed) on drop.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// A Slurm client command talking to this cluster.
    fn client(&self, cmd: &str) -> Command {
        let mut c = Command::new(cmd);
        c.env("SLURM_CONF", self.conf());
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let stopped = Command::new(root().join("scripts/slurm-localhost"))
            .arg("stop")
            .arg(&self.dir)
            .status();
        if !stopped.is_ok_and(|s| s.success()) {
            eprintln!("slurm-localhost stop {} failed", self.dir.display());
        }
    }
}

/// Wait for `child` at most `limit`; kill it past that and return `None`.
fn wait_bounded(mut child: Child, limit: Duration) -> Option<Output> {
    let began = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Some(child.wait_with_output().unwrap())
}

/// Whether `tool` is a file in a `PATH` directory (`sbatch --version` needs a configuration).
fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n")
}

#[test]
fn a_task_file_run_as_a_slurm_job_array_collects_to_the_local_result() {
    let began = Instant::now();
    if !common::require_tools(&["g++", "python3"]) {
        return;
    }
    if !is_root() {
        common::skip("not root (scripts/slurm-localhost runs the Slurm daemons as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Every reduction of the campaign after the first judges only candidates not judged before.
    let check = common::memo_check(
        &root().join("interestingness/check-failure.py"),
        &dir.path().join("memo"),
    );
    let inputs = copy_tests(dir.path(), TESTS);

    // The cluster first: the guard is dropped (the cluster stopped) before the directory goes.
    let cluster = Cluster {
        dir: dir.path().join("slurm"),
    };
    let started = Command::new(root().join("scripts/slurm-localhost"))
        .arg("start")
        .arg(&cluster.dir)
        .output()
        .unwrap();
    if !started.status.success() && !on_path("sbatch") {
        common::skip(&format!(
            "sbatch is absent (slurm-wlm could not be installed: {})",
            text(&started).trim()
        ));
        return;
    }
    assert!(
        started.status.success(),
        "the cluster did not start: {}",
        text(&started)
    );
    let up = Instant::now();

    let tasks = dir.path().join("tasks.txt");
    let slurm_out = dir.path().join("slurm-out");
    let emitted = mfppr()
        .args(["batch", "emit"])
        .arg(&inputs)
        .args(campaign_args(&slurm_out, &check))
        .arg("-q")
        .arg("--tasks")
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(emitted.status.success(), "{}", text(&emitted));
    let lines = std::fs::read_to_string(&tasks).unwrap().lines().count();
    assert_eq!(lines, TESTS.len());

    // The same campaign run locally meanwhile (Slurm's single job mostly leaves a core idle).
    let local_out = dir.path().join("local-out");
    let local = mfppr()
        .arg("batch")
        .arg(&inputs)
        .args(campaign_args(&local_out, &check))
        .arg("-q")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let jobs = cluster
        .client("sbatch")
        .arg(format!("--array=1-{lines}"))
        .arg("--wait")
        .arg(root().join("scripts/batch-slurm.sbatch"))
        .arg(&tasks)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(ran) = wait_bounded(jobs, LIMIT) else {
        let queue = cluster.client("squeue").output().unwrap();
        panic!(
            "the job array did not finish in {LIMIT:?}; queue:\n{}",
            text(&queue)
        );
    };
    let said = text(&ran);
    assert!(ran.status.success(), "sbatch --wait failed: {said}");
    let job = said
        .split_whitespace()
        .skip_while(|w| *w != "job")
        .nth(1)
        .unwrap_or_else(|| panic!("no job id in: {said}"));
    for index in 1..=lines {
        let log = dir.path().join(format!("mfppr-batch-{job}_{index}.log"));
        assert!(
            log.is_file(),
            "array task {index} left no {}",
            log.display()
        );
    }
    let in_slurm = up.elapsed();

    let collected = mfppr()
        .args(["batch", "collect"])
        .arg(&slurm_out)
        .args(["--group-by", "library"])
        .output()
        .unwrap();
    assert!(collected.status.success(), "{}", text(&collected));
    assert!(
        String::from_utf8_lossy(&collected.stdout)
            .starts_with("2 tests: 1 not_interesting, 1 reduced"),
        "{}",
        text(&collected)
    );

    let Some(local) = wait_bounded(local, LIMIT) else {
        panic!("the local campaign did not finish in {LIMIT:?}");
    };
    assert!(local.status.success(), "{}", text(&local));

    let expected = vec![
        (
            "check_equal | triggered by shift::shift_by_parts".to_string(),
            vec![TESTS[1].to_string()],
        ),
        ("not_interesting".to_string(), vec![TESTS[0].to_string()]),
    ];
    assert_eq!(groups(&local_out), expected);
    assert_eq!(groups(&slurm_out), expected);
    let reduced = reduced_bytes(&slurm_out, TESTS[1]);
    assert_eq!(reduced, reduced_bytes(&local_out, TESTS[1]));
    assert!(String::from_utf8_lossy(&reduced).contains("check_equal"));
    eprintln!(
        "slurm: cluster up in {:?}, job array {in_slurm:?}, whole test {:?}",
        up - began,
        began.elapsed()
    );
}
