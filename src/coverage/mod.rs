//! Coverage mode (`mfppr cover`, design §8 and §13): read gcov/gcovr coverage into one model,
//! diff a suite run against a fuzz run, report the new lines, inject markers before them, then
//! find, reduce and verify a test per marker.
//!
//! The data's way through, one folder per stage:
//!
//! * [`read`]: coverage files of every format → the one [`model`] ([`Coverage`]);
//! * [`diff`]: suite and fuzz [`Coverage`] → [`NewLines`], and their reports (table, JSON, lcov);
//! * [`inject`](mod@inject): [`NewLines`] → [`Marker`]s in a copy of the sources or in place (with a
//!   [`Manifest`] for [`restore`]);
//! * [`find`]: markers → the smallest test per marker, reduced and verified with gcov, optionally
//!   chosen and kept by metamorphic coverage.
//!
//! [`html`] writes the coverage page (`--html`) of a report or a find run.
//!
//! [`commands`] holds one library call per subcommand of `mfppr cover`: [`run_report`],
//! [`run_inject`], [`run_restore`], [`run_find`]. [`paths`] is lexical path normalisation,
//! shared by reading and injection. Tree-sitter is reached only through [`crate::document`].

pub mod commands;
pub mod diff;
pub mod find;
pub mod html;
pub mod inject;
pub mod model;
pub mod paths;
pub mod read;

pub use commands::{
    run_find, run_inject, run_report, run_restore, FindOptions, InjectRunOptions, ReduceSettings,
    ReportOptions, VerifySettings,
};
pub use diff::new_lines::{new_lines, Filters, NewFile, NewLine, NewLines};
pub use diff::NewLinesReport;
pub use inject::manifest::{restore, Manifest};
pub use inject::{inject, InjectOptions, InjectTarget, Injection, Marker, MarkerKind, Skipped};
pub use model::{Coverage, FileCoverage, Function};
pub use read::load::{load, LoadOptions};
