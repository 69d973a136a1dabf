//! `mfppr report` command line, and the report options `reduce --report` shares.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::bug_report::{prepare, write, BugReportOptions};
use crate::cli::common::{CheckRuleArgs, CompilerFlags};

/// Arguments of `mfppr report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The reduced MF++ test (never modified).
    #[arg(value_name = "REDUCED")]
    file: PathBuf,

    /// Interestingness script: an executable, a .py file run with python3, or builtin:NAME (a
    /// check built into mfppr: `mfppr checks list`).
    #[arg(long, value_name = "SCRIPT")]
    check: PathBuf,

    #[command(flatten)]
    rule: CheckRuleArgs,

    /// Extra directory to search for the headers the test includes (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,

    /// Extra spec header (repeatable).
    #[arg(long, value_name = "FILE")]
    spec: Vec<PathBuf>,

    /// Shell command printing the library's version, recorded in the report.
    #[arg(long, value_name = "CMD")]
    library_version: Option<String>,

    /// Report directory (created; must be empty unless --force).
    #[arg(short = 'o', long, value_name = "DIR")]
    output: PathBuf,

    /// Write into a non-empty report directory.
    #[arg(long)]
    force: bool,

    /// No progress lines on stderr.
    #[arg(short, long)]
    quiet: bool,

    /// The compiler's flags, as MF++'s generator takes them: -I/-iquote/-isystem DIR find the
    /// headers; all reach the check script in MFPPR_CXXFLAGS.
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,
}

impl ReportArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        crate::messages::set_quiet(self.quiet);
        let dir = prepare(&self.output, self.force, &self.file)?;
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        let check = crate::checks::resolve(&self.check)?;
        let opts = BugReportOptions {
            include_dirs: flags.search_dirs(&self.include),
            env: flags.env(),
            file: self.file,
            check: check.script().to_path_buf(),
            specs: self.spec,
            library_version: self.library_version,
            stats: None,
            rule: self.rule.rule(),
        };
        let report = write(&opts, &dir)?;
        println!("{}", summary(&report, &dir));
        Ok(ExitCode::SUCCESS)
    }
}

/// One line saying where the report is and what blame found.
pub fn summary(
    report: &crate::bug_report::BugReport,
    dir: &crate::bug_report::BugReportDir,
) -> String {
    let b = &report.blame;
    let verdict = if b.suspects.is_empty() {
        "no MR needed".to_string()
    } else {
        format!("suspects {}", b.suspects.join(", "))
    };
    format!(
        "report in {}: {verdict}{}; blame {} oracle runs in {:.1} s; standalone.cpp {} bytes{}",
        dir.dir().display(),
        if b.base_operations_implicated {
            "; base operations alone fail"
        } else {
            ""
        },
        b.oracle_calls,
        b.secs,
        report.export.bytes,
        if report.export.verified {
            ""
        } else {
            " (NOT verified: the check rejects it)"
        }
    )
}
