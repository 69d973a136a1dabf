//! Coverage mode (being built).
