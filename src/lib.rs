//! mfppr: a structure-aware reducer for MF++ metamorphic tests.
//!
//! Data flow (design §2): `test.cpp` → [`document::Document`] (bytes + tree-sitter CST) →
//! [`model::TestModel`] (plain data with byte spans) → opportunities ([`passes`]) →
//! `edit::Edit`s → candidate bytes → oracle → verdict → accept.
//!
//! "design §N", here and in every module, tests and scripts, is section N of `docs/design.md`.

pub(crate) mod atomic;
pub(crate) mod batch;
pub(crate) mod bug_report;
pub(crate) mod case;
pub mod catalogue;
pub mod checks;
pub mod cli;
pub(crate) mod compiler;
pub mod coverage;
pub(crate) mod cpp_text;
pub mod document;
pub(crate) mod edit;
pub mod engine;
pub mod error;
pub(crate) mod evidence;
pub(crate) mod export;
pub mod html;
pub(crate) mod input;
pub(crate) mod inspect;
pub(crate) mod interrupt;
pub(crate) mod judge;
pub(crate) mod line_endings;
pub(crate) mod loaded;
pub(crate) mod lock;
pub mod messages;
pub mod model;
pub mod opportunity;
pub mod oracle;
pub(crate) mod outputs;
pub mod passes;
mod pool;
pub(crate) mod process;
pub(crate) mod program;
pub(crate) mod reduce;
#[cfg(test)]
mod tools;
pub(crate) mod versions;
