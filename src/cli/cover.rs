//! `mfppr cover` command line: diff suite/fuzz coverage, report new lines, inject markers, restore.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use regex::Regex;

use crate::coverage::pipeline::{self, PipelineOptions, ReduceStep, Summary, TestSource};
use crate::coverage::verify::{self, VerifyOptions};
use crate::coverage::{
    self, report, shell, Filters, InjectOptions, InjectTarget, LoadOptions, MarkerKind,
};
use crate::error::{coded, ExitKind};

const EXAMPLE: &str = "\
Examples:
  # Lines the fuzzer reached that the test suite never did, per file and function:
  mfppr cover --suite build-suite/ --fuzz build-fuzz/ --source-root ~/lib --include '^include/'
  # The same as JSON, plus an lcov tracefile for genhtml:
  mfppr cover --suite s.gcov.json.gz --fuzz f.gcov.json.gz --json --lcov new.info
  # Copy the library with a marker before each new line, then build the fuzz test against it:
  mfppr cover --suite s/ --fuzz f/ --source-root ~/lib --inject --inject-into /tmp/lib-marked
  # Edit in place (manifest first), and put everything back afterwards:
  mfppr cover --suite s/ --fuzz f/ --source-root ~/lib --inject --in-place
  mfppr cover --restore mfppr-cover-manifest.json
  # Find the smallest generated test per marker, reduce it toward the marker (checks kept) and
  # confirm with gcov that the reduced test covers the line in the original library:
  mfppr cover --suite s/ --fuzz f/ --source-root lib --find --corpus tests/ \\
      --run 'g++ -std=c++17 -DEXECUTE=1 -I \"$MFPPR_INJECTED\" {test} -o t && ./t' \\
      --reduce --verify-gcov --out found/ -j 4
  # Tests from a generator instead (seeds 1..50):
  mfppr cover ... --find --generate 'gen-mfpp --seed {seed} -o {out}' --budget 50 --run '...'

Inputs: gcov --json-format (.gcov.json[.gz], or --stdout output with one document per line),
gcovr --json reports, and text .gcov files; directories are searched recursively.
New line = executed in the fuzz run, never in the suite run (lcov's GBC + GIC).

--find injects markers into --inject-into DIR (default OUT/injected) and runs `sh -c` on the --run
command for each test, with {test} = the test's absolute path, in a fresh directory, with
MFPPR_INJECTED = the marked tree (put it first on the include path). Each `MFPPR-COV <id> ` line on
its stderr or stdout means marker <id> was reached; per marker, the smallest test (bytes, then
name) whose command exits 0 is chosen. --reduce reduces it with interestingness/coverage-marker.py
(MARKER_ID=<id>, MFPPR_INCLUDES=<marked tree>:<-I dirs>, CXXFLAGS=--cxxflags) keeping every check,
into OUT/<id>.cpp. --verify-gcov builds each reduced test with --verify-cmd (default: $CXX or g++
with --cxxflags, -DEXECUTE=1 --coverage, -I dirs and the original --source-root), runs it, runs
`gcov --json-format --stdout` on the .gcda files below {exe}'s directory, and checks that the
marker's line ran. OUT also gets find.json and summary.json; the last line printed is
`cover: P new lines, R reached, D reduced, V verified`.";

fn default_jobs() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| e.to_string())
}

/// Arguments of `mfppr cover` (boxed: they are much larger than the other subcommands').
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLE)]
pub struct CoverArgs {
    #[command(flatten)]
    opts: Box<CoverOptions>,
}

/// The options of `mfppr cover`.
#[derive(Debug, clap::Args)]
struct CoverOptions {
    /// Coverage of the existing test suite (file or directory; repeatable).
    #[arg(
        long,
        value_name = "PATH",
        required_unless_present = "restore",
        help_heading = "Coverage"
    )]
    suite: Vec<PathBuf>,
    /// Coverage of the fuzzer's tests (file or directory; repeatable).
    #[arg(
        long,
        value_name = "PATH",
        required_unless_present = "restore",
        help_heading = "Coverage"
    )]
    fuzz: Vec<PathBuf>,
    /// Library source root: relative names resolve against it, report paths are relative to it,
    /// files outside it are ignored.
    #[arg(long, value_name = "DIR", help_heading = "Coverage")]
    source_root: Option<PathBuf>,
    /// Only report files whose (normalised) path matches (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex, help_heading = "Coverage")]
    include: Vec<Regex>,
    /// Do not report files whose (normalised) path matches (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex, help_heading = "Coverage")]
    exclude: Vec<Regex>,

    /// Print the report as JSON instead of a table.
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Also write the new lines as an lcov tracefile (for genhtml).
    #[arg(long, value_name = "OUT.info", help_heading = "Output")]
    lcov: Option<PathBuf>,

    /// Insert a marker statement before each new line's statement. Edited files get
    /// `#include <stdio.h>`, `#include <stdlib.h>` and `#line 1` prepended, so line numbers hold.
    #[arg(long, help_heading = "Injection")]
    inject: bool,
    /// Inject into a copy of everything under --source-root, written to DIR.
    #[arg(
        long,
        value_name = "DIR",
        requires = "inject",
        conflicts_with = "in_place",
        help_heading = "Injection"
    )]
    inject_into: Option<PathBuf>,
    /// Inject into the sources themselves (a manifest and backups are written first).
    #[arg(long, requires = "inject", help_heading = "Injection")]
    in_place: bool,
    /// Manifest for --in-place (and for --restore).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "mfppr-cover-manifest.json",
        help_heading = "Injection"
    )]
    manifest: PathBuf,
    /// What a marker does: log `MFPPR-COV <id> <file>:<line>` to stderr and continue, or also abort.
    #[arg(long, value_enum, default_value_t = MarkerKind::Log, help_heading = "Injection")]
    marker: MarkerKind,
    /// Where to write markers.json (default: DIR/markers.json, or next to the manifest).
    #[arg(long, value_name = "FILE", help_heading = "Injection")]
    markers: Option<PathBuf>,
    /// Put back every file of an in-place injection, byte for byte.
    #[arg(long, value_name = "MANIFEST", conflicts_with_all = ["suite", "fuzz", "inject"], help_heading = "Injection")]
    restore: Option<PathBuf>,

    /// Inject markers (into --inject-into DIR, default OUT/injected), run every test against them
    /// and choose the smallest passing test per marker.
    #[arg(
        long,
        requires_all = ["run", "out"],
        conflicts_with = "in_place",
        help_heading = "Find and reduce"
    )]
    find: bool,
    /// Directory of generated tests (every .cpp/.cc/.cxx below it).
    #[arg(
        long,
        value_name = "DIR",
        requires = "find",
        conflicts_with = "generate",
        help_heading = "Find and reduce"
    )]
    corpus: Option<PathBuf>,
    /// Generate the tests instead: run CMD for seeds 1..=N, with {seed} and {out} (a path in
    /// OUT/generated) replaced.
    #[arg(
        long,
        value_name = "CMD",
        requires_all = ["find", "budget"],
        help_heading = "Find and reduce"
    )]
    generate: Option<String>,
    /// Number of seeds for --generate.
    #[arg(
        long,
        value_name = "N",
        requires = "generate",
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Find and reduce"
    )]
    budget: Option<u32>,
    /// Build and run one test against the marked library: CMD with {test} replaced, run by
    /// `sh -c` in a fresh directory with MFPPR_INJECTED set.
    #[arg(
        long,
        value_name = "CMD",
        requires = "find",
        help_heading = "Find and reduce"
    )]
    run: Option<String>,
    /// Kill a --run or --generate command (and its process group) after SECS.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60,
        value_parser = clap::value_parser!(u64).range(1..),
        help_heading = "Find and reduce"
    )]
    run_timeout: u64,
    /// Output directory (must be new or empty): find.json, <id>.cpp, summary.json.
    #[arg(
        long,
        value_name = "DIR",
        requires = "find",
        help_heading = "Find and reduce"
    )]
    out: Option<PathBuf>,
    /// Tests run at once, and candidates judged at once per reduction (default: all CPUs).
    #[arg(
        short,
        long,
        value_name = "N",
        default_value_t = default_jobs(),
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Find and reduce"
    )]
    jobs: u32,
    /// Reduce each chosen test toward its marker, keeping every check, into OUT/<id>.cpp.
    #[arg(long, requires = "find", help_heading = "Find and reduce")]
    reduce: bool,
    /// The oracle for --reduce (default: interestingness/coverage-marker.py of mfppr's repo).
    #[arg(
        long,
        value_name = "SCRIPT",
        requires = "reduce",
        help_heading = "Find and reduce"
    )]
    check: Option<PathBuf>,
    /// Per-check timeout of the reduction (default: derived from the first check).
    #[arg(
        long,
        value_name = "SECS",
        requires = "reduce",
        value_parser = clap::value_parser!(u64).range(1..),
        help_heading = "Find and reduce"
    )]
    timeout: Option<u64>,
    /// Other include directories of the tests (after the marked tree; repeatable).
    #[arg(short = 'I', value_name = "DIR", help_heading = "Find and reduce")]
    include_dirs: Vec<PathBuf>,
    /// Compiler flags: CXXFLAGS of the oracle and flags of the default --verify-cmd
    /// (default: $CXXFLAGS, else -std=c++17 -O0 -w).
    #[arg(
        long,
        value_name = "FLAGS",
        allow_hyphen_values = true,
        help_heading = "Find and reduce"
    )]
    cxxflags: Option<String>,
    /// Rebuild each reduced test against the original library with coverage and check with gcov
    /// that the marker's line ran.
    #[arg(long, requires = "reduce", help_heading = "Find and reduce")]
    verify_gcov: bool,
    /// Build command for --verify-gcov, with {test} and {exe}; it must use --coverage and write
    /// its objects below {exe}'s directory.
    #[arg(
        long,
        value_name = "CMD",
        requires = "verify_gcov",
        help_heading = "Find and reduce"
    )]
    verify_cmd: Option<String>,
    /// The gcov program for --verify-gcov (e.g. gcov-13 to match g++-13).
    #[arg(
        long,
        value_name = "PROG",
        default_value = "gcov",
        help_heading = "Find and reduce"
    )]
    gcov: String,
}

impl CoverArgs {
    /// Run the command.
    pub fn run(self) -> Result<ExitCode> {
        self.opts.run()
    }
}

impl CoverOptions {
    fn run(self) -> Result<ExitCode> {
        if let Some(manifest) = &self.restore {
            let r = coverage::restore(manifest)?;
            eprintln!(
                "restored {} files ({} already original) from {}",
                r.restored.len(),
                r.unchanged.len(),
                manifest.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        if self.find {
            self.check_find_args()?;
        }
        if self.inject && self.inject_into.is_none() && !self.in_place && !self.find {
            return Err(coded(
                ExitKind::Usage,
                "--inject needs a target: --inject-into DIR (a marked copy) or --in-place",
            ));
        }
        if self.inject_into.is_some() && self.source_root.is_none() {
            return Err(coded(
                ExitKind::Usage,
                "--inject-into needs --source-root (the tree to copy)",
            ));
        }
        let source_root = match &self.source_root {
            Some(r) if r.exists() && !r.is_dir() => {
                return Err(coded(
                    ExitKind::Input,
                    format!("--source-root {} is not a directory", r.display()),
                ))
            }
            Some(r) => Some(coverage::paths::absolute(r)),
            None => None,
        };
        let load_opts = LoadOptions {
            source_root: source_root.clone(),
        };
        let suite = coverage::load(&self.suite, &load_opts).context("loading --suite coverage")?;
        let fuzz = coverage::load(&self.fuzz, &load_opts).context("loading --fuzz coverage")?;
        let filters = Filters {
            include: self.include.clone(),
            exclude: self.exclude.clone(),
        };
        let new = coverage::new_lines(&suite, &fuzz, &filters)?;

        let mut stdout = std::io::stdout().lock();
        if self.json {
            serde_json::to_writer_pretty(&mut stdout, &report::json_report(&new))
                .context("cannot write the JSON report")?;
            writeln!(stdout).context("cannot write the JSON report")?;
        } else {
            write!(stdout, "{}", report::text_table(&new)).context("cannot write the report")?;
        }
        if let Some(out) = &self.lcov {
            coverage::manifest::write_atomically(
                out,
                report::lcov_info(&new, source_root.as_deref()).as_bytes(),
            )
            .with_context(|| format!("cannot write --lcov {}", out.display()))?;
        }
        let out = match &self.out {
            Some(out) if self.find => Some(prepare_out(out)?),
            _ => None,
        };
        if self.inject || self.find {
            let target = match (&self.inject_into, &out) {
                (Some(dir), _) => InjectTarget::Copy(dir.clone()),
                (None, Some(out)) => InjectTarget::Copy(out.join("injected")),
                (None, None) => InjectTarget::InPlace {
                    manifest: self.manifest.clone(),
                },
            };
            let opts = InjectOptions {
                source_root,
                kind: self.marker,
                target,
                markers_path: self.markers.clone(),
                stop_after_files: None,
            };
            let inj = coverage::inject(&new, &opts)?;
            let files: std::collections::BTreeSet<_> =
                inj.markers.iter().map(|m| &m.path).collect();
            eprintln!(
                "injected {} markers into {} files; markers listed in {}",
                inj.markers.len(),
                files.len(),
                inj.markers_file.display()
            );
            if self.in_place {
                eprintln!(
                    "undo with: mfppr cover --restore {}",
                    self.manifest.display()
                );
            }
            for s in &inj.skipped {
                eprintln!("skipped {}:{}: {}", s.file, s.line, s.reason);
            }
            if let (Some(out), Some(root)) = (out, opts.source_root.clone()) {
                let new_count = new.files.iter().map(|f| f.lines.len()).sum();
                let injected = match opts.target {
                    InjectTarget::Copy(dir) => coverage::paths::absolute(&dir),
                    InjectTarget::InPlace { .. } => root.clone(),
                };
                let summary = self.find_and_reduce(out, root, injected, inj.markers, new_count)?;
                write!(stdout, "\n{}\n{}\n", summary.table(), summary.last_line())
                    .context("cannot write the summary")?;
            }
        }
        Ok(ExitCode::SUCCESS)
    }

    /// Usage checks of --find that clap cannot express.
    fn check_find_args(&self) -> Result<()> {
        if self.source_root.is_none() {
            return Err(coded(
                ExitKind::Usage,
                "--find needs --source-root (the library to mark and to verify against)",
            ));
        }
        if self.corpus.is_none() && self.generate.is_none() {
            return Err(coded(
                ExitKind::Usage,
                "--find needs tests: --corpus DIR or --generate CMD --budget N",
            ));
        }
        if let Some(run) = &self.run {
            shell::check_template("--run", run, &["test"])?;
        }
        if let Some(generate) = &self.generate {
            shell::check_template("--generate", generate, &["seed", "out"])?;
        }
        if let Some(cmd) = &self.verify_cmd {
            shell::check_template("--verify-cmd", cmd, &["test", "exe"])?;
        }
        Ok(())
    }

    /// Find (and, as asked, reduce and verify) tests for the injected markers.
    fn find_and_reduce(
        &self,
        out: PathBuf,
        source_root: PathBuf,
        injected: PathBuf,
        markers: Vec<coverage::Marker>,
        new_lines: usize,
    ) -> Result<Summary> {
        let include_dirs: Vec<PathBuf> = self
            .include_dirs
            .iter()
            .map(|d| coverage::paths::absolute(d))
            .collect();
        let source = match (&self.corpus, &self.generate, self.budget) {
            (Some(dir), _, _) => TestSource::Corpus(dir.clone()),
            (None, Some(template), Some(budget)) => TestSource::Generate {
                template: template.clone(),
                budget,
            },
            _ => {
                return Err(coded(
                    ExitKind::Usage,
                    "--find needs --corpus DIR or --generate CMD --budget N",
                ))
            }
        };
        let reduce = if self.reduce {
            let check = match &self.check {
                Some(c) => c.clone(),
                None => pipeline::default_check_script()?,
            };
            Some(ReduceStep {
                check,
                include_dirs: include_dirs.clone(),
                source_root: source_root.clone(),
                cxxflags: self.cxxflags.clone(),
                timeout: self.timeout.map(Duration::from_secs),
            })
        } else {
            None
        };
        let run_timeout = Duration::from_secs(self.run_timeout);
        let verify = self.verify_gcov.then(|| {
            let command = self.verify_cmd.clone().unwrap_or_else(|| {
                let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
                let flags = self.cxxflags.clone().unwrap_or_else(|| {
                    std::env::var("CXXFLAGS").unwrap_or_else(|_| "-std=c++17 -O0 -w".into())
                });
                verify::default_command(&cxx, &flags, &include_dirs, &source_root)
            });
            VerifyOptions {
                command,
                gcov: self.gcov.clone(),
                source_root: source_root.clone(),
                timeout: run_timeout,
            }
        });
        pipeline::run(&PipelineOptions {
            out,
            injected,
            markers,
            new_lines,
            source,
            run: self.run.clone().unwrap_or_default(),
            run_timeout,
            jobs: self.jobs as usize,
            reduce,
            verify,
        })
    }
}

/// Create the --out directory (it must be new or empty) and make it absolute.
fn prepare_out(out: &Path) -> Result<PathBuf> {
    let out = coverage::paths::absolute(out);
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
