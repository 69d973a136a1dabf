//! What makes an export read in the library's own terms, one file per rewrite:
//!
//! - `aliases`: the spec's aliases of library types replaced by those types
//!   ([`resolve_aliases`]);
//! - `inline`: calls of spec functions whose body returns one expression (base MRs, `mfr_*`
//!   reductions) replaced by that expression ([`inline_calls`]);
//! - `scalarise`: a context object only read member by member replaced by its members
//!   ([`scalarise`]);
//! - `includes`: standard headers nothing uses any more left out ([`used_includes`]).
//!
//! Text in, text out; the closure of declarations is computed afterwards on the result. This
//! module owns what they share: the qualified names of a text ([`qualified_names`]).

use std::ops::Range;

mod aliases;
mod includes;
mod inline;
mod scalarise;
#[cfg(test)]
mod tests;

pub(super) use aliases::resolve_aliases;
pub(super) use includes::used_includes;
pub(super) use inline::inline_calls;
pub(super) use scalarise::{class_objects, plain_class, scalarise, PlainClass};

/// The (possibly `::`-qualified) names in C++ `text`, outside comments and string and
/// character literals, with their spans.
pub(super) fn qualified_names(text: &str) -> Vec<(Range<usize>, String)> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += usize::from(b[i] == b'\\') + 1;
                }
                i += 1;
            }
            c if c.is_ascii_digit() => {
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
            }
            c if ident(c) || (c == b':' && b.get(i + 1) == Some(&b':')) => {
                let start = i;
                loop {
                    if b[i..].starts_with(b"::") {
                        i += 2;
                    }
                    let from = i;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                    if i == from || !b[i..].starts_with(b"::") {
                        break;
                    }
                }
                if i == start {
                    i += 1;
                    continue;
                }
                out.push((start..i, text[start..i].to_string()));
            }
            _ => i += 1,
        }
    }
    out
}
