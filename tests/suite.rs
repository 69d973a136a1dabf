//! Every integration test in one binary: `cargo test --release` links it once, and libtest
//! spreads all of its tests over one pool of threads, so no core idles while a file's last long
//! test finishes (one binary per file left a core idle about a third of the time here).
//! Each module is one file in `tests/`; `common` holds the helpers they share.
//! Run one file's tests with a filter: `cargo test --release --test suite -- reduce_fixtures::`.

mod common;

mod batch_cli;
mod batch_hostile;
mod batch_slurm;
mod campaign;
mod conformance;
mod cover_checked;
mod cover_clib;
mod cover_e2e;
mod cover_hostile;
mod cover_interrupt;
mod cover_lcov;
mod cover_mc;
mod cover_pipeline;
mod cover_samples;
mod engine_script;
mod engine_search;
mod export;
mod flags;
mod inspect_cli;
mod pch;
mod reader_props;
mod reduce_cli;
mod reduce_fixtures;
mod reference_env;
mod report;
mod safety;
mod tail;
mod z3;
