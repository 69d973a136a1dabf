//! What `cover find`'s pipeline runs with ([`PipelineOptions`]): where the tests come from, how
//! to run and reduce them, and what to verify; read by [`super::pipeline`] and [`super::suite`].

use std::path::PathBuf;
use std::time::Duration;

use super::verify::VerifyOptions;
use crate::coverage::inject::Marker;

/// Where the tests come from.
#[derive(Clone, Debug)]
pub enum TestSource {
    /// Every C++ file under this directory.
    Corpus(PathBuf),
    /// Run this template (`{seed}`, `{out}`) for seeds `1..=budget`.
    Generate {
        /// The command template.
        template: String,
        /// Number of seeds.
        budget: u32,
    },
}

/// How to reduce toward a marker.
#[derive(Clone, Debug)]
pub struct ReduceStep {
    /// The mfppr executable, which the oracle of a metamorphic point calls to split candidates
    /// (`MFPPR_EXE`).
    pub mfppr: PathBuf,
    /// The coverage-marker oracle script.
    pub check: PathBuf,
    /// `-I` directories besides the library (searched after the injected tree).
    pub include_dirs: Vec<PathBuf>,
    /// The original library (for the MR catalogue).
    pub source_root: PathBuf,
    /// `CXXFLAGS` for the oracle, when given.
    pub cxxflags: Option<String>,
    /// Per-check timeout (default: derived by `reduce`).
    pub timeout: Option<Duration>,
    /// The `--run` template, for the default oracle to build and run candidates with
    /// (`MFPPR_RUN`; `--reduce-with-run`).
    pub run: Option<String>,
}

/// Everything the pipeline needs.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// Output directory (exists).
    pub out: PathBuf,
    /// The marked copy of the library.
    pub injected: PathBuf,
    /// The injected markers, in id order.
    pub markers: Vec<Marker>,
    /// How many new lines the diff found (for the summary).
    pub new_lines: usize,
    /// Where tests come from.
    pub source: TestSource,
    /// The `--run` template (`{test}`).
    pub run: String,
    /// Timeout of each `--generate` / `--run` command.
    pub run_timeout: Duration,
    /// Parallel runs (and candidates per reduction).
    pub jobs: usize,
    /// Reduce the chosen tests.
    pub reduce: Option<ReduceStep>,
    /// Verify the reduced tests with gcov.
    pub verify: Option<VerifyOptions>,
    /// Judge each reached marker by metamorphic coverage, built this way (`--metamorphic`).
    pub metamorphic: Option<VerifyOptions>,
    /// With `metamorphic`: at most this many of the smallest tests reaching a marker are
    /// analysed to find one whose MC holds it (`--mc-tests`, at least 1).
    pub mc_tests: usize,
    /// Printers for the regression checks of values no check sees (`--printer`).
    pub printers: Vec<super::checked::Printer>,
}
