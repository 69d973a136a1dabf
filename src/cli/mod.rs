//! Command-line interface: one clap struct per subcommand, each with `run`.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub mod common;
pub mod cover;
pub mod inspect;
pub mod reduce;

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
    /// Print a shell completion script (e.g. `mfppr completions bash > /etc/bash_completion.d/mfppr`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

impl Cli {
    /// Run the chosen subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Inspect(args) => args.run(),
            Command::Reduce(args) => args.run(),
            Command::Cover(args) => args.run(),
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
