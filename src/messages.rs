//! User-facing messages on stderr: notes, progress and warnings, with one process-wide quiet
//! switch (`-q`). Results (reports, tables, summaries) go to stdout and are never silenced; errors
//! are printed once by `main`.

use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silence notes and progress (`-q`); warnings are still printed.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// True when `-q` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A result or a hint worth knowing ("injected 5 markers …", "undo with …").
pub fn note(message: impl AsRef<str>) {
    if !quiet() {
        eprintln!("{}", message.as_ref());
    }
}

/// What is running now ("find: running 8 tests …", "reduce P3 (2/9 …)").
pub fn progress(message: impl AsRef<str>) {
    if !quiet() {
        eprintln!("{}", message.as_ref());
    }
}

/// Something the user should act on; printed even with `-q`, prefixed `warning: `.
pub fn warn(message: impl AsRef<str>) {
    eprintln!("warning: {}", message.as_ref());
}
