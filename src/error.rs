//! Documented exit codes and the error type that carries one.
//!
//! Any error reaching `main` is printed as one line (`error: …` with its context chain). Its exit
//! code comes from the first [`Coded`] in the chain, else [`ExitKind::Input`].

use std::fmt;

/// Process exit codes (also listed in `--help` and the README).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// Bad input: unreadable file, not an MF++ test, malformed coverage data, bad output path.
    Input = 1,
    /// Command-line usage error (clap).
    Usage = 2,
    /// The original input is not interesting to the check script.
    NotInteresting = 3,
    /// The check script cannot be run (missing, not executable) or the oracle failed.
    Oracle = 4,
    /// Interrupted by Ctrl-C / SIGTERM; the best result so far is on disk.
    Interrupted = 130,
}

/// Every exit code with its meaning: the one source of `--help`'s list and the README's table.
pub const EXIT_CODES: &[(u8, &str)] = &[
    (0, "success"),
    (
        ExitKind::Input as u8,
        "bad input: unreadable file, not an MF++ test, malformed coverage data, bad output path",
    ),
    (ExitKind::Usage as u8, "usage error"),
    (
        ExitKind::NotInteresting as u8,
        "the original input is not interesting to the check script",
    ),
    (
        ExitKind::Oracle as u8,
        "the check script cannot be run (missing, not executable) or misbehaves (modifies the input)",
    ),
    (
        ExitKind::Interrupted as u8,
        "interrupted (Ctrl-C / SIGTERM); the best result so far is on disk",
    ),
];

/// The "Exit codes:" block of `--help`, from [`EXIT_CODES`].
pub fn exit_codes_help() -> String {
    let mut text = String::from("Exit codes:");
    for (code, meaning) in EXIT_CODES {
        text.push_str(&format!("\n  {code:<4} {meaning}"));
    }
    text
}

/// An error with a documented exit code.
#[derive(Debug)]
pub struct Coded {
    /// Which exit code to use.
    pub kind: ExitKind,
    /// One-line cause and next step.
    pub message: String,
}

impl fmt::Display for Coded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Coded {}

/// Build an `anyhow::Error` carrying `kind`.
pub fn coded(kind: ExitKind, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Coded {
        kind,
        message: message.into(),
    })
}

/// The exit code for `err`: the first [`Coded`] in its chain, else [`ExitKind::Input`].
pub fn exit_kind(err: &anyhow::Error) -> ExitKind {
    err.chain()
        .find_map(|e| e.downcast_ref::<Coded>())
        .map(|c| c.kind)
        .unwrap_or(ExitKind::Input)
}
