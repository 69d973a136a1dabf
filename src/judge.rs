//! The one judge every step after the search asks (issue 41): blame and its knockouts, export's
//! minimisation, the bug report, the slip check and batch judge a text through [`Judge`]. The
//! script's judge is the [`ScriptOracle`] the search used, with its timeout, exit rule,
//! environment and cache directory; tests give the same steps an in-process fake
//! ([`FnJudge`]). The steps that try candidates one by one (export's minimisation, blame's
//! folds, the knockouts) do it through one small loop, [`Trials`]. [`CheckRule`] is how a
//! command that starts from a test (not from a search) resolves its judge the way `reduce` does:
//! from the original's run. A judge never changes once resolved: a longer timeout (the value
//! localiser's instrumented run) is a new judge ([`ScriptOracle::with_timeout`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::error::{coded, ExitKind};
use crate::oracle::{Expected, Run, RunEnd, ScriptOracle, Verdict};

/// Timeout of the first run of a test when `--timeout` is not given.
pub(crate) const INITIAL_TIMEOUT: Duration = Duration::from_secs(300);
/// Lower bound of the derived timeout.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Upper bound of the derived timeout.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(300);
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
        ScriptOracle::timeout(self)
    }
}

/// The timeout a first run of `elapsed` implies: five times it, within 10 s and 300 s.
pub(crate) fn timeout_after(elapsed: Duration) -> Duration {
    (elapsed * TIMEOUT_FACTOR).clamp(MIN_TIMEOUT, MAX_TIMEOUT)
}

/// The exit-status rule of a reduction: which exit statuses count as interesting, given how the
/// original's run ended; `None` if the original is not interesting. Exit 0 by default; with
/// `--interesting-exit auto` (`same_status`), the original's status when it is not 0.
pub(crate) fn interesting_exits(original: RunEnd, same_status: bool) -> Option<Expected> {
    match (original, same_status) {
        (RunEnd::Exited { status: 0, .. }, false) => Some(Expected::Zero),
        (RunEnd::Exited { status, .. }, true) if status != 0 => Some(Expected::Status(status)),
        _ => None,
    }
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

/// A first run under a [`CheckRule`]: the run, and the judge it resolved (`None` when the run
/// shows no interesting exit status to judge by).
pub(crate) struct FirstRun {
    pub(crate) run: Run,
    pub(crate) judge: Option<ScriptOracle>,
}

impl FirstRun {
    /// The resolved judge and the run, when the run was interesting under it.
    pub(crate) fn interesting(self) -> std::result::Result<(ScriptOracle, Run), Run> {
        match self.judge {
            Some(judge) if judge.verdict_of(self.run.end) == Verdict::Interesting => {
                Ok((judge, self.run))
            }
            _ => Err(self.run),
        }
    }
}

impl CheckRule {
    /// Run `text` once with `oracle`'s script (its timeout: `--timeout`, else
    /// [`INITIAL_TIMEOUT`]) and resolve the judge from that run (or from what is known): the
    /// timeout and exit rule every later run of the command is judged with.
    pub(crate) fn first_run(&self, oracle: &ScriptOracle, text: &[u8]) -> Result<FirstRun> {
        let first = oracle.with_timeout(Some(self.timeout.unwrap_or(INITIAL_TIMEOUT)));
        let run = first.run(text, &AtomicBool::new(false))?;
        let expected = self
            .expected
            .or_else(|| interesting_exits(run.end, self.same_status));
        let judge = expected.map(|expected| {
            let timeout = self.timeout.unwrap_or_else(|| timeout_after(run.elapsed));
            oracle.resolved(Some(timeout), expected)
        });
        Ok(FirstRun { run, judge })
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

/// What one candidate's run showed ([`Trials::run`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tried {
    /// The failure stays: the check finds the candidate interesting.
    Kept,
    /// The failure goes.
    Gone,
    /// The run did not end by itself (it timed out or was cancelled): why, in words
    /// ([`unfinished`]). Not a "no": each step says what it counts as.
    Undecided(String),
}

impl Tried {
    /// Whether the failure stays.
    pub(crate) fn kept(&self) -> bool {
        *self == Tried::Kept
    }
}

/// The one small loop after the search (issue 41): export's minimisation, blame's folds and the
/// knockouts each judge their candidates through it, one at a time, in the order they give
/// them ([`Trials::each`]). It counts the runs, stops at Ctrl-C before the next run (an
/// [`ExitKind::Interrupted`] error) and turns a run that did not end by itself into
/// [`Tried::Undecided`] with its reason ([`warn_undecided`] says so where a step marks it).
pub(crate) struct Trials<'j> {
    judge: &'j dyn Judge,
    runs: usize,
}

impl<'j> Trials<'j> {
    /// No run made yet.
    pub(crate) fn new(judge: &'j dyn Judge) -> Trials<'j> {
        Trials { judge, runs: 0 }
    }

    /// The runs made so far.
    pub(crate) fn runs(&self) -> usize {
        self.runs
    }

    /// Judge `text`: one run, counted, with its verdict and how it ended.
    pub(crate) fn judged(&mut self, text: &[u8]) -> Result<Judged> {
        if crate::interrupt::flag().load(Ordering::SeqCst) {
            return Err(coded(
                ExitKind::Interrupted,
                "interrupted (Ctrl-C / SIGTERM)".to_string(),
            ));
        }
        self.runs += 1;
        self.judge.judge(text)
    }

    /// Judge `text`: one run, counted; what it showed.
    pub(crate) fn run(&mut self, text: &[u8]) -> Result<Tried> {
        let judged = self.judged(text)?;
        Ok(match unfinished(&judged, self.judge.timeout()) {
            Some(why) => Tried::Undecided(why),
            None if judged.interesting() => Tried::Kept,
            None => Tried::Gone,
        })
    }

    /// Each of `items` in order through `step`, which judges the item's candidate with
    /// [`Trials::run`] (or decides without a run); what each step made, in order. Stops at the
    /// first error.
    pub(crate) fn each<T, O>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut step: impl FnMut(&mut Self, T) -> Result<O>,
    ) -> Result<Vec<O>> {
        items.into_iter().map(|item| step(self, item)).collect()
    }
}

/// Warn that the run of `what` did not end by itself (`why`, a [`Tried::Undecided`]'s reason)
/// and is marked undecided.
pub(crate) fn warn_undecided(why: &str, what: &str) {
    crate::messages::warn(format!(
        "{why} on {what}: marked undecided; if the check is just slow, raise --timeout"
    ));
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
    fn trials_run_in_order_count_the_runs_and_a_timeout_is_undecided() {
        let judge = FnJudge(|t: &[u8]| (t != b"hang").then(|| t.starts_with(b"keep")));
        let mut trials = Trials::new(&judge);
        let texts: [&[u8]; 3] = [b"keep 1", b"drop", b"hang"];
        let tried = trials.each(texts, |trials, t| trials.run(t)).unwrap();
        let why = "the check timed out after 1 s".to_string();
        assert_eq!(tried, [Tried::Kept, Tried::Gone, Tried::Undecided(why)]);
        assert!(tried[0].kept() && !tried[2].kept());
        assert_eq!(trials.runs(), 3);
        assert!(trials.judged(b"keep 2").unwrap().interesting());
        assert_eq!(trials.runs(), 4);
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
