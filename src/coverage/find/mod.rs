//! Find, reduce, verify (`cover find`, design §8 and §13): after injection, run the tests against
//! the marked tree, choose a test per marker ([`reach`], by metamorphic coverage with
//! [`metamorphic`]), reduce it toward its marker with the built-in coverage-marker oracle
//! ([`crate::checks`]), confirm it with gcov
//! ([`verify`]), and write `OUT/summary.json` ([`summary`]); [`pipeline`] runs these steps in
//! order. Every user command (`--run`, `--generate`, `--verify-cmd`) goes through [`shell`].
//! Reads coverage only through [`crate::coverage::read`]; never edits the user's sources (markers
//! come from [`crate::coverage::inject`](mod@crate::coverage::inject)).

pub mod checked;
pub mod metamorphic;
pub mod options;
pub mod pipeline;
pub mod reach;
pub mod shell;
pub mod suite;
pub mod summary;
pub mod verify;
