//! The oracle: judges a candidate text ([`Verdict`]). [`ScriptOracle`] runs the user's
//! interestingness script under the contract of design §6; coverage mode brings its own oracle.
//!
//! A script run owns a fresh scratch directory: the candidate under the original file name, the
//! script's `TMPDIR`, and its stdout/stderr as files (never pipes, which can fill up and block the
//! script). It runs through the one process runner (`crate::process`), so a timeout, a
//! cancellation or Ctrl-C kills everything it started, and the directory is removed on every path.
//! After each run the input is hashed again: a script that modifies it stops the reduction.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;

use crate::error::{coded, ExitKind};
use crate::process::{self, Limits, ScratchDir};

/// What the oracle says about a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The candidate keeps the property being reduced for: accept it.
    Interesting,
    /// The candidate lost it (or the run was cancelled).
    Uninteresting,
    /// The run took longer than the timeout; counts as uninteresting.
    Timeout,
}

/// Gives the search's verdicts on candidates (the steps after the search ask a
/// [`crate::judge::Judge`], which also says how the run ended). `Err` means "cannot continue"
/// (script missing, temp dir failure), not "no".
pub trait Oracle: Sync {
    /// The verdict on `candidate`. When `cancel` becomes true the run should stop as soon as possible and
    /// report [`Verdict::Uninteresting`]; the engine discards that verdict.
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict>;
}

pub use crate::process::RunEnd;

/// One script run: how it ended, how long it took, and the end of its stderr.
#[derive(Clone, Debug)]
pub struct Run {
    /// How the run ended.
    pub end: RunEnd,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The last lines of the script's stderr, joined into one line.
    pub stderr_tail: String,
}

/// Which exit statuses count as interesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Exit 0 is interesting (the C-Vise / C-Reduce contract).
    Zero,
    /// The same status as the original (MF++R's contract, `--interesting-exit auto`); a signal
    /// counts as 128 + signal.
    Status(i32),
}

/// Bytes of stderr kept for error messages.
const TAIL_BYTES: u64 = 2048;
/// Lines of stderr kept for error messages.
const TAIL_LINES: usize = 6;

/// The user's interestingness script (`--check SCRIPT`), run once per candidate (design §6).
#[derive(Clone, Debug)]
pub struct ScriptOracle {
    script: PathBuf,
    /// The built-in check `script` is (`--check builtin:NAME`): the reproduction command writes
    /// it out with `mfppr checks write`, since its temporary directory goes with the run.
    builtin: Option<&'static crate::checks::Builtin>,
    python: bool,
    original: PathBuf,
    original_dir: PathBuf,
    file_name: OsString,
    extra_env: Vec<(String, String)>,
    cache_dir: Option<PathBuf>,
    /// The per-run timeout and the exit rule: fixed once the oracle is shared (a longer timeout,
    /// or the rule a first run resolves, is a new oracle: [`ScriptOracle::resolved`]).
    timeout: Option<Duration>,
    expected: Expected,
    interrupt: &'static AtomicBool,
    /// The input's bytes when the oracle was made (`None`: no such file): a run that changes
    /// them is an error, and the input is put back.
    original_bytes: Option<Vec<u8>>,
    /// `--save-temps DIR`: where the check directories of interesting and timed-out runs are kept.
    save_temps: Option<Arc<SaveTemps>>,
}

/// `--save-temps DIR`: the directory and the number of the next kept run (`DIR/<n>/`).
#[derive(Debug)]
struct SaveTemps {
    dir: PathBuf,
    next: AtomicU64,
}

impl SaveTemps {
    /// Copy the check directory `root` of a run that ended as `verdict` to `DIR/<n>/`, with the
    /// verdict in `.mfppr-verdict`.
    fn keep(&self, root: &Path, verdict: Verdict) -> anyhow::Result<()> {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let dest = self.dir.join(n.to_string());
        let context = || {
            format!(
                "cannot keep the check directory in {} (--save-temps); check free space",
                dest.display()
            )
        };
        for entry in walkdir::WalkDir::new(root) {
            let entry = entry.with_context(context)?;
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            let to = dest.join(rel);
            let kind = entry.file_type();
            if kind.is_dir() {
                std::fs::create_dir_all(&to).with_context(context)?;
            } else if kind.is_symlink() {
                let target = std::fs::read_link(entry.path()).with_context(context)?;
                std::os::unix::fs::symlink(target, &to).with_context(context)?;
            } else if kind.is_file() {
                std::fs::copy(entry.path(), &to).with_context(context)?;
            }
        }
        let verdict = match verdict {
            Verdict::Timeout => "timeout\n",
            _ => "interesting\n",
        };
        std::fs::write(dest.join(".mfppr-verdict"), verdict).with_context(context)
    }
}

impl ScriptOracle {
    /// An oracle running `script` on candidates of the test `original`.
    ///
    /// Fails with [`ExitKind::Oracle`] when the script does not exist or is not executable (a
    /// `.py` script is run with `python3` and need not be executable).
    pub fn new(
        script: &Path,
        original: &Path,
        extra_env: Vec<(String, String)>,
    ) -> anyhow::Result<ScriptOracle> {
        let meta = std::fs::metadata(script).map_err(|e| {
            coded(
                ExitKind::Oracle,
                format!(
                    "cannot use check script {}: {e}; give the path of an executable script or a .py file",
                    script.display()
                ),
            )
        })?;
        if meta.is_dir() {
            return Err(coded(
                ExitKind::Oracle,
                format!(
                    "check script {} is a directory; give the path of an executable script or a .py file",
                    script.display()
                ),
            ));
        }
        let python = script.extension().is_some_and(|e| e == "py");
        if !python && meta.permissions().mode() & 0o111 == 0 {
            return Err(coded(
                ExitKind::Oracle,
                format!(
                    "check script {} is not executable; run `chmod +x {}`",
                    script.display(),
                    script.display()
                ),
            ));
        }
        let script = std::fs::canonicalize(script)
            .with_context(|| format!("cannot resolve the path of {}", script.display()))?;
        let original = std::path::absolute(original)
            .with_context(|| format!("cannot resolve the path of {}", original.display()))?;
        let original_bytes = std::fs::read(&original).ok();
        let original_dir = original
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let file_name = original
            .file_name()
            .map(OsString::from)
            .unwrap_or_else(|| OsString::from("test.cpp"));
        Ok(ScriptOracle {
            builtin: crate::checks::builtin_at(&script),
            script,
            python,
            original,
            original_dir,
            file_name,
            extra_env,
            cache_dir: None,
            timeout: None,
            expected: Expected::Zero,
            interrupt: crate::interrupt::flag(),
            original_bytes,
            save_temps: None,
        })
    }

    /// Pass `MFPPR_CACHE_DIR=dir` to the script (the bundled scripts keep precompiled include
    /// blocks there); not part of the reproduction command, since the directory is per run.
    pub fn set_cache_dir(&mut self, dir: Option<PathBuf>) {
        self.cache_dir = dir;
    }

    /// Keep the check directory of every interesting or timed-out run in `dir/<n>/` (`n` = 1, 2
    /// …; `None`: keep none). `dir` must exist.
    pub fn set_save_temps(&mut self, dir: Option<PathBuf>) {
        self.save_temps = dir.map(|dir| {
            Arc::new(SaveTemps {
                dir,
                next: AtomicU64::new(1),
            })
        });
    }

    /// This oracle with another per-run timeout (`None`: no limit) and exit rule: a new judge,
    /// the same script, environment, cache and kept check directories.
    pub fn resolved(&self, timeout: Option<Duration>, expected: Expected) -> ScriptOracle {
        ScriptOracle {
            timeout,
            expected,
            ..self.clone()
        }
    }

    /// This oracle with another per-run timeout, its exit rule kept (see [`Self::resolved`]).
    pub fn with_timeout(&self, timeout: Option<Duration>) -> ScriptOracle {
        self.resolved(timeout, self.expected)
    }

    /// The per-run timeout (`None`: no limit).
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Which exit statuses count as interesting.
    pub fn expected(&self) -> Expected {
        self.expected
    }

    /// Use `flag` instead of the process-wide Ctrl-C flag (for tests).
    pub fn set_interrupt_flag(&mut self, flag: &'static AtomicBool) {
        self.interrupt = flag;
    }

    /// Whether `end` is interesting under the current [`Expected`].
    pub fn verdict_of(&self, end: RunEnd) -> Verdict {
        match (end, self.expected) {
            (RunEnd::TimedOut, _) => Verdict::Timeout,
            (RunEnd::Cancelled, _) => Verdict::Uninteresting,
            (RunEnd::Exited { status: 0, .. }, Expected::Zero) => Verdict::Interesting,
            (RunEnd::Exited { status, .. }, Expected::Status(s)) if status == s => {
                Verdict::Interesting
            }
            (RunEnd::Exited { .. }, _) => Verdict::Uninteresting,
        }
    }

    /// A copy-pasteable shell command that reproduces one check of the original input, the way
    /// mfppr runs it, and prints the exit status. It runs in a subshell (the user's shell keeps
    /// its directory and variables) and removes the directories it made, whatever the check did.
    pub fn reproduction_command(&self) -> String {
        let name = self.file_name.to_string_lossy();
        let cand = format!("\"$d\"/{}", shell_quote(&name));
        let (mut cmd, script, made) = match self.builtin {
            Some(b) => (
                format!(
                    "(c=; d=; c=$(mktemp -d) && {} checks write \"$c\" && ",
                    shell_quote(&mfppr_exe())
                ),
                format!("\"$c\"/{}", b.file),
                "\"$d\" \"$c\"",
            ),
            None => (
                "(d=; ".to_string(),
                shell_quote(&self.script.to_string_lossy()),
                "\"$d\"",
            ),
        };
        cmd.push_str(&format!(
            "d=$(mktemp -d) && cp {} {cand} && mkdir \"$d/.mfppr-tmp\" && cd \"$d\" && \
             TMPDIR=\"$d/.mfppr-tmp\" MFPPR_CANDIDATE={cand} MFPPR_ORIGINAL={} MFPPR_ORIGINAL_DIR={}",
            shell_quote(&self.original.to_string_lossy()),
            shell_quote(&self.original.to_string_lossy()),
            shell_quote(&self.original_dir.to_string_lossy()),
        ));
        for (k, v) in &self.extra_env {
            cmd.push_str(&format!(" {k}={}", shell_quote(v)));
        }
        if self.python {
            cmd.push_str(" python3");
        }
        cmd.push_str(&format!(
            " {script} {cand}; s=$?; rm -rf {made}; echo \"exit status $s\")"
        ));
        cmd
    }

    /// Run the script once on `candidate` and report how it ended.
    pub fn run(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Run> {
        let dir = ScratchDir::new("mfppr-check-").context(
            "cannot create a temporary directory for the check; check TMPDIR and free space",
        )?;
        let root = dir.path();
        let cand = root.join(&self.file_name);
        std::fs::write(&cand, candidate)
            .with_context(|| format!("cannot write the candidate {}", cand.display()))?;
        let tmp = root.join(".mfppr-tmp");
        std::fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let out_path = root.join(".mfppr-stdout");
        let err_path = root.join(".mfppr-stderr");
        let stdout = File::create(&out_path)
            .with_context(|| format!("cannot create {}", out_path.display()))?;
        let stderr = File::create(&err_path)
            .with_context(|| format!("cannot create {}", err_path.display()))?;

        let mut command = if self.python {
            let mut c = Command::new("python3");
            c.arg(&self.script);
            c
        } else {
            Command::new(&self.script)
        };
        command
            .arg(&cand)
            .current_dir(root)
            .env("MFPPR_CANDIDATE", &cand)
            .env("MFPPR_ORIGINAL", &self.original)
            .env("MFPPR_ORIGINAL_DIR", &self.original_dir)
            .env("TMPDIR", &tmp)
            .envs(self.extra_env.iter().map(|(k, v)| (k, v)))
            .envs(self.cache_dir.iter().map(|d| ("MFPPR_CACHE_DIR", d)))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        let limits = Limits {
            timeout: self.timeout,
            cancel: &[cancel, self.interrupt],
            scratch: Some(root),
        };
        let finished = process::run(&mut command, &limits).map_err(|e| self.spawn_error(e))?;
        self.check_original_unchanged()?;
        if let Some(save) = &self.save_temps {
            let verdict = self.verdict_of(finished.end);
            if verdict != Verdict::Uninteresting {
                save.keep(root, verdict)?;
            }
        }
        Ok(Run {
            end: finished.end,
            elapsed: finished.elapsed,
            stderr_tail: tail(&err_path),
        })
    }

    /// A check script must never change the input (design §7): put it back and stop.
    fn check_original_unchanged(&self) -> anyhow::Result<()> {
        let Some(before) = &self.original_bytes else {
            return Ok(());
        };
        if std::fs::read(&self.original).is_ok_and(|now| &now == before) {
            return Ok(());
        }
        let restored = match std::fs::write(&self.original, before) {
            Ok(()) => "it was put back".to_string(),
            Err(e) => format!("putting it back failed ({e}): restore it from your copy"),
        };
        Err(coded(
            ExitKind::Oracle,
            format!(
                "the check script {} modified the input {} ({restored}); make the script write \
                 only in its working directory or $TMPDIR",
                self.script.display(),
                self.original.display()
            ),
        ))
    }

    fn spawn_error(&self, e: std::io::Error) -> anyhow::Error {
        let script = self.script.display();
        let message = if self.python && e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "cannot run python3 for check script {script}: {e}; install python3 or make the \
                 script executable with a #! line and another extension"
            )
        } else if e.raw_os_error() == Some(nix::errno::Errno::ENOEXEC as i32) {
            format!(
                "cannot run check script {script}: {e}; start it with a #! line such as #!/bin/sh"
            )
        } else {
            format!(
                "cannot run check script {script}: {e}; check that it exists, is executable and \
                 that its #! interpreter is installed"
            )
        };
        coded(ExitKind::Oracle, message)
    }
}

impl Oracle for ScriptOracle {
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        let run = self.run(candidate, cancel)?;
        Ok(self.verdict_of(run.end))
    }
}

/// The value behind `m`, even if a thread panicked while holding it (the values mfppr shares
/// stay valid at every step).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The last lines of the file at `path`, joined with " | " into one line.
fn tail(path: &Path) -> String {
    let mut buf = Vec::new();
    if let Ok(mut f) = File::open(path) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)));
        let _ = f.read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    lines[start..].join(" | ")
}

/// This mfppr's path, for a command that calls it back (else `mfppr`, found on the `PATH`).
fn mfppr_exe() -> String {
    std::env::current_exe().map_or_else(|_| "mfppr".into(), |p| p.to_string_lossy().into_owned())
}

/// Quote `s` for a POSIX shell (single quotes unless it is plainly safe).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    static NO_INTERRUPT: AtomicBool = AtomicBool::new(false);

    fn oracle(dir: &Path, body: &str) -> ScriptOracle {
        let s = script(dir, "check.sh", body);
        let input = dir.join("t.cpp");
        std::fs::write(&input, "int main() {}\n").unwrap();
        let mut o = ScriptOracle::new(&s, &input, vec![("MARKER_ID".into(), "7".into())]).unwrap();
        o.set_interrupt_flag(&NO_INTERRUPT);
        o
    }

    #[test]
    fn the_script_sees_the_documented_environment() {
        let dir = tempfile::tempdir().unwrap();
        let o = oracle(
            dir.path(),
            "#!/bin/sh\n\
             [ \"$1\" = \"$MFPPR_CANDIDATE\" ] || exit 11\n\
             [ \"$(basename \"$1\")\" = t.cpp ] || exit 12\n\
             [ \"$(pwd -P)\" = \"$(cd \"$(dirname \"$1\")\" && pwd -P)\" ] || exit 13\n\
             [ -f t.cpp ] || exit 14\n\
             [ -d \"$TMPDIR\" ] || exit 15\n\
             [ \"$MARKER_ID\" = 7 ] || exit 16\n\
             [ -f \"$MFPPR_ORIGINAL\" ] || exit 17\n\
             [ -d \"$MFPPR_ORIGINAL_DIR\" ] || exit 18\n\
             grep -q hello t.cpp || exit 19\n\
             exit 0\n",
        );
        let run = o.run(b"hello", &AtomicBool::new(false)).unwrap();
        assert_eq!(
            run.end,
            RunEnd::Exited {
                status: 0,
                signal: None
            }
        );
    }

    #[test]
    fn signals_timeouts_and_cancellation() {
        let dir = tempfile::tempdir().unwrap();
        let o = oracle(dir.path(), "#!/bin/sh\nkill -SEGV $$\n");
        let run = o.run(b"", &AtomicBool::new(false)).unwrap();
        assert_eq!(
            run.end,
            RunEnd::Exited {
                status: 139,
                signal: Some(11)
            }
        );
        let o = o.resolved(None, Expected::Status(139));
        assert_eq!(
            o.verdict(b"", &AtomicBool::new(false)).unwrap(),
            Verdict::Interesting
        );

        let o = oracle(dir.path(), "#!/bin/sh\necho waiting >&2\nsleep 30\n");
        let o = o.with_timeout(Some(Duration::from_millis(200)));
        let start = Instant::now();
        assert_eq!(
            o.verdict(b"", &AtomicBool::new(false)).unwrap(),
            Verdict::Timeout
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        let run = o.run(b"", &AtomicBool::new(false)).unwrap();
        assert_eq!(
            (run.end, run.stderr_tail.as_str()),
            (RunEnd::TimedOut, "waiting")
        );

        let o = o.with_timeout(None);
        let cancel = AtomicBool::new(true);
        assert_eq!(o.verdict(b"", &cancel).unwrap(), Verdict::Uninteresting);
    }

    #[test]
    fn missing_and_non_executable_scripts_are_oracle_errors() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.cpp");
        let err = ScriptOracle::new(&dir.path().join("nope.sh"), &input, vec![]).unwrap_err();
        assert_eq!(crate::error::exit_kind(&err), ExitKind::Oracle);
        let path = dir.path().join("plain.sh");
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = ScriptOracle::new(&path, &input, vec![]).unwrap_err();
        assert!(err.to_string().contains("chmod +x"), "{err}");
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/a/b.cpp"), "/a/b.cpp");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
