//! The campaign page (issue 61) in a real browser: a small campaign with real g++ and
//! `interestingness/check-failure.py` (two merge-bug tests, one of them under a hostile name, and
//! a passing test) writes its page with `batch run --html`; `batch page`, `collect --html` and
//! `retriage --html` write the same bytes from the same journal; `explain` finds the spec from
//! the journaled flags alone; and headless Chromium's DOM of the page holds summary.json's groups
//! and sizes, each group's standalone export, live relative links only, and no markup from a
//! test's name. Skips without its tools unless `MFPPR_REQUIRE_TOOLS=1`.

use crate::common;

use std::path::Path;

use common::batch::{check_args, copy_tests};
use common::browser::{check_links, dump_dom, CHROMIUM};
use common::{assert_ok as ok, mfppr, require_tools, root};
use serde_json::Value;

/// A test name that is markup, quotes and a newline.
const HOSTILE: &str = "<script>alert(1)<img src=x onerror=alert(2)>\n\"q\" 'a' &amp;";

/// `(id, size)` of every `<details>` group of the DOM, in order.
fn dom_groups(dom: &str) -> Vec<(u64, u64)> {
    dom.split("<details class=\"group\"")
        .skip(1)
        .map(|g| {
            let attr = |name: &str| -> u64 {
                let at = g.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                g[at..at + g[at..].find('"').unwrap()].parse().unwrap()
            };
            (attr("data-group"), attr("data-size"))
        })
        .collect()
}

/// The DOM's checks against `summary.json` of `out`.
fn check_dom(dom: &str, out: &Path) {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let want: Vec<(u64, u64)> = summary["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["id"].as_u64().unwrap(), g["size"].as_u64().unwrap()))
        .collect();
    assert_eq!(dom_groups(dom), want, "groups and sizes");
    assert!(!want.is_empty());
    for (id, _) in &want {
        let code = format!("<code id=\"code-{id}\" data-kind=\"standalone\">");
        let at = dom
            .find(&code)
            .unwrap_or_else(|| panic!("group {id} has no standalone"));
        let text = &dom[at + code.len()..];
        assert!(
            text.starts_with("// Exported by mfppr") && text.contains("metalib::checks"),
            "group {id}: {}",
            &text[..200.min(text.len())]
        );
    }
    let tests = summary["tests"].as_u64().unwrap();
    assert!(dom.contains(&format!("data-count=\"tests\">{tests}<")));
    let reduced = summary["outcomes"]["reduced"].as_u64().unwrap() as usize;
    assert_eq!(dom.matches("class=\"curve steps\"").count(), reduced);
    assert_eq!(dom.matches("<tr class=\"not-reduced\"").count(), 1);
    // The hostile name is text: one script (the page's own), no image, no link of its own.
    assert_eq!(dom.matches("<script").count(), 1);
    assert!(!dom.contains("<img"), "markup from a test name");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;img src=x onerror=alert(2)&gt;"));
    let files = check_links(dom, out);
    assert!(files >= 3 * reduced, "{files} file links");
}

#[test]
fn the_campaign_page_renders_in_chromium_and_every_command_writes_the_same_bytes() {
    if !require_tools(&["g++", "python3", CHROMIUM]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = copy_tests(dir, &["t_iset_82", "t_iset_4"]);
    std::fs::copy(
        root().join("fixtures/campaign/t_iset_82.cpp"),
        inputs.join(format!("{HOSTILE}.cpp")),
    )
    .unwrap();
    let out = dir.join("out");
    let mut run: Vec<String> = ["batch", "run", inputs.to_str().unwrap()]
        .map(String::from)
        .to_vec();
    run.extend(check_args(
        &root().join("interestingness/check-failure.py"),
        &root().join("fixtures/iset/spec"),
    ));
    run.extend(
        [
            "-o",
            "out",
            "-j2",
            "--tests-at-once",
            "2",
            "--no-tail",
            "-q",
        ]
        .map(String::from),
    );
    run.extend(["--html", "out/index.html"].map(String::from));
    let run: Vec<&str> = run.iter().map(String::as_str).collect();
    ok("batch run --html", &mfppr(dir, &run));
    let page = std::fs::read(out.join("index.html")).unwrap();

    // From the journal alone, the same bytes whichever command writes it.
    ok(
        "page",
        &mfppr(dir, &["batch", "page", "out", "-o", "out/page.html"]),
    );
    let collect = ["batch", "collect", "out", "--html", "out/collect.html"];
    ok("collect", &mfppr(dir, &collect));
    let retriage = ["batch", "retriage", "out", "--html", "out/retriage.html"];
    ok("retriage", &mfppr(dir, &retriage));
    for other in ["page.html", "collect.html", "retriage.html"] {
        assert!(
            std::fs::read(out.join(other)).unwrap() == page,
            "{other} differs from the page of the run"
        );
    }
    // explain finds the spec from the journaled flags.
    let explained = ok(
        "explain",
        &mfppr(dir, &["batch", "explain", "1", "-o", "out"]),
    );
    assert!(
        explained.contains("// Exported by mfppr") && !explained.contains("(none:"),
        "{explained}"
    );
    // A page over a campaign file is refused.
    let refused = mfppr(dir, &["batch", "page", "out", "-o", "out/summary.json"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("give it a .html name"));

    check_dom(&dump_dom(&out.join("index.html"), dir), &out);
}
