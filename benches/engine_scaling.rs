//! The search's scaling with `-j`, without processes: the engine reduces a fixture test with an
//! in-process latency-only oracle (it sleeps, and a candidate is interesting iff it still contains
//! every given string: the oracle of `scripts/bench-scaling`), so the figures show the search and
//! its speculation, not process start-up competing with 16 runs for a small machine's cores.
//! Only the search is measured (no initial checks, so no candidates judged ahead).
//!
//! `cargo bench --bench engine_scaling -- [--sleep-ms MS] [--jobs "1 2 4 8 16"] [--runs N]
//! [--contain STR]… [TEST.cpp]`; defaults: 500 ms, those job counts, 1 run, the strings and test
//! of `scripts/bench-scaling` (`fixtures/tests/iset_merge_medium.cpp`). One row per job count:
//! the mean wall time, it in oracle latencies, calls, wasted runs, bytes after, speed-up over the
//! first job count, and whether every output is byte-identical to the first one's (it must be).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mfppr::catalogue::Catalogue;
use mfppr::engine::{Engine, EngineOptions};
use mfppr::oracle::{Oracle, Verdict};
use mfppr::passes::{MfppOpportunities, PassOptions};

/// Sleeps, then: interesting iff the candidate contains every string.
#[derive(Debug)]
struct LatencyOracle {
    sleep: Duration,
    strings: Vec<String>,
}

impl Oracle for LatencyOracle {
    fn judge(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        let until = Instant::now() + self.sleep;
        while Instant::now() < until {
            if cancel.load(Ordering::SeqCst) {
                return Ok(Verdict::Uninteresting);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let text = String::from_utf8_lossy(candidate);
        Ok(
            match self.strings.iter().all(|s| text.contains(s.as_str())) {
                true => Verdict::Interesting,
                false => Verdict::Uninteresting,
            },
        )
    }
}

struct Options {
    sleep: Duration,
    jobs: Vec<usize>,
    runs: usize,
    strings: Vec<String>,
    test: PathBuf,
}

fn options() -> Options {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut o = Options {
        sleep: Duration::from_millis(500),
        jobs: vec![1, 2, 4, 8, 16],
        runs: 1,
        strings: Vec::new(),
        test: root.join("fixtures/tests/iset_merge_medium.cpp"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().expect("a value after the option");
        match a.as_str() {
            "--sleep-ms" => o.sleep = Duration::from_millis(value().parse().expect("ms")),
            "--jobs" => {
                o.jobs = value()
                    .split_whitespace()
                    .map(|j| j.parse().expect("a job count"))
                    .collect();
            }
            "--runs" => o.runs = value().parse().expect("a run count"),
            "--contain" => o.strings.push(value()),
            // `cargo bench` passes `--bench`.
            s if s.starts_with("--") => {}
            test => o.test = PathBuf::from(test),
        }
    }
    if o.strings.is_empty() {
        o.strings = [
            "check_equal(r_2, r_0)",
            "iset::subtract(set_term_35, output_var_1)",
            "iset::upper(set_term_36)",
            "compl_by_subtract",
            "intersect_comm",
        ]
        .map(String::from)
        .to_vec();
    }
    o
}

fn main() {
    let o = options();
    let text = std::fs::read(&o.test).expect("read the test");
    println!(
        "{}: {} bytes, oracle latency {} ms, {} run(s) per job count",
        o.test.display(),
        text.len(),
        o.sleep.as_millis(),
        o.runs
    );
    println!("jobs   wall_s  latencies  calls  wasted  bytes  speedup  identical");
    let (mut base_wall, mut base_out) = (None, None);
    for &jobs in &o.jobs {
        let (mut wall, mut calls, mut wasted) = (0.0, 0, 0);
        let mut identical = true;
        let mut out = Vec::new();
        for _ in 0..o.runs {
            // The catalogue as `scripts/bench-scaling` has it: no include directories.
            let catalogue = Catalogue::load(&o.test, &text, &[], &[]).expect("catalogue");
            let reduction = MfppOpportunities::new(
                catalogue,
                PassOptions {
                    tail: true,
                    ..PassOptions::default()
                },
            );
            let oracle = LatencyOracle {
                sleep: o.sleep,
                strings: o.strings.clone(),
            };
            let interrupt = AtomicBool::new(false);
            let options = EngineOptions {
                jobs,
                quiet: true,
                ..EngineOptions::default()
            };
            let mut engine =
                Engine::new(&reduction, &oracle, options, &interrupt).expect("an engine");
            let began = Instant::now();
            out = engine
                .run(text.clone(), &mut |_| Ok(()))
                .expect("the search");
            wall += began.elapsed().as_secs_f64();
            calls += engine.stats().oracle_calls;
            wasted += engine.stats().wasted;
            identical &= base_out.as_ref().is_none_or(|b| *b == out);
        }
        let n = o.runs as f64;
        let wall = wall / n;
        let base = *base_wall.get_or_insert(wall);
        base_out.get_or_insert(out.clone());
        println!(
            "{jobs:<5} {wall:>7.2}  {:>9.1}  {:>5.0}  {:>6.0}  {:>5}  {:>6.2}x  {}",
            wall / o.sleep.as_secs_f64(),
            calls as f64 / n,
            wasted as f64 / n,
            out.len(),
            base / wall,
            if identical { "yes" } else { "NO" }
        );
    }
}
