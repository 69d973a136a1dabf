//! Running independent jobs at once outside the engine: a fixed set of scoped worker threads
//! taking jobs from one shared queue, in the order they were pushed.
//!
//! `reduce` runs its initial checks' spare slots on it (jobs arrive while the workers run, and
//! stop being taken once the original's verdict is known), `batch` its tests at once (every
//! job known up front), and `coverage` its generator runs, test runs, metamorphic isolations and
//! coverage files through [`map`] (results in the items' order). The engine keeps its own
//! scheduler (`engine/`), which needs to kill and adopt runs as the search's needs change. Which
//! job a worker gets depends on timing only; callers keep their results independent of it (each
//! job has its own result slot, or results are journaled as they end).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::thread::Scope;
use std::time::Duration;

use anyhow::Context;

use crate::oracle::lock;

/// How often a worker waiting for a job looks at the interrupt flag.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

/// Jobs for the workers of [`spawn_workers`], taken first in, first out.
#[derive(Debug)]
pub(crate) struct JobQueue<J> {
    state: Mutex<QueueState<J>>,
    /// Notified when a job is pushed or the queue is closed or stopped.
    changed: Condvar,
    /// Whether an interrupt request ends [`JobQueue::next`] (not for [`map`], whose jobs look at
    /// the interrupt flag themselves).
    interruptible: bool,
}

#[derive(Debug)]
struct QueueState<J> {
    jobs: VecDeque<J>,
    /// No more jobs will come: a worker that finds the queue empty ends.
    closed: bool,
    /// No job is taken any more, even if some are queued.
    stopped: bool,
}

impl<J> JobQueue<J> {
    /// An open, empty queue.
    pub(crate) fn new() -> JobQueue<J> {
        JobQueue {
            state: Mutex::new(QueueState {
                jobs: VecDeque::new(),
                closed: false,
                stopped: false,
            }),
            changed: Condvar::new(),
            interruptible: true,
        }
    }

    /// A closed queue holding `jobs`.
    pub(crate) fn of(jobs: impl IntoIterator<Item = J>) -> JobQueue<J> {
        let queue = JobQueue::new();
        {
            let mut state = lock(&queue.state);
            state.jobs.extend(jobs);
            state.closed = true;
        }
        queue
    }

    /// Queue `job` for the next free worker.
    pub(crate) fn push(&self, job: J) {
        lock(&self.state).jobs.push_back(job);
        self.changed.notify_one();
    }

    /// No more jobs will come.
    pub(crate) fn close(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
    }

    /// Take no job any more (those running go on).
    pub(crate) fn stop(&self) {
        lock(&self.state).stopped = true;
        self.changed.notify_all();
    }

    /// Whether [`JobQueue::stop`] was called.
    pub(crate) fn is_stopped(&self) -> bool {
        lock(&self.state).stopped
    }

    /// The next job, waiting while the queue is open and empty; `None` once it is stopped, closed
    /// and empty, or an interrupt was requested (Ctrl-C, SIGTERM) and the queue is interruptible.
    pub(crate) fn next(&self) -> Option<J> {
        let mut state = lock(&self.state);
        loop {
            if state.stopped || (self.interruptible && crate::interrupt::requested()) {
                return None;
            }
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state = self
                .changed
                .wait_timeout(state, INTERRUPT_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Start `workers` threads named `name` in `scope`, each doing `work` on the jobs of `queue` until
/// [`JobQueue::next`] has none. The threads end with the scope at the latest.
pub(crate) fn spawn_workers<'s, 'e: 's, J, F>(
    scope: &'s Scope<'s, 'e>,
    workers: usize,
    name: &str,
    queue: &'e JobQueue<J>,
    work: F,
) -> anyhow::Result<()>
where
    J: Send + 'e,
    F: Fn(J) + Send + Clone + 'e,
{
    for _ in 0..workers {
        let work = work.clone();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn_scoped(scope, move || {
                while let Some(job) = queue.next() {
                    work(job);
                }
            })
            .with_context(|| format!("cannot start a thread ({name})"))?;
    }
    Ok(())
}

/// `work` on every item on `workers` threads (at least one), named `name`: the results in the
/// items' order, or the first error in that order. No item is taken after an error (those already
/// taken, all earlier in the order, end first). The queue does not look at the interrupt flag
/// (nor count as a look at it): each job sees an interrupt itself, as a process run does.
pub(crate) fn map<T, R, F>(
    workers: usize,
    name: &str,
    items: impl IntoIterator<Item = T>,
    work: F,
) -> anyhow::Result<Vec<R>>
where
    T: Send,
    R: Send,
    F: Fn(T) -> anyhow::Result<R> + Sync,
{
    let mut queue = JobQueue::of(items.into_iter().enumerate());
    queue.interruptible = false;
    let count = lock(&queue.state).jobs.len();
    let slots: Vec<Mutex<Option<anyhow::Result<R>>>> =
        (0..count).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        spawn_workers(
            scope,
            workers.clamp(1, count.max(1)),
            name,
            &queue,
            |(i, item)| {
                let result = work(item);
                if result.is_err() {
                    queue.stop();
                }
                *lock(&slots[i]) = Some(result);
            },
        )
    })?;
    // Only items after an error are left untaken: the first empty slot comes after it.
    slots
        .into_iter()
        .map_while(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_take_every_job_once_and_stop_when_asked() {
        let queue = JobQueue::of(0..100u32);
        let done = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            spawn_workers(scope, 4, "test", &queue, |j| lock(&done).push(j)).unwrap();
        });
        let mut done = done.into_inner().unwrap();
        done.sort_unstable();
        assert_eq!(done, (0..100).collect::<Vec<_>>());

        let queue = JobQueue::new();
        queue.push(1);
        queue.stop();
        queue.push(2);
        assert!(queue.is_stopped());
        assert_eq!(queue.next(), None);
    }

    #[test]
    fn an_open_queue_waits_for_jobs_until_closed() {
        let queue = JobQueue::new();
        let done = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            spawn_workers(scope, 2, "test", &queue, |j| lock(&done).push(j)).unwrap();
            for j in 0..10 {
                queue.push(j);
            }
            queue.close();
        });
        assert_eq!(done.into_inner().unwrap().len(), 10);
    }

    #[test]
    fn map_keeps_the_order_and_gives_the_first_error_in_it() {
        for workers in [0, 1, 3, 200] {
            let squares = map(workers, "test", 0..100u64, |i| Ok(i * i)).unwrap();
            assert_eq!(squares, (0..100).map(|i| i * i).collect::<Vec<_>>());
        }
        assert!(map(4, "test", Vec::<u8>::new(), Ok).unwrap().is_empty());
        let err = map(3, "test", 0..50u32, |i| {
            if i % 7 == 5 {
                anyhow::bail!("item {i}")
            }
            Ok(i)
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "item 5");
    }
}
