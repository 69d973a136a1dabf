//! What mfppr's self-contained HTML pages share (the coverage page, [`crate::coverage::html`], and
//! the campaign page, `crate::batch::page`): escaping every outside byte ([`escape`]), relative
//! links to files that exist ([`link`], [`href`]), the page's directory ([`page_dir`]) and where a
//! page may be written ([`target`]). Nothing here decides what a page shows.

pub mod target;

use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};

pub use target::{check_target, PageTarget};

/// `s` with `&`, `<`, `>`, `"` and `'` escaped, and control characters other than tab and
/// newline (which HTML does not allow) shown as U+FFFD; a newline only when `newlines`.
pub(crate) fn escape_text(s: &str, newlines: bool) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' => out.push('\t'),
            '\n' if newlines => out.push('\n'),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `s` escaped for an element's text or an attribute's value (see [`escape_text`]); a newline
/// too is shown as U+FFFD, so a name keeps to one line.
pub(crate) fn escape(s: &str) -> String {
    escape_text(s, false)
}

/// The start of a page titled `title` (escaped here) with the inline style sheet `css`: up to
/// and including its `<h1>`.
pub(crate) fn head(title: &str, css: &str) -> String {
    let title = escape(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\n{css}\n</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    )
}

/// A relative path as an `href`: every byte but unreserved characters and `/` percent-encoded, so
/// a file name with `#`, `?`, `%`, quotes or bytes that are not UTF-8 still names that file.
pub(crate) fn href(relative: &[u8]) -> String {
    let mut out = String::with_capacity(relative.len());
    for &b in relative {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The canonical directory of the page at `path`.
pub(crate) fn page_dir(path: &Path) -> Result<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir).with_context(|| {
        format!(
            "cannot resolve the directory of the page {}",
            path.display()
        )
    })
}

/// The `href` of `target` when it is a regular file, relative to the page's canonical
/// directory `dir`; `None` when there is no such file.
pub(crate) fn link(target: &Path, dir: &Path) -> Option<String> {
    let target = std::fs::canonicalize(target).ok()?;
    if !target.is_file() {
        return None;
    }
    let from: Vec<Component> = dir.components().collect();
    let to: Vec<Component> = target.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel: Vec<u8> = Vec::new();
    for _ in common..from.len() {
        rel.extend_from_slice(b"../");
    }
    let rest: Vec<&[u8]> = to[common..]
        .iter()
        .map(|c| c.as_os_str().as_bytes())
        .collect();
    rel.extend_from_slice(&rest.join(&b'/'));
    Some(href(&rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_and_href_leave_nothing_active() {
        assert_eq!(
            escape("<script>alert(\"x\")</script>&'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
        assert_eq!(escape("a\0b\tc\u{1b}\n"), "a\u{FFFD}b\tc\u{FFFD}\u{FFFD}");
        assert_eq!(escape_text("a\nb<", true), "a\nb&lt;");
        assert_eq!(
            href(b"../tests/a b\"<#?%\xff.cpp"),
            "../tests/a%20b%22%3C%23%3F%25%FF.cpp"
        );
    }

    #[test]
    fn a_link_is_relative_and_only_to_a_file_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/x y.cpp"), "x").unwrap();
        assert_eq!(
            link(&root.join("a/b/x y.cpp"), &root.join("a/c")).as_deref(),
            Some("../b/x%20y.cpp")
        );
        assert_eq!(link(&root.join("a/b/gone.cpp"), &root), None);
        let bytes = root.join(std::ffi::OsStr::from_bytes(b"n\xff\n<\".cpp"));
        std::fs::write(&bytes, "x").unwrap();
        assert_eq!(link(&bytes, &root).as_deref(), Some("n%FF%0A%3C%22.cpp"));
        assert_eq!(link(&root.join("a/b"), &root), None, "a directory");
    }
}
