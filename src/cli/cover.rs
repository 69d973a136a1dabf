//! `mfppr cover` command line: diff suite/fuzz coverage, report new lines, inject markers, restore.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use regex::Regex;

use crate::coverage::{
    self, report, Filters, InjectOptions, InjectTarget, LoadOptions, MarkerKind,
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

Inputs: gcov --json-format (.gcov.json[.gz], or --stdout output with one document per line),
gcovr --json reports, and text .gcov files; directories are searched recursively.
New line = executed in the fuzz run, never in the suite run (lcov's GBC + GIC).";

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
        if self.inject && self.inject_into.is_none() && !self.in_place {
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
        if self.inject {
            let target = match &self.inject_into {
                Some(dir) => InjectTarget::Copy(dir.clone()),
                None => InjectTarget::InPlace {
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
        }
        Ok(ExitCode::SUCCESS)
    }
}
