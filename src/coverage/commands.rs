//! `mfppr cover` as library calls, one per subcommand, mirroring `crate::reduce::reduce`:
//! [`run_report`] (load, unify paths, diff, lcov), [`run_inject`] (report, then markers),
//! [`run_restore`] and [`run_find`] (report, markers in a copy, then [`super::find::pipeline::run`]).
//! They take option structs, print notes through [`crate::messages`] and return what the command
//! prints on stdout; the command line only turns flags into options.
//!
//! Owns the order of the steps and the notes between them, and the `--build` of a marked copy;
//! each step's logic stays in its folder ([`super::read`], [`super::diff`], [`super::inject`](mod@super::inject),
//! [`super::find`]). Prints nothing on stdout itself.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::diff::new_lines::{self, Filters};
use super::diff::{report, NewLinesReport};
use super::find::pipeline::{self, PipelineOptions, ReduceStep, TestSource};
use super::find::summary::FindSummary;
use super::find::verify::{self, VerifyOptions};
use super::html::{self, PageTarget};
use super::inject::manifest::{self, RestoreReport};
use super::inject::{self, InjectOptions, InjectTarget, Injection, Marker, MarkerKind};
use super::paths::absolute;
use super::read::load::{self, LoadOptions};
use crate::error::{coded, ExitKind};
use crate::messages::{note, warn};

/// What to diff: the coverage inputs and how to key and filter them.
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// Coverage of the existing test suite (files or directories).
    pub suite: Vec<PathBuf>,
    /// Coverage of the fuzzer's tests.
    pub fuzz: Vec<PathBuf>,
    /// Library source root (`--source-root`).
    pub source_root: Option<PathBuf>,
    /// `--include` / `--exclude`.
    pub filters: Filters,
    /// Accept suite and fuzz coverage that share no file (`--allow-disjoint`).
    pub allow_disjoint: bool,
    /// Also write lcov tracefiles into this directory (`--lcov DIR`: suite.info, fuzz.info,
    /// new.info); a path ending in `.info` is the deprecated form, the new lines alone.
    pub lcov: Option<PathBuf>,
}

/// Load both runs, diff them and write `--lcov`.
pub fn run_report(opts: &ReportOptions) -> Result<NewLinesReport> {
    let source_root = match &opts.source_root {
        Some(r) if r.exists() && !r.is_dir() => {
            return Err(coded(
                ExitKind::Input,
                format!("--source-root {} is not a directory", r.display()),
            ))
        }
        Some(r) => Some(absolute(r)),
        None => None,
    };
    let load_opts = LoadOptions {
        source_root: source_root.clone(),
    };
    let suite = load::load(&opts.suite, &load_opts).context("loading --suite coverage")?;
    let fuzz = load::load(&opts.fuzz, &load_opts).context("loading --fuzz coverage")?;
    let (suite, fuzz) = match &source_root {
        Some(root) => {
            let outside: BTreeSet<&String> = suite.outside.iter().chain(&fuzz.outside).collect();
            explain_outside(&outside, root);
            (suite.coverage, fuzz.coverage)
        }
        None => {
            let (mut suite, mut fuzz) = (suite.coverage, fuzz.coverage);
            explain_unified(&load::unify_relative_keys(&mut [&mut suite, &mut fuzz]));
            (suite, fuzz)
        }
    };
    let new = if opts.allow_disjoint {
        new_lines::new_lines_disjoint(&suite, &fuzz, &opts.filters)?
    } else {
        new_lines::new_lines(&suite, &fuzz, &opts.filters)?
    };
    if let Some(out) = &opts.lcov {
        report::write_lcov(
            out,
            &suite,
            &fuzz,
            &new,
            source_root.as_deref(),
            &opts.filters,
        )?;
    }
    let partly = new_lines::partly_new_lines(&suite, &fuzz, &opts.filters);
    Ok(NewLinesReport {
        new,
        partly,
        source_root,
    })
}

/// How many files the coverage names outside `root`, and a few of them: they are left out of the
/// report (and never marked).
fn explain_outside(outside: &BTreeSet<&String>, root: &Path) {
    if outside.is_empty() {
        return;
    }
    let shown: Vec<&str> = outside.iter().take(3).map(|s| s.as_str()).collect();
    note(format!(
        "coverage: {} file(s) outside --source-root {} left out ({}{}); give a --source-root that \
         contains them to report them",
        outside.len(),
        root.display(),
        shown.join(", "),
        if outside.len() > shown.len() {
            ", …"
        } else {
            ""
        }
    ));
}

fn explain_unified(u: &load::Unified) {
    if let Some((rel, abs)) = u.merged.first() {
        note(format!(
            "coverage: {} relative path(s) read as the absolute path ending with them (e.g. {rel} \
             as {abs}); pass --source-root to key paths explicitly",
            u.merged.len()
        ));
    }
    if let Some(rel) = u.ambiguous.first() {
        warn(format!(
            "coverage: {} relative path(s) end several absolute paths (e.g. {rel}) and may be \
             counted under two names; pass --source-root",
            u.ambiguous.len()
        ));
    }
}

/// `cover inject`: the report, then markers in a copy or in place.
#[derive(Clone, Debug)]
pub struct InjectRunOptions {
    /// What to diff.
    pub report: ReportOptions,
    /// What a marker does.
    pub kind: MarkerKind,
    /// A copy (needs a source root) or in place (with a manifest).
    pub target: InjectTarget,
    /// Where to write `markers.json` (default: in the copy, or next to the manifest).
    pub markers_path: Option<PathBuf>,
    /// The user's build command, run once with `sh -c` in the marked copy (`--build`).
    pub build: Option<String>,
}

/// How long `--build` may run.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3 * 3600);

/// Run the report and inject markers for its new lines.
pub fn run_inject(opts: &InjectRunOptions) -> Result<(NewLinesReport, Injection)> {
    let Some(root) = &opts.report.source_root else {
        return Err(coded(
            ExitKind::Usage,
            match opts.target {
                InjectTarget::Copy(_) => "--inject-into needs --source-root (the tree to copy)",
                InjectTarget::InPlace { .. } => {
                    "--in-place needs --source-root (only files under it are edited)"
                }
            },
        ));
    };
    let root = absolute(root);
    let report = run_report(&opts.report)?;
    let injection = inject_report(&report, &root, opts)?;
    if let Some(build) = &opts.build {
        build_marked(build, &opts.target, &root)?;
    }
    Ok((report, injection))
}

/// Run the user's build command once in the marked tree; a failure is an error that says the
/// original sources are untouched (a copy) or how to restore them (in place).
fn build_marked(build: &str, target: &InjectTarget, source_root: &Path) -> Result<()> {
    let (dir, untouched) = match target {
        InjectTarget::Copy(dir) => (
            absolute(dir),
            "the original sources are untouched".to_string(),
        ),
        InjectTarget::InPlace { manifest } => (
            source_root.to_path_buf(),
            format!(
                "the sources are still marked: `mfppr cover restore {}` puts them back",
                manifest.display()
            ),
        ),
    };
    note(format!("build: `{build}` in {}", dir.display()));
    let ran = super::find::shell::run(build, &dir, &[], BUILD_TIMEOUT)?;
    if !ran.passed() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "--build `{build}` failed in the marked tree {} ({}): {}; {untouched}; fix the \
                 command and run it there by hand, then `find --marked {}`",
                dir.display(),
                ran.describe(),
                ran.last_line(),
                dir.display()
            ),
        ));
    }
    note(format!("build: done in {:.1} s", ran.elapsed.as_secs_f64()));
    Ok(())
}

fn inject_report(
    report: &NewLinesReport,
    root: &Path,
    opts: &InjectRunOptions,
) -> Result<Injection> {
    let inj = inject::inject(
        &report.new,
        &InjectOptions {
            source_root: root.to_path_buf(),
            kind: opts.kind,
            target: opts.target.clone(),
            markers_path: opts.markers_path.clone(),
        },
    )?;
    let files: BTreeSet<&PathBuf> = inj.markers.iter().map(|m| &m.path).collect();
    note(format!(
        "injected {} markers into {} files; markers listed in {}",
        inj.markers.len(),
        files.len(),
        inj.markers_file.display()
    ));
    if let InjectTarget::InPlace { manifest } = &opts.target {
        note(format!(
            "undo with: mfppr cover restore {}",
            manifest.display()
        ));
    }
    if let Some(c) = &inj.copy {
        note(format!(
            "copied {} source files ({} KB, file times kept); left out {} build outputs ({} KB)",
            c.copied,
            c.copied_bytes / 1024,
            c.left_out,
            c.left_out_bytes / 1024
        ));
    }
    for s in &inj.skipped {
        note(format!("skipped {}:{}: {}", s.file, s.line, s.reason));
    }
    note(inj.accounting());
    Ok(inj)
}

/// `cover restore`: put back every file of an in-place injection and remove the temporary files
/// an interrupted write left beside them.
pub fn run_restore(manifest_path: &Path) -> Result<RestoreReport> {
    let r = manifest::restore(manifest_path)?;
    note(format!(
        "restored {} files ({} already original) from {}",
        r.restored.len(),
        r.unchanged.len(),
        manifest_path.display()
    ));
    if !r.leftovers.is_empty() {
        note(format!(
            "removed {} temporary files of an interrupted write (e.g. {})",
            r.leftovers.len(),
            r.leftovers[0].display()
        ));
    }
    Ok(r)
}

/// How `cover find` reduces each chosen test.
#[derive(Clone, Debug, Default)]
pub struct ReduceSettings {
    /// The oracle: a script or `builtin:NAME` (default: `builtin:coverage-marker`).
    pub check: Option<PathBuf>,
    /// Per-check timeout (default: derived by `reduce`).
    pub timeout: Option<Duration>,
    /// The default oracle builds and runs each candidate with the `--run` command instead of
    /// compiling it itself (`--reduce-with-run`: a compiled library).
    pub with_run: bool,
}

/// How `cover find` verifies each reduced test with gcov.
#[derive(Clone, Debug)]
pub struct VerifySettings {
    /// Build command with `{test}` and `{exe}` (default: `$CXX` or g++, `$CXXFLAGS` or the
    /// reduction's flags, `--coverage`, the `-I` directories and the source root).
    pub command: Option<String>,
    /// The gcov program.
    pub gcov: String,
    /// Directories of the library's `.gcno` files (`--gcov-objdir`).
    pub objdirs: Vec<PathBuf>,
    /// Extra environment of the verification build and run (`--env K=V`).
    pub env: Vec<(String, String)>,
}

/// `cover find`: report, markers in a copy, find, and (as asked) reduce and verify.
#[derive(Clone, Debug)]
pub struct FindOptions {
    /// What to diff; `source_root` is required.
    pub report: ReportOptions,
    /// What a marker does.
    pub kind: MarkerKind,
    /// Where the marked copy goes (default: `OUT/injected`).
    pub inject_into: Option<PathBuf>,
    /// An existing marked tree (`--marked DIR`, from `cover inject --inject-into DIR`, built):
    /// its `markers.json` is read and nothing is injected; `report` is then not used.
    pub marked: Option<PathBuf>,
    /// The user's build command, run once in the new marked copy.
    pub build: Option<String>,
    /// Only these markers (`--points`: ids or `file:line`); all when empty.
    pub points: Vec<String>,
    /// Where to write `markers.json`.
    pub markers_path: Option<PathBuf>,
    /// Where the tests come from.
    pub source: TestSource,
    /// The `--run` template (`{test}`).
    pub run: String,
    /// Timeout of each `--generate` / `--run` command.
    pub run_timeout: Duration,
    /// Output directory (new or empty).
    pub out: PathBuf,
    /// Parallel runs (and candidates per reduction).
    pub jobs: usize,
    /// Other include directories of the tests.
    pub include_dirs: Vec<PathBuf>,
    /// `CXXFLAGS` of the oracle and of the default gcov build (`--cxxflags`, or the flags
    /// after `--`).
    pub cxxflags: Option<String>,
    /// Reduce the chosen tests.
    pub reduce: Option<ReduceSettings>,
    /// Verify the reduced tests (needs `reduce`).
    pub verify: Option<VerifySettings>,
    /// Judge each reached marker by metamorphic coverage (`--metamorphic`), with this build.
    pub metamorphic: Option<VerifySettings>,
    /// With `metamorphic`: how many of the smallest tests reaching a marker may be analysed to
    /// find one whose MC holds it (`--mc-tests`).
    pub mc_tests: usize,
    /// Printers for regression checks (`--printer`).
    pub printers: Vec<crate::coverage::find::checked::Printer>,
    /// Write the coverage page here after the run (`--html`; checked before anything runs).
    pub html: Option<PathBuf>,
}

/// Run `cover find` (see [`FindOptions`]); the report (none with `--marked`) and the pipeline's
/// summary.
pub fn run_find(opts: &FindOptions) -> Result<(Option<NewLinesReport>, FindSummary)> {
    let Some(root) = &opts.report.source_root else {
        return Err(coded(
            ExitKind::Usage,
            "find needs --source-root (the library to mark and to verify against)",
        ));
    };
    let out = prepare_out(&opts.out)?;
    let html = match &opts.html {
        Some(h) => Some(html::check_target(&find_page_target(opts, h, &out))?),
        None => None,
    };
    let source_root = absolute(root);
    let (report, injected, markers, new_lines) = marked_tree(opts, &out)?;
    let markers = select_points(markers, &opts.points)?;
    let include_dirs: Vec<PathBuf> = opts.include_dirs.iter().map(|d| absolute(d)).collect();
    // Lives until the pipeline is done: the reductions run the scripts it wrote.
    let mut check_script = None;
    let reduce = match &opts.reduce {
        Some(r) => Some(reduce_step(
            opts,
            r,
            &include_dirs,
            &source_root,
            &mut check_script,
        )?),
        None => None,
    };
    let gcov_build = |v: &VerifySettings| gcov_build(opts, v, &include_dirs, &source_root);
    let verify = opts.verify.as_ref().map(gcov_build);
    let metamorphic = opts.metamorphic.as_ref().map(gcov_build);
    let summary = pipeline::run(&PipelineOptions {
        out,
        injected,
        markers,
        new_lines,
        source: opts.source.clone(),
        run: opts.run.clone(),
        run_timeout: opts.run_timeout,
        jobs: opts.jobs.max(1),
        reduce,
        verify,
        metamorphic,
        mc_tests: opts.mc_tests.max(1),
        printers: opts.printers.clone(),
    })?;
    if let Some(h) = &html {
        html::write_find_page(report.as_ref(), &summary, &source_root, h)?;
    }
    Ok((report, summary))
}

/// What `--html` of `cover report` must not be: an input (or in an input directory), an `--lcov`
/// output, a file of the library.
pub fn report_page_target(opts: &ReportOptions, html: &Path) -> PageTarget {
    let mut t = PageTarget {
        path: html.to_path_buf(),
        trees: opts
            .source_root
            .iter()
            .map(|r| ("--source-root", r.clone()))
            .collect(),
        ..PageTarget::default()
    };
    let inputs =
        (opts.suite.iter().map(|p| ("--suite", p))).chain(opts.fuzz.iter().map(|p| ("--fuzz", p)));
    for (flag, p) in inputs {
        match p.is_dir() {
            true => t.trees.push((flag, p.clone())),
            false => t.inputs.push(p.clone()),
        }
    }
    t.add_lcov(opts.lcov.as_deref());
    t
}

/// [`report_page_target`], and for `find` also: the markers file, the marked tree, a name
/// `find` writes in `out`.
fn find_page_target(opts: &FindOptions, html: &Path, out: &Path) -> PageTarget {
    let mut t = report_page_target(&opts.report, html);
    if let Some(marked) = &opts.marked {
        t.trees.push(("--marked", marked.clone()));
        t.inputs.push(
            opts.markers_path
                .clone()
                .unwrap_or_else(|| marked.join("markers.json")),
        );
    } else if let Some(m) = &opts.markers_path {
        t.outputs.push(("--markers", m.clone()));
    }
    if let Some(dir) = &opts.inject_into {
        t.trees.push(("--inject-into", dir.clone()));
    }
    t.out_dir = Some(out.to_path_buf());
    t
}

/// The marked tree of `cover find`: reused (`--marked`, its `markers.json` read) or injected
/// now into `--inject-into` (default `OUT/injected`); the report (none when reused), the tree,
/// its markers and the number of new lines.
fn marked_tree(
    opts: &FindOptions,
    out: &Path,
) -> Result<(Option<NewLinesReport>, PathBuf, Vec<Marker>, usize)> {
    if let Some(marked) = &opts.marked {
        let marked = absolute(marked);
        let file = opts
            .markers_path
            .clone()
            .unwrap_or_else(|| marked.join("markers.json"));
        let (markers, new_lines) = read_markers(&file)?;
        note(format!(
            "find: reusing the marked tree {} ({} markers from {})",
            marked.display(),
            markers.len(),
            file.display()
        ));
        return Ok((None, marked, markers, new_lines));
    }
    let injected = absolute(
        &opts
            .inject_into
            .clone()
            .unwrap_or_else(|| out.join("injected")),
    );
    let (report, injection) = run_inject(&InjectRunOptions {
        report: opts.report.clone(),
        kind: opts.kind,
        target: InjectTarget::Copy(injected.clone()),
        markers_path: opts.markers_path.clone(),
        build: opts.build.clone(),
    })?;
    let new_lines = report.new.total();
    Ok((Some(report), injected, injection.markers, new_lines))
}

/// How the pipeline reduces each chosen test; its check (`--check`, by default
/// `builtin:coverage-marker`) is resolved into `check_script`, which must outlive the reductions.
fn reduce_step(
    opts: &FindOptions,
    r: &ReduceSettings,
    include_dirs: &[PathBuf],
    source_root: &Path,
    check_script: &mut Option<crate::checks::Check>,
) -> Result<ReduceStep> {
    Ok(ReduceStep {
        check: {
            let default = Path::new("builtin:coverage-marker");
            let arg = r.check.as_deref().unwrap_or(default);
            check_script
                .insert(crate::checks::resolve(arg)?)
                .script()
                .to_path_buf()
        },
        include_dirs: include_dirs.to_vec(),
        source_root: source_root.to_path_buf(),
        cxxflags: opts.cxxflags.clone(),
        timeout: r.timeout,
        run: r.with_run.then(|| opts.run.clone()),
        mfppr: std::env::current_exe()
            .context("cannot find the mfppr executable (for the --metamorphic oracle)")?,
    })
}

/// The gcov build of `--verify-gcov` or `--metamorphic`: the given command, or by default `$CXX`
/// (or g++) with `--cxxflags` (or `$CXXFLAGS`, or `-std=c++17 -O0 -w`).
fn gcov_build(
    opts: &FindOptions,
    v: &VerifySettings,
    include_dirs: &[PathBuf],
    source_root: &Path,
) -> VerifyOptions {
    VerifyOptions {
        command: v.command.clone().unwrap_or_else(|| {
            let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
            let flags = opts.cxxflags.clone().unwrap_or_else(|| {
                std::env::var("CXXFLAGS").unwrap_or_else(|_| "-std=c++17 -O0 -w".into())
            });
            verify::default_command(&cxx, &flags, include_dirs, source_root)
        }),
        gcov: v.gcov.clone(),
        source_root: source_root.to_path_buf(),
        timeout: opts.run_timeout,
        objdirs: v.objdirs.iter().map(|d| absolute(d)).collect(),
        env: v.env.clone(),
    }
}

/// The markers and the new-line count of a `markers.json` written by `cover inject`.
fn read_markers(file: &Path) -> Result<(Vec<Marker>, usize)> {
    #[derive(serde::Deserialize)]
    struct MarkersFile {
        #[serde(default)]
        new_lines: Option<usize>,
        markers: Vec<Marker>,
    }
    load::check_regular_file(file, "markers file")?;
    let text = std::fs::read(file).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "cannot read {}: {e}; --marked needs a tree made by `mfppr cover inject \
                 --inject-into DIR` (or pass --markers FILE)",
                file.display()
            ),
        )
    })?;
    let parsed: MarkersFile = serde_json::from_slice(&text).map_err(|e| {
        coded(
            ExitKind::Input,
            format!(
                "{} is not a markers.json of `cover inject`: {e}",
                file.display()
            ),
        )
    })?;
    let new_lines = parsed
        .new_lines
        .unwrap_or_else(|| parsed.markers.iter().map(|m| m.lines.len()).sum());
    Ok((parsed.markers, new_lines))
}

/// The markers `points` names (ids, or `file:line` with any new line of the marker; a file
/// matches its key or a `/`-suffix of it), in id order; all of them when `points` is empty. A
/// selector that names no marker is an error listing a few ids.
pub fn select_points(markers: Vec<Marker>, points: &[String]) -> Result<Vec<Marker>> {
    if points.is_empty() {
        return Ok(markers);
    }
    let matches = |m: &Marker, p: &str| {
        if m.id == p {
            return true;
        }
        let Some((file, line)) = p.rsplit_once(':') else {
            return false;
        };
        let Ok(line) = line.parse::<u32>() else {
            return false;
        };
        (m.file == file || m.file.ends_with(&format!("/{file}")))
            && (m.line == line || m.lines.contains(&line))
    };
    for p in points {
        if !markers.iter().any(|m| matches(m, p)) {
            let known: Vec<String> = markers.iter().take(5).map(|m| m.id.clone()).collect();
            return Err(coded(
                ExitKind::Usage,
                format!(
                    "--points {p} names no marker (ids: {}{}; or FILE:LINE of a marked line)",
                    known.join(", "),
                    if markers.len() > 5 { ", …" } else { "" }
                ),
            ));
        }
    }
    Ok(markers
        .into_iter()
        .filter(|m| points.iter().any(|p| matches(m, p)))
        .collect())
}

/// Create the --out directory (it must be new or empty) and make it absolute.
fn prepare_out(out: &Path) -> Result<PathBuf> {
    let out = absolute(out);
    if out.exists() {
        let empty = out.is_dir()
            && std::fs::read_dir(&out)
                .with_context(|| format!("cannot read --out {}", out.display()))?
                .next()
                .is_none();
        if !empty {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "--out {} exists and is not an empty directory; remove it or choose another",
                    out.display()
                ),
            ));
        }
    }
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create --out {}", out.display()))?;
    Ok(out)
}
