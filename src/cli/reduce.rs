//! `mfppr reduce` command line (being built).

use std::process::ExitCode;

/// Arguments of `mfppr reduce`.
#[derive(Debug, clap::Args)]
pub struct ReduceArgs {}

impl ReduceArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("mfppr reduce is not available in this build")
    }
}
