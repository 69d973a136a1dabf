//! Running the user's shell commands (`--generate`, `--run`, `--verify-cmd`) for coverage mode.
//!
//! A command is a template: `{name}` placeholders are replaced by shell-quoted values, then the
//! text runs through `sh -c` in a directory of the caller's choosing, through the one process
//! runner (`crate::process`), so that a timeout or Ctrl-C kills everything it started. Its stdout and stderr go to anonymous
//! temporary files (never pipes, which can fill up and block the command).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::error::{coded, ExitKind};
use crate::oracle::shell_quote;
use crate::process::{self, Limits, RunEnd};

/// How a command run ended, with everything it printed.
#[derive(Clone, Debug)]
pub struct ShellRun {
    /// Exit status (a signal `s` is reported as `128 + s`); `None` when the run timed out.
    pub status: Option<i32>,
    /// Everything written on stdout.
    pub stdout: Vec<u8>,
    /// Everything written on stderr.
    pub stderr: Vec<u8>,
    /// Wall time.
    pub elapsed: Duration,
}

impl ShellRun {
    /// True when the command exited with status 0.
    pub fn passed(&self) -> bool {
        self.status == Some(0)
    }

    /// "exit 3", "timed out", …, for messages.
    pub fn describe(&self) -> String {
        match self.status {
            Some(s) => format!("exit status {s}"),
            None => format!("timed out after {:.0} s", self.elapsed.as_secs_f64()),
        }
    }

    /// The last non-empty line of stderr (or stdout), for one-line error messages.
    pub fn last_line(&self) -> String {
        [&self.stderr, &self.stdout]
            .iter()
            .find_map(|b| {
                String::from_utf8_lossy(b)
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string())
            })
            .unwrap_or_default()
    }
}

/// Check that `template` (the value of `flag`) names every placeholder in `needed`.
pub fn check_template(flag: &str, template: &str, needed: &[&str]) -> Result<()> {
    for name in needed {
        if !template.contains(&format!("{{{name}}}")) {
            return Err(coded(
                ExitKind::Usage,
                format!(
                    "{flag} {template:?} has no {{{name}}}; write where the value goes, e.g. {}",
                    example_for(flag)
                ),
            ));
        }
    }
    Ok(())
}

fn example_for(flag: &str) -> &'static str {
    match flag {
        "--generate" => "'gen --seed {seed} -o {out}'",
        "--verify-cmd" => "'g++ --coverage -I lib {test} -o {exe}'",
        _ => "'g++ -I \"$MFPPR_INJECTED\" {test} -o t && ./t'",
    }
}

/// `template` with each `{name}` replaced by the shell-quoted value.
pub fn expand(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), &shell_quote(value));
    }
    out
}

/// Run `command` with `sh -c` in `dir` with the extra environment `env`; kill its process group
/// after `timeout`. Ctrl-C (the process-wide flag of `crate::interrupt`) kills it too and
/// returns an [`ExitKind::Interrupted`] error.
pub fn run(
    command: &str,
    dir: &Path,
    env: &[(&str, &Path)],
    timeout: Duration,
) -> Result<ShellRun> {
    let capture = || {
        tempfile::tempfile().context("cannot create a temporary file; check TMPDIR and free space")
    };
    let (mut out, mut err) = (capture()?, capture()?);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out.try_clone().context("cannot duplicate a file handle")?)
        .stderr(err.try_clone().context("cannot duplicate a file handle")?);
    let limits = Limits {
        timeout: Some(timeout),
        cancel: &[crate::interrupt::flag()],
        // `dir` may be the user's own directory: only the command's process group is killed.
        scratch: None,
    };
    let finished = process::run(&mut cmd, &limits).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("cannot run `sh -c {command}`: {e}; check that /bin/sh exists"),
        )
    })?;
    let status = match finished.end {
        RunEnd::Exited { status, .. } => Some(status),
        RunEnd::TimedOut => None,
        RunEnd::Cancelled => {
            return Err(coded(
                ExitKind::Interrupted,
                format!("interrupted while running `{command}`; nothing was reduced"),
            ))
        }
    };
    Ok(ShellRun {
        status,
        stdout: read_all(&mut out)?,
        stderr: read_all(&mut err)?,
        elapsed: finished.elapsed,
    })
}

/// The most of a command's stdout or stderr that is read back (the rest is left on disk, unread,
/// and a warning says so), so a test that prints without end costs this much memory at most.
const MAX_OUTPUT: u64 = 64 << 20;

fn read_all(f: &mut File) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    f.seek(SeekFrom::Start(0))
        .and_then(|_| f.take(MAX_OUTPUT + 1).read_to_end(&mut buf))
        .context("cannot read a command's captured output")?;
    if buf.len() as u64 > MAX_OUTPUT {
        buf.truncate(MAX_OUTPUT as usize);
        crate::messages::warn(format!(
            "a command wrote more than {} MiB; only that much of its output is read",
            MAX_OUTPUT >> 20
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn placeholders_are_quoted_and_checked() {
        assert_eq!(
            expand(
                "cc {test} -o {exe}",
                &[("test", "/a b/t.cpp"), ("exe", "/x")]
            ),
            "cc '/a b/t.cpp' -o /x"
        );
        assert!(check_template("--run", "make {test}", &["test"]).is_ok());
        let e = check_template("--generate", "gen {seed}", &["seed", "out"]).unwrap_err();
        assert!(format!("{e:#}").contains("has no {out}"));
    }

    #[test]
    fn captures_output_status_and_kills_on_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(
            "echo out; echo \"err $X\" >&2; exit 3",
            dir.path(),
            &[("X", Path::new("/v"))],
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(r.status, Some(3));
        assert_eq!(r.stdout, b"out\n");
        assert_eq!(r.stderr, b"err /v\n");
        assert_eq!(r.last_line(), "err /v");
        let start = Instant::now();
        let r = run(
            "sleep 30 & sleep 30",
            dir.path(),
            &[],
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(r.status, None);
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(r.describe().starts_with("timed out"));
    }
}
