//! The log an instrumented run writes (the probes' log of [`super::values`], the checks' log of
//! [`super::checks`]): one run through the judge, how much of the log is read, and why a run
//! left none.

use std::path::Path;

use anyhow::Result;

use crate::judge::{unfinished, Judge, Judged};

/// The most of a log that is read (a test that loops can write gigabytes of it): past this, the
/// log is cut at its last whole line and the reader says so.
pub(crate) const MAX_LOG: u64 = 64 << 20;

/// What one instrumented run wrote.
pub(crate) struct Logged {
    /// How the run ended.
    pub judged: Judged,
    /// Its log (empty when it wrote none), at most [`MAX_LOG`] bytes cut at its last whole line.
    pub lines: Vec<u8>,
    /// Whether the log passed [`MAX_LOG`] bytes and was cut.
    pub cut: bool,
}

impl Logged {
    /// Why the run wrote no log (`what` names the log), when it wrote none.
    pub(crate) fn why_none(&self, judge: &dyn Judge, what: &str) -> Option<String> {
        self.lines
            .is_empty()
            .then(|| match unfinished(&self.judged, judge.timeout()) {
                Some(why) => format!("the instrumented run: {why}"),
                None => format!("the check wrote no {what} (does it run the program?)"),
            })
    }
}

/// Run `instrumented` (a text that writes its log to `log`) once through `judge`, and read what
/// it wrote there.
pub(crate) fn run(instrumented: &[u8], judge: &dyn Judge, log: &Path) -> Result<Logged> {
    let judged = judge.judge(instrumented)?;
    let (lines, cut) = read(log);
    Ok(Logged { judged, lines, cut })
}

/// The log at `log` (empty when there is none), at most [`MAX_LOG`] bytes cut at its last whole
/// line; whether it was cut.
pub(crate) fn read(log: &Path) -> (Vec<u8>, bool) {
    // Through the reader policy: a check that leaves a FIFO there cannot block the read.
    let Ok(mut bytes) = crate::input::read_upto(log, MAX_LOG + 1, "an instrumented run's log")
    else {
        return (Vec::new(), false);
    };
    if bytes.len() as u64 <= MAX_LOG {
        return (bytes, false);
    }
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(whole);
    (bytes, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_log_reads_empty_and_a_log_past_the_limit_is_cut_at_its_last_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        assert_eq!(read(&log), (Vec::new(), false));
        std::fs::write(&log, b"check 0 held\nend\n").unwrap();
        assert_eq!(read(&log), (b"check 0 held\nend\n".to_vec(), false));
        let mut big = vec![b'x'; MAX_LOG as usize - 3];
        big.extend_from_slice(b"\nhalf a line");
        std::fs::write(&log, &big).unwrap();
        let (lines, cut) = read(&log);
        assert!(cut);
        assert_eq!(lines.len(), MAX_LOG as usize - 2);
        assert_eq!(lines.last(), Some(&b'\n'));
    }
}
