//! Debug helper: write the candidate of opportunities `[from, to)` of a kind.
//! `cargo run --example candidate -- FILE KIND FROM TO [-I DIR]`
use mfppr::catalogue::Catalogue;
use mfppr::opportunity::{Opportunities, OpportunityKind};
use mfppr::passes::{MfppOpportunities, PassOptions};
use std::io::Write;
use std::path::PathBuf;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let file = PathBuf::from(&a[1]);
    let kind = OpportunityKind::ALL
        .into_iter()
        .find(|k| k.name() == a[2])
        .unwrap();
    let (from, to): (usize, usize) = (a[3].parse().unwrap(), a[4].parse().unwrap());
    let inc: Vec<PathBuf> = a.get(6).map(PathBuf::from).into_iter().collect();
    let text = std::fs::read(&file).unwrap();
    let cat = Catalogue::load(&file, &text, &inc, &[]).unwrap();
    let red = MfppOpportunities::new(cat, PassOptions::default());
    let g = red.gather(&text, kind).unwrap();
    for i in from..to.min(g.len()) {
        eprintln!("{i}: {}", g.describe(i));
    }
    match g.candidate(from..to.min(g.len())) {
        Some(c) => std::io::stdout().write_all(&c).unwrap(),
        None => eprintln!("no candidate"),
    }
}
