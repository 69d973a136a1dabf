//! `mfppr` binary: parses the command line and maps errors to documented exit codes.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = mfppr::cli::Cli::parse();
    match cli.run() {
        Ok(code) => code,
        Err(err) => {
            mfppr::messages::clear_status();
            eprintln!("error: {err:#}");
            ExitCode::from(mfppr::error::exit_kind(&err) as u8)
        }
    }
}
