//! `mfppr reduce` command line: turns flags into [`ReduceOptions`] and prints the summary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;

use crate::reduce::{reduce, ReduceOptions};

const AFTER_HELP: &str = "\
Example:
  mfppr reduce t_bigint_452.cpp --check interestingness/check-failure.py -I spec/ -j 8
    writes t_bigint_452.reduced.cpp beside the input (rewritten after every accepted candidate),
    and t_bigint_452.reduced.cpp.mfppr-origin (which input it comes from, for --resume).

The check script runs once per candidate in a fresh temporary directory (its working directory)
holding the candidate under the input's file name. It gets the candidate's absolute path as $1
and in MFPPR_CANDIDATE, the input's path in MFPPR_ORIGINAL, its directory in MFPPR_ORIGINAL_DIR,
and a private TMPDIR. A .py script is run with python3. Exit 0 means interesting (or, with
--interesting-exit auto, the same exit status as the original).
";

/// Which exit statuses of the check script count as interesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InterestingExit {
    /// Exit status 0 (C-Vise / C-Reduce convention).
    Zero,
    /// The same exit status as the original input, which must fail (MF++R convention).
    Auto,
}

/// Arguments of `mfppr reduce`.
#[derive(Debug, clap::Args)]
#[command(after_help = format!("{AFTER_HELP}\n\n{}", crate::error::exit_codes_help()))]
pub struct ReduceArgs {
    /// The MF++ test to reduce (never modified).
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// Interestingness script: an executable, or a .py file run with python3.
    #[arg(long, value_name = "SCRIPT", help_heading = "Interestingness")]
    check: PathBuf,

    /// Seconds before a check run is killed [default: max(10, 5 × the original's run), ≤ 300].
    #[arg(long, value_name = "SECS", value_parser = parse_secs, help_heading = "Interestingness")]
    timeout: Option<Duration>,

    /// What counts as interesting: exit 0, or the original's exit status.
    #[arg(
        long,
        value_name = "MODE",
        value_enum,
        default_value_t = InterestingExit::Zero,
        help_heading = "Interestingness"
    )]
    interesting_exit: InterestingExit,

    /// Check scripts run at once [default: number of cores].
    #[arg(
        short = 'j',
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Interestingness"
    )]
    jobs: Option<u32>,

    /// Do not remember verdicts of candidates already judged (for flaky checks).
    #[arg(long, help_heading = "Interestingness")]
    no_cache: bool,

    /// Extra directory to search for the spec headers the test includes (repeatable).
    #[arg(short = 'I', value_name = "DIR", help_heading = "Reduction")]
    include: Vec<PathBuf>,

    /// Extra spec header to read MRs from (repeatable).
    #[arg(long, value_name = "FILE", help_heading = "Reduction")]
    spec: Vec<PathBuf>,

    /// Keep every remaining variant's checks.
    #[arg(long, help_heading = "Reduction")]
    keep_checks: bool,

    /// Allow removing the last non-reference variant (the result may have no metamorphic check).
    #[arg(long, help_heading = "Reduction")]
    drop_oracle: bool,

    /// Skip the tail passes (inputs, identity MRs, wrappers, text, tidy) run after the four kinds.
    #[arg(long, help_heading = "Reduction")]
    no_tail: bool,

    /// Output file [default: <stem>.reduced.cpp beside FILE].
    #[arg(short = 'o', long, value_name = "OUT", help_heading = "Output")]
    output: Option<PathBuf>,

    /// Write search statistics as JSON to this file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    stats: Option<PathBuf>,

    /// Continue from an existing output file if it is still interesting.
    #[arg(long, help_heading = "Output")]
    resume: bool,

    /// Also write a bug report with blame into this directory (see `mfppr report`).
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    report: Option<PathBuf>,

    /// With --report: shell command printing the library's version.
    #[arg(long, value_name = "CMD", help_heading = "Output")]
    library_version: Option<String>,

    /// With --report: write into a non-empty directory.
    #[arg(long, help_heading = "Output")]
    force: bool,

    /// No progress lines on stderr.
    #[arg(short, long, help_heading = "Output")]
    quiet: bool,

    /// Runs of the final result after the search, to catch a flaky check (0: none).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Interestingness"
    )]
    recheck: u32,
}

/// Parse a positive, finite number of seconds.
fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("the timeout must be more than 0 seconds, not {s}"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("`{s}`: {e}"))
}

impl ReduceArgs {
    /// The library options these flags stand for.
    pub fn options(&self) -> ReduceOptions {
        let mut opts = ReduceOptions::new(&self.file, &self.check);
        opts.output = self.output.clone();
        opts.include_dirs = self.include.clone();
        opts.specs = self.spec.clone();
        opts.keep_checks = self.keep_checks;
        opts.drop_oracle = self.drop_oracle;
        opts.tail = !self.no_tail;
        opts.timeout = self.timeout;
        opts.interesting_exit_auto = self.interesting_exit == InterestingExit::Auto;
        if let Some(jobs) = self.jobs {
            opts.jobs = jobs as usize;
        }
        opts.cache = !self.no_cache;
        opts.stats = self.stats.clone();
        opts.resume = self.resume;
        opts.quiet = self.quiet;
        opts.recheck = self.recheck;
        opts
    }

    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        let report_dir = match &self.report {
            Some(dir) => Some(crate::report::prepare(dir, self.force, &self.file)?),
            None => None,
        };
        let outcome = reduce(&self.options())?;
        println!("{}", outcome.summary());
        if let Some(dir) = report_dir {
            let opts = crate::report::ReportOptions {
                file: outcome.output.clone(),
                check: self.check.clone(),
                include_dirs: self.include.clone(),
                specs: self.spec.clone(),
                library_version: self.library_version.clone(),
                stats: Some(outcome.summary()),
            };
            let report = crate::report::write(&opts, &dir)?;
            println!("{}", super::report::summary(&report, &dir));
        }
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_validated() {
        assert_eq!(parse_secs("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("-3").is_err());
        assert!(parse_secs("inf").is_err());
        assert!(parse_secs("x").is_err());
    }
}
