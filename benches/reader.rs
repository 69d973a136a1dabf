//! Reader throughput: parse + classify (Document → TestModel) in MB/s.
//!
//! `cargo bench --bench reader [FILE…]`; without files it reads the largest test of
//! `../shared/mfpp-corpus/` when present, else the largest fixture test.

use std::path::PathBuf;
use std::time::Instant;

use mfppr::catalogue::Catalogue;
use mfppr::document::Document;
use mfppr::model::TestModel;

fn default_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in ["../shared/mfpp-corpus", "fixtures/tests"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
            .collect();
        files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
        if let Some(largest) = files.pop() {
            return vec![largest];
        }
    }
    Vec::new()
}

fn main() {
    let mut files: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    if files.is_empty() {
        files = default_files();
    }
    let catalogue = Catalogue::default();
    for file in files {
        let text = std::fs::read(&file).expect("read");
        let mut best = f64::MAX;
        let (mut parse_s, mut build_s) = (0.0, 0.0);
        for _ in 0..3 {
            let t0 = Instant::now();
            let doc = Document::parse(text.clone()).expect("parse");
            let t1 = Instant::now();
            let model = TestModel::build(&doc, &catalogue).expect("model");
            let t2 = Instant::now();
            std::hint::black_box(&model);
            let total = (t2 - t0).as_secs_f64();
            if total < best {
                best = total;
                parse_s = (t1 - t0).as_secs_f64();
                build_s = (t2 - t1).as_secs_f64();
            }
        }
        println!(
            "{}: {} bytes, parse {:.3} s + classify {:.3} s = {:.3} s → {:.1} MB/s",
            file.display(),
            text.len(),
            parse_s,
            build_s,
            best,
            text.len() as f64 / best / 1e6
        );
    }
}
