//! The HTML text of the campaign page: one self-contained document (inline CSS, one inline
//! script for the copy buttons, no external asset) with the summary (counts and a bar per group),
//! then one collapsible `<details>` section per group, then the tests not reduced.
//!
//! Every string from the journal or a test directory (test names, signatures, code, values,
//! messages) goes through [`escape`]; every link comes from [`crate::html::link`]. Nothing here
//! reads or writes a file.

use std::fmt::Write as _;

use super::curve;
use super::view::{Campaign, Code, Curve, GroupView, TestView};
use crate::html::{escape, escape_text};

/// Groups shown open; the others are collapsed to their heading.
pub(super) const OPEN_GROUPS: usize = 5;

const CSS: &str = "body{font-family:sans-serif;margin:1em 2em;color:#222;max-width:1100px}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.5em}h4{margin:.8em 0 .3em}
table{border-collapse:collapse}td,th{padding:2px 8px;vertical-align:top;text-align:left}
table.counts td,table.counts th{border:1px solid #ccc}td.n{text-align:right}
table.groups td{border-bottom:1px solid #eee}td.barcell{width:220px}
div.bar{background:#4a7fc1;height:12px;min-width:2px}
details.group{border:1px solid #ccc;border-radius:4px;margin:.6em 0;padding:.3em .8em}
details.group>summary{cursor:pointer;font-weight:bold}
p.words{margin:.4em 0}code.sig{font-weight:normal;background:#f4f4f4;padding:0 4px}
div.codehead{font-size:.9em;color:#444;margin-top:.5em}
button.copy{margin-left:1em;font-size:.85em}
pre.code{background:#f7f7f7;border:1px solid #ddd;padding:6px;max-height:28em;overflow:auto;
font-size:12px;tab-size:4}
table.members td{border-top:1px solid #eee;font-size:.92em}
tr.evidence td{border-top:none;padding-left:2em;color:#333}
tr.evidence ul{margin:0;padding-left:1em}table.values td{font-family:monospace;font-size:.9em}
span.badge{font-size:.8em;padding:0 5px;border-radius:3px;margin-left:.4em}
span.slipped{background:#f7b6b6}span.undecided{background:#ffd59e}
.stem{font-family:monospace}p.note{color:#555;font-size:.9em}
svg.curve polyline{fill:none;stroke:#4a7fc1;stroke-width:1.5}
svg.curve.ends polyline{stroke-dasharray:4 3;stroke:#999}";

/// The copy buttons: `navigator.clipboard` where the page may use it, else a selected textarea
/// and `execCommand('copy')` (a page opened from a file is not always a secure context).
const SCRIPT: &str = "document.addEventListener('click',function(e){
var b=e.target.closest('button.copy');if(!b)return;
var text=document.getElementById(b.getAttribute('data-target')).textContent;
function done(ok){b.textContent=ok?'copied':'select the code and copy it';}
function fallback(){var t=document.createElement('textarea');t.value=text;
t.setAttribute('readonly','');t.style.position='fixed';t.style.opacity='0';
document.body.appendChild(t);t.select();var ok=false;
try{ok=document.execCommand('copy');}catch(x){}document.body.removeChild(t);done(ok);}
if(navigator.clipboard&&window.isSecureContext){
navigator.clipboard.writeText(text).then(function(){done(true);},fallback);}else{fallback();}
});";

/// The whole page.
pub(super) fn page(c: &Campaign) -> String {
    let mut out = crate::html::head(&c.title, CSS);
    summary(&mut out, c);
    out.push_str("<h2>Groups</h2>\n");
    for (i, g) in c.groups.iter().enumerate() {
        group(&mut out, g, i < OPEN_GROUPS);
    }
    not_reduced(&mut out, &c.not_reduced);
    let _ = write!(out, "<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n");
    out
}

/// The counts, the bar per group and the note on curves.
fn summary(out: &mut String, c: &Campaign) {
    let n = &c.counts;
    let _ = writeln!(
        out,
        "<section id=\"summary\">\n<p class=\"headline\">{} tests, grouped by {}: {} group(s); \
         the tests took {:.0} s and {} check runs.</p>",
        c.tests,
        format!("{:?}", c.group_by).to_lowercase(),
        c.groups.len(),
        c.wall_secs,
        c.check_runs
    );
    out.push_str("<table class=\"counts\" id=\"counts\"><tr>");
    let cells = [
        ("tests", c.tests),
        ("reduced", n.reduced),
        ("not interesting", n.not_interesting),
        ("slipped", n.slipped),
        ("undecided", n.undecided),
        ("failed", n.failed),
        ("groups", c.groups.len()),
    ];
    for (label, _) in cells {
        let _ = write!(out, "<th>{label}</th>");
    }
    out.push_str("</tr>\n<tr>");
    for (label, count) in cells {
        let key = label.replace(' ', "-");
        let _ = write!(out, "<td class=\"n\" data-count=\"{key}\">{count}</td>");
    }
    out.push_str("</tr></table>\n");
    bars(out, &c.groups);
    curves_note(out, c);
    out.push_str("</section>\n");
}

/// One row per group: its number (a link to its section), its size as a bar, its signature.
fn bars(out: &mut String, groups: &[GroupView]) {
    let largest = groups
        .iter()
        .map(|g| g.members.len())
        .max()
        .unwrap_or(1)
        .max(1);
    out.push_str(
        "<table class=\"groups\" id=\"groups\">\n<thead><tr><th>group</th><th>tests</th>\
         <th></th><th>signature</th></tr></thead>\n<tbody>\n",
    );
    for g in groups {
        let size = g.members.len();
        let _ = writeln!(
            out,
            "<tr data-group=\"{id}\" data-size=\"{size}\"><td><a href=\"#g{id}\">{id}</a></td>\
             <td class=\"n\">{size}</td><td class=\"barcell\"><div class=\"bar\" \
             style=\"width:{:.1}%\"></div></td><td><code class=\"sig\">{}</code></td></tr>",
            100.0 * size as f64 / largest as f64,
            escape(&g.signature),
            id = g.id,
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Say which reduced tests' curves are only their ends, and why.
fn curves_note(out: &mut String, c: &Campaign) {
    let reduced = c.groups.iter().flat_map(|g| &g.members);
    let ends = reduced
        .clone()
        .filter(|t| matches!(t.curve, Curve::Ends(_)))
        .count();
    if ends > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\" id=\"curves-note\">{ends} of {} reduced tests have no per-step \
             curve in their stats.json (reduced by an older mfppr, or no stats file): their \
             dashed line joins the original's size to the result's, over the reduction's \
             check runs.</p>",
            reduced.count()
        );
    }
}

/// One group: its heading, its signature in words, its code and its members.
fn group(out: &mut String, g: &GroupView, open: bool) {
    let _ = writeln!(
        out,
        "<details class=\"group\" id=\"g{id}\" data-group=\"{id}\" data-size=\"{}\"{}>\n\
         <summary>group {id} · {} test(s) · <code class=\"sig\">{}</code></summary>\n\
         <p class=\"words\">{}</p>",
        g.members.len(),
        if open { " open" } else { "" },
        g.members.len(),
        escape(&g.signature),
        escape(&g.words),
        id = g.id,
    );
    code(out, g.id, &g.representative, &g.code);
    out.push_str(
        "<h4>Members</h4>\n<table class=\"members\">\n<thead><tr><th>test</th><th>bytes</th>\
         <th>check runs</th><th>curve</th><th>files</th></tr></thead>\n<tbody>\n",
    );
    for t in &g.members {
        member(out, t);
    }
    out.push_str("</tbody></table>\n</details>\n");
}

/// The representative's code with its copy button.
fn code(out: &mut String, id: usize, representative: &str, c: &Code) {
    let _ = writeln!(
        out,
        "<div class=\"codehead\">representative <span class=\"stem\">{}</span>: {}\
         <button type=\"button\" class=\"copy\" data-target=\"code-{id}\">copy</button></div>\n\
         <pre class=\"code\"><code id=\"code-{id}\" data-kind=\"{}\">{}</code></pre>",
        escape(representative),
        escape(&c.label),
        c.kind,
        escape_text(&c.text, true)
    );
}

/// A test's name with its slipped and undecided badges.
fn name(t: &TestView) -> String {
    let mut s = format!("<span class=\"stem\">{}</span>", escape(&t.stem));
    if t.slipped.is_some() {
        s.push_str("<span class=\"badge slipped\">slipped</span>");
    }
    if t.undecided.is_some() {
        s.push_str("<span class=\"badge undecided\">undecided</span>");
    }
    s
}

/// The links to a test's files.
fn links(t: &TestView) -> String {
    t.links
        .iter()
        .map(|(label, href)| format!("<a href=\"{}\">{label}</a>", escape(href)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A member's row, then its evidence.
fn member(out: &mut String, t: &TestView) {
    let _ = writeln!(
        out,
        "<tr class=\"member\"><td>{}</td><td class=\"n\">{} → {}</td><td class=\"n\">{}</td>\
         <td>{}</td><td>{}</td></tr>",
        name(t),
        t.bytes_before,
        t.bytes_after,
        t.runs,
        curve::svg(&t.curve),
        links(t)
    );
    out.push_str("<tr class=\"evidence\"><td colspan=\"5\"><ul>");
    let reasons = [("slipped", &t.slipped), ("undecided", &t.undecided)];
    for (what, why) in reasons {
        if let Some(why) = why {
            let _ = write!(out, "<li class=\"{what}\">{what}: {}</li>", escape(why));
        }
    }
    for line in &t.evidence {
        let _ = write!(out, "<li>{}</li>", escape(line));
    }
    if let (Some(m), None) = (&t.message, &t.slipped) {
        let _ = write!(out, "<li class=\"message\">note: {}</li>", escape(m));
    }
    out.push_str("</ul>");
    if !t.values.is_empty() {
        out.push_str("<table class=\"values\">");
        for (way, value) in &t.values {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>= {}</td></tr>",
                escape(way),
                escape(value)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</td></tr>\n");
}

/// The tests that were not reduced, with their outcome and why.
fn not_reduced(out: &mut String, tests: &[TestView]) {
    if tests.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h2>Not reduced</h2>\n<table class=\"members\" id=\"not-reduced\">\n<thead><tr>\
         <th>test</th><th>outcome</th><th>bytes</th><th>why</th><th>files</th></tr></thead>\n<tbody>"
    );
    for t in tests {
        let _ = writeln!(
            out,
            "<tr class=\"not-reduced\" data-outcome=\"{}\"><td>{}</td><td>{}</td>\
             <td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
            t.outcome,
            name(t),
            t.outcome.replace('_', " "),
            t.bytes_before,
            escape(t.message.as_deref().unwrap_or("")),
            links(t)
        );
    }
    out.push_str("</tbody></table>\n");
}
