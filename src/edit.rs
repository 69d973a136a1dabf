//! Byte-range edits: the only way mfppr changes text.
//!
//! A candidate is a set of [`Edit`]s on the current text. [`apply`] sorts them, drops edits nested
//! inside an earlier (wider) deletion, rejects partial overlaps, and splices the text in one pass.

use std::ops::Range;

/// Replace the bytes `span` of the text with `text` (empty `text` = deletion).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edit {
    /// Byte range in the original text.
    pub span: Range<usize>,
    /// Replacement text.
    pub text: String,
}

impl Edit {
    /// Delete `span`.
    pub fn delete(span: Range<usize>) -> Edit {
        Edit {
            span,
            text: String::new(),
        }
    }

    /// Replace `span` by `text`.
    pub fn replace(span: Range<usize>, text: impl Into<String>) -> Edit {
        Edit {
            span,
            text: text.into(),
        }
    }
}

/// Apply `edits` to `source`.
///
/// Edits are sorted by start; an edit that lies entirely inside an earlier *deletion or
/// replacement* that covers it is dropped (deleting a function also deletes the edits inside it);
/// an edit that partially overlaps a previous one is dropped too (the wider one wins), so the result
/// is always well-defined. Insertions (empty spans) at the same offset keep their given order.
pub(crate) fn apply(source: &[u8], edits: &[Edit]) -> Vec<u8> {
    splice(source, &effective(source.len(), edits))
}

/// The edits [`apply`] applies, in order: in range, sorted by start, none inside or overlapping
/// an earlier one.
pub(crate) fn effective(len: usize, edits: &[Edit]) -> Vec<&Edit> {
    let mut sorted: Vec<&Edit> = edits
        .iter()
        .filter(|e| e.span.start <= e.span.end && e.span.end <= len)
        .collect();
    // Wider edits first among equal starts so that nested ones are dropped.
    sorted.sort_by(|a, b| {
        a.span
            .start
            .cmp(&b.span.start)
            .then(b.span.end.cmp(&a.span.end))
    });
    let mut out = Vec::with_capacity(sorted.len());
    let mut pos = 0usize;
    for e in sorted {
        if e.span.start < pos {
            // Inside, or overlapping, an edit already kept.
            continue;
        }
        pos = e.span.end;
        out.push(e);
    }
    out
}

/// Splice `edits` (as returned by [`effective`]) into `source` in one pass.
pub(crate) fn splice(source: &[u8], edits: &[&Edit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(source.len());
    let mut pos = 0usize;
    for e in edits {
        out.extend_from_slice(&source[pos..e.span.start]);
        out.extend_from_slice(e.text.as_bytes());
        pos = e.span.end;
    }
    out.extend_from_slice(&source[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, edits: &[Edit]) -> String {
        String::from_utf8(apply(src.as_bytes(), edits)).unwrap()
    }

    #[test]
    fn splices_in_order_whatever_the_given_order() {
        let edits = [Edit::replace(6..11, "there"), Edit::delete(0..1)];
        assert_eq!(run("hello world!", &edits), "ello there!");
    }

    #[test]
    fn nested_edits_inside_a_deletion_are_dropped() {
        let edits = [Edit::replace(2..4, "XX"), Edit::delete(0..6)];
        assert_eq!(run("abcdefgh", &edits), "gh");
    }

    #[test]
    fn partial_overlap_keeps_the_earlier_edit() {
        let edits = [Edit::delete(0..4), Edit::delete(2..6)];
        assert_eq!(run("abcdefgh", &edits), "efgh");
    }

    #[test]
    fn insertion_and_empty_edit_list() {
        assert_eq!(run("ab", &[Edit::replace(1..1, "-")]), "a-b");
        assert_eq!(run("ab", &[]), "ab");
    }

    #[test]
    fn out_of_range_edits_are_ignored() {
        assert_eq!(run("ab", &[Edit::delete(1..9)]), "ab");
    }
}
