//! `mfppr inspect` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::catalogue::Catalogue;
use crate::document::Document;
use crate::inspect;
use crate::model::{read_test, TestModel};

/// Arguments of `mfppr inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  mfppr inspect t_bigint_452.cpp -I bigint-spec --json")]
pub struct InspectArgs {
    /// The MF++ test to read.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Directory searched for the spec headers the test includes (repeatable).
    #[arg(short = 'I', value_name = "DIR", help_heading = "Spec")]
    include: Vec<PathBuf>,
    /// Extra spec header to read (repeatable).
    #[arg(long = "spec", value_name = "FILE", help_heading = "Spec")]
    spec: Vec<PathBuf>,
    /// Print the JSON report (schema in the README) instead of the summary.
    #[arg(long)]
    json: bool,
}

impl InspectArgs {
    /// Run the command.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        let text = read_test(&self.file)?;
        let name = self.file.display().to_string();
        crate::model::check_text(&text).with_context(|| name.clone())?;
        let doc = Document::parse(text)?;
        let catalogue = Catalogue::load_for(&self.file, &doc, &self.include, &self.spec)
            .with_context(|| name.clone())?;
        let model = TestModel::build(&doc, &catalogue).with_context(|| name.clone())?;
        let report = inspect::report(&name, doc.text(), &model, &catalogue);
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", inspect::render(&report));
        }
        Ok(ExitCode::SUCCESS)
    }
}
