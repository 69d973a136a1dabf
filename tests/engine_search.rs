//! The search engine against in-process fake reductions and fake oracles: determinism across
//! `jobs`, the cache, termination with degenerate oracles, cancellation and interruption.
//! `tree` holds the hierarchical search's tests (issue 60).

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mfppr::engine::{Engine, EngineOptions, Inputs, Stats};
use mfppr::error::{exit_kind, ExitKind};
use mfppr::opportunity::{Gathered, Opportunities, OpportunityKind};
use mfppr::oracle::{Oracle, Verdict};

mod order;
mod tree;

/// A text is lines. A line starting with `v`, `s`, `r`, `f` or `t` (tail_text, a batching kind)
/// is an opportunity of that kind; deleting it is the edit. `vN` only becomes an opportunity once
/// `sN` is gone, so later kinds create work for earlier ones (rounds). A window containing a line
/// that starts with `vx` (or `s` with a number divisible by 7) yields `None`. An opportunity's
/// fingerprint is its line.
#[derive(Debug)]
struct LineReduction;

/// [`LineReduction`] without fingerprints (no edit caching).
#[derive(Debug)]
struct PlainLineReduction;

struct LineGathered {
    lines: Vec<String>,
    opportunities: Vec<usize>,
    fingerprints: bool,
}

fn prefix(kind: OpportunityKind) -> char {
    match kind {
        OpportunityKind::Variant => 'v',
        OpportunityKind::Sequence => 's',
        OpportunityKind::Recursion => 'r',
        OpportunityKind::Fuzz => 'f',
        // `t` lines are a batching kind's; no line starts with a NUL: the other tail kinds have
        // nothing to try.
        OpportunityKind::TailText => 't',
        _ => '\0',
    }
}

fn lines_of(text: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(text)
        .lines()
        .map(str::to_string)
        .collect()
}

fn gather_lines(text: &[u8], kind: OpportunityKind, fingerprints: bool) -> LineGathered {
    let lines = lines_of(text);
    let present: HashSet<&str> = lines.iter().map(String::as_str).collect();
    let p = prefix(kind);
    let opportunities = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with(p))
        .filter(|(_, l)| !(p == 'v' && present.contains(format!("s{}", &l[1..]).as_str())))
        .map(|(i, _)| i)
        .collect();
    LineGathered {
        lines,
        opportunities,
        fingerprints,
    }
}

impl Opportunities for LineReduction {
    fn gather<'a>(
        &'a self,
        text: &[u8],
        kind: OpportunityKind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        Ok(Box::new(gather_lines(text, kind, true)))
    }
}

impl Opportunities for PlainLineReduction {
    fn gather<'a>(
        &'a self,
        text: &[u8],
        kind: OpportunityKind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        Ok(Box::new(gather_lines(text, kind, false)))
    }
}

impl Gathered for LineGathered {
    fn len(&self) -> usize {
        self.opportunities.len()
    }

    fn candidate(&self, window: &[usize]) -> Option<Vec<u8>> {
        let drop: HashSet<usize> = window.iter().map(|&i| self.opportunities[i]).collect();
        if drop.iter().any(|&i| {
            let l = &self.lines[i];
            l.starts_with("vx")
                || (l.starts_with('s') && l[1..].parse::<u32>().is_ok_and(|n| n.is_multiple_of(7)))
        }) {
            return None;
        }
        let mut out = String::new();
        for (i, l) in self.lines.iter().enumerate() {
            if !drop.contains(&i) {
                out.push_str(l);
                out.push('\n');
            }
        }
        Some(out.into_bytes())
    }

    fn describe(&self, i: usize) -> String {
        format!("delete `{}`", self.lines[self.opportunities[i]])
    }

    fn fingerprint(&self, i: usize) -> Option<u64> {
        let hash = blake3::hash(self.lines[self.opportunities[i]].as_bytes());
        self.fingerprints
            .then(|| u64::from_le_bytes(hash.as_bytes()[..8].try_into().unwrap()))
    }
}

/// What a fake oracle finds interesting.
#[derive(Clone, Debug)]
enum Rule {
    /// Every line in the set is still there.
    Keeps(BTreeSet<String>),
    /// `Keeps`, and a hash bit: interesting is not monotone.
    KeepsAndHash(BTreeSet<String>, u8),
    /// `Keeps` the first set, and the second too while the line is there.
    Locked(BTreeSet<String>, String, BTreeSet<String>),
    /// At least one line of the set is still there.
    AnyOf(BTreeSet<String>),
    AlwaysTrue,
    AlwaysFalse,
    AlwaysTimeout,
}

/// A deterministic fake oracle with a verdict-independent, hash-derived delay that shuffles the
/// completion order of parallel runs. Records every text it is asked about.
#[derive(Debug)]
struct FakeOracle {
    rule: Rule,
    max_delay_ms: u64,
    calls: Mutex<Vec<Vec<u8>>>,
}

impl FakeOracle {
    fn new(rule: Rule, max_delay_ms: u64) -> FakeOracle {
        FakeOracle {
            rule,
            max_delay_ms,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn verdict(&self, text: &[u8]) -> Verdict {
        let lines: HashSet<String> = lines_of(text).into_iter().collect();
        let keeps = |set: &BTreeSet<String>| set.iter().all(|l| lines.contains(l));
        match &self.rule {
            Rule::Keeps(set) => bool_verdict(keeps(set)),
            Rule::KeepsAndHash(set, modulus) => bool_verdict(
                keeps(set) && !blake3::hash(text).as_bytes()[0].is_multiple_of(*modulus),
            ),
            Rule::Locked(set, lock, guarded) => {
                bool_verdict(keeps(set) && (!lines.contains(lock) || keeps(guarded)))
            }
            Rule::AnyOf(set) => bool_verdict(set.iter().any(|l| lines.contains(l))),
            Rule::AlwaysTrue => Verdict::Interesting,
            Rule::AlwaysFalse => Verdict::Uninteresting,
            Rule::AlwaysTimeout => Verdict::Timeout,
        }
    }
}

fn bool_verdict(b: bool) -> Verdict {
    if b {
        Verdict::Interesting
    } else {
        Verdict::Uninteresting
    }
}

impl Oracle for FakeOracle {
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        self.calls.lock().unwrap().push(candidate.to_vec());
        if self.max_delay_ms > 0 {
            let ms = u64::from(blake3::hash(candidate).as_bytes()[1]) % (self.max_delay_ms + 1);
            let until = Instant::now() + Duration::from_millis(ms);
            while Instant::now() < until {
                if cancel.load(Ordering::SeqCst) {
                    return Ok(Verdict::Uninteresting);
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        Ok(self.verdict(candidate))
    }
}

/// A small deterministic PRNG (no dependency needed for a test).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Scenario {
    text: Vec<u8>,
    rule: Rule,
}

fn scenario(seed: u64) -> Scenario {
    let mut rng = Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xdead_beef);
    let mut lines = vec!["int main() {".to_string()];
    let count = 5 + rng.below(40);
    for i in 0..count {
        let kind = ['v', 's', 'r', 'f', 'c', 't'][rng.below(6) as usize];
        let id = if rng.below(10) == 0 && kind == 'v' {
            "x".to_string()
        } else {
            rng.below(12).to_string()
        };
        lines.push(format!("{kind}{id}_{i}"));
    }
    // Make `sN`/`vN` pairs share their number so the dependency rule applies.
    for l in &mut lines {
        if let Some(rest) = l.strip_prefix(['v', 's']) {
            let head = l.chars().next().unwrap();
            let num = rest.split('_').next().unwrap().to_string();
            *l = format!("{head}{num}");
        }
    }
    lines.push("}".into());
    let mut required = BTreeSet::new();
    for l in &lines {
        if rng.below(4) == 0 {
            required.insert(l.clone());
        }
    }
    let rule = match seed % 6 {
        0 => Rule::AlwaysTrue,
        1 | 2 => Rule::Keeps(required),
        _ => {
            let modulus = 2 + rng.below(3) as u8;
            // The original itself must be interesting.
            let rule = Rule::KeepsAndHash(required.clone(), modulus);
            let text = join(&lines);
            if FakeOracle::new(rule.clone(), 0).verdict(&text) == Verdict::Interesting {
                rule
            } else {
                Rule::Keeps(required)
            }
        }
    };
    Scenario {
        text: join(&lines),
        rule,
    }
}

fn join(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

struct Outcome {
    result: Vec<u8>,
    accepted: Vec<Vec<u8>>,
    stats: Stats,
    calls: Vec<Vec<u8>>,
}

fn reduce(text: &[u8], rule: Rule, jobs: usize, cache: bool, max_delay_ms: u64) -> Outcome {
    reduce_with(&LineReduction, text, rule, jobs, cache, max_delay_ms)
}

fn reduce_with(
    reduction: &dyn Opportunities,
    text: &[u8],
    rule: Rule,
    jobs: usize,
    cache: bool,
    max_delay_ms: u64,
) -> Outcome {
    reduce_inputs(
        reduction,
        text,
        rule,
        (jobs, cache, max_delay_ms),
        Inputs::Anytime,
    )
}

/// Reduce `text` with `(jobs, cache, max_delay_ms)` and fuzz reduction run as `inputs` says.
fn reduce_inputs(
    reduction: &dyn Opportunities,
    text: &[u8],
    rule: Rule,
    (jobs, cache, max_delay_ms): (usize, bool, u64),
    inputs: Inputs,
) -> Outcome {
    let oracle = FakeOracle::new(rule, max_delay_ms);
    let interrupt = AtomicBool::new(false);
    let mut engine = Engine::new(
        reduction,
        &oracle,
        EngineOptions {
            jobs,
            cache,
            quiet: true,
            inputs,
            ..EngineOptions::default()
        },
        &interrupt,
    )
    .unwrap();
    let mut accepted = Vec::new();
    let result = engine
        .run(text.to_vec(), &mut |t: &[u8]| {
            accepted.push(t.to_vec());
            Ok(())
        })
        .unwrap();
    let stats = engine.stats().clone();
    drop(engine);
    Outcome {
        result,
        accepted,
        stats,
        calls: oracle.calls.into_inner().unwrap(),
    }
}

#[test]
fn output_is_identical_for_every_job_count_and_cache_setting() {
    let mut total_hits = 0;
    let mut multi_round = 0;
    for seed in 0..24 {
        let s = scenario(seed);
        let delay = if seed % 3 == 0 { 2 } else { 0 };
        let reference = reduce(&s.text, s.rule.clone(), 1, true, delay);
        let judge = FakeOracle::new(s.rule.clone(), 0);
        assert_eq!(
            judge.verdict(&reference.result),
            Verdict::Interesting,
            "seed {seed}: the result must stay interesting"
        );
        assert!(reference.result.len() <= s.text.len());
        total_hits += reference.stats.cache_hits;
        if reference.stats.rounds > 2 && !reference.accepted.is_empty() {
            multi_round += 1;
        }
        for (jobs, cache) in [(2, true), (4, true), (16, true), (1, false), (4, false)] {
            let other = reduce(&s.text, s.rule.clone(), jobs, cache, delay);
            assert_eq!(
                String::from_utf8_lossy(&other.result),
                String::from_utf8_lossy(&reference.result),
                "seed {seed}: jobs {jobs}, cache {cache}"
            );
            assert_eq!(
                other.accepted, reference.accepted,
                "seed {seed}: same accepted sequence with jobs {jobs}, cache {cache}"
            );
            assert_eq!(other.stats.rounds, reference.stats.rounds);
        }
    }
    assert!(total_hits > 0, "the scenarios should exercise the cache");
    assert!(multi_round > 0, "the scenarios should need several rounds");
}

#[test]
fn with_one_job_and_the_cache_no_text_is_judged_twice() {
    for seed in 0..12 {
        let s = scenario(seed);
        let out = reduce(&s.text, s.rule, 1, true, 0);
        let mut seen = HashSet::new();
        for c in &out.calls {
            assert!(seen.insert(c.clone()), "seed {seed}: judged twice");
            assert_ne!(
                c, &s.text,
                "seed {seed}: the current text is never a candidate"
            );
        }
        assert_eq!(out.stats.oracle_calls as usize, out.calls.len());
    }
}

#[test]
fn a_kind_that_fails_at_its_first_size_waits_for_the_next_kinds() {
    // Every `v` line is needed while `f1` is there; the fuzz kind, after variants, removes it.
    let v_lines: BTreeSet<String> = (0..16).map(|i| format!("v{i}")).collect();
    let mut lines: Vec<String> = v_lines.iter().cloned().collect();
    lines.extend(["f0".to_string(), "f1".to_string()]);
    let rule = Rule::Locked(BTreeSet::from(["f0".to_string()]), "f1".into(), v_lines);
    let reference = reduce(&join(&lines), rule.clone(), 1, true, 0);
    assert_eq!(String::from_utf8_lossy(&reference.result), "f0\n");
    // Round 1 tries the two halves of the `v` lines, not every smaller window down to single
    // lines (2 + 4 + 8 + 16 candidates if it did not wait); round 2 removes them.
    let variant = &reference.stats.kinds[&OpportunityKind::Variant];
    assert!(
        variant.candidates <= 8,
        "{} variant candidates",
        variant.candidates
    );
    assert_eq!(reference.stats.rounds, 3);
    for jobs in [2, 4, 16] {
        let other = reduce(&join(&lines), rule.clone(), jobs, true, 1);
        assert_eq!(other.result, reference.result, "jobs {jobs}");
        assert_eq!(other.accepted, reference.accepted, "jobs {jobs}");
    }
}

#[test]
fn degenerate_oracles_terminate_with_four_jobs() {
    let s = scenario(7);
    let start = Instant::now();
    let t = reduce(&s.text, Rule::AlwaysTrue, 4, true, 0);
    // Everything deletable is gone: only `c…` lines, braces and blocked ones remain.
    for l in lines_of(&t.result) {
        assert!(
            !l.starts_with('r') && !l.starts_with('f'),
            "left `{l}` in an always-true reduction"
        );
    }
    let f = reduce(&s.text, Rule::AlwaysFalse, 4, true, 0);
    assert_eq!(f.result, s.text);
    assert_eq!(f.stats.rounds, 1);
    let o = reduce(&s.text, Rule::AlwaysTimeout, 4, false, 0);
    assert_eq!(o.result, s.text);
    let timeouts: u64 = o.stats.kinds.values().map(|k| k.timeouts).sum();
    let tried: u64 = o.stats.kinds.values().map(|k| k.candidates).sum();
    assert!(timeouts > 0 && timeouts == tried);
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn stats_add_up() {
    let s = scenario(1);
    let out = reduce(&s.text, s.rule.clone(), 3, true, 1);
    let st = &out.stats;
    let accepted: u64 = st.kinds.values().map(|k| k.accepted).sum();
    assert_eq!(accepted, st.accepted);
    assert_eq!(accepted as usize, out.accepted.len());
    let removed: i64 = st.kinds.values().map(|k| k.bytes_removed).sum();
    assert_eq!(removed, s.text.len() as i64 - out.result.len() as i64);
    assert_eq!(st.bytes_before as usize, s.text.len());
    assert_eq!(st.bytes_after as usize, out.result.len());
    let hits: u64 = st.kinds.values().map(|k| k.cache_hits).sum();
    assert_eq!(hits, st.cache_hits);
    let json = serde_json::to_value(st).unwrap();
    assert!(json["kinds"]
        .as_object()
        .unwrap()
        .keys()
        .all(|k| { OpportunityKind::ALL.iter().any(|kind| kind.name() == k) }));
}

/// Keeps `f0` = interesting, answered at once. Runs that are not interesting take 5 s unless
/// cancelled when the candidate still has `f9` (i.e. in the first batch), else answer at once.
#[derive(Debug)]
struct SlowAtFirst {
    started: AtomicUsize,
}

impl Oracle for SlowAtFirst {
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let text = String::from_utf8_lossy(candidate);
        if text.contains("f0") {
            return Ok(Verdict::Interesting);
        }
        if text.contains("f9") {
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until {
                if cancel.load(Ordering::SeqCst) {
                    return Ok(Verdict::Uninteresting);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(Verdict::Uninteresting)
    }
}

#[test]
fn later_speculative_runs_are_cancelled_and_counted_as_wasted() {
    // Four fuzz opportunities. First batch (4 jobs): [0,2) deletes f9,f8 and keeps f0, so it wins
    // at once; [2,4) deletes f0 and would take 5 s: it must be cancelled, not waited for.
    let text = b"f9\nf8\nf0\nf6\n".to_vec();
    let oracle = SlowAtFirst {
        started: AtomicUsize::new(0),
    };
    let interrupt = AtomicBool::new(false);
    let mut engine = Engine::new(
        &LineReduction,
        &oracle,
        EngineOptions {
            jobs: 4,
            cache: true,
            quiet: true,
            ..EngineOptions::default()
        },
        &interrupt,
    )
    .unwrap();
    let start = Instant::now();
    let result = engine.run(text, &mut |_t: &[u8]| Ok(())).unwrap();
    assert_eq!(result, b"f0\n");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "waited for a cancelled run: {:?}",
        start.elapsed()
    );
    let st = engine.stats();
    let wasted: u64 = st.kinds.values().map(|k| k.wasted).sum();
    let tried: u64 = st.kinds.values().map(|k| k.candidates).sum();
    assert_eq!(st.oracle_calls, tried - st.cache_hits + wasted);
}

/// Sets the interrupt flag on its third call.
#[derive(Debug)]
struct InterruptingOracle<'a> {
    flag: &'a AtomicBool,
    calls: AtomicUsize,
}

impl Oracle for InterruptingOracle<'_> {
    fn verdict(&self, _candidate: &[u8], _cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 2 {
            self.flag.store(true, Ordering::SeqCst);
            return Ok(Verdict::Uninteresting);
        }
        Ok(Verdict::Interesting)
    }
}

#[test]
fn an_interrupt_stops_the_search_with_the_interrupted_code() {
    let s = scenario(0);
    let flag = AtomicBool::new(false);
    let oracle = InterruptingOracle {
        flag: &flag,
        calls: AtomicUsize::new(0),
    };
    let mut engine = Engine::new(
        &LineReduction,
        &oracle,
        EngineOptions {
            jobs: 1,
            cache: true,
            quiet: true,
            ..EngineOptions::default()
        },
        &flag,
    )
    .unwrap();
    let mut accepted = 0;
    let err = engine
        .run(s.text.clone(), &mut |_t: &[u8]| {
            accepted += 1;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(exit_kind(&err), ExitKind::Interrupted);
    assert_eq!(accepted, 2);
}

#[test]
fn an_oracle_error_stops_the_search() {
    #[derive(Debug)]
    struct Broken;
    impl Oracle for Broken {
        fn verdict(&self, _c: &[u8], _cancel: &AtomicBool) -> anyhow::Result<Verdict> {
            anyhow::bail!("script vanished")
        }
    }
    let s = scenario(1);
    let flag = AtomicBool::new(false);
    let mut engine = Engine::new(
        &LineReduction,
        &Broken,
        EngineOptions {
            jobs: 2,
            quiet: true,
            ..EngineOptions::default()
        },
        &flag,
    )
    .unwrap();
    let err = engine.run(s.text, &mut |_t: &[u8]| Ok(())).unwrap_err();
    assert!(format!("{err:#}").contains("script vanished"));
}

/// [`FakeOracle`]'s verdicts with a random latency (0–3 ms, from a generator shared by all runs,
/// so the delays depend on the order in which runs start).
struct JitterOracle {
    inner: FakeOracle,
    rng: Mutex<Lcg>,
}

impl Oracle for JitterOracle {
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        let micros = self.rng.lock().unwrap().below(3000);
        let until = Instant::now() + Duration::from_micros(micros);
        while Instant::now() < until {
            if cancel.load(Ordering::SeqCst) {
                return Ok(Verdict::Uninteresting);
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(self.inner.verdict(candidate))
    }
}

fn reduce_with_jitter(s: &Scenario, jobs: usize, seed: u64) -> (Vec<u8>, Vec<Vec<u8>>, Stats) {
    let oracle = JitterOracle {
        inner: FakeOracle::new(s.rule.clone(), 0),
        rng: Mutex::new(Lcg(seed ^ jobs as u64)),
    };
    let interrupt = AtomicBool::new(false);
    let mut engine = Engine::new(
        &LineReduction,
        &oracle,
        EngineOptions {
            jobs,
            quiet: true,
            ..EngineOptions::default()
        },
        &interrupt,
    )
    .unwrap();
    let mut accepted = Vec::new();
    let result = engine
        .run(s.text.clone(), &mut |t: &[u8]| {
            accepted.push(t.to_vec());
            Ok(())
        })
        .unwrap();
    (result, accepted, engine.stats().clone())
}

#[test]
fn speculation_with_random_latency_gives_the_same_output_at_every_job_count() {
    let mut speculated = 0;
    for seed in 0..12 {
        let s = scenario(seed);
        let (reference, accepted, one) = reduce_with_jitter(&s, 1, seed);
        assert_eq!(one.wasted, 0, "seed {seed}: one job never speculates");
        for jobs in [3, 8, 16] {
            let (result, other_accepted, stats) = reduce_with_jitter(&s, jobs, seed);
            assert_eq!(
                String::from_utf8_lossy(&result),
                String::from_utf8_lossy(&reference),
                "seed {seed}: jobs {jobs}"
            );
            assert_eq!(other_accepted, accepted, "seed {seed}: jobs {jobs}");
            assert_eq!(stats.candidates, one.candidates, "seed {seed}: jobs {jobs}");
            speculated += stats.wasted;
        }
    }
    assert!(speculated > 0, "parallel runs should speculate");
}

/// The lines of `text`, sorted.
fn sorted_lines(text: &[u8]) -> Vec<String> {
    let mut lines = lines_of(text);
    lines.sort();
    lines
}

/// Edit caching: with a monotone oracle (a line's deletion is interesting iff the line is not
/// required), skipping single deletions found uninteresting before keeps the same lines (of two
/// equal lines, which one stays may differ) with fewer oracle calls, at every `jobs`.
#[test]
fn edit_caching_saves_calls_without_changing_the_result() {
    let (mut with_total, mut without_total) = (0, 0);
    for seed in 0..24 {
        let s = scenario(seed);
        if !matches!(s.rule, Rule::Keeps(_)) {
            continue;
        }
        let with = reduce(&s.text, s.rule.clone(), 1, true, 0);
        let without = reduce_with(&PlainLineReduction, &s.text, s.rule.clone(), 1, true, 0);
        assert_eq!(
            sorted_lines(&with.result),
            sorted_lines(&without.result),
            "seed {seed}"
        );
        assert!(
            with.stats.oracle_calls <= without.stats.oracle_calls,
            "seed {seed}: {} > {}",
            with.stats.oracle_calls,
            without.stats.oracle_calls
        );
        with_total += with.stats.oracle_calls;
        without_total += without.stats.oracle_calls;
        for jobs in [4, 16] {
            let parallel = reduce(&s.text, s.rule.clone(), jobs, true, 1);
            assert_eq!(parallel.result, with.result, "seed {seed}, -j{jobs}");
            assert_eq!(parallel.accepted, with.accepted, "seed {seed}, -j{jobs}");
        }
    }
    assert!(
        with_total < without_total,
        "edit caching saved nothing: {with_total} calls, {without_total} without"
    );
}

/// The candidates judged ahead of the search (while the caller judges the original) are the
/// ones it needs first: the first is the first it asks for; with their verdicts remembered the
/// search gives the same result, runs none of them again, and counts as wasted only those it did
/// not need.
#[test]
fn candidates_judged_ahead_are_the_ones_the_search_needs_first() {
    let mut total_used = 0;
    for seed in [1, 2, 4, 5, 7, 8] {
        let s = scenario(seed);
        let reference = reduce(&s.text, s.rule.clone(), 1, true, 0);
        let mut ahead = Vec::new();
        mfppr::engine::candidates_ahead(
            &LineReduction,
            &s.text,
            Inputs::Anytime,
            6,
            &mut |_, c| ahead.push(c),
        )
        .unwrap();
        assert!(ahead.len() <= 6);
        let distinct: HashSet<&Vec<u8>> = ahead.iter().collect();
        assert_eq!(
            distinct.len(),
            ahead.len(),
            "seed {seed}: no candidate twice"
        );
        if let Some(first) = reference.calls.first() {
            assert_eq!(
                ahead.first(),
                Some(first),
                "seed {seed}: the first one asked"
            );
        }
        let judge = FakeOracle::new(s.rule.clone(), 0);
        let oracle = FakeOracle::new(s.rule.clone(), 0);
        let interrupt = AtomicBool::new(false);
        let options = EngineOptions {
            jobs: 4,
            quiet: true,
            ..EngineOptions::default()
        };
        let mut engine = Engine::new(&LineReduction, &oracle, options, &interrupt).unwrap();
        for text in &ahead {
            engine.remember_ahead(text, judge.verdict(text));
        }
        let result = engine.run(s.text.clone(), &mut |_: &[u8]| Ok(())).unwrap();
        assert_eq!(result, reference.result, "seed {seed}: same result");
        let stats = engine.stats().clone();
        drop(engine);
        let calls = oracle.calls.into_inner().unwrap();
        assert!(
            calls.iter().all(|c| !ahead.contains(c)),
            "seed {seed}: a candidate judged ahead ran again"
        );
        let used = ahead.iter().filter(|a| reference.calls.contains(a)).count() as u64;
        assert_eq!(stats.cache_hits, reference.stats.cache_hits, "seed {seed}");
        assert!(stats.wasted >= ahead.len() as u64 - used, "seed {seed}");
        total_used += used;
    }
    assert!(
        total_used > 6,
        "the search should need the candidates judged ahead"
    );
}

/// A kind's single opportunities found uninteresting stay skipped in the next round when no other
/// kind accepted anything since (the text changed only by the kind's own accepts, across which
/// its pass skips them too), and are tried again once another kind changed the text.
#[test]
fn failures_carry_to_the_next_round_only_if_no_other_kind_accepted_since() {
    let lines = |ls: &[&str]| join(&ls.iter().map(|l| l.to_string()).collect::<Vec<_>>());
    // Round 1: `v1` goes (so there is a round 2); the fuzz pass finds `f1` and `f3` needed and
    // removes `f2` and `f4`. Round 2: nothing else changes, so the fuzz pass tries nothing.
    let text = lines(&["int main() {", "v1", "f1", "f2", "f3", "f4", "}"]);
    let keeps = Rule::Keeps(["f1", "f3"].iter().map(|l| l.to_string()).collect());
    let out = reduce(&text, keeps.clone(), 1, true, 0);
    assert_eq!(out.result, lines(&["int main() {", "f1", "f3", "}"]));
    // `v1`; the fuzz windows {f1, f2}, {f3, f4}, then f1, f2, f3, f4 one by one.
    let calls: Vec<_> = out
        .calls
        .iter()
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    assert_eq!(calls.len(), 7, "calls: {calls:?}");
    for jobs in [4, 16] {
        assert_eq!(
            reduce(&text, keeps.clone(), jobs, true, 1).result,
            out.result
        );
    }
    // `f1` is needed only while `v3` is there, and `v3` can go only once `s3` is gone: round 1
    // removes `s3` and finds `f1` needed; round 2 removes `v3` (another kind), so `f1` is tried
    // again, and goes.
    let text = lines(&["int main() {", "s3", "v3", "f1", "f2", "}"]);
    let locked = Rule::Locked(BTreeSet::new(), "v3".into(), ["f1".to_string()].into());
    let out = reduce(&text, locked.clone(), 1, true, 0);
    assert_eq!(out.result, lines(&["int main() {", "}"]));
    for jobs in [4, 16] {
        assert_eq!(
            reduce(&text, locked.clone(), jobs, true, 1).result,
            out.result
        );
    }
}

fn set(lines: &[&str]) -> BTreeSet<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

fn texts(ls: &[&[&str]]) -> Vec<Vec<u8>> {
    ls.iter()
        .map(|l| join(&l.iter().map(|l| l.to_string()).collect::<Vec<_>>()))
        .collect()
}

#[test]
fn a_batching_kind_judges_its_opportunities_alone_on_one_text_and_merges_the_interesting_ones() {
    // `t` lines are tail_text opportunities. All five at once: `t2` and `t4` are needed. Then
    // each alone on the same text, and the three that can go, merged, in one more run.
    let text = texts(&[&["int main() {", "t1", "t2", "t3", "t4", "t5", "}"]]).remove(0);
    let rule = Rule::Keeps(set(&["t2", "t4"]));
    let out = reduce(&text, rule.clone(), 1, true, 0);
    let expected = texts(&[
        &["int main() {", "}"],
        &["int main() {", "t2", "t3", "t4", "t5", "}"],
        &["int main() {", "t1", "t3", "t4", "t5", "}"],
        &["int main() {", "t1", "t2", "t4", "t5", "}"],
        &["int main() {", "t1", "t2", "t3", "t5", "}"],
        &["int main() {", "t1", "t2", "t3", "t4", "}"],
        &["int main() {", "t2", "t4", "}"],
    ]);
    assert_eq!(out.calls, expected);
    assert_eq!(out.result, expected[6]);
    assert_eq!(out.accepted, vec![expected[6].clone()]);
    for jobs in [4, 16] {
        assert_eq!(
            reduce(&text, rule.clone(), jobs, true, 1).result,
            out.result
        );
    }
}

#[test]
fn when_the_merge_of_a_batch_is_not_interesting_its_first_opportunity_goes_in_alone() {
    // Interesting while `t1` or `t3` is there: each line can go alone, not all of them. The
    // merge of the four is the window of all four, already rejected: `t1` goes alone, and the
    // others are judged again on that text (`t3` is needed now).
    let text = texts(&[&["int main() {", "t1", "t2", "t3", "t4", "}"]]).remove(0);
    let rule = Rule::AnyOf(set(&["t1", "t3"]));
    let out = reduce(&text, rule.clone(), 1, true, 0);
    let result = texts(&[&["int main() {", "t3", "}"]]).remove(0);
    assert_eq!(out.result, result);
    assert_eq!(
        out.accepted,
        texts(&[
            &["int main() {", "t2", "t3", "t4", "}"],
            &["int main() {", "t3", "}"]
        ])
    );
    // All four; each alone; on the new text each of the three alone and the merge of two.
    assert_eq!(out.calls.len(), 9, "{:?}", out.stats);
    assert_eq!(out.stats.cache_hits, 1);
    for jobs in [4, 16] {
        assert_eq!(
            reduce(&text, rule.clone(), jobs, true, 1).result,
            out.result
        );
    }
}

/// The prefixes of the lines each accepted text dropped, in order (`f`: a fuzz reduction).
fn accepted_kinds(start: &[u8], accepted: &[Vec<u8>]) -> String {
    let mut before: HashSet<String> = lines_of(start).into_iter().collect();
    let mut kinds = String::new();
    for text in accepted {
        let now: HashSet<String> = lines_of(text).into_iter().collect();
        let mut gone: Vec<&String> = before.difference(&now).collect();
        gone.sort();
        kinds.extend(gone.iter().map(|l| l.chars().next().unwrap()));
        before = now;
    }
    kinds
}

/// When fuzz reduction runs. `v1` may only go once `f1` (a fuzzed input) is gone; `v3` once `s3`
/// is. With `Inputs::Last`, fuzz reduction waits for the structural kinds' fixpoint and no
/// structural kind runs after it, so `v1` stays (on a real campaign, a reduction that would have
/// traded its bug for another); `Anytime` runs fuzz reduction in the first round and removes `v1`
/// in the next. The same at every job count.
#[test]
fn fuzz_reduction_runs_anytime_or_last() {
    let text = join(&["v1", "v2", "v3", "s3", "f1", "f2"].map(String::from));
    let rule = Rule::Locked(set(&["v2", "f2"]), "f1".into(), set(&["v1"]));
    let cases = [
        (
            Inputs::Last,
            "svf",
            join(&["v1", "v2", "f2"].map(String::from)),
        ),
        (
            Inputs::Anytime,
            "sfvv",
            join(&["v2", "f2"].map(String::from)),
        ),
    ];
    for jobs in [1, 3] {
        for (inputs, kinds, result) in &cases {
            let out = reduce_inputs(
                &LineReduction,
                &text,
                rule.clone(),
                (jobs, true, 2),
                *inputs,
            );
            assert_eq!(out.result, *result, "{inputs:?} -j{jobs}");
            assert_eq!(
                accepted_kinds(&text, &out.accepted),
                *kinds,
                "{inputs:?} -j{jobs}"
            );
            // The first fuzz candidate comes after the structure's last one with `f1` still in
            // (at -j1: with more jobs, speculation may judge one early, guessing verdicts).
            let fuzz_first = out
                .calls
                .iter()
                .position(|c| !lines_of(c).contains(&"f1".into()));
            let structure_last = out.calls.iter().rposition(|c| {
                let ls = lines_of(c);
                !["v1", "v3", "s3"]
                    .iter()
                    .all(|l| ls.contains(&l.to_string()))
                    && ls.contains(&"f1".to_string())
            });
            if jobs == 1 && *inputs != Inputs::Anytime {
                assert!(
                    fuzz_first > structure_last,
                    "{inputs:?}: fuzz before the structure"
                );
            }
        }
    }
}
