//! Command-line interface: one clap struct per subcommand, each with `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod cover;
pub mod export;
pub mod inspect;
pub mod reduce;
pub mod report;

const EXIT_CODES: &str = "\
Exit codes:
  0    success
  1    bad input (unreadable file, not an MF++ test, malformed coverage data, bad output path)
  2    usage error
  3    the original input is not interesting to the check script
  4    the check script cannot be run
  130  interrupted (Ctrl-C / SIGTERM); the best result so far is on disk";

/// Structure-aware reducer for MF++ metamorphic tests.
#[derive(Debug, Parser)]
#[command(name = "mfppr", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show how mfppr reads an MF++ test: variants, steps, checks, instances, regions, inputs.
    Inspect(inspect::InspectArgs),
    /// Shrink a failing MF++ test while keeping it a valid metamorphic test.
    Reduce(reduce::ReduceArgs),
    /// Diff suite/fuzz gcov coverage, inject markers, find and reduce tests for new lines.
    Cover(cover::CoverArgs),
    /// Write a self-contained C++ file that compiles against the library alone.
    Export(export::ExportArgs),
    /// Write a bug report with blame for a reduced test.
    Report(report::ReportArgs),
}

impl Cli {
    /// Run the chosen subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Inspect(args) => args.run(),
            Command::Reduce(args) => args.run(),
            Command::Cover(args) => args.run(),
            Command::Export(args) => args.run(),
            Command::Report(args) => args.run(),
        }
    }
}
