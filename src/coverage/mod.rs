//! Coverage mode (`mfppr cover`): read gcov/gcovr coverage into one model, diff a suite run
//! against a fuzz run, report the new lines, and inject markers before them.
//!
//! Library API (used by `mfppr cover`, and later by `--find` / reduction toward a marker):
//! [`load`] paths → [`Coverage`]; [`new_lines`] (suite, fuzz, filters) → [`NewLines`];
//! [`inject`] (new lines, options) → [`Injection`] with its [`Marker`]s; [`restore`] (manifest).

pub mod diff;
pub mod gcov_json;
pub mod gcov_text;
pub mod gcovr;
pub mod inject;
pub mod load;
pub mod manifest;
pub mod model;
pub mod paths;
pub mod report;

pub use diff::{new_lines, Filters, NewFile, NewLine, NewLines};
pub use inject::{inject, InjectOptions, InjectTarget, Injection, Marker, MarkerKind, Skipped};
pub use load::{load, LoadOptions};
pub use manifest::{restore, Manifest};
pub use model::{Coverage, FileCoverage, Function};
