//! The integration tests in one binary, so that their tests share the test threads: one binary
//! per file ran one after another, a core idle while a binary's last long test ran. Each module is
//! one file of `tests/` (`cargo test --release --test e2e reduce_fixtures::` runs one). The
//! campaign and the reader's properties keep their own binaries (`--ignored` targets).

mod common;

mod batch_cli;
mod batch_hostile;
mod batch_slurm;
mod conformance;
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
mod reduce_cli;
mod reduce_fixtures;
mod report;
mod safety;
mod tail;
