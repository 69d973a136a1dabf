//! Exclusive locks on the files and directories a run writes, so that two mfppr processes never
//! write the same output at once: an advisory `flock(2)` on a lock file holding the owner's pid.
//!
//! Who locks what: a local `mfppr batch` and `batch collect` lock the whole campaign
//! (`OUTDIR/.mfppr.lock`); a task's `--one` run, and every test of a local batch, lock the test's
//! directory (`OUTDIR/<stem>/.mfppr.lock`), so that the tasks of one task file, run at once into
//! the same OUTDIR, do not wait for each other; `mfppr reduce` locks its output
//! (`<output>.mfppr.lock`, removed at the end).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::error::{coded, ExitKind};

/// The lock file's name inside a locked directory.
pub(crate) const LOCK_FILE: &str = ".mfppr.lock";

/// A held lock; dropping it releases the lock (the process ending does too, even by SIGKILL).
#[derive(Debug)]
pub(crate) struct Lock {
    /// `None` on a file system without `flock` (see [`lock_exclusive`]).
    file: Option<Flock<File>>,
    path: PathBuf,
    /// Remove the lock file on release ([`lock_output`]).
    remove: bool,
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Clear the pid before the lock goes, so that nobody reads a finished run's pid; the file
        // itself stays: removing it would let a process that opened it just before lock a file
        // no one else can find, while a third locks a new one.
        if let Some(file) = &mut self.file {
            let _ = file.set_len(0);
            if self.remove {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Lock the output file `output` of a reduction, through `<output>.mfppr.lock` beside it, which
/// is removed when the lock is released (so no lock file stays beside every result). Removing it
/// opens a narrow race at the very end of a run (a second run that opened the file just before
/// the removal, and a third that creates a new one); it is accepted for a single output, while
/// campaign directories keep their lock files ([`lock_exclusive`]).
pub(crate) fn lock_output(output: &Path) -> anyhow::Result<Lock> {
    let mut name = output.as_os_str().to_owned();
    name.push(".mfppr.lock");
    let mut lock = lock_exclusive(
        Path::new(&name),
        &format!("the output {}", output.display()),
    )?;
    lock.remove = true;
    Ok(lock)
}

/// Lock `path` (a lock file, created if missing; its directory must exist) for this process, or
/// fail at once, without waiting, when another process holds it.
///
/// `what` names the thing the lock guards in the refusal, which is one line with the holder's
/// pid and exits with code 1, e.g. `lock_exclusive(&out.join(LOCK_FILE), "the output directory
/// out")` fails with "the output directory out is in use by another mfppr (pid 4242, lock file
/// out/.mfppr.lock); wait for it to finish, or choose another output". For a single output file
/// `out.cpp`, lock a file beside it, e.g. `out.cpp.mfppr.lock`.
///
/// The lock is `flock(2)` on the open file, written with this process's pid: it is released when
/// the returned [`Lock`] is dropped or the process ends, whatever the way, so a crash leaves no
/// stale lock; the file stays, empty. The descriptor is close-on-exec: child processes (the check
/// scripts) do not hold the lock. On a file system without `flock` (Lustre mounted without
/// `-o flock`) a warning says so and the returned lock guards nothing.
pub(crate) fn lock_exclusive(path: &Path, what: &str) -> anyhow::Result<Lock> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| {
            format!(
                "cannot open the lock file {}; check that its directory is writable",
                path.display()
            )
        })?;
    let mut file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => locked,
        Err((mut file, Errno::EWOULDBLOCK)) => {
            let mut text = String::new();
            let _ = Read::by_ref(&mut file).take(64).read_to_string(&mut text);
            let pid = match text.trim() {
                "" => "pid unknown".to_string(),
                pid => format!("pid {pid}"),
            };
            return Err(coded(
                ExitKind::Input,
                format!(
                    "{what} is in use by another mfppr ({pid}, lock file {}); wait for it to \
                     finish, or choose another output",
                    path.display()
                ),
            ));
        }
        Err((_, errno @ (Errno::ENOSYS | Errno::EOPNOTSUPP | Errno::ENOLCK))) => {
            crate::messages::warn(format!(
                "cannot lock {} ({errno}: the file system has no flock); going on without the \
                 lock, so do not run two mfppr on {what} at once",
                path.display()
            ));
            return Ok(Lock {
                file: None,
                path: path.to_path_buf(),
                remove: false,
            });
        }
        Err((_, errno)) => {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "cannot lock {} ({errno}); check the file system",
                    path.display()
                ),
            ))
        }
    };
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .with_context(|| format!("cannot write the pid into the lock file {}", path.display()))?;
    Ok(Lock {
        file: Some(file),
        path: path.to_path_buf(),
        remove: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let held = lock_exclusive(&path, "the output directory o").unwrap();
        let pid = std::process::id();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{pid}\n"));
        // flock locks belong to the open file: a second open in this process is refused too.
        let refused = lock_exclusive(&path, "the output directory o").unwrap_err();
        let message = format!("{refused:#}");
        assert!(
            message.starts_with(&format!(
                "the output directory o is in use by another mfppr (pid {pid}, lock file"
            )),
            "{message}"
        );
        assert_eq!(crate::error::exit_kind(&refused), ExitKind::Input);
        assert_eq!(held.path.as_path(), path);
        drop(held);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        let again = lock_exclusive(&path, "the output directory o").unwrap();
        drop(again);
        assert!(path.is_file(), "the lock file stays");
    }
}
