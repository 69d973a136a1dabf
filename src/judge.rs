//! The one judge every step after the search asks (issue 41): blame and its knockouts, export's
//! minimisation, the bug report, the slip check and batch judge a text through [`Judge`]. The
//! script's judge is the [`ScriptOracle`] the search used, with its timeout, exit rule,
//! environment and cache directory; tests give the same steps an in-process fake
//! ([`FnJudge`]). [`CheckRule`] is how a command that starts from a test (not from a search)
//! sets the timeout and the exit rule the way `reduce` does: from the original's run.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;

use crate::oracle::{Expected, Run, RunEnd, ScriptOracle, Verdict};

/// Timeout of the first run of a test when `--timeout` is not given.
pub(crate) const INITIAL_TIMEOUT: Duration = Duration::from_secs(300);
/// Lower bound of the derived timeout.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Upper bound of the derived timeout.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);
/// The derived timeout is this many times the first run.
const TIMEOUT_FACTOR: u32 = 5;

/// A judged text: the verdict, and the run it comes from.
#[derive(Clone, Debug)]
pub(crate) struct Judged {
    /// What the check says.
    pub(crate) verdict: Verdict,
    /// How its run ended.
    pub(crate) run: Run,
}

impl Judged {
    /// Whether the text keeps the failure.
    pub(crate) fn interesting(&self) -> bool {
        self.verdict == Verdict::Interesting
    }
}

/// Judges whole texts, one run each. `Err` means "cannot continue", not "no".
pub(crate) trait Judge: Sync {
    /// Judge `text`.
    fn judge(&self, text: &[u8]) -> Result<Judged>;

    /// The per-run timeout, when there is one (said in messages about runs that took longer).
    fn timeout(&self) -> Option<Duration> {
        None
    }
}

impl Judge for ScriptOracle {
    fn judge(&self, text: &[u8]) -> Result<Judged> {
        let run = self.run(text, &AtomicBool::new(false))?;
        Ok(Judged {
            verdict: self.verdict_of(run.end),
            run,
        })
    }

    fn timeout(&self) -> Option<Duration> {
        self.current_timeout()
    }
}

/// The timeout a first run of `elapsed` implies: five times it, within 10 s and 300 s.
pub(crate) fn timeout_after(elapsed: Duration) -> Duration {
    (elapsed * TIMEOUT_FACTOR).clamp(MIN_TIMEOUT, MAX_TIMEOUT)
}

/// How a command that starts from a test sets its check's timeout and exit rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CheckRule {
    /// `--timeout`, or `None`: derived from the first run ([`timeout_after`]).
    pub timeout: Option<Duration>,
    /// The exit rule when known (after a reduction); `None`: from the first run.
    pub expected: Option<Expected>,
    /// `--interesting-exit auto`: the first run's non-zero status is the interesting one.
    pub same_status: bool,
}

impl CheckRule {
    /// Run `text` once on `oracle` and set the oracle's timeout and exit rule from that run (or
    /// from what is known). Returns the run and whether it is interesting under the rule.
    pub(crate) fn first_run(&self, oracle: &ScriptOracle, text: &[u8]) -> Result<(Run, bool)> {
        oracle.set_timeout(Some(self.timeout.unwrap_or(INITIAL_TIMEOUT)));
        let run = oracle.run(text, &AtomicBool::new(false))?;
        let expected = self
            .expected
            .or_else(|| crate::reduce::interesting_exits(run.end, self.same_status));
        let Some(expected) = expected else {
            return Ok((run, false));
        };
        oracle.set_expected(expected);
        oracle.set_timeout(Some(
            self.timeout.unwrap_or_else(|| timeout_after(run.elapsed)),
        ));
        let interesting = oracle.verdict_of(run.end) == Verdict::Interesting;
        Ok((run, interesting))
    }
}

/// The words for a run that did not end by itself (`None` for one that did).
pub(crate) fn unfinished(judged: &Judged, timeout: Option<Duration>) -> Option<String> {
    match judged.run.end {
        RunEnd::TimedOut => Some(match timeout {
            Some(t) => format!("the check timed out after {:.0} s", t.as_secs_f64()),
            None => "the check timed out".to_string(),
        }),
        RunEnd::Cancelled => Some("the check was cancelled".to_string()),
        RunEnd::Exited { .. } => None,
    }
}

/// An in-process judge for tests: `f` says whether a text is interesting, or `None` for a run
/// that times out.
#[cfg(test)]
pub(crate) struct FnJudge<F>(pub F);

/// A run that exited with `status`.
#[cfg(test)]
fn exited(status: i32) -> RunEnd {
    RunEnd::Exited {
        status,
        signal: None,
    }
}

#[cfg(test)]
impl<F: Fn(&[u8]) -> Option<bool> + Sync> Judge for FnJudge<F> {
    fn judge(&self, text: &[u8]) -> Result<Judged> {
        let (verdict, end) = match (self.0)(text) {
            Some(true) => (Verdict::Interesting, exited(0)),
            Some(false) => (Verdict::Uninteresting, exited(1)),
            None => (Verdict::Timeout, RunEnd::TimedOut),
        };
        Ok(Judged {
            verdict,
            run: Run {
                end,
                elapsed: Duration::ZERO,
                stderr_tail: String::new(),
            },
        })
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derived_timeout_is_five_runs_within_bounds() {
        assert_eq!(timeout_after(Duration::from_secs(1)), MIN_TIMEOUT);
        assert_eq!(
            timeout_after(Duration::from_secs(4)),
            Duration::from_secs(20)
        );
        assert_eq!(timeout_after(Duration::from_secs(100)), MAX_TIMEOUT);
    }

    #[test]
    fn a_fake_judge_times_out_as_said() {
        let judge = FnJudge(|t: &[u8]| if t.is_empty() { None } else { Some(true) });
        let timed_out = judge.judge(b"").unwrap();
        assert_eq!(timed_out.verdict, Verdict::Timeout);
        assert_eq!(
            unfinished(&timed_out, judge.timeout()).as_deref(),
            Some("the check timed out after 1 s")
        );
        assert!(judge.judge(b"x").unwrap().interesting());
    }
}
