//! Temporary stand-in for the passes (replaced by the real ones at merge): no opportunities.

use std::ops::Range;

use crate::catalogue::Catalogue;
use crate::reduction::{Gathered, Kind, Reduction};

/// Options that change what the passes may remove.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassOptions {
    /// Keep every remaining variant's checks.
    pub keep_checks: bool,
    /// Allow removing the last non-reference variant (and so the oracle).
    pub drop_oracle: bool,
}

/// Temporary stand-in: the MF++ reduction, finding nothing.
#[derive(Debug)]
pub struct MfppReduction {
    _catalogue: Catalogue,
    _options: PassOptions,
}

impl MfppReduction {
    /// Temporary stand-in constructor.
    pub fn new(catalogue: Catalogue, options: PassOptions) -> MfppReduction {
        MfppReduction {
            _catalogue: catalogue,
            _options: options,
        }
    }
}

struct Nothing;

impl Gathered for Nothing {
    fn len(&self) -> usize {
        0
    }
    fn candidate(&self, _window: Range<usize>) -> Option<Vec<u8>> {
        None
    }
    fn describe(&self, i: usize) -> String {
        format!("opportunity {i}")
    }
}

impl Reduction for MfppReduction {
    fn gather<'a>(
        &'a self,
        _text: &'a [u8],
        _kind: Kind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        Ok(Box::new(Nothing))
    }
}
