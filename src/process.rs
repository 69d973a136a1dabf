//! The one process runner: every external command mfppr starts (check scripts, the coverage
//! commands) runs through [`run`].
//!
//! A run starts the command in its own process group, polls it against a timeout and cancellation
//! flags, and on every way out kills the whole group *before* reaping the leader (so the group id
//! cannot be reused by an unrelated process while it is signalled). With a scratch directory
//! ([`ScratchDir`]), processes that escaped the group (`setsid`, as Python's
//! `start_new_session=True` does) but still work inside the directory are killed too, and the run
//! returns only once nothing of it is left alive, so the directory can be removed. Every process
//! a run starts carries a lineage tag in its environment ([`LINEAGE_VAR`]), so a daemon that left
//! both the group and the directory (`cd /; setsid sleep 600 &`) is found and killed as well.
//! [`capture`] runs a short command (a version query, a formatter) with its output capped.

use std::fmt;
use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// Interval between two polls of a running command.
const POLL: Duration = Duration::from_millis(5);
/// How long a run waits for the processes it killed to disappear.
const REAP_LIMIT: Duration = Duration::from_secs(5);
/// The environment variable that tags every process a run starts, and their descendants: a
/// daemon that left both the run's process group and its scratch directory (`cd /; setsid …`)
/// still carries it, and is killed with the rest.
pub(crate) const LINEAGE_VAR: &str = "MFPPR_LINEAGE";
/// Attempts to remove a scratch directory (a dying process may still create a file in it).
const REMOVE_TRIES: u32 = 5;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The command exited by itself: `status` is the exit code, or 128 + signal when `signal` is
    /// set.
    Exited {
        /// Exit code, or 128 + signal number.
        status: i32,
        /// The signal that killed the command, if any.
        signal: Option<i32>,
    },
    /// Killed after the timeout.
    TimedOut,
    /// Killed because a cancellation flag was set (the engine, or Ctrl-C).
    Cancelled,
}

impl RunEnd {
    /// The exit status (128 + signal for a signal), or `None` when the run was killed by mfppr.
    pub fn status(self) -> Option<i32> {
        match self {
            RunEnd::Exited { status, .. } => Some(status),
            RunEnd::TimedOut | RunEnd::Cancelled => None,
        }
    }
}

impl fmt::Display for RunEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunEnd::Exited {
                status,
                signal: None,
            } => write!(f, "exit status {status}"),
            RunEnd::Exited {
                status,
                signal: Some(sig),
            } => write!(f, "killed by signal {sig} (status {status})"),
            RunEnd::TimedOut => f.write_str("timed out"),
            RunEnd::Cancelled => f.write_str("cancelled"),
        }
    }
}

/// When to stop a run early.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits<'a> {
    /// Kill the run after this long (`None`: no limit).
    pub timeout: Option<Duration>,
    /// Kill the run as soon as any of these flags is set.
    pub cancel: &'a [&'a AtomicBool],
    /// Processes whose working directory lies inside this directory belong to the run, whatever
    /// their process group (the run's scratch directory, canonical).
    pub scratch: Option<&'a Path>,
}

/// How a run ended and how long it took.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Finished {
    /// How it ended.
    pub end: RunEnd,
    /// Wall time from spawn to the end of the run.
    pub elapsed: Duration,
}

/// Spawn `command` in its own process group and wait for it within `limits`. Whatever way the run
/// ends, nothing it started is left running when this returns. An `Err` is the spawn (or wait)
/// error, for the caller to explain.
pub(crate) fn run(command: &mut Command, limits: &Limits<'_>) -> std::io::Result<Finished> {
    let start = Instant::now();
    let (child, tag) = spawn(command)?;
    wait(child, &tag, start, limits)
}

/// Spawn `command` in its own process group, tagged with a fresh [`LINEAGE_VAR`] value that its
/// descendants inherit; returns the child and its tag.
fn spawn(command: &mut Command) -> std::io::Result<(Child, String)> {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let tag = format!(
        "{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::SeqCst)
    );
    command.process_group(0).env(LINEAGE_VAR, &tag);
    Ok((command.spawn()?, tag))
}

/// Wait for `child` (spawned by [`spawn`] at `start` with lineage `tag`) within `limits`, then kill
/// what is left of it.
fn wait(
    mut child: Child,
    tag: &str,
    start: Instant,
    limits: &Limits<'_>,
) -> std::io::Result<Finished> {
    let pid = Pid::from_raw(child.id() as i32);
    // Read while the leader is still at least a zombie; its descendants started later.
    let since = stat_of(pid.as_raw()).map_or(u64::MAX, |st| st.start);
    let end = loop {
        // WNOWAIT: the leader stays a zombie, so its group id stays ours until `wait` below.
        let exited = !matches!(
            waitid(
                Id::Pid(pid),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT
            ),
            Ok(WaitStatus::StillAlive)
        );
        let stop = if exited {
            None
        } else if limits.timeout.is_some_and(|t| start.elapsed() >= t) {
            Some(RunEnd::TimedOut)
        } else if limits.cancel.iter().any(|f| f.load(Ordering::SeqCst)) {
            Some(RunEnd::Cancelled)
        } else {
            std::thread::sleep(POLL);
            continue;
        };
        // Anything the command left running in its group goes too, before the leader is reaped.
        let _ = killpg(pid, Signal::SIGKILL);
        let status = reap(&mut child)?;
        break stop.unwrap_or(status);
    };
    let elapsed = start.elapsed();
    kill_leftovers(&Lineage {
        pgid: pid,
        scratch: limits.scratch,
        tag,
        since,
    });
    Ok(Finished { end, elapsed })
}

/// The value of `name` in `environ` (a `/proc/<pid>/environ`: `NAME=VALUE` entries, NUL-ended).
fn value_in(environ: &[u8], name: &str) -> Option<String> {
    let prefix = format!("{name}=");
    environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// What [`capture`] got from a command.
#[derive(Debug)]
pub(crate) struct Captured {
    /// How the run ended (when the output passed the cap: cancelled, or killed by `SIGPIPE`).
    pub finished: Finished,
    /// Its standard output, at most the cap.
    pub stdout: Vec<u8>,
    /// Whether the command wrote more than the cap (it was stopped then).
    pub truncated: bool,
}

/// Run `command` like [`run`], feeding it `input`, keeping at most `cap` bytes of its stdout and
/// dropping its stderr: a command that writes more is stopped (so `cat /dev/zero` costs `cap`
/// bytes, not memory without bound).
pub(crate) fn capture(
    command: &mut Command,
    input: &[u8],
    timeout: Duration,
    cap: usize,
) -> std::io::Result<Captured> {
    use std::process::Stdio;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let (mut child, tag) = spawn(command)?;
    let over = std::sync::Arc::new(AtomicBool::new(false));
    let stdin = child.stdin.take().map(|mut pipe| {
        let input = input.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            // A command that does not read its input closes the pipe: that is not an error here.
            let _ = pipe.write_all(&input);
        })
    });
    let reader = child
        .stdout
        .take()
        .map(|p| read_capped(p, cap, over.clone()));
    let limits = Limits {
        timeout: Some(timeout),
        cancel: &[&over],
        scratch: None,
    };
    let finished = wait(child, &tag, start, &limits)?;
    if let Some(writer) = stdin {
        let _ = writer.join();
    }
    let stdout = reader
        .and_then(|r| r.recv_timeout(REAP_LIMIT).ok())
        .unwrap_or_default();
    Ok(Captured {
        finished,
        stdout,
        truncated: over.load(Ordering::SeqCst),
    })
}

/// Read `pipe` to its end on a thread, keeping the first `cap` bytes; past them, set `over` and
/// stop reading (closing the pipe; the run is cancelled too).
fn read_capped(
    pipe: impl std::io::Read + Send + 'static,
    cap: usize,
    over: std::sync::Arc<AtomicBool>,
) -> std::sync::mpsc::Receiver<Vec<u8>> {
    use std::io::Read;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let read = pipe.take(cap as u64 + 1).read_to_end(&mut kept);
        if read.is_ok() && kept.len() > cap {
            kept.truncate(cap);
            over.store(true, Ordering::SeqCst);
        }
        let _ = tx.send(kept);
    });
    rx
}

/// Reap the leader and turn its status into a [`RunEnd::Exited`].
fn reap(child: &mut Child) -> std::io::Result<RunEnd> {
    let status = child.wait()?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => RunEnd::Exited {
            status: code,
            signal: None,
        },
        (None, Some(sig)) => RunEnd::Exited {
            status: 128 + sig,
            signal: Some(sig),
        },
        (None, None) => RunEnd::Exited {
            status: 255,
            signal: None,
        },
    })
}

/// What marks a process as part of one run.
struct Lineage<'a> {
    /// The run's process group.
    pgid: Pid,
    /// The run's scratch directory, if any.
    scratch: Option<&'a Path>,
    /// The run's [`LINEAGE_VAR`] value.
    tag: &'a str,
    /// When the run's leader started (clock ticks since boot).
    since: u64,
}

/// How long a sweep waits for processes that show no environment (in `execve`) to show one.
const EXEC_WAIT: Duration = Duration::from_millis(500);

/// Kill, until none is left alive (within [`REAP_LIMIT`]), the processes of `run`: the members of
/// its group, those working inside its scratch directory and those carrying its lineage tag.
fn kill_leftovers(run: &Lineage<'_>) {
    let start = Instant::now();
    loop {
        let (alive, unsure) = leftovers(run);
        let waited = start.elapsed();
        if alive.is_empty() && (unsure == 0 || waited >= EXEC_WAIT) || waited >= REAP_LIMIT {
            return;
        }
        for pid in alive {
            let _ = kill(pid, Signal::SIGKILL);
        }
        std::thread::sleep(POLL);
    }
}

/// Live (not zombie) processes of `run`, and how many processes started since the run began
/// show no environment at all: a process in the middle of `execve` shows none for a moment, so
/// whether it carries the tag is not known yet.
fn leftovers(run: &Lineage<'_>) -> (Vec<Pid>, usize) {
    let me = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return (Vec::new(), 0);
    };
    let mut alive = Vec::new();
    let mut unsure = 0;
    for pid in entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
    {
        let Some(stat) = stat_of(pid) else {
            continue;
        };
        if !stat.alive() || stat.kernel {
            continue;
        }
        // Only a process started since the run began can descend from it: the environment of
        // the others is never read.
        let environ = if stat.start >= run.since {
            Some(fs::read(format!("/proc/{pid}/environ")).unwrap_or_default())
        } else {
            None
        };
        let ours = stat.pgrp == run.pgid.as_raw()
            || run.scratch.is_some_and(|dir| {
                fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
            })
            || environ
                .as_deref()
                .is_some_and(|env| value_in(env, LINEAGE_VAR).as_deref() == Some(run.tag));
        if ours {
            alive.push(Pid::from_raw(pid));
        } else if environ.is_some_and(|env| env.is_empty()) {
            unsure += 1;
        }
    }
    (alive, unsure)
}

/// What a run needs of `/proc/<pid>/stat`.
struct ProcStat {
    state: char,
    pgrp: i32,
    /// A kernel thread (`PF_KTHREAD`): never part of a run, and without an environment.
    kernel: bool,
    /// Start time, in clock ticks since boot.
    start: u64,
}

impl ProcStat {
    fn alive(&self) -> bool {
        self.state != 'Z' && self.state != 'X'
    }
}

/// `/proc/<pid>/stat`, read.
fn stat_of(pid: i32) -> Option<ProcStat> {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    // Fields 3 (state), 5 (pgrp), 9 (flags) and 22 (starttime) of proc(5), from field 3 on.
    Some(ProcStat {
        state: fields.first()?.chars().next()?,
        pgrp: fields.get(2)?.parse().ok()?,
        kernel: fields.get(6)?.parse::<u64>().ok()? & PF_KTHREAD != 0,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// A temporary directory for one run, removed (with retries) when dropped, on every path out.
#[derive(Debug)]
pub(crate) struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A fresh directory `<TMPDIR>/<prefix>XXXXXX`; its path is canonical.
    pub(crate) fn new(prefix: &str) -> std::io::Result<ScratchDir> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        let path = fs::canonicalize(dir.path())?;
        // From here on `ScratchDir` owns the removal.
        let _ = dir.keep();
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        for _ in 0..REMOVE_TRIES {
            match fs::remove_dir_all(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(POLL);
                }
                _ => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NEVER: AtomicBool = AtomicBool::new(false);

    fn sh(script: &str, dir: &Path) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script).current_dir(dir);
        c
    }

    #[test]
    fn exit_status_and_signal() {
        let dir = ScratchDir::new("mfppr-test-").unwrap();
        let limits = Limits {
            timeout: None,
            cancel: &[&NEVER],
            scratch: Some(dir.path()),
        };
        let f = run(&mut sh("exit 3", dir.path()), &limits).unwrap();
        assert_eq!(f.end.status(), Some(3));
        let f = run(&mut sh("kill -SEGV $$", dir.path()), &limits).unwrap();
        assert_eq!(
            f.end,
            RunEnd::Exited {
                status: 139,
                signal: Some(11)
            }
        );
    }

    #[test]
    fn timeout_and_cancel_kill_the_group_and_escaped_workers() {
        let dir = ScratchDir::new("mfppr-test-").unwrap();
        let pids = dir.path().join("pids");
        // One sleeper in the group, one that escaped it with setsid but works in the directory.
        let script = format!(
            "sleep 60 & echo $! > {p}; setsid sh -c 'echo $$ >> {p}; exec sleep 60' & sleep 60",
            p = pids.display()
        );
        let limits = Limits {
            timeout: Some(Duration::from_millis(300)),
            cancel: &[&NEVER],
            scratch: Some(dir.path()),
        };
        let start = Instant::now();
        let f = run(&mut sh(&script, dir.path()), &limits).unwrap();
        assert_eq!(f.end, RunEnd::TimedOut);
        assert!(start.elapsed() < Duration::from_secs(10));
        let listed = fs::read_to_string(&pids).unwrap();
        let listed: Vec<i32> = listed
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(listed.len(), 2, "{listed:?}");
        for pid in listed {
            let alive = stat_of(pid).is_some_and(|st| st.alive());
            assert!(!alive, "process {pid} outlived the run");
        }

        let cancel = AtomicBool::new(true);
        let limits = Limits {
            timeout: None,
            cancel: &[&NEVER, &cancel],
            scratch: None,
        };
        let f = run(&mut sh("sleep 60", dir.path()), &limits).unwrap();
        assert_eq!(f.end, RunEnd::Cancelled);
        assert_eq!(f.end.status(), None);
    }

    #[test]
    fn a_daemon_that_left_the_group_and_the_directory_is_killed_too() {
        let dir = ScratchDir::new("mfppr-test-").unwrap();
        let pids = dir.path().join("pids");
        // `setsid` is no group leader here, so it calls setsid(2) and execs: `$!` is the daemon.
        let script = format!(
            "cd / && setsid sleep 600 > /dev/null 2>&1 & echo $! > {p}",
            p = pids.display()
        );
        let limits = Limits {
            timeout: None,
            cancel: &[&NEVER],
            scratch: Some(dir.path()),
        };
        let f = run(&mut sh(&script, dir.path()), &limits).unwrap();
        assert_eq!(f.end.status(), Some(0));
        let pid: i32 = fs::read_to_string(&pids).unwrap().trim().parse().unwrap();
        assert!(
            !stat_of(pid).is_some_and(|st| st.alive()),
            "daemon {pid} outlived the run"
        );
    }

    #[test]
    fn capture_caps_the_output_and_the_time() {
        let big = capture(
            Command::new("sh").args(["-c", "cat /dev/zero"]),
            b"",
            Duration::from_secs(30),
            64 * 1024,
        )
        .unwrap();
        assert!(big.truncated);
        assert_eq!(big.stdout.len(), 64 * 1024);
        assert!(big.finished.elapsed < Duration::from_secs(10));

        let slow = capture(
            Command::new("sh").args(["-c", "echo started; sleep 1000"]),
            b"",
            Duration::from_millis(300),
            1024,
        )
        .unwrap();
        assert_eq!(slow.finished.end, RunEnd::TimedOut);
        assert_eq!(slow.stdout, b"started\n");
        assert!(slow.finished.elapsed < Duration::from_secs(10));

        let echo = capture(
            Command::new("sh").args(["-c", "tr a-z A-Z; echo oops >&2"]),
            b"hello",
            Duration::from_secs(30),
            1024,
        )
        .unwrap();
        assert_eq!(echo.finished.end.status(), Some(0));
        assert_eq!(echo.stdout, b"HELLO");
        assert!(!echo.truncated);
    }

    #[test]
    fn scratch_dirs_are_removed_even_when_full() {
        let path = {
            let dir = ScratchDir::new("mfppr-test-").unwrap();
            fs::create_dir(dir.path().join("sub")).unwrap();
            fs::write(dir.path().join("sub/f"), b"x").unwrap();
            dir.path().to_path_buf()
        };
        assert!(!path.exists());
    }
}
