//! Coverage mode (`mfppr cover`): read gcov/gcovr coverage into one model, diff a suite run
//! against a fuzz run, report the new lines, inject markers before them, then find, reduce and
//! verify a test per marker.
//!
//! One library call per subcommand of `mfppr cover` ([`run`]): [`run_report`], [`run_inject`],
//! [`run_restore`], [`run_find`]. Underneath: [`load`] paths → [`Coverage`]; [`new_lines`]
//! (suite, fuzz, filters) → [`NewLines`]; [`inject`] (new lines, options) → [`Injection`] with its
//! [`Marker`]s; [`restore`] (manifest); [`pipeline::run`] (find the smallest test per marker,
//! reduce it toward the marker, verify the result with gcov, and with `--metamorphic` choose the
//! test and keep the line by [`metamorphic`] coverage) on top of [`find`], [`verify`] and
//! [`shell`]; the default oracle of the reductions is [`embedded`] in the binary.

pub mod continuation;
pub mod diff;
pub mod embedded;
pub mod find;
pub mod gcov_json;
pub mod gcov_text;
pub mod gcovr;
pub mod inject;
pub mod load;
pub mod manifest;
pub mod metamorphic;
pub mod model;
pub mod paths;
pub mod pipeline;
pub mod report;
pub mod run;
pub mod shell;
pub mod summary;
pub mod verify;

pub use diff::{new_lines, Filters, NewFile, NewLine, NewLines};
pub use inject::{inject, InjectOptions, InjectTarget, Injection, Marker, MarkerKind, Skipped};
pub use load::{load, LoadOptions};
pub use manifest::{restore, Manifest};
pub use model::{Coverage, FileCoverage, Function};
pub use run::{
    run_find, run_inject, run_report, run_restore, FindOptions, InjectRunOptions, ReduceSettings,
    Report, ReportOptions, VerifySettings,
};
