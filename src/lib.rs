//! mfppr: a structure-aware reducer for MF++ metamorphic tests.
//!
//! Data flow (design §2): `test.cpp` → [`document::Document`] (bytes + tree-sitter CST) →
//! [`model::TestModel`] (plain data with byte spans) → opportunities ([`passes`]) →
//! [`edit::Edit`]s → candidate bytes → oracle → verdict → accept.
//!
//! "design §N", here and in every module, tests and scripts, is section N of `docs/design.md`.

pub mod atomic;
pub mod batch;
pub mod blame;
pub mod bug_report;
pub mod catalogue;
pub mod cli;
pub mod coverage;
pub mod document;
pub mod edit;
pub mod engine;
pub mod error;
pub mod export;
pub mod input;
pub mod inspect;
pub mod interrupt;
pub mod line_endings;
pub mod lock;
pub mod messages;
pub mod model;
pub mod opportunity;
pub mod oracle;
pub mod outputs;
pub mod passes;
mod pool;
pub mod process;
pub mod reduce;
