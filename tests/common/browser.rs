//! Pages in a real browser: headless Chromium renders a page (`--dump-dom`, a fresh profile, no
//! network) and the DOM it reports is read back; its links must each be a fragment of the page
//! or a relative path to a file that exists (the coverage page, `cover_html`; the campaign page,
//! `batch_page`).

use std::path::Path;
use std::process::Command;

/// The browser the page tests run.
pub(crate) const CHROMIUM: &str = "chromium";

/// The DOM headless Chromium builds from `page` (no network, a fresh profile).
pub(crate) fn dump_dom(page: &Path, tmp: &Path) -> String {
    let profile = tempfile::tempdir_in(tmp).unwrap();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && dom.contains("</html>"),
        "chromium failed on {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    dom
}

/// Every `href="…"` of the DOM.
pub(crate) fn hrefs(dom: &str) -> Vec<String> {
    dom.split("href=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].replace("&amp;", "&"))
        .collect()
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Each link is a fragment naming an element of the page or a relative path to an existing
/// file; nothing is loaded from elsewhere.
pub(crate) fn check_links(dom: &str, dir: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    assert!(
        !dom.contains("<link") && !dom.contains(" src=\""),
        "external assets"
    );
    let mut files = 0;
    for h in hrefs(dom) {
        if let Some(id) = h.strip_prefix('#') {
            assert!(dom.contains(&format!("id=\"{id}\"")), "no element #{id}");
            continue;
        }
        assert!(!h.contains(':') && !h.starts_with('/'), "not relative: {h}");
        let target = dir.join(std::ffi::OsStr::from_bytes(&percent_decode(&h)));
        assert!(target.is_file(), "{h} does not resolve to a file");
        files += 1;
    }
    files
}
