//! One loaded test (issue 41): a test read once ([`crate::input::read_test`], with its limits),
//! parsed once, with its MR catalogue and its model. The report, inspect, batch's triage and its
//! slip check each load a test through [`LoadedTest`], once per test per process.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::catalogue::Catalogue;
use crate::document::Document;
use crate::model::TestModel;

/// Where a test's MRs are found: the header search directories and the extra spec headers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpecPaths<'a> {
    /// Header search directories.
    pub(crate) include_dirs: &'a [PathBuf],
    /// Extra spec headers.
    pub(crate) specs: &'a [PathBuf],
}

/// A test with its parse, its catalogue and its model.
#[derive(Debug)]
pub(crate) struct LoadedTest {
    /// The parsed text.
    pub(crate) doc: Document,
    /// The MRs its spec headers define.
    pub(crate) catalogue: Catalogue,
    /// The test as variants, steps, instances and regions.
    pub(crate) model: TestModel,
}

impl LoadedTest {
    /// Read the test at `path` and load it.
    pub(crate) fn read(path: &Path, opts: &SpecPaths<'_>) -> Result<LoadedTest> {
        let text = crate::input::read_test(path)?;
        LoadedTest::load(path, text, opts)
    }

    /// Load `text`, a test at `path` (its headers are found beside it).
    pub(crate) fn load(path: &Path, text: Vec<u8>, opts: &SpecPaths<'_>) -> Result<LoadedTest> {
        let doc = Document::parse(text)?;
        let catalogue = Catalogue::load_for(path, &doc, opts.include_dirs, opts.specs)
            .with_context(|| format!("cannot load the MR catalogue for {}", path.display()))?;
        let model = TestModel::build(&doc, &catalogue)?;
        Ok(LoadedTest {
            doc,
            catalogue,
            model,
        })
    }

    /// The test's text.
    pub(crate) fn text(&self) -> &[u8] {
        self.doc.text()
    }
}
