//! tree-sitter front end (being built)
