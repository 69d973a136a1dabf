//! The unread step (issue 60). With every candidate the sweep deletes the computations the test
//! runs though nothing reads them. When the failure is not in a check (the check cut's run says
//! so: a crash or a hang in what the test computes) it may be one of those, and then every
//! candidate loses it: the search rejects window after window until some edit happens to make
//! the value read (the fixture `iset_bound_small_a`, whose `complement` crashes on a region
//! value nothing reads: 98 folds judged, 1 accepted). So before the search the original swept
//! alone is judged. When it holds, the search starts from it; when it does not, halving finds the
//! unread computations the failure needs (a half that holds goes, the other is halved again),
//! and the sweep keeps them for the whole search.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

use super::guided::Tools;
use crate::oracle::{Oracle, Verdict};

/// Check runs the halving may take; the computations it has not told apart by then are kept.
const MAX_RUNS: u64 = 16;

/// How the unread step ended.
pub(super) struct Unread {
    /// The text the search starts from, without the unread computations the failure does not
    /// need; `None` when that is the text it was given.
    pub(super) text: Option<Vec<u8>>,
    /// Check runs made.
    pub(super) runs: u64,
    /// The names whose computation the failure needs: the sweep keeps them.
    pub(super) keep: HashSet<String>,
    /// What happened, for `--stats` (`swept`, `kept NAMES`, `nothing unread`).
    pub(super) said: String,
}

/// The unread step on `text` (LF line endings), judged through `tools.oracle`.
pub(super) fn unread(tools: &Tools<'_>, text: &[u8]) -> anyhow::Result<Unread> {
    let units = tools.mfpp.unread_computations(text);
    if units.is_empty() {
        return Ok(Unread {
            text: None,
            runs: 0,
            keep: HashSet::new(),
            said: "nothing unread".to_string(),
        });
    }
    crate::messages::progress(format!(
        "mfppr: unread: judging the test without the {} computations nothing reads first (the \
         failure may be in one)",
        units.len()
    ));
    let mut halving = Halving {
        tools,
        text,
        units: &units,
        gone: Vec::new(),
        needed: Vec::new(),
        runs: 0,
        last: None,
    };
    let all: Vec<usize> = (0..units.len()).collect();
    halving.split(&all, false)?;
    let mut needed = std::mem::take(&mut halving.needed);
    needed.sort_unstable();
    let names: Vec<&str> = needed
        .iter()
        .flat_map(|&i| units[i].iter().map(String::as_str))
        .collect();
    let keep: HashSet<String> = names.iter().map(|n| n.to_string()).collect();
    let said = match needed.is_empty() {
        true => "swept".to_string(),
        false => format!("kept {}", names.join(" ")),
    };
    crate::messages::progress(match needed.is_empty() {
        true => format!(
            "mfppr: unread: the test without them holds; the search starts from it ({} run{})",
            halving.runs,
            if halving.runs == 1 { "" } else { "s" }
        ),
        false => format!(
            "mfppr: unread: the failure needs the computation of {}, which nothing reads; every \
             candidate keeps {} ({} runs{})",
            names.join(" "),
            if keep.len() == 1 { "it" } else { "them" },
            halving.runs,
            match halving.runs == MAX_RUNS {
                true => ", the most it takes: those not told apart by then are kept",
                false => "",
            }
        ),
    });
    Ok(Unread {
        text: halving.last,
        runs: halving.runs,
        keep,
        said,
    })
}

/// Halving the unread computations (`units`, each the names it defines) of `text`.
struct Halving<'a, 't> {
    tools: &'a Tools<'t>,
    text: &'a [u8],
    units: &'a [Vec<String>],
    /// Units whose deletion holds, with each other.
    gone: Vec<usize>,
    /// Units the failure needs (or not told apart within [`MAX_RUNS`]).
    needed: Vec<usize>,
    runs: u64,
    /// The last candidate that held: `text` without the units of `gone`.
    last: Option<Vec<u8>>,
}

impl Halving<'_, '_> {
    /// Whether deleting `more` along with `gone` holds (judged; then `more` is gone too). Not
    /// when the candidate changes nothing, or no run is left.
    fn holds(&mut self, more: &[usize]) -> anyhow::Result<bool> {
        if self.runs == MAX_RUNS {
            return Ok(false);
        }
        let keep: HashSet<String> = (0..self.units.len())
            .filter(|i| !self.gone.contains(i) && !more.contains(i))
            .flat_map(|i| self.units[i].iter().cloned())
            .collect();
        let Some(candidate) = self.tools.mfpp.swept(self.text, &keep) else {
            return Ok(false);
        };
        self.runs += 1;
        let verdict = self
            .tools
            .oracle
            .verdict(&candidate, &AtomicBool::new(false))?;
        if verdict == Verdict::Interesting {
            self.gone.extend_from_slice(more);
            self.last = Some(candidate);
        }
        Ok(verdict == Verdict::Interesting)
    }

    /// Tell which units of `set` the failure needs; `failing`: deleting all of `set` along with
    /// `gone` is known not to hold.
    fn split(&mut self, set: &[usize], failing: bool) -> anyhow::Result<()> {
        if set.is_empty() || (!failing && self.holds(set)?) {
            return Ok(());
        }
        if set.len() == 1 || self.runs == MAX_RUNS {
            self.needed.extend_from_slice(set);
            return Ok(());
        }
        let (a, b) = set.split_at(set.len() / 2);
        if self.holds(a)? {
            // What failed with `a` and `b` gone, with `a` gone already.
            self.split(b, true)
        } else {
            self.split(a, true)?;
            self.split(b, false)
        }
    }
}
