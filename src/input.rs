//! The one reader policy for the files mfppr reads (issue 59): [`read_regular`] reads a regular
//! file only (a FIFO, a device, a directory or a `/proc` file is refused in one line, without
//! blocking), at most a given number of bytes; [`inside_root`] resolves symlinks before saying
//! whether a file lies inside a root. Here too: reading an input test and the checks that need no
//! parse (at most [`MAX_TEST_BYTES`], UTF-8 text, no statement over [`MAX_STATEMENT_TOKENS`]
//! tokens, where the braces stop balancing), so hostile input is refused before the parser sees
//! it.

use anyhow::{bail, Result};

/// Read the test at `path`, with a one-line error that says what to do when it cannot be read;
/// more than [`MAX_TEST_BYTES`] is refused by [`check_text`] (one byte more is read to see it).
pub(crate) fn read_test(path: &std::path::Path) -> Result<Vec<u8>> {
    read_upto(path, MAX_TEST_BYTES as u64 + 1, "an MF++ test file")
}

/// Read `path`, `what` it is for the messages (`"a reduced result"`), refusing more than `limit`
/// bytes. Only a regular file is read (a symlink counts as what it points to): the file is opened
/// without blocking and checked before the first read, so a FIFO, a device, a directory or a file
/// of `/proc` is refused at once instead of blocking in `open` or reading without end.
pub(crate) fn read_regular(path: &std::path::Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let text = read_upto(path, limit + 1, what)?;
    if text.len() as u64 > limit {
        bail!(
            "{} has more than {} bytes, more than mfppr reads as {what}; check that it is the \
             right file",
            path.display(),
            limit
        );
    }
    Ok(text)
}

/// At most `most` bytes of `path`, under the same rules as [`read_regular`] (for a reader that
/// cuts rather than refuses what is longer).
pub(crate) fn read_upto(path: &std::path::Path, most: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: std::io::Error| {
        anyhow::anyhow!(
            "cannot read {}: {} (check the path and its permissions)",
            path.display(),
            e
        )
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    let kind = file.metadata().map_err(cannot)?.file_type();
    let proc_file = std::fs::canonicalize(path).is_ok_and(|p| p.starts_with("/proc"));
    if !kind.is_file() || proc_file {
        let kind = if proc_file {
            "a file of /proc"
        } else {
            crate::atomic::kind_of(&kind)
        };
        bail!(
            "{} is {kind}, not {what}; give a regular file",
            path.display(),
        );
    }
    let mut text = Vec::new();
    file.take(most).read_to_end(&mut text).map_err(cannot)?;
    Ok(text)
}

/// `path` with its symlinks resolved, when that lies inside `root` (symlinks resolved too);
/// `None` when it lies outside, or cannot be resolved.
pub(crate) fn inside_root(
    path: &std::path::Path,
    root: &std::path::Path,
) -> Option<std::path::PathBuf> {
    let root = std::fs::canonicalize(root).ok()?;
    let real = std::fs::canonicalize(path).ok()?;
    real.starts_with(&root).then_some(real)
}

/// The largest JSON record mfppr reads (a test's `result.json`, stats, a task list, a summary).
pub(crate) const MAX_RECORD_BYTES: u64 = 64 << 20;

/// The largest campaign journal mfppr reads (a few kilobytes a test).
pub(crate) const MAX_JOURNAL_BYTES: u64 = 1 << 30;

/// [`read_regular`], `Ok(None)` when nothing is at `path`.
pub(crate) fn read_if_any(
    path: &std::path::Path,
    limit: u64,
    what: &str,
) -> Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => read_regular(path, limit, what).map(Some),
    }
}

/// The largest input mfppr reads (MF++ writes tests of a few megabytes).
pub(crate) const MAX_TEST_BYTES: usize = 64 << 20;

/// The checks that need no parse, made before parsing so that hostile input (binary data, a huge
/// file, a statement of millions of tokens) is refused at once: not empty, not too large, UTF-8
/// text without NUL bytes, no statement over [`MAX_STATEMENT_TOKENS`] tokens.
pub(crate) fn check_text(text: &[u8]) -> Result<()> {
    if text.len() > MAX_TEST_BYTES {
        bail!(
            "the file has {} bytes, more than the {} MiB mfppr reads: not an MF++ test",
            text.len(),
            MAX_TEST_BYTES >> 20
        );
    }
    if text.contains(&0) || std::str::from_utf8(text).is_err() {
        bail!("the file is not UTF-8 text (binary data?): not an MF++ test");
    }
    if text.iter().all(|b| b.is_ascii_whitespace()) {
        bail!("the file is empty: not an MF++ test");
    }
    if let Some(why) = oversized_statement(text) {
        bail!("{why}: not an MF++ test");
    }
    Ok(())
}

/// Where the braces of `text` stop balancing (ignoring comments, strings and character
/// literals): the first `}` without an opening one, or else the first `{` never closed. A parser
/// reports a missing `}` at the end of the file; this names where the imbalance starts.
pub(crate) fn unbalanced_brace(text: &[u8]) -> Option<String> {
    let mut open: Vec<usize> = Vec::new();
    let mut stray = None;
    crate::cpp_text::code_bytes(text, |i, b| match b {
        b'{' => {
            open.push(i);
            true
        }
        // The guard pops the matching `{`, if any.
        b'}' if open.pop().is_none() => {
            stray = Some(i);
            false
        }
        _ => true,
    });
    if let Some(at) = stray {
        return Some(format!(
            "unbalanced braces: the `}}` at line {} closes nothing",
            line_of(text, at)
        ));
    }
    open.first().map(|&at| {
        format!(
            "unbalanced braces: the `{{` at line {} is never closed",
            line_of(text, at)
        )
    })
}

/// The most tokens one statement may have. MF++ writes statements of at most a few hundred; the
/// parser needs about 200 bytes of memory a token, and a statement of millions of them (`int big =
/// 0+1+1…`) would take gigabytes and hours, so such a file is refused before it is parsed.
pub(crate) const MAX_STATEMENT_TOKENS: usize = 100_000;

/// The first statement (text between two of `;`, `{`, `}`) with more than
/// [`MAX_STATEMENT_TOKENS`] tokens, as an error that names its line.
fn oversized_statement(text: &[u8]) -> Option<String> {
    let mut tokens = 0;
    let mut start = 0;
    let mut previous_word = false;
    let mut over = None;
    crate::cpp_text::code_bytes(text, |i, b| {
        let word = b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
        if matches!(b, b';' | b'{' | b'}') {
            tokens = 0;
            start = i + 1;
        } else {
            // A run of word bytes is one token; every other non-blank byte is one.
            let continues_word = word && previous_word;
            if !b.is_ascii_whitespace() && !continues_word {
                tokens += 1;
            }
        }
        previous_word = word;
        if tokens > MAX_STATEMENT_TOKENS {
            over = Some(start);
        }
        over.is_none()
    });
    over.map(|at| {
        format!(
            "the statement at line {} has more than {MAX_STATEMENT_TOKENS} tokens, more than \
             mfppr reads in one statement (MF++ writes a few hundred)",
            line_of(text, at)
        )
    })
}

pub(crate) fn line_of(text: &[u8], offset: usize) -> usize {
    text[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
