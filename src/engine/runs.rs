//! The oracle runs in flight: each runs on its own thread and reports its verdict on the engine's
//! channel ([`RunReport`]); a run nothing needs any more is cancelled (killed) and counted as
//! wasted when it reports.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::Context;

use super::InFlightEnd;
use crate::opportunity::OpportunityKind;
use crate::oracle::Verdict;

/// How a started oracle run ended, as reported by its thread.
pub(super) struct RunResult {
    pub(super) verdict: anyhow::Result<Verdict>,
    pub(super) elapsed: Duration,
    /// The run was cancelled (or interrupted) before or while it ran: its verdict means nothing.
    pub(super) cancelled: bool,
}

/// A report from an oracle run's thread: run id, candidate hash, result.
pub(super) type RunReport = (u64, blake3::Hash, RunResult);

/// An oracle run in flight.
pub(super) struct Running {
    pub(super) id: u64,
    pub(super) kind: OpportunityKind,
    /// The fingerprints of the candidate's opportunities and its window's [`Hints`](super::beliefs::Hints) key.
    pub(super) prints: Vec<u64>,
    pub(super) window: Option<u64>,
    /// Set to kill the run.
    pub(super) cancel: Arc<AtomicBool>,
}

/// The oracle runs of the search, by candidate hash.
#[derive(Default)]
pub(super) struct Runs {
    pub(super) running: HashMap<blake3::Hash, Running>,
    /// Ended; their verdicts are not used yet.
    pub(super) finished: HashMap<blake3::Hash, (OpportunityKind, RunResult)>,
    /// Runs cancelled because nothing needs them any more, not reported yet (id → kind).
    pub(super) cancelled: HashMap<u64, OpportunityKind>,
    /// Id of the next run.
    pub(super) next_id: u64,
}

impl Runs {
    /// Threads still running (cancelled ones included: they are being killed).
    pub(super) fn alive(&self) -> usize {
        self.running.len() + self.cancelled.len()
    }

    pub(super) fn cancel(&mut self, hash: &blake3::Hash) {
        if let Some(run) = self.running.remove(hash) {
            run.cancel.store(true, Ordering::SeqCst);
            self.cancelled.insert(run.id, run.kind);
        }
    }
}

/// Where and how an oracle run reports: as run `id` of candidate `hash`, on the engine's channel,
/// cancelled if `cancel` (or the interrupt) is set when it ends.
pub(super) struct Reporter<'a> {
    pub(super) id: u64,
    pub(super) hash: blake3::Hash,
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) interrupt: &'a AtomicBool,
    pub(super) sender: mpsc::Sender<RunReport>,
}

impl<'a> Reporter<'a> {
    /// Do `work` (given the kill flag) on its own thread in `scope`, then report its verdict and
    /// how long it took.
    pub(super) fn spawn<'s>(
        self,
        scope: &'s std::thread::Scope<'s, '_>,
        work: impl FnOnce(&AtomicBool) -> InFlightEnd + Send + 's,
    ) -> anyhow::Result<()>
    where
        'a: 's,
    {
        std::thread::Builder::new()
            .name(format!("mfppr-oracle-{}", self.id))
            .spawn_scoped(scope, move || {
                let (verdict, elapsed) = work(&self.cancel);
                let run = RunResult {
                    verdict,
                    elapsed,
                    cancelled: self.cancel.load(Ordering::SeqCst)
                        || self.interrupt.load(Ordering::SeqCst),
                };
                // The engine only stops listening once every run has reported.
                let _ = self.sender.send((self.id, self.hash, run));
            })
            .context("cannot start a thread for an oracle run")?;
        Ok(())
    }
}

/// Starts an oracle run (id, hash, bytes, kill flag) on its own thread; the result comes back on
/// the engine's channel.
pub(super) type StartRun<'s> =
    dyn Fn(u64, blake3::Hash, Arc<Vec<u8>>, Arc<AtomicBool>) -> anyhow::Result<()> + 's;

/// One search's oracle runs: those in flight, how to start another, and where their ends arrive.
pub(super) struct Flight<'s> {
    pub(super) runs: Runs,
    pub(super) start: &'s StartRun<'s>,
    pub(super) results: &'s mpsc::Receiver<RunReport>,
}
