//! Command-line interface: one clap struct per subcommand, each with `run`.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub mod batch;
pub mod checks;
pub mod common;
pub mod cover;
pub mod export;
pub mod inspect;
pub mod reduce;
pub mod report;

/// Where an installed mfppr's manual is (the README and docs/ of the repository).
const DOCS: &str =
    "Documentation: https://github.com/mfppr/mfppr#readme (docs/ holds one page per \
                    command; `mfppr checks write DIR` writes out the built-in check scripts)";

/// Structure-aware reducer for MF++ metamorphic tests.
#[derive(Debug, Parser)]
#[command(
    name = "mfppr",
    version,
    about,
    after_help = format!("{}\n\n{DOCS}", crate::error::exit_codes_help())
)]
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
    /// Reduce and triage a campaign of failing tests, locally or as tasks for parallel / Slurm.
    Batch(Box<batch::BatchCommand>),
    /// Write a self-contained C++ file that compiles against the library alone.
    Export(export::ExportArgs),
    /// Write a bug report with blame for a reduced test.
    Report(report::ReportArgs),
    /// List, show or write out the check scripts built into mfppr (`--check builtin:NAME`).
    Checks(checks::ChecksArgs),
    /// Print a shell completion script (e.g. `mfppr completions bash > /etc/bash_completion.d/mfppr`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The README's exit-code table, generated from the same source as `--help`.
pub fn exit_codes_markdown() -> String {
    let mut table = String::from("| code | meaning |\n|---|---|\n");
    for (code, meaning) in crate::error::EXIT_CODES {
        table.push_str(&format!("| {code} | {meaning} |\n"));
    }
    table
}

impl Cli {
    /// Run the chosen subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Inspect(args) => args.run(),
            Command::Reduce(args) => args.run(),
            Command::Cover(args) => args.run(),
            Command::Batch(args) => args.run(),
            Command::Export(args) => args.run(),
            Command::Report(args) => args.run(),
            Command::Checks(args) => args.run(),
            Command::Completions { shell } => {
                clap_complete::generate(
                    shell,
                    &mut Cli::command(),
                    "mfppr",
                    &mut std::io::stdout(),
                );
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own consistency checks (two arguments with one id, e.g. a flag named like a
    /// positional, pass silently in a release build).
    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
