//! `mfppr inspect` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::catalogue::Completeness;
use crate::cli::common::{is_stdin, stdin_to_file, CompilerFlags};
use crate::input::read_test;
use crate::inspect;
use crate::loaded::{LoadedTest, SpecPaths};

/// Arguments of `mfppr inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    mfppr inspect t_bigint_452.cpp --json -- -std=c++17 -I$SPEC -I$SPEC/SMT_QF_NIA\n  \
    mfppr inspect - -I bigint-spec < t_bigint_452.cpp")]
pub struct InspectArgs {
    /// The MF++ test to read; `-` reads it from standard input.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The compiler's flags, as MF++'s generator takes them: -I/-iquote/-isystem DIR find the
    /// spec headers; the others are ignored.
    #[arg(last = true, value_name = "COMPILER FLAGS")]
    compiler_flags: Vec<String>,
    /// Directory searched for the spec headers the test includes (repeatable).
    #[arg(short = 'I', value_name = "DIR", help_heading = "Spec")]
    include: Vec<PathBuf>,
    /// Extra spec header to read (repeatable).
    #[arg(long = "spec", value_name = "FILE", help_heading = "Spec")]
    spec: Vec<PathBuf>,
    /// Exit 1 when a quoted include of the test or its spec is not found.
    #[arg(long, help_heading = "Spec")]
    strict_spec: bool,
    /// Print the JSON report (schema in the README) instead of the summary.
    #[arg(long)]
    json: bool,
}

impl InspectArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        let flags = CompilerFlags::parse(&self.compiler_flags)?;
        let (_stdin_dir, file) = if is_stdin(&self.file) {
            let (dir, path) = stdin_to_file("stdin.cpp")?;
            (Some(dir), path)
        } else {
            (None, self.file.clone())
        };
        let text = read_test(&file)?;
        let name = self.file.display().to_string();
        crate::input::check_text(&text).with_context(|| name.clone())?;
        let include = flags.search_dirs(&self.include);
        let opts = SpecPaths {
            include_dirs: &include,
            specs: &self.spec,
        };
        let LoadedTest {
            doc,
            catalogue,
            model,
        } = LoadedTest::load(&file, text, &opts).with_context(|| name.clone())?;
        let unknown = model
            .instances
            .iter()
            .filter(|i| i.family.is_none())
            .count();
        Completeness::new(&catalogue, model.instances.len(), unknown).say(self.strict_spec)?;
        let report = inspect::report(&name, doc.text(), &model, &catalogue);
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", inspect::render(&report));
        }
        Ok(ExitCode::SUCCESS)
    }
}
