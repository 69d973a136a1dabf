//! A campaign's check slots shared by its tests in flight (issue 42): with `-j N` and `K` tests
//! at once, each test starts with `N / K` slots; once fewer tests are in flight (the campaign's
//! last ones), the slots the finished tests leave idle are lent to those still running, and taken
//! back when a new test starts. A test's result does not depend on its slots (the engine's output
//! is the same for every `-j`), so neither do the campaign's results and groups.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The campaign's slots and the tests holding them.
#[derive(Debug)]
pub(super) struct Lender {
    /// `-j N`: the check runs of the whole campaign at once.
    total: usize,
    /// The slots of each test in flight, by start order.
    holders: Mutex<Vec<(u64, Arc<AtomicUsize>)>>,
    next: AtomicUsize,
}

/// One test's share: its slots, read by its search at each launch; given back when dropped.
#[derive(Debug)]
pub(super) struct Loan<'a> {
    lender: &'a Lender,
    id: u64,
    slots: Arc<AtomicUsize>,
}

impl Lender {
    /// `total` slots for the campaign.
    pub(super) fn new(total: usize) -> Lender {
        Lender {
            total: total.max(1),
            holders: Mutex::new(Vec::new()),
            next: AtomicUsize::new(0),
        }
    }

    /// A test starts: it takes its share, and the others' shares shrink to make room.
    pub(super) fn lend(&self) -> Loan<'_> {
        let id = self.next.fetch_add(1, Ordering::SeqCst) as u64;
        let slots = Arc::new(AtomicUsize::new(0));
        let mut holders = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        holders.push((id, Arc::clone(&slots)));
        self.share(&holders);
        Loan {
            lender: self,
            id,
            slots,
        }
    }

    /// Share the slots out: `total / n` each, the first `total % n` holders one more.
    fn share(&self, holders: &[(u64, Arc<AtomicUsize>)]) {
        let n = holders.len().max(1);
        for (i, (_, slots)) in holders.iter().enumerate() {
            let extra = usize::from(i < self.total % n);
            slots.store((self.total / n + extra).max(1), Ordering::Relaxed);
        }
    }
}

impl Loan<'_> {
    /// The slots, for the test's search ([`crate::engine::EngineOptions::lent`]).
    pub(super) fn slots(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.slots)
    }
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        let mut holders = self
            .lender
            .holders
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        holders.retain(|(id, _)| *id != self.id);
        self.lender.share(&holders);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_tests_in_flight_get_the_idle_slots_and_give_them_back() {
        let lender = Lender::new(16);
        let loans: Vec<Loan<'_>> = (0..3).map(|_| lender.lend()).collect();
        let shares = |loans: &[Loan<'_>]| -> Vec<usize> {
            loans
                .iter()
                .map(|l| l.slots.load(Ordering::Relaxed))
                .collect()
        };
        assert_eq!(shares(&loans), [6, 5, 5]);
        let mut loans = loans;
        loans.remove(0);
        assert_eq!(shares(&loans), [8, 8]);
        loans.remove(0);
        assert_eq!(shares(&loans), [16]);
        let again = lender.lend();
        assert_eq!(shares(&loans), [8]);
        assert_eq!(again.slots.load(Ordering::Relaxed), 8);
        let many: Vec<Loan<'_>> = (0..20).map(|_| lender.lend()).collect();
        assert!(many.iter().all(|l| l.slots.load(Ordering::Relaxed) == 1));
    }
}
