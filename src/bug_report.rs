//! The bug report (design §10.3): `DIR/standalone.cpp`, `DIR/reduced.cpp`, `DIR/README.md` and
//! `DIR/report.json` for a reduced MF++ test.
//!
//! The report holds the failure (the end and stderr tail of a final oracle run), the
//! reproduction command, the library version, the variants side by side, the standalone export,
//! and blame ([`crate::evidence`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::error::{coded, ExitKind};
use crate::evidence::{blame, mr_name, Blame, Deeper, KnockoutOutcome};
use crate::export::{minimise, Standalone};
use crate::judge::{CheckRule, Judge};
use crate::loaded::{LoadedTest, SpecPaths};
use crate::model::TestModel;
use crate::oracle::ScriptOracle;
use crate::outputs::{self, Output};
use crate::process::RunEnd;
use crate::program::{build_and_run, describe, ProgramRun};

/// The files of a report, in the order they are validated.
const FILES: [&str; 4] = ["standalone.cpp", "reduced.cpp", "README.md", "report.json"];

/// What to report on and how.
#[derive(Clone, Debug)]
pub(crate) struct BugReportOptions {
    /// The reduced MF++ test.
    pub file: PathBuf,
    /// The interestingness script.
    pub check: PathBuf,
    /// Header search directories.
    pub include_dirs: Vec<PathBuf>,
    /// Extra spec headers.
    pub specs: Vec<PathBuf>,
    /// Shell command printing the library version.
    pub library_version: Option<String>,
    /// Reduction statistics to include (from `reduce --report`).
    pub stats: Option<String>,
    /// Extra environment of the check script (`MFPPR_CXXFLAGS` of the compiler flags).
    pub env: Vec<(String, String)>,
    /// The check's timeout and exit rule (`--timeout`, `--interesting-exit`, or the reduction's).
    pub rule: CheckRule,
}

/// The validated output paths of a report.
#[derive(Clone, Debug)]
pub struct BugReportDir {
    dir: PathBuf,
    paths: Vec<PathBuf>,
}

/// Check `dir` before any check runs: a directory that exists must be empty unless `force`; it
/// is created when missing (its parent must exist); none of its report files may be `input` or a
/// non-regular file.
pub(crate) fn prepare(dir: &Path, force: bool, input: &Path) -> Result<BugReportDir> {
    let refuse = |why: String| {
        coded(
            ExitKind::Input,
            format!("report directory {} {why}", dir.display()),
        )
    };
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(refuse(
                "is not a directory; choose another --report/-o".into(),
            ))
        }
        Ok(_) => {
            let non_empty = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .next()
                .is_some();
            if non_empty && !force {
                return Err(refuse(
                    "exists and is not empty; give --force to write into it".into(),
                ));
            }
        }
        Err(_) => std::fs::create_dir(dir).map_err(|e| {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
            refuse(if parent.is_some_and(|p| !p.is_dir()) {
                format!("cannot be created ({e}); its parent directory must exist")
            } else {
                format!("cannot be created ({e}); check that its parent directory is writable")
            })
        })?,
    }
    let joined: Vec<PathBuf> = FILES.iter().map(|f| dir.join(f)).collect();
    let outs: Vec<Output> = joined
        .iter()
        .map(|p| Output {
            what: "the report file",
            flag: "report directory",
            path: p,
            record: false,
        })
        .collect();
    let paths = outputs::validate(input, &outs)?;
    Ok(BugReportDir {
        dir: dir.to_path_buf(),
        paths,
    })
}

/// One variant: the MR chain it applies to the shared inputs, and its checks.
#[derive(Clone, Debug, Serialize)]
pub struct VariantRow {
    /// `r_<i>`.
    pub name: String,
    /// The callee of each step, with the MR an instance instantiates.
    pub chain: Vec<String>,
    /// Check names.
    pub checks: Vec<String>,
}

/// The export's part of the report.
#[derive(Clone, Debug, Serialize)]
pub struct ExportInfo {
    /// Bytes of `standalone.cpp`.
    pub bytes: usize,
    /// Non-blank lines.
    pub lines: usize,
    /// The check passed on it.
    pub verified: bool,
    /// Why not, when it did not.
    pub error: Option<String>,
    /// Oracle runs of the export's minimisation.
    pub oracle_calls: usize,
    /// Bytes of the first verified export, before the minimal standalone's rewrites.
    pub first_bytes: usize,
    /// Oracle runs of those rewrites (part of `oracle_calls`).
    pub shrink_oracle_calls: usize,
    /// The rewrites the check accepted (`2 functions called once inlined`, …).
    pub shrunk: Vec<String>,
}

/// `report.json`.
#[derive(Clone, Debug, Serialize)]
pub struct BugReport {
    /// The reduced test reported on.
    pub source: String,
    /// How the final check run ended (`exit 0`, `signal 6`, …).
    pub check_end: String,
    /// The last lines of the check's stderr: the failing check or signal and its message.
    pub message: String,
    /// The copy-pasteable build-and-run command of the check.
    pub reproduction: String,
    /// Output of `--library-version`.
    pub library_version: Option<String>,
    /// Without `--library-version`: the compiler's version line and the Debian package of each
    /// library header found on the compiler's path, one short line each.
    pub versions: Vec<String>,
    /// The standalone built with the check's compiler flags and run once: its end and the last
    /// lines of its own stderr.
    pub program: ProgramRun,
    /// The variants side by side.
    pub variants: Vec<VariantRow>,
    /// Blame.
    pub blame: Blame,
    /// The standalone export.
    pub export: ExportInfo,
    /// Reduction statistics, when the report comes from `reduce --report`.
    pub stats: Option<String>,
}

/// Write the report for `opts.file` into `out`.
pub(crate) fn write(opts: &BugReportOptions, out: &BugReportDir) -> Result<BugReport> {
    let loaded = LoadedTest::read(
        &opts.file,
        &SpecPaths {
            include_dirs: &opts.include_dirs,
            specs: &opts.specs,
        },
    )?;
    let text = loaded.text();
    let model = &loaded.model;
    let script = ScriptOracle::new(&opts.check, &opts.file, opts.env.clone())?;
    let (oracle, run) = match opts.rule.first_run(&script, text)?.interesting() {
        Ok(judged) => judged,
        Err(run) => return Err(not_interesting(opts, run.end, &run.stderr_tail, &script)),
    };
    let sa = standalone(opts, text, out)?;
    let library_version = opts.library_version.as_deref().map(library_version);
    let variants = variants(model);
    let compiles = crate::program::compile_probe(&opts.include_dirs, &opts.file, &opts.env);
    let case = crate::case::Case {
        test: &loaded,
        judge: &oracle,
        compiles: &compiles,
    };
    let blame = blame(&case, true)?;
    let (standalone, export) = export(&sa, &oracle);
    // The library headers' packages (dpkg), asked once for the link flags and the versions.
    let packages = std::cell::OnceCell::new();
    let packages = || -> &[(String, String)] {
        packages.get_or_init(|| crate::versions::header_packages(&standalone))
    };
    let program = build_and_run(standalone.as_bytes(), &link_env(&opts.env, packages));
    let versions = match &library_version {
        Some(_) => Vec::new(),
        None => crate::versions::versions(packages()),
    };
    let export = ExportInfo {
        bytes: standalone.len(),
        lines: non_blank(&standalone),
        ..export
    };
    let report = BugReport {
        source: opts.file.display().to_string(),
        check_end: describe(run.end),
        message: run.stderr_tail,
        reproduction: oracle.reproduction_command(),
        library_version,
        versions,
        program,
        variants,
        blame,
        export,
        stats: opts.stats.clone(),
    };
    save(out, &standalone, text, &report)?;
    Ok(report)
}

/// The check's environment for building the standalone program, with link flags from
/// `pkg-config` for the library headers' packages ([`crate::versions::pkg_config_libs`]) when
/// neither the flags after `--` (`MFPPR_LDFLAGS`) nor `LIBS`/`LDFLAGS` give any.
fn link_env<'p>(
    env: &[(String, String)],
    packages: impl FnOnce() -> &'p [(String, String)],
) -> Vec<(String, String)> {
    let given = |name: &str| {
        env.iter().any(|(k, v)| k == name && !v.trim().is_empty())
            || std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
    };
    let mut env = env.to_vec();
    if !["MFPPR_LDFLAGS", "LIBS", "LDFLAGS"]
        .iter()
        .any(|n| given(n))
    {
        if let Some(libs) = crate::versions::pkg_config_libs(packages()) {
            env.push(("MFPPR_LDFLAGS".to_string(), libs));
        }
    }
    env
}

/// The error of a test the check does not find interesting: how the check ended and how to
/// reproduce it.
fn not_interesting(
    opts: &BugReportOptions,
    end: RunEnd,
    stderr_tail: &str,
    oracle: &ScriptOracle,
) -> anyhow::Error {
    coded(
        ExitKind::NotInteresting,
        format!(
            "{} is not interesting to the check (it ended with {}; stderr: {}); nothing to report. Reproduce with:\n{}",
            opts.file.display(),
            describe(end),
            stderr_tail,
            oracle.reproduction_command()
        ),
    )
}

/// The standalone export of `text`; when there is none, `reduced.cpp` is still written.
fn standalone(opts: &BugReportOptions, text: &[u8], out: &BugReportDir) -> Result<Standalone> {
    match Standalone::build(&opts.file, text, &opts.include_dirs, &opts.specs) {
        Ok(sa) => Ok(sa),
        Err(e) => {
            // The MF++-valid result is still worth having: write it, then say why no standalone.
            crate::atomic::write_atomic(&out.paths[1], text)?;
            Err(e.context(format!(
                "no standalone export ({} is written)",
                out.paths[1].display()
            )))
        }
    }
}

/// The minimised standalone text and its export information (sizes left to fill in); the
/// unverified export, with a warning, when minimising fails.
fn export(sa: &Standalone, judge: &dyn Judge) -> (String, ExportInfo) {
    let (standalone, export) = match minimise(sa, judge) {
        Ok((t, m)) => (
            t,
            ExportInfo {
                bytes: 0,
                lines: 0,
                verified: true,
                error: None,
                oracle_calls: m.oracle_calls,
                first_bytes: m.first_bytes,
                shrink_oracle_calls: m.shrink_calls,
                shrunk: m.shrunk,
            },
        ),
        Err(e) => (
            crate::export::format(&sa.render(&[])).0,
            ExportInfo {
                bytes: 0,
                lines: 0,
                verified: false,
                error: Some(e.to_string()),
                oracle_calls: 0,
                first_bytes: 0,
                shrink_oracle_calls: 0,
                shrunk: Vec::new(),
            },
        ),
    };
    if let Some(e) = &export.error {
        crate::messages::warn(format!(
            "{e}; standalone.cpp is written unverified, the last text the check did not judge"
        ));
    }
    (standalone, export)
}

/// Write the report's four files into `out`.
fn save(out: &BugReportDir, standalone: &str, text: &[u8], report: &BugReport) -> Result<()> {
    crate::atomic::write_atomic(&out.paths[0], standalone.as_bytes())?;
    crate::atomic::write_atomic(&out.paths[1], text)?;
    crate::atomic::write_atomic(&out.paths[2], readme(report).as_bytes())?;
    let json = serde_json::to_string_pretty(report)?;
    crate::atomic::write_atomic(&out.paths[3], json.as_bytes())?;
    Ok(())
}

impl BugReportDir {
    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn non_blank(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

/// How long `--library-version` may run.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of its output is read.
const VERSION_CAP: usize = 64 * 1024;
/// How many characters of it the report shows (control characters left out).
const VERSION_SHOWN: usize = 4096;

/// The output of the `--library-version` command, run by `sh -c` through the process runner
/// (with a timeout and a cap on its output); a failure is said in the text.
fn library_version(cmd: &str) -> String {
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(cmd);
    match crate::process::capture(&mut command, b"", VERSION_TIMEOUT, VERSION_CAP) {
        Ok(c) => {
            let text = String::from_utf8_lossy(&c.stdout);
            let printable: String = text
                .chars()
                .filter(|ch| !ch.is_control() || *ch == '\n')
                .take(VERSION_SHOWN)
                .collect();
            let mut s = printable.trim().to_string();
            if c.truncated || text.chars().count() > VERSION_SHOWN {
                s.push_str(&format!(
                    " (`{cmd}` wrote more than {VERSION_SHOWN} characters: the rest left out)"
                ));
            } else if c.finished.end == RunEnd::TimedOut {
                s.push_str(&format!(
                    " (`{cmd}` did not finish within {} s: stopped)",
                    VERSION_TIMEOUT.as_secs()
                ));
            } else if c.finished.end.status() != Some(0) {
                s.push_str(&format!(" (`{cmd}` failed: {})", c.finished.end));
            }
            s
        }
        Err(e) => format!("(`{cmd}` could not run: {e})"),
    }
}

fn variants(model: &TestModel) -> Vec<VariantRow> {
    model
        .variants
        .iter()
        .map(|v| VariantRow {
            name: v.name.clone(),
            chain: v
                .steps
                .iter()
                .map(|s| match model.instance(&s.callee) {
                    Some(i) => format!("{} ({})", s.callee, mr_name(i.family.as_deref(), &i.mr)),
                    None => s.callee.clone(),
                })
                .collect(),
            checks: v.checks.iter().map(|c| c.name.clone()).collect(),
        })
        .collect()
}

/// `README.md`: what fails, blame, the variants, how to reproduce.
fn readme(r: &BugReport) -> String {
    let mut s = format!("# Failure report for `{}`\n\n", r.source);
    s.push_str(&failure(r));
    s.push_str(&blame_section(&r.blame));
    s.push_str(&variants_section(&r.variants));
    s.push_str(&format!(
        "\n## Files\n\n- `standalone.cpp`: compiles against the library alone ({} bytes, {} lines; {}).\n- `reduced.cpp`: the MF++-valid reduced test.\n\n",
        r.export.bytes,
        r.export.lines,
        export_summary(&r.export)
    ));
    if let Some(st) = &r.stats {
        s.push_str(&format!("## Reduction\n\n{st}\n\n"));
    }
    s.push_str(&format!("## Reproduce\n\n```sh\n{}\n```\n", r.reproduction));
    s.push_str(&format!(
        "\nThe standalone alone, in this directory:\n\n```sh\n{}\n```\n",
        r.program.command
    ));
    s
}

/// The README's account of the failure: how the standalone program and the check script end,
/// and the library's versions.
fn failure(r: &BugReport) -> String {
    let p = &r.program;
    let verdict = format!(
        "The check script's verdict: it ends with {} (the failure is there):\n\n```\n{}\n```\n\n",
        r.check_end, r.message
    );
    let mut s = if p.built {
        format!(
            "The standalone program (`standalone.cpp`, built as the check builds) ends with {}; its stderr ends:\n\n```\n{}\n```\n\n{verdict}",
            p.end, p.stderr_tail
        )
    } else {
        // The check's verdict is the result; a standalone that does not build here (a library
        // the linker was not told of, most often) is one line below it, with the command.
        format!(
            "{verdict}The standalone program was {} here (its compiler's last lines are in `report.json`); try `{}`, with `-l`/`-L` flags after `--` or in `LIBS` if the linker misses the library.\n\n",
            p.end, p.command
        )
    };
    if let Some(v) = &r.library_version {
        s.push_str(&format!("Library version: `{v}`\n\n"));
    }
    if !r.versions.is_empty() {
        s.push_str("Versions:\n\n");
        for v in &r.versions {
            s.push_str(&format!("- {v}\n"));
        }
        s.push('\n');
    }
    s
}

/// The README's blame section: base operations, suspects and the table of folds, and what
/// blame cost.
fn blame_section(b: &Blame) -> String {
    let mut s = String::from("## Blame\n\n");
    if b.base_operations_implicated {
        s.push_str("The failure survives folding every MR to its family's base: the library's base operations alone fail (a library bug, not a spec bug).\n\n");
    }
    if b.suspects.is_empty() {
        s.push_str("No single MR is needed for the failure.\n\n");
    } else {
        s.push_str(&format!(
            "Suspects (folding any one to its base makes the failure disappear): {}.",
            b.suspects
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if let Some(v) = b.one_variant {
            s.push_str(&format!(" All belong to variant r_{v}."));
        }
        s.push_str("\n\n| call | MR | folded to | variant | suspect | library operations |\n|---|---|---|---|---|---|\n");
        for f in &b.folds {
            s.push_str(&format!(
                "| `{}` | `{}` | `{}` | r_{} | {} | {} |\n",
                f.callee,
                f.mr,
                f.base,
                f.variant,
                if f.suspect { "yes" } else { "no" },
                f.library_ops.join(", ")
            ));
        }
        s.push('\n');
    }
    if let Some(d) = &b.deeper {
        s.push_str(&deeper_section(d));
    }
    s.push_str(&format!(
        "Blame: {} oracle runs, {:.1} s.\n\n",
        b.oracle_calls, b.secs
    ));
    s
}

/// The README's account of the deeper look into the single suspect: each call computed another
/// way, and what the failure needs.
fn deeper_section(d: &Deeper) -> String {
    let mut s = format!(
        "### Inside `{}`\n\nEach library call of its body (`{}`), and each call of its base in the other variants, computed another way the spec says is equal (another MR of the family whose base it is), one check run each:\n\n",
        d.mr, d.function
    );
    if !d.knockouts.is_empty() {
        s.push_str(
            "| where | call | operations | computed instead by | outcome |\n|---|---|---|---|---|\n",
        );
        for k in &d.knockouts {
            let outcome = match k.outcome {
                KnockoutOutcome::Needed => "**needed**",
                KnockoutOutcome::NotNeeded => "not needed",
                KnockoutOutcome::Undecided => "undecided",
            };
            s.push_str(&format!(
                "| `{}` | `{}` | {} | {} | {outcome}: {} |\n",
                k.place,
                k.call.replace('|', "\\|"),
                k.ops
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                k.by.as_deref()
                    .map(|b| format!("`{b}`"))
                    .unwrap_or_else(|| "—".into()),
                k.why
            ));
        }
        s.push('\n');
    }
    if d.needs.is_empty() {
        s.push_str("Which library call the failure needs is not decided");
    } else {
        s.push_str(&format!(
            "The failure needs {}: computed another way, it goes away",
            d.needs
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match &d.undecided {
        Some(why) => s.push_str(&format!(" ({why}).\n\n")),
        None => s.push_str(".\n\n"),
    }
    s
}

/// The README's variants section: each variant's chain and checks.
fn variants_section(variants: &[VariantRow]) -> String {
    let mut s = String::from("## Variants (same inputs)\n\n");
    for v in variants {
        s.push_str(&format!(
            "- `{}`: {}{}\n",
            v.name,
            v.chain.join(" → "),
            if v.checks.is_empty() {
                String::new()
            } else {
                format!("; checks {}", v.checks.join(", "))
            }
        ));
    }
    s
}

/// Whether the check passes on the standalone, and how it was minimised; or why it is not
/// verified.
fn export_summary(e: &ExportInfo) -> String {
    match &e.error {
        None => format!(
            "the check passes on it; minimised from {} bytes{}, {} oracle run{} of {}",
            e.first_bytes,
            if e.shrunk.is_empty() {
                String::new()
            } else {
                format!(" ({})", e.shrunk.join(", "))
            },
            e.shrink_oracle_calls,
            if e.shrink_oracle_calls == 1 { "" } else { "s" },
            e.oracle_calls
        ),
        Some(err) => format!("NOT verified: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_version_command_is_bounded_in_output_and_says_how_it_ended() {
        let zero = library_version("cat /dev/zero");
        assert!(zero.len() < 200, "{} bytes", zero.len());
        assert!(zero.ends_with("the rest left out)"), "{zero:?}");
        let long = library_version("yes version | head -c 100000");
        assert!(long.len() < VERSION_SHOWN + 200, "{} bytes", long.len());
        assert_eq!(library_version("echo lib 1.2"), "lib 1.2");
        assert!(
            library_version("echo half; exit 3").starts_with("half (`echo half; exit 3` failed")
        );
    }
}
