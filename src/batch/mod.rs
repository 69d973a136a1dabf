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

mod campaign;
mod discover;
pub(crate) mod journal;
mod lend;
mod one;
pub(crate) mod page;
mod rereading;
mod slips;
pub(crate) mod tasks;
pub(crate) mod triage;
mod value_record;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::{coded, exit_kind, ExitKind};
use crate::pool::{spawn_workers, JobQueue};
use crate::reduce::run_cache_dir;
use journal::{Journal, Record};
use triage::CampaignSummary;

pub(crate) use campaign::{latest_per_stem, lock_out_dir, BatchOptions, RESULT};
pub(crate) use discover::{discover, stem_is_valid, Test};
pub(crate) use one::run_one;
pub(crate) use rereading::{collect, triage_only};

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
        let hash = crate::input::read_test(&t.input)
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
}
