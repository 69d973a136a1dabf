//! For speculation only: the chance that a candidate is interesting. Nothing here changes what
//! the search decides, only which runs go while it waits.
//!
//! [`Beliefs`]: per-opportunity chances of being needed, updated as in probabilistic delta
//! debugging (ProbDD) from a per-kind rate fitted to every window judged ([`KindRate`]).
//! [`Calibration`]: a shift of their log-odds by how far off they were on the verdicts the search
//! used. [`Hints`]: a window judged on another text (typically before the accept a speculative
//! copy assumes) lends its verdict.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::runs::Running;
use super::Candidate;
use crate::opportunity::OpportunityKind;

/// Prior probability that an opportunity is needed (that removing it loses the interesting
/// behaviour), as in probabilistic delta debugging (ProbDD), and how many opportunities of a kind
/// it weighs as against the windows judged so far.
const NEEDED_PRIOR: f64 = 0.1;
const NEEDED_PRIOR_WEIGHT: f64 = 4.0;

/// For speculation only: the probability that each opportunity (by fingerprint) is needed,
/// updated as in ProbDD, starting from its kind's rate of needed opportunities estimated from
/// every window of the kind judged so far ([`KindRate`]). Shared by copies of the search as its
/// `Learned` sets are.
#[derive(Clone, Default)]
pub(super) struct Beliefs {
    base: Arc<HashMap<u64, f64>>,
    extra: HashMap<u64, f64>,
    rates: BTreeMap<OpportunityKind, KindRate>,
}

/// The windows of one kind judged so far, by size, and the rate of needed opportunities that
/// explains them best.
#[derive(Clone, Debug)]
struct KindRate {
    /// (window size, interesting, uninteresting).
    windows: Vec<(usize, u32, u32)>,
    /// The estimate: the rate q on a grid that maximises the likelihood of the verdicts (a
    /// window of n is interesting with chance (1 − q)^n) times a Beta prior of mean
    /// [`NEEDED_PRIOR`] and weight [`NEEDED_PRIOR_WEIGHT`].
    rate: f64,
}

impl Default for KindRate {
    fn default() -> KindRate {
        KindRate {
            windows: Vec::new(),
            rate: NEEDED_PRIOR,
        }
    }
}

impl KindRate {
    fn add(&mut self, size: usize, interesting: bool) {
        let at = match self.windows.iter().position(|w| w.0 == size) {
            Some(at) => at,
            None => {
                self.windows.push((size, 0, 0));
                self.windows.len() - 1
            }
        };
        let w = &mut self.windows[at];
        match interesting {
            true => w.1 += 1,
            false => w.2 += 1,
        }
        let log_likelihood = |q: f64| {
            let keep = (1.0 - q).ln();
            let prior = NEEDED_PRIOR * NEEDED_PRIOR_WEIGHT * q.ln()
                + (1.0 - NEEDED_PRIOR) * NEEDED_PRIOR_WEIGHT * keep;
            self.windows.iter().fold(prior, |sum, &(n, yes, no)| {
                let all_kept = keep * n.min(256) as f64;
                sum + f64::from(yes) * all_kept + f64::from(no) * (-all_kept.exp_m1()).ln()
            })
        };
        self.rate = (1..100)
            .map(|i| f64::from(i) / 100.0)
            .max_by(|a, b| log_likelihood(*a).total_cmp(&log_likelihood(*b)))
            .unwrap_or(NEEDED_PRIOR);
    }
}

impl Beliefs {
    /// The prior of an opportunity of `kind`.
    fn prior(&self, kind: OpportunityKind) -> f64 {
        self.rates.get(&kind).map_or(NEEDED_PRIOR, |r| r.rate)
    }

    fn get(&self, f: u64, prior: f64) -> f64 {
        self.extra
            .get(&f)
            .or_else(|| self.base.get(&f))
            .copied()
            .unwrap_or(prior)
    }

    /// The chance that a window of `kind` of the opportunities `prints` and `unknown` more
    /// (without fingerprints) is interesting: that none of them is needed.
    pub(super) fn chance(&self, kind: OpportunityKind, prints: &[u64], unknown: usize) -> f64 {
        let prior = self.prior(kind);
        prints
            .iter()
            .map(|&f| 1.0 - self.get(f, prior))
            .product::<f64>()
            * (1.0 - prior).powi(unknown.min(64) as i32)
    }

    /// A window of `size` opportunities of `kind` (those with fingerprints: `prints`) was
    /// judged. If it was not interesting, at least one of them is needed, so each is more likely
    /// needed (a single one surely is).
    pub(super) fn judged(
        &mut self,
        kind: OpportunityKind,
        size: usize,
        prints: &[u64],
        interesting: bool,
    ) {
        let prior = self.prior(kind);
        let some_needed = 1.0 - self.chance(kind, prints, 0);
        self.rates.entry(kind).or_default().add(size, interesting);
        if interesting || some_needed <= 0.0 {
            return;
        }
        for &f in prints {
            let p = (self.get(f, prior) / some_needed).min(1.0);
            self.extra.insert(f, p);
        }
    }

    pub(super) fn settle(&mut self) {
        if !self.extra.is_empty() {
            Arc::make_mut(&mut self.base).extend(self.extra.drain());
        }
    }
}

/// For speculation only: a shift of the beliefs' log-odds fitted to the verdicts the search used
/// so far (the beliefs' model fits some checks better than others: on the fixtures' real checks
/// they are too hopeful, on the latency-only benchmark about right).
#[derive(Default)]
pub(super) struct Calibration {
    /// (log-odds believed, interesting) of each verdict the search used.
    seen: Vec<(f64, bool)>,
    /// The fitted shift.
    shift: f64,
}

/// The shift's prior: a normal of mean 0 and this variance (in log-odds²).
const CALIBRATION_PRIOR_VARIANCE: f64 = 1.0;

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl Calibration {
    pub(super) fn add(&mut self, p: f64, interesting: bool) {
        self.seen.push((logit(p), interesting));
        // Newton's method on the log-posterior of the shift (concave: a few steps suffice).
        let mut b = self.shift;
        for _ in 0..8 {
            let (mut grad, mut hess) = (
                -b / CALIBRATION_PRIOR_VARIANCE,
                -1.0 / CALIBRATION_PRIOR_VARIANCE,
            );
            for &(z, y) in &self.seen {
                let q = logistic(z + b);
                grad += f64::from(u8::from(y)) - q;
                hess -= q * (1.0 - q);
            }
            b -= grad / hess;
        }
        self.shift = b;
    }

    pub(super) fn apply(&self, p: f64) -> f64 {
        logistic(logit(p) + self.shift).clamp(0.02, 0.98)
    }
}

/// For speculation only: what the runs said about windows, whatever text they were cut from.
/// After an accept the search cuts the same windows again from the new text (same opportunities,
/// same fingerprints), and those were often judged on the old text meanwhile, as speculation
/// down the other verdict: their verdicts there predict the new ones far better than beliefs.
#[derive(Default)]
pub(super) struct Hints {
    /// Verdicts by window key ([`Hints::key`]): interesting or not.
    windows: HashMap<u64, bool>,
    /// Fingerprints of opportunities that were in an interesting window.
    removable: HashSet<u64>,
}

/// The chance [`Hints`] give a window judged on another text with this verdict.
const HINT_INTERESTING: f64 = 0.9;
const HINT_UNINTERESTING: f64 = 0.1;
/// The chance they give a window of opportunities that were each in some interesting window.
const HINT_REMOVABLE: f64 = 0.8;

impl Hints {
    /// The key of a window: its kind and the fingerprints of its opportunities (`None` if one
    /// has none).
    pub(super) fn key(kind: OpportunityKind, size: usize, prints: &[u64]) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        if prints.len() != size || size == 0 {
            return None;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (kind, prints).hash(&mut h);
        Some(h.finish())
    }

    pub(super) fn record(&mut self, run: &Running, interesting: bool) {
        if let Some(key) = run.window {
            self.windows.insert(key, interesting);
        }
        if interesting {
            self.removable.extend(run.prints.iter().copied());
        }
    }

    /// The chance of `c` from what runs said, if they said anything about it.
    pub(super) fn chance(&self, c: &Candidate) -> Option<f64> {
        let key = Hints::key(c.kind, c.size, &c.prints)?;
        if let Some(&interesting) = self.windows.get(&key) {
            return Some(match interesting {
                true => HINT_INTERESTING,
                false => HINT_UNINTERESTING,
            });
        }
        c.prints
            .iter()
            .all(|f| self.removable.contains(f))
            .then_some(HINT_REMOVABLE)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::super::Text;
    use super::*;

    #[test]
    fn beliefs_follow_probabilistic_delta_debugging() {
        let kind = OpportunityKind::Fuzz;
        let mut b = Beliefs::default();
        let fresh = b.chance(kind, &[1, 2], 0);
        assert!((fresh - (1.0 - NEEDED_PRIOR).powi(2)).abs() < 1e-9);
        // A pair that fails: each is more likely needed, the pair surely has one.
        b.judged(kind, 2, &[1, 2], false);
        assert!(b.get(1, b.prior(kind)) > NEEDED_PRIOR);
        assert!(b.chance(kind, &[1], 0) < b.chance(kind, &[3], 0));
        // A single one that fails is needed.
        b.judged(kind, 1, &[1], false);
        assert_eq!(b.chance(kind, &[1], 0), 0.0);
        // Windows of the kind found uninteresting raise its prior.
        assert!(b.prior(kind) > NEEDED_PRIOR);
        assert_eq!(b.prior(OpportunityKind::Variant), NEEDED_PRIOR);
    }

    #[test]
    fn a_kind_rate_explains_the_windows_judged() {
        let mut large_ones_pass = KindRate::default();
        large_ones_pass.add(10, true);
        large_ones_pass.add(10, true);
        // Twenty opportunities removed at once: few can be needed.
        assert!(large_ones_pass.rate < NEEDED_PRIOR / 2.0);
        let mut singles_fail = KindRate::default();
        for _ in 0..6 {
            singles_fail.add(1, false);
        }
        singles_fail.add(1, true);
        // Six of seven singles needed (the Beta prior pulls the estimate down a little).
        assert!((0.55..0.86).contains(&singles_fail.rate));
        // Both kinds of evidence: a pair fails, a larger window passes.
        let mut mixed = KindRate::default();
        mixed.add(2, false);
        mixed.add(8, true);
        assert!(mixed.rate > 0.0 && mixed.rate < 0.5);
    }

    #[test]
    fn calibration_shifts_beliefs_towards_the_verdicts_seen() {
        let mut none = Calibration::default();
        assert!((none.apply(0.6) - 0.6).abs() < 1e-9);
        // Beliefs of 0.6, one window in four interesting: too hopeful, pulled down.
        let mut hopeful = Calibration::default();
        for i in 0..40 {
            hopeful.add(0.6, i % 4 == 0);
        }
        assert!(
            (0.2..0.4).contains(&hopeful.apply(0.6)),
            "{}",
            hopeful.apply(0.6)
        );
        assert!(hopeful.apply(0.9) < 0.9 && hopeful.apply(0.1) < 0.1);
        // Right on average (0.8: four in five interesting, 0.2: one in five): hardly moved.
        for i in 0..20 {
            none.add(0.8, i % 5 != 0);
            none.add(0.2, i % 5 == 0);
        }
        assert!((none.apply(0.5) - 0.5).abs() < 0.1, "{}", none.apply(0.5));
        // A few verdicts move it a little only (the prior).
        let mut early = Calibration::default();
        early.add(0.6, false);
        assert!(
            (0.4..0.6).contains(&early.apply(0.6)),
            "{}",
            early.apply(0.6)
        );
    }

    #[test]
    fn hints_carry_verdicts_to_the_same_window_on_another_text() {
        let kind = OpportunityKind::Fuzz;
        let candidate = |prints: Vec<u64>| Candidate {
            kind,
            text: Text::new(b"x".to_vec()),
            fingerprint: None,
            size: prints.len(),
            prints,
            what: "w".into(),
        };
        let running = |prints: Vec<u64>| Running {
            id: 0,
            kind,
            window: Hints::key(kind, prints.len(), &prints),
            prints,
            cancel: Arc::new(AtomicBool::new(false)),
        };
        let mut hints = Hints::default();
        assert_eq!(hints.chance(&candidate(vec![1, 2])), None);
        hints.record(&running(vec![1, 2]), true);
        hints.record(&running(vec![3, 4]), false);
        assert_eq!(hints.chance(&candidate(vec![1, 2])), Some(HINT_INTERESTING));
        assert_eq!(
            hints.chance(&candidate(vec![3, 4])),
            Some(HINT_UNINTERESTING)
        );
        // Another window of opportunities each seen in an interesting one.
        assert_eq!(hints.chance(&candidate(vec![2])), Some(HINT_REMOVABLE));
        assert_eq!(hints.chance(&candidate(vec![2, 3])), None);
        // A window with an opportunity without a fingerprint has no key.
        assert_eq!(Hints::key(kind, 3, &[1, 2]), None);
    }
}
