//! Property: the reader (Document → TestModel) and the passes return `Ok` or an error on any
//! input, never panic. 5,000 generated inputs in the default run (a few seconds); the ignored
//! `fuzz_reader` test is the long-running fuzz target (`MFPPR_FUZZ_ITERATIONS`, default 2 million):
//! `cargo test --release --test suite -- --ignored reader_props::`.

use std::path::PathBuf;

use mfppr::catalogue::Catalogue;
use mfppr::document::Document;
use mfppr::model::TestModel;
use mfppr::opportunity::{Opportunities, OpportunityKind};
use mfppr::passes::{MfppOpportunities, PassOptions};

/// xorshift64*: small, deterministic, good enough to spread inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "int",
    "main",
    "(",
    ")",
    "{",
    "}",
    ";",
    "r_0",
    "r_1",
    "=",
    "class",
    "z3::expr",
    ",",
    "// Meta test 0\n",
    "// Meta test 1\n",
    "metalib::checks::check_equal",
    "metalib::relations::add::base",
    "fuzz::mfr_fuzz_start(\"x_1\")",
    "fuzz::mfr_fuzz_end(\"x_1\")",
    "x_1",
    "output_var_0",
    "/* Template initialisation for output var 0 */\n",
    "f_0_1",
    "f_1_2",
    "#ifdef EXECUTE\n",
    "#endif\n",
    "#include \"a.h\"\n",
    "\n",
    " ",
    "\t",
    "\"",
    "'",
    "/*",
    "*/",
    "<",
    ">",
    "::",
];

fn seeds() -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/tests");
    ["iset_pass_tiny.cpp"]
        .iter()
        .filter_map(|f| std::fs::read(root.join(f)).ok())
        .collect()
}

fn input(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    match rng.below(4) {
        0 => (0..rng.below(300)).map(|_| rng.next() as u8).collect(),
        1 => (0..rng.below(120))
            .flat_map(|_| TOKENS[rng.below(TOKENS.len())].bytes())
            .collect(),
        2 => {
            // A random slice of a real test.
            let t = &seeds[rng.below(seeds.len())];
            let a = rng.below(t.len());
            t[a..(a + rng.below(600)).min(t.len())].to_vec()
        }
        _ => {
            // A real test with a few random cuts, duplications and byte flips.
            let mut t = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(4) {
                let a = rng.below(t.len());
                let b = (a + rng.below(400)).min(t.len());
                match rng.below(3) {
                    0 => {
                        t.drain(a..b);
                    }
                    1 => {
                        let chunk = t[a..b].to_vec();
                        let at = rng.below(t.len());
                        t.splice(at..at, chunk);
                    }
                    _ => {
                        if !t.is_empty() {
                            let i = rng.below(t.len());
                            t[i] = rng.next() as u8;
                        }
                    }
                }
            }
            t
        }
    }
}

fn run(iterations: usize, seed: u64) {
    let seeds = seeds();
    assert!(!seeds.is_empty(), "fixture tests are in the repository");
    let catalogue = Catalogue::default();
    let reduction = MfppOpportunities::new(Catalogue::default(), PassOptions::default());
    let mut rng = Rng(seed);
    let mut models = 0;
    for i in 0..iterations {
        let text = input(&mut rng, &seeds);
        let doc = Document::parse(text.clone()).expect("tree-sitter always returns a tree");
        if TestModel::build(&doc, &catalogue).is_ok() {
            models += 1;
            // Every 500th readable input also goes through every pass.
            if i % 500 == 0 {
                for kind in OpportunityKind::ALL {
                    let g = reduction
                        .gather(&text, kind)
                        .expect("readable text gathers");
                    if !g.is_empty() {
                        let _ = g.candidate(&(0..g.len().div_ceil(2)).collect::<Vec<_>>());
                    }
                }
            }
        }
    }
    eprintln!("{iterations} inputs, {models} read as MF++ tests");
    assert!(models > 0, "some mutated tests are still readable");
}

#[test]
fn reader_never_panics_on_5k_inputs() {
    run(5_000, 0x9e37_79b9_7f4a_7c15);
}

#[test]
#[ignore = "long-running fuzz target"]
fn fuzz_reader() {
    let n = std::env::var("MFPPR_FUZZ_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let seed = std::env::var("MFPPR_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    run(n, seed);
}
