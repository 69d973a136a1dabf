//! The workshop: gathers a kind's opportunities on a text and builds the candidate of a window
//! of them, through the passes ([`Opportunities`]), remembering recent results for the
//! speculative copies of the search.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context;

use super::{Candidate, Text};
use crate::opportunity::{Gathered, Opportunities, OpportunityKind};

/// Gathers and builds candidates for the search, remembering recent results so that the
/// speculative copies of the search (and the next window size on the same text) do not redo
/// them. Without speculation only the last gathering is kept and nothing built.
pub(super) struct Workshop<'r> {
    opportunities: &'r dyn Opportunities,
    /// Recent gatherings by text and kind.
    gathered: HashMap<(blake3::Hash, OpportunityKind), Kept<'r>>,
    gathered_bytes: usize,
    clock: u64,
    /// Built candidates by text, kind and window (only with speculation).
    built: HashMap<(blake3::Hash, OpportunityKind, Vec<usize>), Option<Candidate>>,
    built_bytes: usize,
    /// Speculation is on: keep more.
    speculating: bool,
    /// Candidates built.
    pub(super) count: u64,
}

/// A remembered gathering, when it was last used, and the size of its text.
type Kept<'r> = (Arc<dyn Gathered + 'r>, u64, usize);

/// Gatherings are remembered while their texts add up to at most this many bytes.
const GATHERED_BYTES_KEPT: usize = 8 << 20;
/// At most this many bytes of built candidates are remembered.
const BUILT_BYTES_KEPT: usize = 256 << 20;

impl<'r> Workshop<'r> {
    pub(super) fn new(opportunities: &'r dyn Opportunities, speculating: bool) -> Workshop<'r> {
        Workshop {
            opportunities,
            gathered: HashMap::new(),
            gathered_bytes: 0,
            clock: 0,
            built: HashMap::new(),
            built_bytes: 0,
            speculating,
            count: 0,
        }
    }

    pub(super) fn gather(
        &mut self,
        text: &Text,
        kind: OpportunityKind,
    ) -> anyhow::Result<Arc<dyn Gathered + 'r>> {
        self.clock += 1;
        if let Some((g, used, _)) = self.gathered.get_mut(&(text.hash, kind)) {
            *used = self.clock;
            return Ok(Arc::clone(g));
        }
        let gathered: Arc<dyn Gathered + 'r> = Arc::from(
            self.opportunities
                .gather(&text.bytes, kind)
                .with_context(|| format!("cannot gather {} opportunities", kind.name()))?,
        );
        self.gathered_bytes += text.bytes.len();
        self.gathered.insert(
            (text.hash, kind),
            (Arc::clone(&gathered), self.clock, text.bytes.len()),
        );
        // Forget the least recently used gatherings beyond the budget.
        let budget = if self.speculating {
            GATHERED_BYTES_KEPT
        } else {
            0
        };
        while self.gathered_bytes > budget && self.gathered.len() > 1 {
            let Some(oldest) = self
                .gathered
                .iter()
                .min_by_key(|(_, (_, used, _))| *used)
                .map(|(key, _)| *key)
            else {
                break;
            };
            if let Some((_, _, len)) = self.gathered.remove(&oldest) {
                self.gathered_bytes = self.gathered_bytes.saturating_sub(len);
            }
        }
        Ok(gathered)
    }

    /// The candidate of `window` (opportunity indices) on `text`.
    pub(super) fn build(
        &mut self,
        text: &Text,
        kind: OpportunityKind,
        window: &[usize],
    ) -> anyhow::Result<Option<Candidate>> {
        let key = (text.hash, kind, window.to_vec());
        if let Some(c) = self.built.get(&key) {
            return Ok(c.clone());
        }
        let gathered = self.gather(text, kind)?;
        self.count += 1;
        let built = gathered.candidate(window).map(|bytes| Candidate {
            kind,
            text: Text::new(bytes),
            size: window.len(),
            prints: window
                .iter()
                .filter_map(|&i| gathered.fingerprint(i))
                .collect(),
            fingerprint: match window {
                [i] => gathered.fingerprint(*i),
                _ => None,
            },
            what: describe_window(&*gathered, window).into(),
        });
        if self.speculating {
            self.built_bytes += built.as_ref().map_or(0, |c| c.text.bytes.len());
            if self.built_bytes > BUILT_BYTES_KEPT {
                self.built.clear();
                self.built_bytes = 0;
            }
            self.built.insert(key, built.clone());
        }
        Ok(built)
    }
}

/// One-line description of a window of opportunities.
fn describe_window(gathered: &dyn Gathered, window: &[usize]) -> String {
    match window {
        [] => String::new(),
        [i] => gathered.describe(*i),
        [i, ..] => format!(
            "{} opportunities: {}, …",
            window.len(),
            gathered.describe(*i)
        ),
    }
}
