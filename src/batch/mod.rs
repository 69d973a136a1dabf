//! Campaign mode (design §11, `mfppr batch`): reduce many failing tests into one output
//! directory, journal every finished test, and triage the results into groups of duplicates.
//!
//! Owns the campaign's files: `OUTDIR/<stem>/` per test (`<stem>.reduced.cpp`, `stats.json`,
//! `result.json`), the journal ([`journal`]), the summary ([`triage`]) and the locks that keep two
//! runs from writing the same campaign (`OUTDIR/.mfppr.lock`, [`lock_out_dir`]) or test
//! (`OUTDIR/<stem>/.mfppr.lock`, taken by [`run_one`]). Each test is reduced by
//! [`crate::reduce::reduce`] as a library call; `--tests-at-once K` tests run at once, each with
//! `N / K` check runs at once, which keeps every test's result independent of scheduling (mfppr's
//! output is the same for any `-j`). After the reduction, the result is checked once more (for
//! the failure's name) and blamed for the triage signature ([`triage`]). Scale-out ([`tasks`])
//! runs the same per-test step ([`run_one`]) as one command per test and merges the per-test
//! `result.json` files afterwards.

pub(crate) mod explain;
pub(crate) mod journal;
mod lend;
mod slips;
pub(crate) mod tasks;
pub(crate) mod triage;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;

use crate::atomic::write_atomic;
use crate::error::{coded, exit_kind, ExitKind};
use crate::judge::{Judge, Judged};
use crate::loaded::LoadedTest;
use crate::lock::{lock_exclusive, Lock, LOCK_FILE};
use crate::oracle::{ScriptOracle, Verdict};
use crate::pool::{spawn_workers, JobQueue};
use crate::reduce::{reduce, run_cache_dir, ReduceOptions};
use journal::{Journal, Outcome, Record};
use triage::CampaignSummary;

/// The per-test result file of a test's directory (written by every run of a test).
pub(crate) const RESULT: &str = "result.json";

/// File extensions taken from a directory given as input.
const EXTENSIONS: &[&str] = &["cpp", "cc", "cxx", "C"];

/// Everything a campaign needs to know.
#[derive(Clone, Debug)]
pub(crate) struct BatchOptions {
    /// The options every test is reduced with; `input`, `output`, `stats`, `jobs`, `resume` and
    /// `quiet` are set per test.
    pub reduce: ReduceOptions,
    /// The campaign's output directory.
    pub out_dir: PathBuf,
    /// Check runs at once, shared by the tests in flight.
    pub jobs: usize,
    /// Tests reduced at once.
    pub tests_at_once: usize,
    /// Skip finished tests and continue unfinished ones from their best result.
    pub resume: bool,
    /// No progress lines.
    pub quiet: bool,
    /// What the triage groups by.
    pub group_by: triage::GroupBy,
    /// Reduce the original again, with the result's trigger folded, when the slip check flags a
    /// result ([`slips::repair_slip`]).
    pub repair_slips: bool,
}

impl BatchOptions {
    /// Check runs at once for one test: `jobs / tests_at_once`, at least 1.
    pub(crate) fn jobs_per_test(&self) -> usize {
        (self.jobs / self.tests_at_once.max(1)).max(1)
    }
}

/// One test of a campaign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Test {
    /// Absolute path of the input.
    pub input: PathBuf,
    /// Its directory name under the output directory (unique in the campaign).
    pub stem: String,
    /// Its size, for the smallest-first order.
    pub bytes: u64,
}

/// Whether `stem` can name a test's directory under OUTDIR: one path component that is neither
/// `.`, `..` nor the name of one of the campaign's own files.
pub(crate) fn stem_is_valid(stem: &str) -> bool {
    let own = [
        LOCK_FILE,
        journal::JOURNAL,
        triage::SUMMARY,
        tasks::MANIFEST,
    ];
    !matches!(stem, "" | "." | "..") && !stem.contains('/') && !own.contains(&stem)
}

/// Create `out_dir` if missing and lock it for this process (see [`crate::lock`]): a second run
/// on the same campaign is refused while this one holds the lock.
pub(crate) fn lock_out_dir(out_dir: &Path) -> anyhow::Result<Lock> {
    std::fs::create_dir_all(out_dir).with_context(|| {
        format!(
            "cannot create the output directory {}; check -o",
            out_dir.display()
        )
    })?;
    lock_exclusive(
        &out_dir.join(LOCK_FILE),
        &format!("the output directory {}", out_dir.display()),
    )
}

/// The tests named by `inputs` (files, or directories searched recursively for C++ files other
/// than `*.reduced.cpp`), smallest first, with unique stems: a stem shared by several inputs, or
/// not valid ([`stem_is_valid`]: `...cpp`, `results.jsonl.cpp`), gets the first 8 hex digits of
/// the blake3 hash of the input's path appended. A path that is not UTF-8 is refused: the journal
/// records paths as JSON strings; so is a named input that is not a regular file, and a directory
/// entry with a C++ name that is not a regular file is skipped with a warning that names it.
pub(crate) fn discover(inputs: &[PathBuf]) -> anyhow::Result<Vec<Test>> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk(input, &mut files, &mut skipped)?;
        } else {
            files.push(input.clone());
        }
    }
    if !skipped.is_empty() {
        crate::messages::warn(format!(
            "skipped {} C++ file name(s) that are not regular files (a FIFO, a device or a \
             symlink): {}; copy the tests in as regular files to reduce them",
            skipped.len(),
            skipped.join(", ")
        ));
    }
    let mut tests = Vec::new();
    let mut seen = HashSet::new();
    for file in files {
        let input = std::path::absolute(&file)
            .with_context(|| format!("cannot resolve the path {}", file.display()))?;
        if seen.insert(input.clone()) {
            tests.push(test_of(input)?);
        }
    }
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for t in &tests {
        *count.entry(t.stem.clone()).or_insert(0) += 1;
    }
    for t in &mut tests {
        if count[&t.stem] > 1 || !stem_is_valid(&t.stem) {
            let h = blake3::hash(t.input.as_os_str().as_encoded_bytes()).to_hex();
            t.stem = format!("{}-{}", t.stem, &h[..8]);
        }
    }
    tests.sort_by(|a, b| (a.bytes, &a.input).cmp(&(b.bytes, &b.input)));
    Ok(tests)
}

/// The C++ files below `dir` (other than `*.reduced.cpp`) into `files`; entries with a C++ name
/// that are not regular files into `skipped`.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, skipped: &mut Vec<String>) -> anyhow::Result<()> {
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry =
            entry.with_context(|| format!("cannot list the directory {}", dir.display()))?;
        let path = entry.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let ext_ok = path
            .extension()
            .is_some_and(|e| EXTENSIONS.iter().any(|x| e == *x));
        if !ext_ok || name.ends_with(".reduced.cpp") {
            continue;
        }
        if entry.file_type().is_file() {
            files.push(path.to_path_buf());
        } else if !entry.file_type().is_dir() {
            skipped.push(path.display().to_string());
        }
    }
    Ok(())
}

/// The test at the absolute path `input`, with its file stem: refused when the path is not UTF-8
/// or not a regular file.
fn test_of(input: PathBuf) -> anyhow::Result<Test> {
    if input.to_str().is_none() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: the path is not UTF-8, which the campaign's journal cannot record; \
                 rename the file",
                input.display()
            ),
        ));
    }
    let meta = std::fs::metadata(&input).map_err(|e| {
        coded(
            ExitKind::Input,
            format!("cannot read input {}: {e}; check the path", input.display()),
        )
    })?;
    if !meta.is_file() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "input {} is {}, not an MF++ test file; give regular files or directories",
                input.display(),
                crate::atomic::kind_of(&meta.file_type())
            ),
        ));
    }
    let stem = input
        .file_stem()
        .map_or_else(|| "test".to_string(), |s| s.to_string_lossy().into_owned());
    Ok(Test {
        input,
        stem,
        bytes: meta.len(),
    })
}

/// Reduce one test into `OUTDIR/<stem>/`, holding its lock (`OUTDIR/<stem>/.mfppr.lock`), and
/// describe how it ended; the record is also written to `OUTDIR/<stem>/result.json`. `Err` only
/// when the campaign cannot go on (interrupted, the output directory is not writable, another
/// process reduces the same test); a test that fails is an `Ok` record.
pub(crate) fn run_one(test: &Test, opts: &BatchOptions) -> anyhow::Result<Record> {
    let began = Instant::now();
    let dir = opts.out_dir.join(&test.stem);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the test directory {}", dir.display()))?;
    let _lock = lock_exclusive(
        &dir.join(LOCK_FILE),
        &format!("the test directory {}", dir.display()),
    )?;
    let mut record = Record::new(
        test.input.clone(),
        test.stem.clone(),
        test.bytes,
        Outcome::InputError,
    );
    match crate::input::read_test(&test.input) {
        Ok(text) => {
            record.hash = blake3::hash(&text).to_hex().to_string();
            record.bytes_before = text.len() as u64;
            record.bytes_after = record.bytes_before;
            reduce_into(&mut record, &dir, opts)?;
        }
        Err(e) => {
            record.message = Some(format!("{e:#}"));
        }
    }
    if record.outcome != Outcome::Reduced {
        record.signature = record.outcome.name().to_string();
    }
    record.wall_secs = began.elapsed().as_secs_f64();
    let json = serde_json::to_vec_pretty(&record).context("cannot serialise a result")?;
    let path = dir.join(RESULT);
    write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(record)
}

/// The reduction step of [`run_one`]: fills the outcome, sizes, calls and signature. When the
/// slip check flags the result, the original is reduced again with the result's trigger folded
/// ([`slips::repair_slip`]).
fn reduce_into(record: &mut Record, dir: &Path, opts: &BatchOptions) -> anyhow::Result<()> {
    let output = dir.join(format!("{}.reduced.cpp", record.stem));
    let mut ro = opts.reduce.clone();
    ro.input = record.input.clone();
    ro.resume = opts.resume && output.exists();
    ro.output = Some(output);
    ro.stats = Some(dir.join("stats.json"));
    ro.jobs = opts.jobs_per_test();
    ro.quiet = true;
    // One cache for the reductions, the last checks and blame (precompiled include block, the
    // originals' failures), unless the campaign or the user has one.
    let own_cache = run_cache_dir(&ro)?;
    if let Some(own) = &own_cache {
        ro.cache_dir = Some(own.path().to_path_buf());
    }
    match reduce_and_triage(record, &ro, &ro.input)? {
        Some(folded) if opts.repair_slips => slips::repair_slip(record, dir, &ro, &folded),
        _ => Ok(()),
    }
}

/// Reduce `ro.input` into `ro.output`, triage the result into `record` and ask the slip check
/// against the campaign's `original` test; returns the folded original when it flags the result.
pub(super) fn reduce_and_triage(
    record: &mut Record,
    ro: &ReduceOptions,
    original: &Path,
) -> anyhow::Result<Option<Vec<u8>>> {
    let (Some(output), Some(stats)) = (ro.output.clone(), ro.stats.clone()) else {
        anyhow::bail!("a campaign reduction needs an output and a stats file");
    };
    let outcome = match reduce(ro) {
        Ok(outcome) => outcome,
        Err(e) => {
            record.outcome = match exit_kind(&e) {
                ExitKind::Interrupted => return Err(e),
                ExitKind::NotInteresting => Outcome::NotInteresting,
                ExitKind::Oracle => Outcome::OracleError,
                _ => Outcome::InputError,
            };
            record.message = Some(format!("{e:#}"));
            return Ok(None);
        }
    };
    let reduced = std::fs::read(&output)
        .with_context(|| format!("cannot read the result {}", output.display()))?;
    // The result is checked once more for the failure's name, under the reduction's own
    // exit-status rule. `outcome.final_run` (the re-check's last run) is not used instead: the
    // journal counts this run in each test's oracle calls, and dropping it would change them.
    let mut oracle = ScriptOracle::new(&ro.check, &ro.input, ro.extra_env.clone())?;
    oracle.set_timeout(Some(outcome.timeout));
    oracle.set_expected(outcome.expected);
    oracle.set_cache_dir(ro.cache_dir.clone());
    let Judged { verdict, run } = oracle.judge(&reduced)?;
    let interrupted = || {
        coded(
            ExitKind::Interrupted,
            format!("interrupted while checking {}", output.display()),
        )
    };
    if crate::interrupt::requested() {
        return Err(interrupted());
    }
    let failure = triage::failure_of(&run.stderr_tail, run.end);
    let interesting = verdict == Verdict::Interesting;
    let found = match suspects(ro, &reduced, &oracle, interesting) {
        Ok(found) => found,
        Err(e) => {
            record.message = Some(format!("cannot list the MRs of the result: {e:#}"));
            Suspects::default()
        }
    };
    if crate::interrupt::requested() {
        return Err(interrupted());
    }
    let folded = slips::check_slip(record, original, ro, &oracle, interesting, &found.triggers);
    if crate::interrupt::requested() {
        return Err(interrupted());
    }
    record.outcome = Outcome::Reduced;
    record.bytes_after = reduced.len() as u64;
    record.oracle_calls = outcome.stats.oracle_calls as u64;
    record.triage_calls = 1 + found.blame_calls + found.knockout_calls + record.slip_check_calls;
    record.signature = triage::signature(&failure, &found.suspects, &found.from);
    record.failure = Some(failure);
    found.journal_triage(record);
    triage::sign_by_library(record, &output, &reduced, ro);
    record.output = Some(output);
    record.stats = Some(stats);
    Ok(folded)
}

/// What triage knows about the MRs of a reduced test.
#[derive(Debug, Default)]
struct Suspects {
    /// The MR families left in it.
    mrs: Vec<String>,
    /// The suspect families.
    suspects: Vec<String>,
    /// The library calls the blamed suspects reach.
    library_calls: Vec<String>,
    /// Where the suspects come from (see [`Record::suspects_from`]).
    from: String,
    /// Check runs of blame.
    blame_calls: u64,
    /// The MR families whose calls the failure needs (see [`crate::blame::needs`]).
    needs: Vec<String>,
    /// Check runs of those knockouts.
    knockout_calls: u64,
    /// Blame's innermost suspects and the MRs inside them.
    triggers: crate::blame::Triggers,
}

impl Suspects {
    /// Journal what triage found in `record`.
    fn journal_triage(self, record: &mut Record) {
        record.mrs = self.mrs;
        record.suspects = self.suspects;
        record.library_calls = self.library_calls;
        record.suspects_from = self.from;
        record.blame_calls = self.blame_calls;
        record.needs = self.needs;
        record.knockout_calls = self.knockout_calls;
        record.triggers = self.triggers.mrs;
        record.within_triggers = self.triggers.within;
        record.introduces = self.triggers.introduces;
    }
}

/// The remaining MR families of the reduced text and its suspects: blame's
/// ([`crate::blame::blame`], one check run per foldable call, one more when there are several)
/// when the result is still interesting and every instance has a base to fold to; otherwise
/// (and when no single fold removes the failure, yet folding all does) the families of the steps
/// where a checked variant differs from the reference. When blame names no trigger (no
/// innermost suspect), the knockouts ([`crate::blame::needs`]) say which families' calls the
/// failure needs.
fn suspects(
    ro: &ReduceOptions,
    reduced: &[u8],
    judge: &dyn Judge,
    interesting: bool,
) -> anyhow::Result<Suspects> {
    let loaded = LoadedTest::load(&ro.input, reduced.to_vec(), &ro.spec_paths())?;
    let LoadedTest {
        model, catalogue, ..
    } = &loaded;
    let mut found = Suspects {
        mrs: triage::remaining_mrs(model),
        ..Suspects::default()
    };
    let unfoldable = model.instances.iter().find(|i| match (i.kind, &i.family) {
        (Some(kind), Some(family)) => catalogue.base_of(kind, family).is_none(),
        _ => true,
    });
    let why = if !interesting {
        Some("the result was not interesting on its last check".to_string())
    } else if let Some(i) = unfoldable {
        Some(format!(
            "the catalogue has no base MR to fold {} to",
            i.name
        ))
    } else {
        let blame = crate::blame::blame(reduced, model, catalogue, judge, None)?;
        found.blame_calls = blame.oracle_calls as u64;
        found.triggers = blame.triggers(model);
        let suspect = blame.folds.iter().filter(|f| f.suspect);
        let families: BTreeSet<String> = suspect.clone().map(|f| f.family.clone()).collect();
        let calls: BTreeSet<String> = suspect.flat_map(|f| f.library_ops.clone()).collect();
        if !families.is_empty() {
            found.suspects = families.into_iter().collect();
            found.library_calls = calls.into_iter().collect();
            found.from = "blame".to_string();
            None
        } else if blame.base_operations_implicated {
            found.from = triage::BASE_OPERATIONS.to_string();
            None
        } else {
            Some("no single fold removes the failure".to_string())
        }
    };
    if interesting && found.triggers.mrs.is_empty() {
        let dirs = crate::program::check_include_dirs(&ro.include_dirs, &ro.input, &ro.extra_env);
        let compiles = |c: &[u8]| crate::program::compiles(c, &dirs, &ro.extra_env);
        let (needs, runs) = crate::blame::needs(reduced, model, catalogue, judge, &compiles)?;
        found.knockout_calls = runs as u64;
        found.needs = needs;
    }
    if let Some(why) = why {
        found.suspects = triage::suspect_mrs(model);
        found.from = format!("variants: {why}");
    }
    Ok(found)
}

/// The latest record per stem, in stem order.
pub(crate) fn latest_per_stem(records: Vec<Record>) -> Vec<Record> {
    let mut by_stem = BTreeMap::new();
    for r in records {
        by_stem.insert(r.stem.clone(), r);
    }
    by_stem.into_values().collect()
}

/// Shared state of the workers of [`run`].
struct Progress {
    journal: Mutex<(Journal, Vec<Record>)>,
    done: AtomicUsize,
    done_here: AtomicUsize,
    total: usize,
    began: Instant,
    quiet: bool,
    group_by: triage::GroupBy,
}

impl Progress {
    /// Journal `record` and print a progress line.
    fn finish(&self, record: Record) -> anyhow::Result<()> {
        let mut guard = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.append(&record)?;
        guard.1.push(record);
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let here = self.done_here.fetch_add(1, Ordering::SeqCst) + 1;
        if !self.quiet {
            let groups = triage::summarise(&guard.1, self.group_by).groups;
            let elapsed = self.began.elapsed().as_secs_f64();
            let left = elapsed / here as f64 * (self.total - done) as f64;
            crate::messages::progress(format!(
                "mfppr batch: {done}/{} tests done, {} groups, {elapsed:.0} s elapsed, about \
                 {left:.0} s left",
                self.total,
                groups.len()
            ));
        }
        Ok(())
    }
}

/// Open the campaign's journal in `opts.out_dir` (refused when it holds one and `--resume` is
/// not given): the journal, its records, and the tests of `tests` not finished in it (same stem
/// and same input bytes).
fn open_journal<'t>(
    tests: &'t [Test],
    opts: &BatchOptions,
) -> anyhow::Result<(Journal, Vec<Record>, Vec<&'t Test>)> {
    let journal = Journal::open(&opts.out_dir)?;
    let previous = journal::read(&opts.out_dir)?;
    if !opts.resume && !previous.is_empty() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{} already holds a campaign journal; pass --resume to continue it, or choose \
                 another -o",
                opts.out_dir.display()
            ),
        ));
    }
    let finished: HashSet<(String, String)> = previous
        .iter()
        .map(|r| (r.stem.clone(), r.hash.clone()))
        .collect();
    let mut pending = Vec::new();
    for t in tests {
        let hash = std::fs::read(&t.input)
            .map(|text| blake3::hash(&text).to_hex().to_string())
            .unwrap_or_default();
        if !finished.contains(&(t.stem.clone(), hash)) {
            pending.push(t);
        }
    }
    if !opts.quiet && pending.len() < tests.len() {
        crate::messages::progress(format!(
            "mfppr batch: {} of {} tests already finished in {}; skipping them",
            tests.len() - pending.len(),
            tests.len(),
            opts.out_dir.join(journal::JOURNAL).display()
        ));
    }
    Ok((journal, previous, pending))
}

/// Reduce `pending` with `--tests-at-once` workers ([`crate::pool`]), sharing the campaign's `-j`
/// slots among the tests in flight ([`lend`]), each test's record going to `progress`; the first error (an interruption only when nothing else failed) stops the others
/// from taking a test, and so does an interrupt.
fn reduce_pending(
    pending: &[&Test],
    opts: &BatchOptions,
    progress: &Progress,
) -> Option<anyhow::Error> {
    // With several tests at once the largest start first: they bound the campaign's wall time,
    // and the small ones fill the slots around them (one at a time, smallest first gives the
    // first results soonest).
    let mut order = pending.to_vec();
    if opts.tests_at_once > 1 {
        order.sort_by(|a, b| (b.bytes, &a.input).cmp(&(a.bytes, &b.input)));
    }
    let queue = JobQueue::of(order);
    let failed: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let fail = |e: anyhow::Error| {
        queue.stop();
        let mut slot = failed.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() || exit_kind(&e) != ExitKind::Interrupted {
            *slot = Some(e);
        }
    };
    let workers = opts.tests_at_once.max(1).min(pending.len());
    // The slots of finished tests go to those still in flight ([`lend`]).
    let lender = lend::Lender::new(opts.jobs);
    std::thread::scope(|scope| {
        let started = spawn_workers(scope, workers, "mfppr-test", &queue, |test: &Test| {
            let loan = lender.lend();
            let mut lent = opts.clone();
            // One slot in all has nothing to lend: such a campaign's searches stay as `-j1`'s.
            lent.reduce.lent_jobs = (opts.jobs > 1).then(|| loan.slots());
            if let Err(e) = run_one(test, &lent).and_then(|r| progress.finish(r)) {
                fail(e);
            }
        });
        if let Err(e) = started {
            fail(e);
        }
    });
    failed.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Reduce every test of `tests` (a local campaign), holding the lock of the output directory;
/// returns the summary of the whole journal. The tests share one cache directory for the check scripts (their include blocks are mostly
/// the same), unless the user chose one.
pub(crate) fn run(tests: &[Test], opts: &BatchOptions) -> anyhow::Result<CampaignSummary> {
    crate::interrupt::install()?;
    let shared_cache = run_cache_dir(&opts.reduce)?;
    let mut shared = opts.clone();
    if let Some(dir) = &shared_cache {
        shared.reduce.cache_dir = Some(dir.path().to_path_buf());
    }
    let opts = &shared;
    let _lock = lock_out_dir(&opts.out_dir)?;
    let (journal, previous, pending) = open_journal(tests, opts)?;
    let progress = Progress {
        journal: Mutex::new((journal, previous)),
        done: AtomicUsize::new(tests.len() - pending.len()),
        done_here: AtomicUsize::new(0),
        total: tests.len(),
        began: Instant::now(),
        quiet: opts.quiet,
        group_by: opts.group_by,
    };
    let failed = reduce_pending(&pending, opts, &progress);
    let (_, records) = progress
        .journal
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let summary = triage::summarise(&latest_per_stem(records), opts.group_by);
    triage::write_summary(&opts.out_dir, &summary)?;
    if crate::interrupt::requested()
        || failed.as_ref().map(exit_kind) == Some(ExitKind::Interrupted)
    {
        return Err(coded(
            ExitKind::Interrupted,
            format!(
                "interrupted; {} of {} tests finished (journal {}); continue with --resume",
                progress.done.load(Ordering::SeqCst),
                tests.len(),
                opts.out_dir.join(journal::JOURNAL).display()
            ),
        ));
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// What `--collect` found.
#[derive(Debug)]
pub(crate) struct Collected {
    /// The summary of the journal, with the missing tasks as tests of outcome `missing`.
    pub summary: CampaignSummary,
    /// Stems of the emitted tasks ([`tasks::Manifest`]) with no result, in task-file order.
    pub missing: Vec<String>,
}

/// `--collect`, holding the lock of `out_dir`: merge the per-test `result.json` files under
/// `out_dir` into the journal (those not in it yet) and summarise the whole journal; a task of
/// the last task file emitted for `out_dir` (`OUTDIR/tasks.json`) with no record is counted as
/// `missing` in the summary, never journaled, so that collecting after a rerun finds its result.
pub(crate) fn collect(out_dir: &Path, group_by: triage::GroupBy) -> anyhow::Result<Collected> {
    if !out_dir.is_dir() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{} is not a directory; give the -o of the campaign whose tasks ran",
                out_dir.display()
            ),
        ));
    }
    let _lock = lock_out_dir(out_dir)?;
    let mut journal = Journal::open(out_dir)?;
    let known: HashSet<(String, String)> = journal::read(out_dir)?
        .into_iter()
        .map(|r| (r.stem, r.hash))
        .collect();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(out_dir)
        .with_context(|| format!("cannot list {}", out_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path().join(RESULT)))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    for path in entries {
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let record: Record = match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => {
                crate::messages::warn(format!(
                    "{}: not a result ({e}); skipping it",
                    path.display()
                ));
                continue;
            }
        };
        if !known.contains(&(record.stem.clone(), record.hash.clone())) {
            journal.append(&record)?;
        }
    }
    let mut records = latest_per_stem(journal::read(out_dir)?);
    let finished: HashSet<String> = records.iter().map(|r| r.stem.clone()).collect();
    let mut missing = Vec::new();
    for task in tasks::read_manifest(out_dir)?.map_or_else(Vec::new, |m| m.tasks) {
        if !finished.contains(&task.stem) {
            missing.push(task.stem.clone());
            records.push(missing_record(task));
        }
    }
    let summary = triage::summarise(&records, group_by);
    triage::write_summary(out_dir, &summary)?;
    Ok(Collected { summary, missing })
}

/// `--triage-only OUTDIR`: group the finished results journaled in `out_dir` again by `group_by`,
/// reducing nothing, and write the summary (the same bytes as the campaign's own, grouped the
/// same way). A reduced test journaled by an older mfppr (no `signature_from`) gets its library
/// signature from its result now (with `ro`'s include directories and specs); where that cannot
/// be done, a warning says so and the test keeps its MR-family signature.
pub(crate) fn triage_only(
    out_dir: &Path,
    group_by: triage::GroupBy,
    ro: &ReduceOptions,
) -> anyhow::Result<CampaignSummary> {
    if !out_dir.join(journal::JOURNAL).is_file() {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{} holds no campaign journal ({}); give the -o of a finished campaign",
                out_dir.display(),
                journal::JOURNAL
            ),
        ));
    }
    let _lock = lock_out_dir(out_dir)?;
    let mut records = latest_per_stem(journal::read(out_dir)?);
    let older = records
        .iter_mut()
        .filter(|r| r.outcome == Outcome::Reduced && r.signature_from.is_empty());
    for r in older {
        let Some(output) = r.output.clone() else {
            continue;
        };
        match std::fs::read(&output) {
            Ok(text) => triage::sign_by_library(r, &output, &text, ro),
            Err(e) => r.message = Some(format!("cannot read {}: {e}", output.display())),
        }
        if r.signature_from != triage::FROM_LIBRARY {
            crate::messages::warn(format!(
                "cannot re-triage {} by its library operations ({}); it keeps its MR-family \
                 signature",
                r.stem,
                r.message.as_deref().unwrap_or_default()
            ));
        }
    }
    let summary = triage::summarise(&records, group_by);
    triage::write_summary(out_dir, &summary)?;
    Ok(summary)
}

/// The summary's record of an emitted task that left no result.
fn missing_record(task: tasks::Task) -> Record {
    let mut record = Record::new(task.input, task.stem, 0, Outcome::Missing);
    record.signature = Outcome::Missing.name().to_string();
    record.message = Some("no result.json: the task did not run, or did not finish".to_string());
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discover_orders_by_size_and_disambiguates_stems() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("t.cpp"), "xxxx").unwrap();
        std::fs::write(b.join("t.cpp"), "xx").unwrap();
        std::fs::write(a.join("u.cpp"), "xxx").unwrap();
        std::fs::write(a.join("u.reduced.cpp"), "x").unwrap();
        std::fs::write(a.join("notes.txt"), "x").unwrap();
        let tests = discover(&[dir.path().to_path_buf()]).unwrap();
        let sizes: Vec<u64> = tests.iter().map(|t| t.bytes).collect();
        assert_eq!(sizes, [2, 3, 4]);
        assert_eq!(tests[1].stem, "u");
        assert!(tests[0].stem.starts_with("t-") && tests[2].stem.starts_with("t-"));
        assert_ne!(tests[0].stem, tests[2].stem);
        assert_eq!(discover(&[a.join("t.cpp")]).unwrap()[0].stem, "t");
    }

    #[test]
    fn a_stem_never_leaves_its_directory_nor_takes_a_campaign_file() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "...cpp",
            "..cpp",
            "results.jsonl.cpp",
            ".mfppr.lock.cpp",
            "-x.cpp",
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let tests = discover(&[dir.path().to_path_buf()]).unwrap();
        let stems: Vec<&str> = tests.iter().map(|t| t.stem.as_str()).collect();
        assert!(stems.iter().all(|s| stem_is_valid(s)), "{stems:?}");
        assert!(stems.contains(&"-x"));
        for reserved in [
            "..",
            ".",
            "results.jsonl",
            ".mfppr.lock",
            "tasks.json",
            "a/b",
            "",
        ] {
            assert!(!stem_is_valid(reserved), "{reserved}");
        }
        let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xff.cpp"));
        std::fs::write(&bad, "x").unwrap();
        let refused = discover(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(
            format!("{refused:#}").contains("is not UTF-8"),
            "{refused:#}"
        );
    }

    /// The reduced merge fixture, its options with the spec, and an oracle running `script`.
    fn blamed(script: &str) -> (tempfile::TempDir, Suspects) {
        use std::os::unix::fs::PermissionsExt;
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let check = dir.path().join("check.sh");
        std::fs::write(&check, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
        let input = root.join("fixtures/expected/iset_merge_small_a.reduced.cpp");
        let mut ro = ReduceOptions::new(&input, &check);
        ro.include_dirs = vec![root.join("fixtures/iset/spec")];
        let oracle = ScriptOracle::new(&check, &input, Vec::new()).unwrap();
        let text = std::fs::read(&input).unwrap();
        let found = suspects(&ro, &text, &oracle, true).unwrap();
        (dir, found)
    }

    #[test]
    fn blame_gives_the_suspect_families_or_base_operations() {
        // The failure needs the shift_by_parts instance: folding it to shift's base removes it.
        let (_dir, found) = blamed(r#"grep -q 'shift_by_parts_2_5(fctx' "$1""#);
        assert_eq!(found.suspects, ["relations::shift"]);
        assert_eq!(found.from, "blame");
        assert_eq!(found.blame_calls, 1, "one site, no fold-all run");
        assert!(found.library_calls.contains(&"iset::unite".to_string()));
        assert!(found.mrs.contains(&"relations::complement".to_string()));
        // A failure no fold removes: the base operations alone.
        let (_dir, found) = blamed("exit 0");
        assert!(found.suspects.is_empty());
        assert_eq!(found.from, triage::BASE_OPERATIONS);
        assert_eq!(
            triage::signature("check_equal", &found.suspects, &found.from),
            "check_equal | base operations"
        );
    }

    #[test]
    fn jobs_are_shared_by_the_tests_in_flight() {
        let mut opts = BatchOptions {
            reduce: ReduceOptions::new("t.cpp", "c.py"),
            out_dir: PathBuf::from("o"),
            jobs: 8,
            tests_at_once: 3,
            resume: false,
            quiet: true,
            group_by: triage::GroupBy::Library,
            repair_slips: true,
        };
        assert_eq!(opts.jobs_per_test(), 2);
        opts.tests_at_once = 16;
        assert_eq!(opts.jobs_per_test(), 1);
    }
}
