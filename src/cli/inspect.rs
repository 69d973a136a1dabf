//! `mfppr inspect` command line (being built).

use std::process::ExitCode;

/// Arguments of `mfppr inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {}

impl InspectArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("mfppr inspect is not available in this build")
    }
}
