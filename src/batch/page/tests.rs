//! The campaign page from hand-made journals: hostile names escaped, the same bytes twice, the
//! slipped and undecided shown as such, and 2,000 tests in bounded time and size.

use std::path::{Path, PathBuf};

use super::*;
use crate::batch::journal::Journal;
use crate::batch::value_record::{ValueEvidence, ValueRecord};

/// A reduced record of `stem` in `out`, localised to `culprit` (undecided when empty), its
/// reduced test and stats file written.
fn reduced(out: &Path, stem: &str, culprit: &[&str], curve: bool) -> Record {
    let dir = out.join(stem);
    std::fs::create_dir_all(&dir).unwrap();
    let output = dir.join(format!("{stem}.reduced.cpp"));
    std::fs::write(
        &output,
        format!("int main() {{ /* {stem} </code></pre> */ }}\n"),
    )
    .unwrap();
    let stats = if curve {
        r#"{"oracle_calls": 9, "curve": [[3, 600], [7, 200]]}"#
    } else {
        r#"{"oracle_calls": 9}"#
    };
    std::fs::write(dir.join("stats.json"), stats).unwrap();
    std::fs::write(dir.join(crate::batch::campaign::RESULT), "{}").unwrap();
    let mut r = Record::new(
        out.join("in").join(format!("{stem}.cpp")),
        stem.into(),
        1000,
        Outcome::Reduced,
    );
    r.bytes_after = 100;
    r.oracle_calls = 9;
    r.triage_calls = 2;
    r.wall_secs = 1.25;
    r.failure = Some("check_equal".into());
    r.output = Some(output);
    r.triage.value = Some(ValueRecord {
        failure: Some("check_equal".into()),
        culprit: culprit.iter().map(|c| c.to_string()).collect(),
        evidence: (!culprit.is_empty()).then(|| ValueEvidence {
            place: "mr_<b>".into(),
            call: "iset::unite(a, \"b\")".into(),
            family: "relations::union".into(),
            how: "differs from the other ways <i>".into(),
            operands: vec!["{1, 2}".into()],
            values: vec![("call".into(), "<script>x</script>".into())],
            differs_from: vec![],
            ..ValueEvidence::default()
        }),
        undecided: culprit
            .is_empty()
            .then(|| "no probe differs <u>".to_string()),
        probes: 4,
        runs: 1,
        ..ValueRecord::default()
    });
    triage::sign_by_value(&mut r);
    r
}

/// Journal `records` in `out` and write their summary.
fn campaign_dir(out: &Path, records: &[Record]) {
    let mut journal = Journal::open(out).unwrap();
    for r in records {
        journal.append(r).unwrap();
    }
    let summary = triage::summarise(records, GroupBy::Value);
    triage::write_summary(out, &summary).unwrap();
}

fn page_of(out: &Path, page: &Path) -> String {
    write(out, page, &ReduceOptions::new("", "")).unwrap();
    std::fs::read_to_string(page).unwrap()
}

#[test]
fn hostile_names_and_values_are_escaped_and_the_page_is_the_same_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("camp");
    std::fs::create_dir_all(out.join("in")).unwrap();
    let hostile = "<script>alert(1)<img src=x onerror=y> \"q\" 'a' &amp;\nnl";
    let mut records = vec![
        reduced(&out, hostile, &["iset::unite"], true),
        reduced(&out, "plain", &["iset::unite"], false),
        reduced(&out, "lost", &[], true),
    ];
    // A slipped result; a failed one whose input's name holds markup (a name that is not UTF-8
    // never reaches the journal: `discover` refuses it, and JSON cannot hold it); a reduced test
    // that is not UTF-8.
    records[1].slip.slip_suspect = Some(true);
    records[1].message = Some("kept <em>".into());
    std::fs::write(
        out.join("lost/lost.reduced.cpp"),
        b"int main() { return '\xff'; } // </pre>\n",
    )
    .unwrap();
    let bad = out.join("in").join("bad\"<#?.cpp");
    std::fs::write(&bad, "x").unwrap();
    let mut failed = Record::new(bad, "bad".into(), 1, Outcome::OracleError);
    failed.message = Some("cannot run <check>".into());
    failed.sign.signature = "oracle_error".into();
    records.push(failed);
    campaign_dir(&out, &records);
    let page = tmp.path().join("page.html");
    let html = page_of(&out, &page);
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the page's own: {html}"
    );
    for active in [
        "<img",
        "<b>",
        "<i>",
        "<u>",
        "<em>",
        "<check>",
        "</code></pre> */",
    ] {
        assert!(!html.contains(active), "{active} in {html}");
    }
    assert!(html.contains(
        "&lt;script&gt;alert(1)&lt;img src=x onerror=y&gt; &quot;q&quot; &#39;a&#39; \
         &amp;amp;\u{FFFD}nl"
    ));
    assert!(
        html.contains("href=\"camp/in/bad%22%3C%23%3F.cpp\""),
        "{html}"
    );
    assert!(
        html.contains("return &#39;\u{FFFD}&#39;; } // &lt;/pre&gt;"),
        "{html}"
    );
    assert!(
        html.contains("return &#39;\u{FFFD}&#39;; } // &lt;/pre&gt;"),
        "{html}"
    );
    assert!(html.contains("href=\"camp/%3Cscript%3Ealert%281%29%3Cimg%20src%3Dx"));
    assert!(html.contains("<li class=\"slipped\">slipped: the original still fails"));
    assert!(html.contains("(kept &lt;em&gt;)"));
    assert!(html.contains("<li class=\"undecided\">undecided: no probe differs &lt;u&gt;"));
    assert!(
        html.contains("data-count=\"slipped\">1<") && html.contains("data-count=\"failed\">1<")
    );
    assert!(html.contains("id=\"curves-note\">1 of 3 reduced tests"));
    assert!(
        !html.contains(&tmp.path().display().to_string()),
        "no absolute path"
    );
    // The same journal, the same bytes; a link only to a file that exists.
    assert_eq!(page_of(&out, &page), html);
    std::fs::remove_file(out.join("plain/stats.json")).unwrap();
    let again = page_of(&out, &page);
    assert!(!again.contains("camp/plain/stats.json") && html.contains("camp/plain/stats.json"));
}

#[test]
fn two_thousand_tests_stay_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("big");
    std::fs::create_dir_all(&out).unwrap();
    let records: Vec<Record> = (0..2000)
        .map(|i| {
            let op = format!("iset::op{}", i % 40);
            let culprit: &[&str] = if i % 100 == 0 { &[] } else { &[op.as_str()] };
            reduced(&out, &format!("t{i:04}"), culprit, true)
        })
        .collect();
    campaign_dir(&out, &records);
    let began = std::time::Instant::now();
    let html = page_of(&out, &tmp.path().join("page.html"));
    assert!(began.elapsed().as_secs() < 30, "{:?}", began.elapsed());
    assert_eq!(html.matches("<details class=\"group\"").count(), 40 + 20);
    assert_eq!(html.matches("<tr class=\"member\"").count(), 2000);
    assert_eq!(html.matches("<details class=\"group\" id=\"g").count(), 60);
    assert_eq!(html.matches(" open>").count(), render::OPEN_GROUPS);
    assert!(html.len() < 2000 * 3_000, "{} bytes", html.len());
}

#[test]
fn the_page_lies_nowhere_the_campaign_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("camp");
    let inputs = tmp.path().join("in");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&inputs).unwrap();
    let refused = |path: PathBuf| {
        format!(
            "{:#}",
            target(&path, "-o", &out, std::slice::from_ref(&inputs)).unwrap_err()
        )
    };
    assert!(refused(out.join("summary.json")).contains("give it a .html name"));
    assert!(refused(inputs.join("page.html")).contains("lies in INPUT"));
    assert!(refused(out.clone()).contains("choose another -o"));
    assert!(target(
        &out.join("index.html"),
        "--html",
        &out,
        std::slice::from_ref(&inputs)
    )
    .is_ok());
}
