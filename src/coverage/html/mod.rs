//! The coverage page (`--html FILE` of `cover report` and `cover find`, issue 43): one
//! self-contained HTML file, modelled on gcovr's `--html-details`, with a summary per file and
//! function, then each file's source with the new lines marked by status and, after `find`, the
//! marker, the tests that reach each line (relative links to files `find` wrote) and the check
//! that sees it.
//!
//! Owns the page's model ([`Page`]: statuses from the report and `summary.json`'s points), the
//! reading of the sources it shows, the links and the atomic write; [`check_target`] (shared with
//! the campaign page, [`crate::html`]) checks the path before anything runs, [`render`] turns the
//! model into HTML.

mod render;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::diff::new_lines::{NewFile, NewLine};
use super::diff::NewLinesReport;
use super::find::summary::{FindSummary, Point};
use crate::atomic::write_atomic;
use crate::messages::note;

pub use crate::html::{check_target, PageTarget};

/// The status of one new line on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// `cover report`: a new line (there is no find step).
    New,
    /// A check of the suite test fails when the line's value changes: a metamorphic check.
    CheckedMetamorphic,
    /// The same, an assertion (the input's, or a regression check).
    CheckedValue,
    /// Reached, and no check sees it.
    ExecutedOnly,
    /// Reached; no check step ran (no `--reduce`, or the reduction failed).
    Reached,
    /// Its marker was reached by no passing test.
    Unreached,
    /// No marker stands for it (skipped at injection, or not among `--points`).
    NoMarker,
}

impl Status {
    /// The statuses of a reached line.
    const REACHED: [Status; 4] = [
        Status::CheckedMetamorphic,
        Status::CheckedValue,
        Status::ExecutedOnly,
        Status::Reached,
    ];

    /// The name in `data-status`, `data-col` and the CSS class.
    fn key(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::CheckedMetamorphic => "checked-metamorphic",
            Status::CheckedValue => "checked-value",
            Status::ExecutedOnly => "executed-only",
            Status::Reached => "not-checked",
            Status::Unreached => "unreached",
            Status::NoMarker => "no-marker",
        }
    }

    fn class(self) -> &'static str {
        match self {
            Status::New => "st-new",
            Status::CheckedMetamorphic => "st-checked-metamorphic",
            Status::CheckedValue => "st-checked-value",
            Status::ExecutedOnly => "st-executed-only",
            Status::Reached => "st-not-checked",
            Status::Unreached => "st-unreached",
            Status::NoMarker => "st-no-marker",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::CheckedMetamorphic => "checked metamorphic",
            Status::CheckedValue => "checked value",
            Status::ExecutedOnly => "executed only",
            Status::Reached => "not checked",
            Status::Unreached => "unreached",
            Status::NoMarker => "no marker",
        }
    }

    fn meaning(self) -> &'static str {
        match self {
            Status::New => "the fuzz run executed it, the suite never did",
            Status::CheckedMetamorphic => "a metamorphic check fails when its value changes",
            Status::CheckedValue => "an assertion fails when its value changes",
            Status::ExecutedOnly => "a test runs it, no check sees it",
            Status::Reached => "a test runs it; no check step ran (no --reduce, or it failed)",
            Status::Unreached => "no passing test reached its marker",
            Status::NoMarker => "no marker (skipped at injection, or not in --points)",
        }
    }

    /// The status `find` gave a marker.
    fn of(p: &Point) -> Status {
        match (&p.source_test, p.check.as_deref()) {
            (None, _) => Status::Unreached,
            (Some(_), Some(c)) if c.starts_with("checked (metamorphic") => {
                Status::CheckedMetamorphic
            }
            (Some(_), Some(c)) if c.starts_with("checked (value") => Status::CheckedValue,
            (Some(_), Some("executed only")) => Status::ExecutedOnly,
            (Some(_), _) => Status::Reached,
        }
    }
}

/// A link to a file `find` wrote: relative to the page's directory, percent-encoded.
#[derive(Clone, Debug)]
struct Link {
    label: String,
    href: String,
}

/// What the page says about one new line.
#[derive(Clone, Debug)]
struct LineInfo {
    status: Status,
    function: Option<String>,
    marker: Option<String>,
    links: Vec<Link>,
    /// The check's verdict (`checked (metamorphic, pair r_0/r_1)`, …), shown for the status.
    check: Option<String>,
    /// Why: the statement reaching the line and what a changed value did (a tooltip).
    why: String,
}

/// A file's source, or why it is not shown.
#[derive(Clone, Debug)]
enum Source {
    Text(String),
    Unreadable(String),
}

/// One file of the page.
#[derive(Clone, Debug)]
struct FilePage {
    /// The file key of the coverage data (hostile: escaped when shown).
    key: String,
    source: Source,
    lines: BTreeMap<u32, LineInfo>,
}

/// The whole page.
#[derive(Clone, Debug)]
struct Page {
    title: String,
    headlines: Vec<String>,
    /// After `find`: statuses and links; else every line is [`Status::New`].
    find: bool,
    files: Vec<FilePage>,
}

/// The page of file `f`, each new line described by `info` (its source is read when written).
fn file_page(f: &NewFile, info: impl Fn(&NewLine) -> LineInfo) -> FilePage {
    FilePage {
        key: f.path.clone(),
        source: Source::Unreadable(String::new()),
        lines: f.lines.iter().map(|l| (l.line, info(l))).collect(),
    }
}

/// Write the page of `cover report` to `path` (checked with [`check_target`]).
pub fn write_report_page(report: &NewLinesReport, path: &Path) -> Result<()> {
    let files = report
        .new
        .files
        .iter()
        .map(|f| file_page(f, |l| plain(l, Status::New)))
        .collect();
    let page = Page {
        title: "mfppr cover report".into(),
        headlines: vec![format!(
            "{} new lines in {} files: the fuzz run executed them, the suite never did",
            report.new.total(),
            report.new.files.len()
        )],
        find: false,
        files,
    };
    write(page, report.source_root.as_deref(), path)
}

/// Write the page of `cover find` to `path` (checked with [`check_target`]): the report's new
/// lines (or, with `--marked`, the markers' lines), each with its marker's status and links.
pub fn write_find_page(
    report: Option<&NewLinesReport>,
    summary: &FindSummary,
    source_root: &Path,
    path: &Path,
) -> Result<()> {
    let dir = crate::html::page_dir(path)?;
    let mut by_line: BTreeMap<(&str, u32), &Point> = BTreeMap::new();
    for p in &summary.points {
        for &l in &p.lines {
            by_line.insert((p.file.as_str(), l), p);
        }
    }
    let files = match report {
        Some(r) => r.new.files.clone(),
        None => files_of_points(&summary.points),
    };
    let files = files
        .iter()
        .map(|f| {
            file_page(f, |l| match by_line.get(&(f.path.as_str(), l.line)) {
                Some(p) => point_info(l, p, &dir),
                None => plain(l, Status::NoMarker),
            })
        })
        .collect();
    let page = Page {
        title: "mfppr cover find".into(),
        headlines: vec![
            summary.last_line(),
            format!(
                "{} markers, {} reached, {} tests run",
                summary.markers, summary.reached, summary.tests
            ),
        ],
        find: true,
        files,
    };
    write(page, Some(source_root), path)
}

/// With `--marked` there is no report: the new lines are those of the markers.
fn files_of_points(points: &[Point]) -> Vec<NewFile> {
    let mut files: BTreeMap<&str, Vec<NewLine>> = BTreeMap::new();
    for p in points {
        let lines = files.entry(p.file.as_str()).or_default();
        lines.extend(p.lines.iter().map(|&line| NewLine {
            line,
            count: 0,
            function: None,
        }));
    }
    files
        .into_iter()
        .map(|(path, mut lines)| {
            lines.sort_by_key(|l| l.line);
            lines.dedup_by_key(|l| l.line);
            NewFile {
                path: path.to_string(),
                lines,
            }
        })
        .collect()
}

fn plain(l: &NewLine, status: Status) -> LineInfo {
    LineInfo {
        status,
        function: l.function.clone(),
        marker: None,
        links: Vec::new(),
        check: None,
        why: String::new(),
    }
}

/// A marked line: its marker's status, links to the files `find` wrote for it that exist, and
/// its check with the reason.
fn point_info(l: &NewLine, p: &Point, dir: &Path) -> LineInfo {
    let mut links = Vec::new();
    let mut add = |label: String, target: Option<&Path>| {
        if let Some(link) = target.and_then(|t| link(label, t, dir)) {
            links.push(link);
        }
    };
    if let Some(t) = &p.source_test {
        add(format!("test {}", t.name), Some(&t.path));
    }
    add("reduced".into(), p.reduced.as_deref());
    if let Some(suite) = &p.suite_test {
        let name = suite.file_name().unwrap_or_default().to_string_lossy();
        add(format!("suite test {name}"), Some(suite));
        let stem = suite.file_stem().unwrap_or_default().to_string_lossy();
        let alone = suite.with_file_name(format!("{stem}.standalone.cpp"));
        add("standalone export".into(), Some(&alone));
    }
    let why: Vec<&str> = [p.check_reason.as_str(), p.note.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    LineInfo {
        status: Status::of(p),
        function: l.function.clone(),
        marker: Some(p.id.clone()),
        links,
        check: p.check.clone(),
        why: why.join("; "),
    }
}

/// A link to `target` when it is a regular file, relative to the page's directory `dir`.
fn link(label: String, target: &Path, dir: &Path) -> Option<Link> {
    Some(Link {
        label,
        href: crate::html::link(target, dir)?,
    })
}

/// The largest source file the page shows.
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// Read each file's source through the reader policy (a regular file inside `--source-root` once
/// symlinks are resolved, at most [`MAX_SOURCE_BYTES`]; a file that cannot be shown says why, in
/// one line), render the page and
/// write it atomically; never over a source file it shows.
fn write(mut page: Page, source_root: Option<&Path>, path: &Path) -> Result<()> {
    let page_id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    for f in &mut page.files {
        let file = match source_root {
            Some(root) => root.join(&f.key),
            None => PathBuf::from(&f.key),
        };
        let meta = std::fs::metadata(&file);
        if page_id.is_some() && meta.as_ref().ok().map(|m| (m.dev(), m.ino())) == page_id {
            anyhow::bail!(
                "--html {} is the source file {}, which mfppr never modifies; choose another --html",
                path.display(),
                file.display()
            );
        }
        f.source = match (meta, source_root) {
            (Err(e), _) => Source::Unreadable(format!("cannot read {}: {e}", file.display())),
            (Ok(_), Some(root)) if crate::input::inside_root(&file, root).is_none() => {
                Source::Unreadable(format!(
                    "not shown: {} leads outside --source-root (a symlink out of it)",
                    file.display()
                ))
            }
            (Ok(_), _) => {
                match crate::input::read_regular(&file, MAX_SOURCE_BYTES, "a source file") {
                    Ok(bytes) => Source::Text(String::from_utf8_lossy(&bytes).into_owned()),
                    Err(e) => Source::Unreadable(format!("not shown: {e:#}")),
                }
            }
        };
    }
    let html = render::page(&page);
    write_atomic(path, html.as_bytes())
        .with_context(|| format!("cannot write the page --html {}", path.display()))?;
    let lines: usize = page.files.iter().map(|f| f.lines.len()).sum();
    note(format!(
        "html: wrote {} ({} files, {lines} new lines, {} KB)",
        path.display(),
        page.files.len(),
        html.len().div_ceil(1024)
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::diff::new_lines::{NewLines, PartlyNew};

    fn report(root: &Path, files: Vec<(&str, Vec<u32>)>) -> NewLinesReport {
        NewLinesReport {
            new: NewLines {
                files: files
                    .into_iter()
                    .map(|(path, lines)| NewFile {
                        path: path.to_string(),
                        lines: lines
                            .into_iter()
                            .map(|line| NewLine {
                                line,
                                count: 1,
                                function: Some(format!("f{}<int>", line / 1000)),
                            })
                            .collect(),
                    })
                    .collect(),
            },
            partly: PartlyNew::default(),
            source_root: Some(root.to_path_buf()),
        }
    }

    #[test]
    fn hostile_names_and_sources_are_escaped_and_an_unreadable_file_is_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let name = "<script>alert(\"x\")<script>&'.h";
        let mut source = b"int a;\n// </td></tr><script>evil()</script> & \"q\"\n".to_vec();
        source.extend_from_slice(b"char *s = \"\xff\xfe\";\n");
        std::fs::write(dir.path().join(name), &source).unwrap();
        let page = dir.path().join("page.html");
        let r = report(
            dir.path(),
            vec![(name, vec![2, 3]), ("missing<b>.h", vec![1])],
        );
        write_report_page(&r, &page).unwrap();
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;script&gt;&amp;&#39;.h"));
        assert!(html.contains("// &lt;/td&gt;&lt;/tr&gt;&lt;script&gt;evil()"));
        assert!(html.contains("char *s = &quot;\u{FFFD}\u{FFFD}&quot;;"));
        assert!(html.contains("f0&lt;int&gt;"));
        let unreadable: Vec<&str> = html
            .lines()
            .filter(|l| l.contains("class=\"unreadable\""))
            .collect();
        assert_eq!(unreadable.len(), 1, "{html}");
        assert!(unreadable[0].contains("missing&lt;b&gt;.h: No such file"));
        // Both files are in the summary, and the readable one's lines are marked.
        assert!(html.contains("id=\"f0-L2\" data-status=\"new\""), "{html}");
        assert!(html.contains("id=\"f1\""));
    }

    #[test]
    fn ten_thousand_new_lines_collapse_what_lies_between_and_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=200_000)
            .map(|i| format!("    int value_{i} = compute({i});\n"))
            .collect();
        std::fs::write(dir.path().join("big.c"), &text).unwrap();
        let lines: Vec<u32> = (1..=10_000).map(|k| k * 20).collect();
        let page = dir.path().join("page.html");
        write_report_page(&report(dir.path(), vec![("big.c", lines)]), &page).unwrap();
        let html = std::fs::read_to_string(&page).unwrap();
        assert_eq!(html.matches("data-status=\"new\"").count(), 10_000);
        // 7 lines around each new line, one row for each run of 13 between.
        assert_eq!(html.matches("13 lines not shown").count(), 9_999);
        assert!(html.contains("16 lines not shown (1–16)"));
        assert!(html.contains("<td>    int value_199997 = "));
        assert!(!html.contains(" value_199996 "));
        assert!(
            html.len() < 10_000 * 700,
            "{} bytes for 10,000 new lines",
            html.len()
        );
        assert!(html.len() < text.len(), "no smaller than the source");
    }
}
