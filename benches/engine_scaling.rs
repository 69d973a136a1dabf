//! The search's scaling with `-j`, without processes: the engine reduces a fixture test with an
//! in-process latency-only oracle (it sleeps, and a candidate is interesting iff it still contains
//! every given string: the oracle of `scripts/bench-scaling`), so the figures show the search and
//! its speculation, not process start-up competing with 16 runs for a small machine's cores.
//! Only the search is measured (no initial checks, so no candidates judged ahead).
//!
//! `cargo bench --bench engine_scaling -- [--sleep-ms MS] [--jobs "1 2 4 8 16"] [--runs N]
//! [--virtual] [--contain STR]… [TEST.cpp]`; defaults: 500 ms, those job counts, 1 run, the
//! strings and test of `scripts/bench-scaling` (`fixtures/tests/iset_merge_medium.cpp`). One row
//! per job count: the mean wall time, it in oracle latencies, calls, wasted runs, bytes after,
//! speed-up over the first job count, and whether every output is byte-identical to the first
//! one's (it must be).
//!
//! `--virtual`: the oracle's latency passes on a virtual clock ([`Clock`]) that moves to the next
//! run's end only while the engine's thread waits, so mfppr's own time counts as none and the
//! figures hardly depend on the machine's load; "latencies" is then the virtual time over the
//! latency, "wall_s" the real time.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use mfppr::catalogue::Catalogue;
use mfppr::engine::{Engine, EngineOptions};
use mfppr::oracle::{Oracle, Verdict};
use mfppr::passes::{MfppOpportunities, PassOptions};

/// Sleeps (on `clock` if there is one), then: interesting iff the candidate contains every
/// string.
#[derive(Debug)]
struct LatencyOracle<'c> {
    sleep: Duration,
    strings: Vec<String>,
    clock: Option<&'c Clock>,
}

/// How often the sleeping runs and the clock look around.
const POLL: Duration = Duration::from_millis(2);

/// A virtual clock for the oracle's runs: each run ends one latency after it started in virtual
/// time; the clock moves to the earliest end only when the engine's thread (the main thread) has
/// been seen waiting on a few polls in a row and every run released before has returned.
#[derive(Debug, Default)]
struct Clock {
    state: Mutex<ClockState>,
    moved: Condvar,
}

#[derive(Debug, Default)]
struct ClockState {
    /// Virtual time, in latencies.
    now: u64,
    /// Runs sleeping, by the virtual time they end at.
    sleeping: BTreeMap<u64, usize>,
    /// Runs released (their end has come) that have not returned yet.
    released: usize,
}

impl Clock {
    /// Sleep one latency of virtual time, or until `cancel` is set.
    fn sleep(&self, cancel: &AtomicBool) -> bool {
        let mut state = self.state.lock().unwrap();
        let end = state.now + 1;
        *state.sleeping.entry(end).or_default() += 1;
        loop {
            if state.now >= end {
                return true;
            }
            if cancel.load(Ordering::SeqCst) {
                let left = state.sleeping.get_mut(&end).expect("registered");
                *left -= 1;
                if *left == 0 {
                    state.sleeping.remove(&end);
                }
                return false;
            }
            state = self.moved.wait_timeout(state, POLL).unwrap().0;
        }
    }

    /// A released run has returned its verdict.
    fn returned(&self) {
        self.state.lock().unwrap().released -= 1;
    }

    /// Move the clock while `running` (until the search ends); returns the virtual time.
    fn drive(&self, running: &AtomicBool) -> u64 {
        let mut idle = 0;
        while running.load(Ordering::SeqCst) {
            std::thread::sleep(POLL);
            idle = if engine_waits() { idle + 1 } else { 0 };
            let mut state = self.state.lock().unwrap();
            if idle < 3 || state.released > 0 {
                continue;
            }
            if let Some((&end, &count)) = state.sleeping.iter().next() {
                state.sleeping.remove(&end);
                state.now = end;
                state.released = count;
                idle = 0;
                self.moved.notify_all();
            }
        }
        self.state.lock().unwrap().now
    }
}

/// Whether the main thread (the engine's) is sleeping, i.e. waiting for a run's report.
fn engine_waits() -> bool {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", std::process::id()))
        .unwrap_or_default();
    stat.rsplit(')')
        .next()
        .is_some_and(|rest| rest.trim_start().starts_with('S'))
}

impl Oracle for LatencyOracle<'_> {
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        if let Some(clock) = self.clock {
            let ended = clock.sleep(cancel);
            let verdict = self.verdict(candidate);
            if ended {
                clock.returned();
            }
            return Ok(verdict);
        }
        let until = Instant::now() + self.sleep;
        while Instant::now() < until {
            if cancel.load(Ordering::SeqCst) {
                return Ok(Verdict::Uninteresting);
            }
            std::thread::sleep(POLL);
        }
        Ok(self.verdict(candidate))
    }
}

impl LatencyOracle<'_> {
    fn verdict(&self, candidate: &[u8]) -> Verdict {
        let text = String::from_utf8_lossy(candidate);
        match self.strings.iter().all(|s| text.contains(s.as_str())) {
            true => Verdict::Interesting,
            false => Verdict::Uninteresting,
        }
    }
}

struct Options {
    sleep: Duration,
    jobs: Vec<usize>,
    runs: usize,
    strings: Vec<String>,
    test: PathBuf,
    virtual_clock: bool,
}

fn options() -> Options {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut o = Options {
        sleep: Duration::from_millis(500),
        jobs: vec![1, 2, 4, 8, 16],
        runs: 1,
        strings: Vec::new(),
        test: root.join("fixtures/tests/iset_merge_medium.cpp"),
        virtual_clock: false,
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
            "--virtual" => o.virtual_clock = true,
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

/// What one reduction gave: wall seconds, latencies, calls, wasted runs, the output.
struct Measured {
    wall: f64,
    latencies: f64,
    calls: u64,
    wasted: u64,
    out: Vec<u8>,
}

/// Reduce `text` once at `jobs`, on the virtual clock if `o` says so.
fn reduce_once(o: &Options, jobs: usize, text: &[u8]) -> Measured {
    // The catalogue as `scripts/bench-scaling` has it: no include directories.
    let catalogue = Catalogue::load(&o.test, text, &[], &[]).expect("catalogue");
    let reduction = MfppOpportunities::new(
        catalogue,
        PassOptions {
            tail: true,
            ..PassOptions::default()
        },
    );
    let clock = Clock::default();
    let oracle = LatencyOracle {
        sleep: o.sleep,
        strings: o.strings.clone(),
        clock: o.virtual_clock.then_some(&clock),
    };
    let interrupt = AtomicBool::new(false);
    let options = EngineOptions {
        jobs,
        quiet: true,
        ..EngineOptions::default()
    };
    let mut engine = Engine::new(&reduction, &oracle, options, &interrupt).expect("an engine");
    let running = AtomicBool::new(true);
    let began = Instant::now();
    let (out, ticks) = std::thread::scope(|scope| {
        let driver = o
            .virtual_clock
            .then(|| scope.spawn(|| clock.drive(&running)));
        let out = engine.run(text.to_vec(), &mut |_| Ok(()));
        running.store(false, Ordering::SeqCst);
        (out, driver.map(|d| d.join().expect("the clock")))
    });
    let wall = began.elapsed().as_secs_f64();
    Measured {
        wall,
        latencies: ticks.map_or(wall / o.sleep.as_secs_f64(), |t| t as f64),
        calls: engine.stats().oracle_calls,
        wasted: engine.stats().wasted,
        out: out.expect("the search"),
    }
}

fn main() {
    let o = options();
    let text = std::fs::read(&o.test).expect("read the test");
    println!(
        "{}: {} bytes, oracle latency {} ms{}, {} run(s) per job count",
        o.test.display(),
        text.len(),
        o.sleep.as_millis(),
        if o.virtual_clock { " (virtual)" } else { "" },
        o.runs
    );
    println!("jobs   wall_s  latencies  calls  wasted  bytes  speedup  identical");
    let (mut base_latencies, mut base_out) = (None, None);
    for &jobs in &o.jobs {
        let (mut wall, mut latencies, mut calls, mut wasted) = (0.0, 0.0, 0, 0);
        let mut identical = true;
        let mut out = Vec::new();
        for _ in 0..o.runs {
            let m = reduce_once(&o, jobs, &text);
            wall += m.wall;
            latencies += m.latencies;
            calls += m.calls;
            wasted += m.wasted;
            identical &= base_out.as_ref().is_none_or(|b| *b == m.out);
            out = m.out;
        }
        let n = o.runs as f64;
        let (wall, latencies) = (wall / n, latencies / n);
        let base = *base_latencies.get_or_insert(latencies);
        base_out.get_or_insert(out.clone());
        println!(
            "{jobs:<5} {wall:>7.2}  {latencies:>9.1}  {:>5.0}  {:>6.0}  {:>5}  {:>6.2}x  {}",
            calls as f64 / n,
            wasted as f64 / n,
            out.len(),
            base / latencies,
            if identical { "yes" } else { "NO" }
        );
    }
}
