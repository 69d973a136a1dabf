//! The HTML text of the coverage page: one self-contained document (inline CSS, no script, no
//! external asset) with the summary tables, a legend and each file's source, the new lines marked
//! by status and long stretches without new lines collapsed into one "N lines not shown" row.
//!
//! Everything that comes from outside (source text, file names, function names, check reasons)
//! goes through [`escape`]; every link through [`crate::html::href`]. Nothing here reads or writes a file.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{FilePage, LineInfo, Page, Source, Status};
use crate::html::escape;

/// Lines shown before and after each new line.
pub(super) const CONTEXT: u32 = 3;
/// A run of lines without new lines this long or shorter is shown rather than collapsed.
const MIN_GAP: u32 = 3;

const CSS: &str = "body{font-family:sans-serif;margin:1em 2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.5em}h3{font-size:1.05em;margin:1.2em 0 .3em}
table{border-collapse:collapse}
table.summary td,table.summary th{border:1px solid #ccc;padding:2px 8px}
table.summary td.n{text-align:right}
table.summary tr.function td:first-child{padding-left:2em;font-family:monospace}
table.summary tr.total td{font-weight:bold}
table.src{width:100%;font-family:monospace;font-size:13px}
table.src td{padding:0 6px;vertical-align:top}
table.src td:first-child{text-align:right;color:#888;user-select:none;border-right:1px solid #ccc}
table.src td:nth-child(2){white-space:pre;tab-size:4}
table.src td:nth-child(3){font-family:sans-serif;font-size:11px;color:#333}
table.src tr.gap td{background:#f0f0f0;color:#666;font-style:italic;text-align:center;white-space:normal}
p.unreadable{color:#a00}
ul.legend{list-style:none;padding:0}ul.legend li{display:inline-block;margin-right:1em}
ul.legend span{display:inline-block;padding:0 6px}
.st-new{background:#fff3b0}.st-checked-metamorphic{background:#b7e4b0}
.st-checked-value{background:#d4edc9}.st-executed-only{background:#ffd59e}
.st-not-checked{background:#cfe3ff}.st-unreached{background:#f7b6b6}.st-no-marker{background:#e2e2e2}";

/// The whole page.
pub(super) fn page(p: &Page) -> String {
    let mut out = crate::html::head(&p.title, CSS);
    for line in &p.headlines {
        let _ = writeln!(out, "<p class=\"headline\">{}</p>", escape(line));
    }
    summary(&mut out, p);
    legend(&mut out, p);
    out.push_str("<h2>Sources</h2>\n");
    for (i, f) in p.files.iter().enumerate() {
        file(&mut out, i, f);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The statuses counted in the summary, in column order.
fn columns(p: &Page) -> &'static [Status] {
    if p.find {
        &[
            Status::CheckedMetamorphic,
            Status::CheckedValue,
            Status::ExecutedOnly,
            Status::Reached,
            Status::Unreached,
            Status::NoMarker,
        ]
    } else {
        &[]
    }
}

/// Line counts per status of some lines.
fn counts<'a>(lines: impl Iterator<Item = &'a LineInfo>) -> (usize, BTreeMap<Status, usize>) {
    let mut total = 0;
    let mut by = BTreeMap::new();
    for l in lines {
        total += 1;
        *by.entry(l.status).or_insert(0) += 1;
    }
    (total, by)
}

fn count_cells(out: &mut String, p: &Page, total: usize, by: &BTreeMap<Status, usize>) {
    let _ = write!(out, "<td class=\"n\" data-col=\"new\">{total}</td>");
    if p.find {
        let reached: usize = Status::REACHED
            .iter()
            .map(|s| by.get(s).copied().unwrap_or(0))
            .sum();
        let _ = write!(out, "<td class=\"n\" data-col=\"reached\">{reached}</td>");
    }
    for s in columns(p) {
        let _ = write!(
            out,
            "<td class=\"n\" data-col=\"{}\">{}</td>",
            s.key(),
            by.get(s).copied().unwrap_or(0)
        );
    }
}

/// The summary table: one row per file, one per function under it, and the total.
fn summary(out: &mut String, p: &Page) {
    out.push_str("<h2>Summary</h2>\n<table class=\"summary\" id=\"summary\">\n<thead><tr><th>file / function</th><th>new lines</th>");
    if p.find {
        out.push_str("<th>reached</th>");
    }
    for s in columns(p) {
        let _ = write!(out, "<th>{}</th>", s.label());
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, f) in p.files.iter().enumerate() {
        let (total, by) = counts(f.lines.values());
        let _ = write!(
            out,
            "<tr class=\"file\"><td><a href=\"#f{i}\">{}</a></td>",
            escape(&f.key)
        );
        count_cells(out, p, total, &by);
        out.push_str("</tr>\n");
        let mut functions: BTreeMap<&str, Vec<&LineInfo>> = BTreeMap::new();
        for l in f.lines.values() {
            let name = l.function.as_deref().unwrap_or("(no function)");
            functions.entry(name).or_default().push(l);
        }
        for (name, lines) in functions {
            let (total, by) = counts(lines.into_iter());
            let _ = write!(out, "<tr class=\"function\"><td>{}</td>", escape(name));
            count_cells(out, p, total, &by);
            out.push_str("</tr>\n");
        }
    }
    let (total, by) = counts(p.files.iter().flat_map(|f| f.lines.values()));
    out.push_str("</tbody>\n<tfoot><tr class=\"total\"><td>total</td>");
    count_cells(out, p, total, &by);
    out.push_str("</tr></tfoot>\n</table>\n");
}

fn legend(out: &mut String, p: &Page) {
    out.push_str("<ul class=\"legend\">");
    let shown: &[Status] = if p.find { columns(p) } else { &[Status::New] };
    for s in shown {
        let _ = write!(
            out,
            "<li><span class=\"{}\">{}</span> {}</li>",
            s.class(),
            s.label(),
            s.meaning()
        );
    }
    out.push_str("</ul>\n");
}

/// One file: its heading, then its source with the new lines marked and long stretches
/// without new lines collapsed; or one line saying why the source cannot be shown.
fn file(out: &mut String, i: usize, f: &FilePage) {
    let _ = writeln!(
        out,
        "<section class=\"file\" id=\"f{i}\">\n<h3>{} <small>({} new lines)</small></h3>",
        escape(&f.key),
        f.lines.len()
    );
    match &f.source {
        Source::Unreadable(why) => {
            let _ = writeln!(out, "<p class=\"unreadable\">{}</p>", escape(why));
        }
        Source::Text(text) => source(out, i, f, text),
    }
    out.push_str("</section>\n");
}

fn source(out: &mut String, i: usize, f: &FilePage, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    let last = (lines.len() as u32).max(f.lines.keys().next_back().copied().unwrap_or(0));
    out.push_str("<table class=\"src\">\n");
    let mut n = 1;
    for &new in f.lines.keys() {
        let from = new.saturating_sub(CONTEXT).max(n);
        if from > n {
            gap(out, &lines, i, f, n, from - 1);
        }
        let to = new.saturating_add(CONTEXT).min(last);
        for l in from..=to {
            row(out, &lines, i, f, l);
        }
        n = n.max(to + 1);
    }
    if n <= last {
        gap(out, &lines, i, f, n, last);
    }
    out.push_str("</table>\n");
}

/// Lines `from..=to`, which hold no new line: shown when few, else one row that says how many.
fn gap(out: &mut String, lines: &[&str], i: usize, f: &FilePage, from: u32, to: u32) {
    if to + 1 - from <= MIN_GAP {
        for l in from..=to {
            row(out, lines, i, f, l);
        }
        return;
    }
    let _ = writeln!(
        out,
        "<tr class=\"gap\"><td></td><td colspan=\"2\">{} lines not shown ({from}–{to})</td></tr>",
        to + 1 - from
    );
}

fn row(out: &mut String, lines: &[&str], i: usize, f: &FilePage, l: u32) {
    let code = (l as usize)
        .checked_sub(1)
        .and_then(|k| lines.get(k))
        .copied()
        .unwrap_or("");
    match f.lines.get(&l) {
        None => {
            let _ = writeln!(out, "<tr><td>{l}</td><td>{}</td></tr>", escape(code));
        }
        Some(info) => {
            let _ = write!(
                out,
                "<tr class=\"new {}\" id=\"f{i}-L{l}\" data-status=\"{}\"><td>{l}</td><td>{}</td>\
                 <td><span title=\"{}\">{}</span>",
                info.status.class(),
                info.status.key(),
                escape(code),
                escape(&info.why),
                escape(info.check.as_deref().unwrap_or(info.status.label()))
            );
            if let Some(m) = &info.marker {
                let _ = write!(out, " · {}", escape(m));
            }
            for link in &info.links {
                let _ = write!(
                    out,
                    " · <a href=\"{}\">{}</a>",
                    escape(&link.href),
                    escape(&link.label)
                );
            }
            out.push_str("</td></tr>\n");
        }
    }
}
