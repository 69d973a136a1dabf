//! `mfppr cover` command line (being built).

use std::process::ExitCode;

/// Arguments of `mfppr cover`.
#[derive(Debug, clap::Args)]
pub struct CoverArgs {}

impl CoverArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("mfppr cover is not available in this build")
    }
}
