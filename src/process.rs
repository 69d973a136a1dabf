//! The one process runner: every external command mfppr starts (check scripts, the coverage
//! commands) runs through [`run`].
//!
//! A run starts the command in its own process group, polls it against a timeout and cancellation
//! flags, and on every way out kills the whole group *before* reaping the leader (so the group id
//! cannot be reused by an unrelated process while it is signalled). With a scratch directory
//! ([`ScratchDir`]), processes that escaped the group (`setsid`, as Python's
//! `start_new_session=True` does) but still work inside the directory are killed too, and the run
//! returns only once nothing of it is left alive, so the directory can be removed.

use std::fmt;
use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// Interval between two polls of a running command.
const POLL: Duration = Duration::from_millis(5);
/// How long a run waits for the processes it killed to disappear.
const REAP_LIMIT: Duration = Duration::from_secs(5);
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
pub struct Limits<'a> {
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
pub struct Finished {
    /// How it ended.
    pub end: RunEnd,
    /// Wall time from spawn to the end of the run.
    pub elapsed: Duration,
}

/// Spawn `command` in its own process group and wait for it within `limits`. Whatever way the run
/// ends, nothing it started is left running when this returns. An `Err` is the spawn (or wait)
/// error, for the caller to explain.
pub fn run(command: &mut Command, limits: &Limits<'_>) -> std::io::Result<Finished> {
    command.process_group(0);
    let start = Instant::now();
    let mut child = command.spawn()?;
    let pid = Pid::from_raw(child.id() as i32);
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
    kill_leftovers(pid, limits.scratch);
    Ok(Finished { end, elapsed })
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

/// Kill, until none is left alive (within [`REAP_LIMIT`]), the members of group `pgid` and the
/// processes working inside `scratch`.
fn kill_leftovers(pgid: Pid, scratch: Option<&Path>) {
    let deadline = Instant::now() + REAP_LIMIT;
    loop {
        let alive = leftovers(pgid, scratch);
        if alive.is_empty() || Instant::now() >= deadline {
            return;
        }
        for pid in alive {
            let _ = kill(pid, Signal::SIGKILL);
        }
        std::thread::sleep(POLL);
    }
}

/// Live (not zombie) processes in group `pgid` or with their working directory inside `scratch`.
fn leftovers(pgid: Pid, scratch: Option<&Path>) -> Vec<Pid> {
    let me = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            let Some((state, pgrp)) = stat_of(pid) else {
                return false;
            };
            if state == 'Z' || state == 'X' {
                return false;
            }
            pgrp == pgid.as_raw()
                || scratch.is_some_and(|dir| {
                    fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
                })
        })
        .map(Pid::from_raw)
        .collect()
}

/// The state letter and process group of `pid`, from `/proc/<pid>/stat`.
fn stat_of(pid: i32) -> Option<(char, i32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// A temporary directory for one run, removed (with retries) when dropped, on every path out.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A fresh directory `<TMPDIR>/<prefix>XXXXXX`; its path is canonical.
    pub fn new(prefix: &str) -> std::io::Result<ScratchDir> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        let path = fs::canonicalize(dir.path())?;
        // From here on `ScratchDir` owns the removal.
        let _ = dir.keep();
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
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
            let alive = stat_of(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X');
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
