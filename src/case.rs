//! A case (issue 58): one result as everything after the search looks into it — the loaded test
//! ([`LoadedTest`], read and parsed once), the judge it is judged with (resolved once, never
//! changed: a longer timeout is another judge, [`crate::oracle::ScriptOracle::with_timeout`]),
//! and the compile probe the knockouts ask before they trust a run that stopped failing. The
//! evidence room ([`crate::evidence`]) takes a case, not the test's parts one by one.

use crate::judge::Judge;
use crate::loaded::LoadedTest;

/// Whether a candidate text compiles as the check builds it (`Err` says why not).
pub(crate) type Compiles<'a> = &'a dyn Fn(&[u8]) -> std::result::Result<(), String>;

/// One result, its judge and its compile probe.
#[derive(Clone, Copy)]
pub(crate) struct Case<'a> {
    /// The result, parsed, with its catalogue and model.
    pub(crate) test: &'a LoadedTest,
    /// How a candidate text of it is judged.
    pub(crate) judge: &'a dyn Judge,
    /// Whether a candidate text compiles.
    pub(crate) compiles: Compiles<'a>,
}

impl<'a> Case<'a> {
    /// The result's text.
    pub(crate) fn text(&self) -> &'a [u8] {
        self.test.text()
    }

    /// The same result judged by `judge` (e.g. one with a longer timeout).
    pub(crate) fn judged_by(self, judge: &'a dyn Judge) -> Case<'a> {
        Case { judge, ..self }
    }
}
