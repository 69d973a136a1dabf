//! The re-check of the result after the search (design §6, flakiness), through the judge the
//! search used ([`crate::judge::Judge`]).

use super::ReduceOptions;
use crate::engine::Stats;
use crate::error::{coded, ExitKind};
use crate::judge::Judge;
use crate::line_endings::EndingsOracle;
use crate::oracle::ScriptOracle;

/// Accepted texts kept for the final re-check, besides the starting text.
pub(super) const RECHECK_HISTORY: usize = 3;

/// Re-check the result `opts.recheck` times, without the cache: a flaky check may have accepted
/// it by chance. Returns the newest of `accepted` (oldest first; the first is known interesting)
/// that was interesting every time, or the newest one when none was, with a warning either way.
pub(super) fn recheck<'a>(
    opts: &ReduceOptions,
    oracle: &EndingsOracle<'_, ScriptOracle>,
    accepted: &'a [Vec<u8>],
    stats: &mut Stats,
) -> anyhow::Result<&'a [u8]> {
    let newest = accepted.last().map(Vec::as_slice).unwrap_or_default();
    if opts.recheck == 0 {
        return Ok(newest);
    }
    for (age, text) in accepted.iter().rev().enumerate() {
        let mut failed = 0;
        for _ in 0..opts.recheck {
            stats.rechecks += 1;
            if !oracle
                .inner
                .judge(&oracle.endings.to_file(text))?
                .interesting()
            {
                failed += 1;
            }
            if crate::interrupt::requested() {
                return Err(coded(
                    ExitKind::Interrupted,
                    "interrupted during the re-check",
                ));
            }
        }
        stats.recheck_failures += failed;
        if failed == 0 {
            if age > 0 {
                crate::messages::warn(format!(
                    "the check is flaky: the final result was not interesting on \
                     re-check; kept the last result that was ({} bytes); make the check \
                     deterministic, or reduce with --no-cache",
                    text.len()
                ));
            }
            return Ok(text);
        }
    }
    crate::messages::warn(format!(
        "the check is flaky: no recent result was interesting on every re-check \
         ({} of {} re-checks failed); the result may not reproduce",
        stats.recheck_failures, stats.rechecks
    ));
    Ok(newest)
}
