//! tree-sitter front end (being built).

pub mod statements;
