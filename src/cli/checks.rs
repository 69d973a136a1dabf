//! `mfppr checks list|show|write`: the check scripts built into mfppr ([`crate::checks`]), to
//! read and to adapt.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::checks::{self, BUILTINS, PREFIX};
use crate::error::{coded, ExitKind};

const AFTER_HELP: &str = "\
Examples:
  mfppr checks list
  mfppr reduce t.cpp --check builtin:failure -- -I spec
  mfppr checks show failure | less
  mfppr checks write my-checks/ && $EDITOR my-checks/check-failure.py
  mfppr reduce t.cpp --check my-checks/check-failure.py -- -I spec

A built-in check is written, with the _mfppr_check.py it imports, to a private temporary
directory for each run and removed after it; `write` gives you copies of your own.";

/// Arguments of `mfppr checks`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP, arg_required_else_help = true)]
pub struct ChecksArgs {
    #[command(subcommand)]
    command: ChecksCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ChecksCommand {
    /// Name each built-in check (`--check builtin:NAME`) with what it checks.
    List,
    /// Print a built-in check's script.
    Show {
        /// The check's name (`failure`, or `builtin:failure`), or `_mfppr_check` for the helpers.
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Write every built-in check and `_mfppr_check.py` into DIR (created if missing).
    Write {
        /// The directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Overwrite files of the same names.
        #[arg(long)]
        force: bool,
    },
}

impl ChecksArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        let mut stdout = std::io::stdout().lock();
        let fail = |e| anyhow::Error::new(e).context("cannot write to standard output");
        match self.command {
            ChecksCommand::List => {
                let name_width = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(0);
                let file_width = BUILTINS.iter().map(|b| b.file.len()).max().unwrap_or(0);
                for b in BUILTINS {
                    writeln!(
                        stdout,
                        "{PREFIX}{:<name_width$}  {:<file_width$}  {}",
                        b.name,
                        b.file,
                        b.summary()
                    )
                    .map_err(fail)?;
                }
            }
            ChecksCommand::Show { name } => {
                let name = name.strip_prefix(PREFIX).unwrap_or(&name);
                let text = if name == checks::HELPER.name {
                    checks::HELPER.text
                } else {
                    checks::find(name)?.text
                };
                stdout.write_all(text.as_bytes()).map_err(fail)?;
            }
            ChecksCommand::Write { dir, force } => {
                std::fs::create_dir_all(&dir).map_err(|e| {
                    coded(
                        ExitKind::Input,
                        format!("cannot create {}: {e}; give another DIR", dir.display()),
                    )
                })?;
                let written = checks::write_all(&dir, force)?;
                crate::messages::note(format!(
                    "mfppr checks: wrote {} files into {}; use one with --check {}",
                    written.len(),
                    dir.display(),
                    dir.join(BUILTINS[0].file).display()
                ));
            }
        }
        stdout.flush().context("cannot write to standard output")?;
        Ok(ExitCode::SUCCESS)
    }
}
