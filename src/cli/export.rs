//! `mfppr export` command line: the standalone export of an MF++ test (design §10.2).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::common::{CheckRuleArgs, CompilerFlags};
use crate::export::{format, minimise, Standalone};
use crate::judge::INITIAL_TIMEOUT;
use crate::oracle::ScriptOracle;
use crate::outputs::{self, Output};

/// Arguments of `mfppr export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The MF++ test to export (usually a reduced one; never modified).
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// Extra directory to search for the headers the test includes (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,

    /// Extra spec header to pull declarations from (repeatable).
    #[arg(long, value_name = "FILE")]
    spec: Vec<PathBuf>,

    /// Interestingness script (or builtin:NAME): drop the pulled-in declarations it does not
    /// need and verify that the export still fails.
    #[arg(long, value_name = "SCRIPT")]
    check: Option<PathBuf>,

    #[command(flatten)]
    rule: CheckRuleArgs,

    /// Output file.
    #[arg(short = 'o', long, value_name = "OUT")]
    output: PathBuf,

    /// The compiler's flags, as MF++'s generator takes them: -I/-iquote/-isystem DIR find the
    /// headers; all reach the check script in MFPPR_CXXFLAGS.
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,
}

impl ExportArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        let out = outputs::validate(
            &self.file,
            &[Output {
                what: "the export",
                flag: "-o",
                path: &self.output,
                record: false,
            }],
        )?;
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        let include = flags.search_dirs(&self.include);
        let env: Vec<(String, String)> = flags.env();
        let text = crate::input::read_test(&self.file)?;
        let sa = Standalone::build(&self.file, &text, &include, &self.spec)?;
        let (export, note) = match &self.check {
            Some(check) => {
                let check = crate::checks::resolve(check)?;
                let oracle = ScriptOracle::new(check.script(), &self.file, env)?;
                // The timeout and exit rule come from a first run of the whole export, the text
                // minimising starts from, as `report` takes them from the test's first run.
                let whole = format(&sa.render(&vec![true; sa.chunks.len()])).0;
                let rule = self.rule.rule();
                let first = rule.first_run(&oracle, whole.as_bytes())?;
                let oracle = first.judge.unwrap_or_else(|| {
                    oracle.with_timeout(Some(rule.timeout.unwrap_or(INITIAL_TIMEOUT)))
                });
                let (export, m) = minimise(&sa, &oracle)?;
                let note = format!(
                    "{} of {} pulled-in spec declarations kept, {} oracle call{} ({} minimising \
                     from {} bytes{}); the check passes",
                    m.kept,
                    m.pulled,
                    m.oracle_calls,
                    if m.oracle_calls == 1 { "" } else { "s" },
                    m.shrink_calls,
                    m.first_bytes,
                    if m.shrunk.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", m.shrunk.join(", "))
                    }
                );
                (export, note)
            }
            None => {
                let (export, tool) = format(&sa.render(&[]));
                let note = format!(
                    "{} spec declaration{} pulled in, formatted by {tool}; not checked (give \
                     --check)",
                    sa.chunks.len(),
                    if sa.chunks.len() == 1 { "" } else { "s" }
                );
                (export, note)
            }
        };
        crate::atomic::write_atomic(&out[0], export.as_bytes())?;
        println!(
            "wrote {} ({} bytes, {} lines): {note}",
            self.output.display(),
            export.len(),
            export.lines().filter(|l| !l.trim().is_empty()).count()
        );
        Ok(ExitCode::SUCCESS)
    }
}
