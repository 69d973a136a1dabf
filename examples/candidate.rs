//! Debug helper: write the candidate of opportunities `[from, to)` of a kind.
//! `cargo run --example candidate -- FILE KIND FROM TO [-I DIR]`
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use mfppr::catalogue::Catalogue;
use mfppr::opportunity::{Opportunities, OpportunityKind};
use mfppr::passes::{MfppOpportunities, PassOptions};

const USAGE: &str = "usage: candidate FILE KIND FROM TO [-I DIR]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let [_, file, kind, from, to, rest @ ..] = a.as_slice() else {
        bail!("{USAGE}");
    };
    let kinds: Vec<&str> = OpportunityKind::ALL.iter().map(|k| k.name()).collect();
    let kind = OpportunityKind::ALL
        .into_iter()
        .find(|k| k.name() == kind)
        .ok_or_else(|| anyhow!("unknown kind {kind:?}; one of {}", kinds.join(", ")))?;
    let number = |s: &str| {
        s.parse::<usize>()
            .with_context(|| format!("{s:?} is not a number; {USAGE}"))
    };
    let (from, to) = (number(from)?, number(to)?);
    let inc: Vec<PathBuf> = match rest {
        [] => Vec::new(),
        [flag, dir] if flag == "-I" => vec![PathBuf::from(dir)],
        _ => bail!("{USAGE}"),
    };
    let file = PathBuf::from(file);
    let text = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let cat = Catalogue::load(&file, &text, &inc, &[])?;
    let red = MfppOpportunities::new(cat, PassOptions::default());
    let g = red.gather(&text, kind)?;
    for i in from..to.min(g.len()) {
        eprintln!("{i}: {}", g.describe(i));
    }
    match g.candidate(&(from..to.min(g.len())).collect::<Vec<_>>()) {
        Some(c) => std::io::stdout()
            .write_all(&c)
            .context("cannot write the candidate")?,
        None => eprintln!("no candidate"),
    }
    Ok(())
}
