//! Line endings: a CRLF input is reduced with LF internally (the passes insert `\n`) and every
//! text that leaves mfppr — to the check script or to a file — gets CRLF back, so no result ever
//! mixes both conventions.

use std::sync::atomic::AtomicBool;

use crate::oracle::{Oracle, Verdict};

/// The line-ending convention of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineEndings {
    /// Kept as it is (LF, or mixed: nothing is converted).
    AsIs,
    /// Every line ends in CRLF.
    Crlf,
}

impl LineEndings {
    /// `Crlf` when the text has line breaks and every one of them is CRLF.
    pub(crate) fn of(text: &[u8]) -> LineEndings {
        let lf = text.iter().filter(|&&b| b == b'\n').count();
        let crlf = text.windows(2).filter(|w| w == b"\r\n").count();
        if lf > 0 && lf == crlf {
            LineEndings::Crlf
        } else {
            LineEndings::AsIs
        }
    }

    /// The text mfppr works on: CRLF → LF.
    pub(crate) fn to_internal(self, text: &[u8]) -> Vec<u8> {
        match self {
            LineEndings::AsIs => text.to_vec(),
            LineEndings::Crlf => {
                let mut out = Vec::with_capacity(text.len());
                for (i, &b) in text.iter().enumerate() {
                    if !(b == b'\r' && text.get(i + 1) == Some(&b'\n')) {
                        out.push(b);
                    }
                }
                out
            }
        }
    }

    /// The text as the user's convention writes it: LF → CRLF.
    pub(crate) fn to_file(self, text: &[u8]) -> Vec<u8> {
        match self {
            LineEndings::AsIs => text.to_vec(),
            LineEndings::Crlf => {
                let mut out = Vec::with_capacity(text.len() + text.len() / 16);
                for &b in text {
                    if b == b'\n' {
                        out.push(b'\r');
                    }
                    out.push(b);
                }
                out
            }
        }
    }
}

/// An oracle that judges the text as the user's convention writes it.
#[derive(Debug)]
pub(crate) struct EndingsOracle<'a, O> {
    /// The oracle that runs the check.
    pub inner: &'a O,
    /// The convention to give it.
    pub endings: LineEndings,
}

impl<O: Oracle> Oracle for EndingsOracle<'_, O> {
    fn verdict(&self, candidate: &[u8], cancel: &AtomicBool) -> anyhow::Result<Verdict> {
        match self.endings {
            LineEndings::AsIs => self.inner.verdict(candidate, cancel),
            LineEndings::Crlf => self.inner.verdict(&self.endings.to_file(candidate), cancel),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_round_trips_and_mixed_text_is_left_alone() {
        let crlf = b"a\r\nb\r\n\r\nc";
        assert_eq!(LineEndings::of(crlf), LineEndings::Crlf);
        let lf = LineEndings::Crlf.to_internal(crlf);
        assert_eq!(lf, b"a\nb\n\nc");
        assert_eq!(LineEndings::Crlf.to_file(&lf), crlf);
        assert_eq!(LineEndings::of(b"a\r\nb\nc"), LineEndings::AsIs);
        assert_eq!(LineEndings::of(b"a\nb"), LineEndings::AsIs);
        assert_eq!(LineEndings::of(b"no break"), LineEndings::AsIs);
        assert_eq!(LineEndings::AsIs.to_file(b"x\n"), b"x\n");
    }
}
