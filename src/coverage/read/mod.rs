//! Reading coverage: every supported format (gcov JSON, text `.gcov`, gcovr JSON) into the one
//! normalised [`Coverage`](super::model::Coverage) model, with path keys normalised
//! ([`load`]). Owns file access to coverage data (regular files only, bounded gzip inflation)
//! and format detection. May not diff, report or touch sources: what it returns is the model.

pub mod gcov_json;
pub mod gcov_text;
pub mod gcovr;
pub mod load;
