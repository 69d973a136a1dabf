//! User-facing messages on stderr: notes, progress, an updating status line and warnings, with
//! one process-wide quiet switch (`-q`); and the one escaper for terminals ([`printable`]) that
//! every table and message showing a name from outside (a test's stem, a file or function name
//! from coverage data, a signature) goes through. Results (reports, tables, summaries) go to stdout and are
//! never silenced; errors are printed once by `main`.
//!
//! On a terminal the status line is redrawn in place; any other message first clears it. When
//! stderr is not a terminal, status lines are plain lines.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);
/// A status line is on the terminal now (no newline after it).
static STATUS_SHOWN: AtomicBool = AtomicBool::new(false);
/// Erase the current terminal line.
const ERASE_LINE: &str = "\r\x1b[2K";

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
        clear_status();
        eprintln!("{}", message.as_ref());
    }
}

/// What is running now ("find: running 8 tests …", "reduce P3 (2/9 …)").
pub fn progress(message: impl AsRef<str>) {
    note(message);
}

/// Something the user should act on; printed even with `-q`, prefixed `warning: `.
pub fn warn(message: impl AsRef<str>) {
    clear_status();
    eprintln!("warning: {}", message.as_ref());
}

/// Whether status lines are redrawn in place (stderr is a terminal).
pub fn status_updates_in_place() -> bool {
    std::io::stderr().is_terminal()
}

/// The state of a long run ("1234 of 14315 bytes …"): redrawn in place on a terminal, a plain
/// line otherwise.
pub fn status(message: impl AsRef<str>) {
    if quiet() {
        return;
    }
    if status_updates_in_place() {
        eprint!("{ERASE_LINE}{}", message.as_ref());
        STATUS_SHOWN.store(true, Ordering::Relaxed);
    } else {
        eprintln!("{}", message.as_ref());
    }
}

/// `text` with what a terminal would act on escaped: control characters (`\n`, `\u{1b}`, BEL),
/// the Unicode line separators and the bidirectional overrides, so a hostile name stays one
/// visible token on its row and cannot forge another or move the cursor.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            let acts = c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if acts {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// [`printable`] of a path's bytes (lossy where it is not UTF-8, for display only).
pub fn printable_path(path: &std::path::Path) -> String {
    printable(&path.to_string_lossy())
}

/// Erase the status line, if one is shown (before other output, and when a run ends).
pub fn clear_status() {
    if STATUS_SHOWN.swap(false, Ordering::Relaxed) {
        eprint!("{ERASE_LINE}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_newline_or_an_escape_stays_one_visible_token() {
        assert_eq!(printable("nl\n$(x)\u{1b}é"), "nl\\n$(x)\\u{1b}é");
        assert_eq!(printable("bel\u{7}\r\u{202e}x"), "bel\\u{7}\\r\\u{202e}x");
        assert_eq!(printable("plain name_1.cpp"), "plain name_1.cpp");
    }
}
