//! The `--find` / `--reduce` / `--verify-gcov` pipeline of `mfppr cover`, after injection.
//!
//! 1. collect the tests (corpus or generator), run each against the marked library and choose
//!    the smallest passing test per marker ([`super::reach`]), written to `OUT/find.json`;
//! 2. reduce each chosen test toward its marker with the coverage-marker oracle, checks kept,
//!    into `OUT/<id>.cpp` (one marker at a time; each reduction uses `-j N` candidates at once).
//!    Each reduced test is run once more with `--run` to learn which markers it reaches; a later
//!    marker with the same source test that it reaches takes it as it is (copied to
//!    `OUT/<id>.cpp`, no second reduction): markers that share a test share its result, one
//!    reduction per distinct result;
//! 3. verify each reduced test with gcov against the original sources ([`super::verify`]): one
//!    coverage build and run per distinct text, which every marker it is the result of reads;
//! 4. with `--metamorphic`, right after step 1: choose each reached marker's test by metamorphic
//!    coverage ([`super::metamorphic`]): the smallest of the `--mc-tests` smallest tests reaching
//!    it whose MC holds its line ([`reach::mc_choice`]), else the smallest. Tests are analysed
//!    as the choices need them, `-j N` at once (isolated variants in `OUT/metamorphic/<test>/`,
//!    per-test results in `OUT/metamorphic.json`); the choice does not depend on N. The reduction
//!    of a metamorphic point keeps it metamorphic (the oracle gets `MC_PAIR=k` and asks that
//!    exactly one side of the pair `(r_0, r_k)` reaches the marker, splitting each candidate with
//!    `mfppr cover isolate`), and its reduced test is analysed again under gcov for that pair
//!    (`mc_kept`, isolated variants in `OUT/metamorphic/reduced-<id>/`).
//!
//! `OUT/summary.json` is rewritten after every point, so an interrupted run keeps what it did.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::metamorphic::{self, TestMc};
use super::reach::{self, Found, McChoice, McView, TestFile};
use super::summary::{FindSummary, Point};
use super::verify::{self, VerifyOptions};
use crate::atomic::write_atomic;
use crate::coverage::inject::Marker;
use crate::error::{exit_kind, ExitKind};
use crate::messages::{note, progress, warn};
use crate::reduce::{self, ReduceOptions};

pub use super::options::{PipelineOptions, ReduceStep, TestSource};

/// Run find, then (as asked) reduce and verify; see the module docs.
pub fn run(opts: &PipelineOptions) -> Result<FindSummary> {
    crate::interrupt::install()?;
    if opts.markers.is_empty() {
        note("find: no markers to reach");
        let summary = FindSummary {
            new_lines: opts.new_lines,
            markers: 0,
            tests: 0,
            reached: 0,
            reduced: 0,
            verified: 0,
            metamorphic: opts.metamorphic.as_ref().map(|_| 0),
            suite: None,
            points: Vec::new(),
        };
        summary.write(&opts.out)?;
        return Ok(summary);
    }
    let (mut summary, known, found) = find_points(opts)?;
    summary.write(&opts.out)?;
    if let Some(build) = &opts.metamorphic {
        choose_tests_by_mc(opts, build, &found, &mut summary)?;
        summary.write(&opts.out)?;
    }
    if let Some(step) = &opts.reduce {
        reduce_points(opts, step, &known, &mut summary)?;
        super::suite::check_points(opts, &mut summary)?;
        summary.write(&opts.out)?;
    }
    Ok(summary)
}

/// Collect and run the tests; the summary before any reduction, the known marker ids and the
/// runs.
fn find_points(opts: &PipelineOptions) -> Result<(FindSummary, BTreeSet<String>, Found)> {
    let tests = match &opts.source {
        TestSource::Corpus(dir) => reach::corpus(dir)?,
        TestSource::Generate { template, budget } => {
            progress(format!("generate: seeds 1..={budget}"));
            reach::generate(
                template,
                *budget,
                &opts.out.join("generated"),
                opts.run_timeout,
                opts.jobs,
            )?
        }
    };
    progress(format!(
        "find: running {} tests against {} (-j {})",
        tests.len(),
        opts.injected.display(),
        opts.jobs
    ));
    let known: BTreeSet<String> = opts.markers.iter().map(|m| m.id.clone()).collect();
    let found = reach::find(
        &tests,
        &opts.run,
        &opts.injected,
        &known,
        opts.run_timeout,
        opts.jobs,
    )?;
    write_found(&opts.out, &found)?;
    usable_runs(opts, &found)?;

    let mut summary = found_summary(opts, &found);
    summary.recount();
    note(format!(
        "find: {} of {} markers reached",
        summary.reached, summary.markers
    ));
    Ok((summary, known, found))
}

/// An error when no test passed against the marked library (with a command to try one by
/// hand); a warning when some did not.
fn usable_runs(opts: &PipelineOptions, found: &Found) -> Result<()> {
    let failing = found.runs.iter().filter(|r| !r.passed()).count();
    if failing == found.runs.len() {
        let first = &found.runs[0];
        return Err(crate::error::coded(
            ExitKind::Input,
            format!(
                "no test passed against the marked library (first: {}: {}); try one by hand: \
                 cd $(mktemp -d) && {}={} sh -c {}",
                first.test.name,
                first.note,
                reach::INJECTED_ENV,
                crate::oracle::shell_quote(&opts.injected.to_string_lossy()),
                crate::oracle::shell_quote(&super::shell::expand(
                    &opts.run,
                    &[("test", &first.test.path.to_string_lossy())]
                ))
            ),
        ));
    }
    if failing > 0 {
        let first = found
            .runs
            .iter()
            .find(|r| !r.passed())
            .map(|r| format!("{}: {}", r.test.name, r.note));
        warn(format!(
            "find: {failing} of {} tests did not pass and are not used (first: {}); see find.json",
            found.runs.len(),
            first.unwrap_or_default()
        ));
    }
    Ok(())
}

/// The summary after find: a point per marker, with how many tests reach it and the chosen one.
fn found_summary(opts: &PipelineOptions, found: &Found) -> FindSummary {
    FindSummary {
        new_lines: opts.new_lines,
        markers: opts.markers.len(),
        tests: found.runs.len(),
        reached: 0,
        reduced: 0,
        verified: 0,
        metamorphic: None,
        suite: None,
        points: opts
            .markers
            .iter()
            .map(|m| Point {
                id: m.id.clone(),
                file: m.file.clone(),
                line: m.line,
                lines: m.lines.clone(),
                reached_by: found.reached_by.get(&m.id).copied().unwrap_or(0),
                source_test: found.chosen.get(&m.id).cloned(),
                reduced: None,
                started_from: None,
                bytes_after: None,
                verified: None,
                metamorphic: None,
                chosen_because: String::new(),
                mc_pair: None,
                mc_kept: None,
                check: None,
                check_reason: String::new(),
                suite_test: None,
                note: String::new(),
            })
            .collect(),
    }
}

/// Per analysed test (by name) its metamorphic coverage, or why it could not be analysed.
type Analyses = BTreeMap<String, std::result::Result<TestMc, String>>;

/// Analyse `tests` (name → path) on a pool of `-j N` threads, each in its own directory below
/// `dir`; per test its analysis or why it failed, with notes and a warning said in name order.
fn analyse_tests(
    opts: &PipelineOptions,
    build: &VerifyOptions,
    dir: &Path,
    tests: &BTreeMap<String, PathBuf>,
) -> Result<Analyses> {
    progress(format!(
        "metamorphic: isolating the variants of {} tests (-j {})",
        tests.len(),
        opts.jobs
    ));
    let results = crate::pool::map(opts.jobs, "mfppr-metamorphic", tests, |(name, path)| {
        let sub = dir.join(name.replace(['/', '\\'], "_"));
        std::fs::create_dir_all(&sub)
            .with_context(|| format!("cannot create {}", sub.display()))?;
        Ok(metamorphic::analyse(path, &sub, build).map_err(|e| format!("{e:#}")))
    })?;
    let mut analyses = BTreeMap::new();
    for (name, analysis) in tests.keys().zip(results) {
        match &analysis {
            Ok(mc) => {
                for n in &mc.notes {
                    note(format!("metamorphic: {name}: {n}"));
                }
                note(format!(
                    "metamorphic: {name}: {} checked pair(s), {} MC lines ({:.1} s)",
                    mc.pairs.len(),
                    mc.mc_lines,
                    mc.seconds
                ));
            }
            Err(e) => warn(format!("metamorphic: {name}: not analysed: {e}")),
        }
        analyses.insert(name.clone(), analysis);
    }
    Ok(analyses)
}

/// Choose each reached point's test by metamorphic coverage (see the module docs) and mark it
/// `metamorphic (pair …)` or `executed only`, with the reason of the choice. `OUT/metamorphic.json`
/// holds every analysis.
fn choose_tests_by_mc(
    opts: &PipelineOptions,
    build: &VerifyOptions,
    found: &Found,
    summary: &mut FindSummary,
) -> Result<()> {
    let dir = opts.out.join("metamorphic");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let (analyses, choices) = analyse_until_chosen(opts, build, found, summary, &dir)?;
    record_choices(summary, choices, &analyses);
    write_analyses(&opts.out.join("metamorphic.json"), &analyses)
}

/// The analyses made and the choice for each reached point: tests are analysed in rounds, each
/// round the next test every undecided point needs ([`reach::mc_choice`]).
fn analyse_until_chosen(
    opts: &PipelineOptions,
    build: &VerifyOptions,
    found: &Found,
    summary: &FindSummary,
    dir: &Path,
) -> Result<(Analyses, BTreeMap<String, McChoice>)> {
    let reaching = reach::reaching(&found.runs);
    let mut analyses: Analyses = BTreeMap::new();
    let mut choices: BTreeMap<String, McChoice> = BTreeMap::new();
    loop {
        let mut wanted: BTreeMap<String, PathBuf> = BTreeMap::new();
        for p in &summary.points {
            let Some(candidates) = reaching.get(&p.id) else {
                continue;
            };
            if choices.contains_key(&p.id) {
                continue;
            }
            let view = |t: &TestFile| match analyses.get(&t.name) {
                None => McView::Unknown,
                Some(Err(_)) => McView::Failed,
                Some(Ok(mc)) => McView::Pairs(
                    mc.pairs_covering(&p.file, &p.lines)
                        .iter()
                        .map(|pair| pair.pair.clone())
                        .collect(),
                ),
            };
            match reach::mc_choice(candidates, opts.mc_tests, view) {
                Ok(choice) => {
                    choices.insert(p.id.clone(), choice);
                }
                Err(next) => {
                    wanted.insert(next.name.clone(), next.path.clone());
                }
            }
        }
        if wanted.is_empty() {
            return Ok((analyses, choices));
        }
        analyses.extend(analyse_tests(opts, build, dir, &wanted)?);
    }
}

/// Give each chosen point its test, its verdict (`metamorphic (pair …)`, `executed only`) and
/// the reason of the choice, and count the metamorphic points.
fn record_choices(
    summary: &mut FindSummary,
    mut choices: BTreeMap<String, McChoice>,
    analyses: &Analyses,
) {
    for p in &mut summary.points {
        let Some(choice) = choices.remove(&p.id) else {
            continue;
        };
        let verdict = if !choice.pairs.is_empty() {
            format!("metamorphic (pair {})", choice.pairs.join(", "))
        } else if analyses[&choice.test.name].is_err() {
            "unknown (not analysed)".to_string()
        } else {
            "executed only".to_string()
        };
        note(format!(
            "metamorphic {}: {} ({} bytes): {verdict}; {}",
            p.id, choice.test.name, choice.test.bytes, choice.reason
        ));
        p.mc_pair = choice.pairs.first().cloned();
        p.source_test = Some(choice.test);
        p.metamorphic = Some(verdict);
        p.chosen_because = choice.reason;
    }
    summary.metamorphic = Some(0);
    summary.recount();
    note(format!(
        "metamorphic: {} of {} reached markers are metamorphically covered",
        summary.metamorphic.unwrap_or(0),
        summary.reached
    ));
}

/// Write every analysis (or why it failed) to `path` (`OUT/metamorphic.json`).
fn write_analyses(path: &Path, analyses: &Analyses) -> Result<()> {
    let json: Vec<serde_json::Value> = analyses
        .iter()
        .map(|(name, a)| match a {
            Ok(mc) => serde_json::json!({"test": name, "analysis": mc}),
            Err(e) => serde_json::json!({"test": name, "error": e}),
        })
        .collect();
    let mut bytes =
        serde_json::to_vec_pretty(&json).context("cannot serialise metamorphic.json")?;
    bytes.push(b'\n');
    write_atomic(path, &bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// Whether one of `marker`'s lines is in `lines` (an MC under gcov).
fn holds(marker: &Marker, lines: &BTreeSet<metamorphic::Line>) -> bool {
    marker
        .lines
        .iter()
        .any(|&l| lines.contains(&(marker.file.clone(), l)))
}

/// `k` of a pair `r_0/r_k`.
fn pair_k(pair: &str) -> Option<usize> {
    pair.strip_prefix("r_0/r_")?.parse().ok()
}

/// A reduced test a later reduction of the same source test may start from.
struct Start {
    /// The source test's name.
    source: String,
    /// The marker it was reduced toward (its output is `OUT/<id>.cpp`).
    id: String,
    /// The markers it reaches (it passes).
    reached: BTreeSet<String>,
    /// Its size.
    bytes: u64,
    /// For a metamorphic reduction: `k` of its pair and the lines in that pair's MC (gcov).
    mc: Option<(usize, BTreeSet<metamorphic::Line>)>,
}

impl Start {
    /// It reaches `marker`, and keeps it in the MC of pair `k` when given: the reduction's
    /// oracle accepts it.
    fn fits(&self, source: &str, marker: &Marker, k: Option<usize>) -> bool {
        let in_mc = match (k, &self.mc) {
            (None, _) => true,
            (Some(k), Some((kept, lines))) => *kept == k && holds(marker, lines),
            (Some(_), None) => false,
        };
        self.source == source && self.reached.contains(&marker.id) && in_mc
    }
}

/// Reduce (and verify) every reached point, rewriting `OUT/summary.json` after each.
fn reduce_points(
    opts: &PipelineOptions,
    step: &ReduceStep,
    known: &BTreeSet<String>,
    summary: &mut FindSummary,
) -> Result<()> {
    let total = summary.reached;
    let mut done = 0;
    let mut starts: Vec<Start> = Vec::new();
    let mut verified = Verified::new();
    for i in 0..summary.points.len() {
        let Some(test) = summary.points[i].source_test.clone() else {
            continue;
        };
        done += 1;
        let marker = &opts.markers[i];
        // A metamorphic point keeps its line in the MC of this pair (with --metamorphic).
        let mc = summary.points[i].mc_pair.as_deref().and_then(pair_k);
        progress(format!(
            "reduce {} ({done}/{total}, {}:{}): {} ({} bytes){}",
            marker.id,
            marker.file,
            marker.line,
            test.name,
            test.bytes,
            mc.map(|k| format!(", kept metamorphic in r_0/r_{k}"))
                .unwrap_or_default()
        ));
        let start = starts.iter().find(|s| s.fits(&test.name, marker, mc));
        let point = &mut summary.points[i];
        let reduced = match start {
            Some(start) => {
                take_as_it_is(opts, point, marker, start, mc)?;
                None
            }
            None => Some(reduce_one(opts, step, marker, &test, mc)),
        };
        match reduced {
            None => {}
            Some(Ok((path, bytes))) => {
                let file = TestFile {
                    name: test.name.clone(),
                    path,
                    bytes,
                };
                starts.extend(reduced_point(opts, known, point, marker, file, mc)?);
            }
            Some(Err(e)) if exit_kind(&e) == ExitKind::Interrupted => {
                point.note = "interrupted".to_string();
                summary.recount();
                summary.write(&opts.out)?;
                return Err(crate::error::coded(
                    ExitKind::Interrupted,
                    format!(
                        "interrupted while reducing {}; its best result so far is in {}, and {} \
                         lists what was done; run again with a new --out to finish",
                        marker.id,
                        opts.out.join(format!("{}.cpp", marker.id)).display(),
                        opts.out.join("summary.json").display()
                    ),
                ));
            }
            Some(Err(e)) => {
                warn(format!("reduce {}: not reduced: {e:#}", marker.id));
                point.note = format!("not reduced: {e:#}");
            }
        }
        if let Some(v) = &opts.verify {
            verify_point(point, marker, v, &mut verified)?;
        }
        summary.recount();
        summary.write(&opts.out)?;
    }
    Ok(())
}

/// Give `point` the reduced test of `start` (same source test; it reaches `marker`, in the MC of
/// the point's pair `mc` when it has one), copied to `OUT/<id>.cpp` with its origin record.
fn take_as_it_is(
    opts: &PipelineOptions,
    point: &mut Point,
    marker: &Marker,
    start: &Start,
    mc: Option<usize>,
) -> Result<()> {
    let from = opts.out.join(format!("{}.cpp", start.id));
    let output = opts.out.join(format!("{}.cpp", marker.id));
    for (a, b) in [
        (from.clone(), output.clone()),
        (reduce::origin_path(&from), reduce::origin_path(&output)),
    ] {
        std::fs::copy(&a, &b)
            .with_context(|| format!("cannot copy {} to {}", a.display(), b.display()))?;
    }
    progress(format!(
        "reduce {}: {}'s reduced test reaches it already; taken as it is",
        marker.id, start.id
    ));
    point.started_from = Some(start.id.clone());
    point.mc_kept = mc.map(|_| true);
    point.bytes_after = Some(start.bytes);
    point.reduced = Some(output);
    Ok(())
}

/// Record in `point` the reduced test `file` of `marker` (named after its source test): run it
/// to learn which markers it reaches and, for a metamorphic point (pair `k` = `mc`), whether it
/// keeps the marker in the pair's MC. When it passes, it is a [`Start`] for later markers.
fn reduced_point(
    opts: &PipelineOptions,
    known: &BTreeSet<String>,
    point: &mut Point,
    marker: &Marker,
    file: TestFile,
    mc: Option<usize>,
) -> Result<Option<Start>> {
    let reduced = reach::run_test(&file, &opts.run, &opts.injected, known, opts.run_timeout)?;
    let kept = match (mc, &opts.metamorphic) {
        (Some(k), Some(build)) => Some((k, mc_after(opts, build, marker, &file.path, k)?)),
        _ => None,
    };
    point.mc_kept = kept.as_ref().map(|(_, lines)| holds(marker, lines));
    point.reduced = Some(file.path);
    point.bytes_after = Some(file.bytes);
    Ok(reduced.passed().then(|| Start {
        source: file.name,
        id: marker.id.clone(),
        reached: reduced.markers.into_iter().collect(),
        bytes: file.bytes,
        mc: kept,
    }))
}

/// The coverage runs made so far, by the test's text (its blake3 hash).
type Verified = BTreeMap<String, verify::CoveredRun>;

/// Verify `point`'s reduced test (if any) with gcov and record the outcome; a text verified
/// before is not built and run again.
fn verify_point(
    point: &mut Point,
    marker: &Marker,
    v: &VerifyOptions,
    verified: &mut Verified,
) -> Result<()> {
    let Some(path) = &point.reduced else {
        return Ok(());
    };
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let key = blake3::hash(&text).to_hex().to_string();
    if !verified.contains_key(&key) {
        verified.insert(key.clone(), verify::covered_run(path, v)?);
    }
    let outcome = verify::verification(&verified[&key], marker);
    note(format!(
        "verify {}: {}",
        marker.id,
        if outcome.verified {
            format!("yes (count {})", outcome.count)
        } else {
            format!("no: {}", outcome.note)
        }
    ));
    point.verified = Some(outcome.verified);
    if !outcome.verified {
        point.note = outcome.note;
    }
    Ok(())
}

/// The MC of pair `(r_0, r_k)` of the reduced test `path` of `marker`, under gcov (isolated
/// variants in `OUT/metamorphic/reduced-<id>/`), said in a note or, when the marker's line left
/// it, a warning. Empty when the pair could not be analysed (said too).
fn mc_after(
    opts: &PipelineOptions,
    build: &VerifyOptions,
    marker: &Marker,
    path: &Path,
    k: usize,
) -> Result<BTreeSet<metamorphic::Line>> {
    let dir = opts
        .out
        .join("metamorphic")
        .join(format!("reduced-{}", marker.id));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mc = match metamorphic::analyse_pairs(path, &dir, build, Some(&[k])) {
        Ok(mc) => mc,
        Err(e) => {
            warn(format!(
                "metamorphic {}: the reduced test cannot be analysed: {e:#}",
                marker.id
            ));
            return Ok(BTreeSet::new());
        }
    };
    let lines = mc.union();
    if holds(marker, &lines) {
        note(format!(
            "metamorphic {}: the reduced test keeps it in the MC of r_0/r_{k} (gcov)",
            marker.id
        ));
    } else {
        let why = mc.notes.join("; ");
        warn(format!(
            "metamorphic {}: the reduced test does not keep it in the MC of r_0/r_{k} (gcov){}",
            marker.id,
            if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            }
        ));
    }
    Ok(lines)
}

fn write_found(out: &Path, found: &Found) -> Result<()> {
    let path = out.join("find.json");
    let mut json = serde_json::to_vec_pretty(found).context("cannot serialise find.json")?;
    json.push(b'\n');
    write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))
}

/// Reduce `test` toward `marker` into `OUT/<id>.cpp`, keeping the marker in the MC of the pair
/// `(r_0, r_k)` when `mc` is `Some(k)`; the output path and its size.
fn reduce_one(
    opts: &PipelineOptions,
    step: &ReduceStep,
    marker: &Marker,
    test: &TestFile,
    mc: Option<usize>,
) -> Result<(PathBuf, u64)> {
    let output = opts.out.join(format!("{}.cpp", marker.id));
    let mut includes = vec![opts.injected.to_string_lossy().into_owned()];
    includes.extend(
        step.include_dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned()),
    );
    let mut extra_env = vec![
        ("MARKER_ID".to_string(), marker.id.clone()),
        ("MFPPR_INCLUDES".to_string(), includes.join(":")),
    ];
    if let Some(flags) = &step.cxxflags {
        extra_env.push(("CXXFLAGS".to_string(), flags.clone()));
    }
    if let Some(k) = mc {
        extra_env.push(("MC_PAIR".to_string(), k.to_string()));
        extra_env.push((
            "MFPPR_EXE".to_string(),
            step.mfppr.to_string_lossy().into_owned(),
        ));
    }
    if let Some(run) = &step.run {
        extra_env.push(("MFPPR_RUN".to_string(), run.clone()));
        extra_env.push((
            reach::INJECTED_ENV.to_string(),
            opts.injected.to_string_lossy().into_owned(),
        ));
    }
    let mut ro = ReduceOptions::new(&test.path, &step.check);
    ro.output = Some(output);
    ro.include_dirs = step.include_dirs.clone();
    ro.include_dirs.push(step.source_root.clone());
    ro.keep_checks = true;
    // What is kept is a marker reached, not a failing check: the check cut has nothing to read.
    ro.check_cut = false;
    ro.timeout = step.timeout;
    ro.jobs = opts.jobs.max(1);
    ro.extra_env = extra_env;
    ro.quiet = true;
    let outcome = reduce::reduce(&ro)?;
    note(format!("reduce {}: {}", marker.id, outcome.summary()));
    Ok((outcome.output, outcome.bytes_after))
}
