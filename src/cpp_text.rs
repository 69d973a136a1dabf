//! C++ text helpers (issue 41), below the passes and export: one lexing rule ([`code_bytes`]:
//! comments skipped, a string or character literal seen as its opening quote) for the scanners
//! that answer small questions about C++ bytes the document model does not split further — the
//! `)` that closes a `(`, a split at top-level separators, the parameter names of a `(…)` list,
//! whether an expression stands as an operand — and identifiers and line starts; and the one
//! escaper for every string mfppr writes into generated C++ ([`string_literal`]).
//!
//! Why not tree-sitter: the model (built on the parsed [`crate::document::Document`]) already
//! finds the definitions, calls and arguments; these answer small questions at the offsets it
//! gives, or on an argument's text, including text a pass has just built (a substituted
//! operand) that no parsed document covers. A parse per question would cost more than the scan
//! and answer nothing better for these few shapes.

/// Visit the bytes of `text` that are code, in order: comments are skipped and a string or
/// character literal is visited as its opening quote alone. `visit` returns whether to go on.
pub(crate) fn code_bytes(text: &[u8], mut visit: impl FnMut(usize, u8) -> bool) {
    let mut i = 0;
    while i < text.len() {
        match (text[i], text.get(i + 1)) {
            (b'/', Some(b'/')) => {
                i = text[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |n| i + n);
                continue;
            }
            (b'/', Some(b'*')) => {
                i = text[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(text.len(), |n| i + 2 + n + 2);
                continue;
            }
            (quote @ (b'"' | b'\''), _) => {
                if !visit(i, quote) {
                    return;
                }
                i += 1;
                while i < text.len() && text[i] != quote && text[i] != b'\n' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
            }
            (b, _) => {
                if !visit(i, b) {
                    return;
                }
            }
        }
        i += 1;
    }
}

/// Whether `s` can replace an expression without parentheses: a (qualified) name, a number, or
/// a call of a qualified name whose argument list closes at the end.
pub(crate) fn is_primary(s: &str) -> bool {
    let s = s.trim();
    let name_end = s
        .bytes()
        .position(|c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b':' || c == b'.'))
        .unwrap_or(s.len());
    if name_end == s.len() {
        return !s.is_empty();
    }
    name_end > 0
        && s.as_bytes()[name_end] == b'('
        && matching_paren(s.as_bytes(), name_end) == Some(s.len() - 1)
}

/// Whether `s` can stand as an operand without more parentheses: primary ([`is_primary`]) or
/// parenthesised as a whole.
pub(crate) fn is_operand(s: &str) -> bool {
    let s = s.trim();
    is_primary(s) || (s.starts_with('(') && matching_paren(s.as_bytes(), 0) == Some(s.len() - 1))
}

/// `s` ready to stand where an expression was: parenthesised unless primary.
pub(crate) fn as_operand(s: &str) -> String {
    let s = s.trim();
    if is_primary(s) {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// The index of the `)` that closes the `(` at `open` (code bytes only: [`code_bytes`]).
pub(crate) fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut close = None;
    code_bytes(&b[open..], |i, c| {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    close = Some(open + i);
                    return false;
                }
            }
            _ => {}
        }
        true
    });
    close
}

/// The names of the parameters in the `(…)` list that starts at or after `from` in `text`:
/// the last identifier of each top-level comma-separated part (empty for an unnamed one).
pub(crate) fn param_names(text: &[u8], from: usize) -> Option<Vec<String>> {
    let open = from + text[from..].iter().position(|&c| c == b'(')?;
    let close = matching_paren(text, open)?;
    let inner = std::str::from_utf8(&text[open + 1..close]).ok()?;
    if inner.trim().is_empty() || inner.trim() == "void" {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut part = String::new();
    for c in inner.chars().chain(std::iter::once(',')) {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                let name: String = part
                    .trim()
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                out.push(name);
                part.clear();
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    Some(out)
}

/// Whether `s` is a C++ identifier (letters, digits, `_`, not starting with a digit).
pub(crate) fn is_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The last identifier of `s` (empty when it does not end with one).
pub(crate) fn last_ident(s: &str) -> &str {
    let s = s.trim();
    let start = s
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    &s[start..]
}

/// `s` split at `sep` outside parentheses, brackets, braces and literals ([`code_bytes`]).
pub(crate) fn split_top(s: &str, sep: u8) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = 0;
    code_bytes(s.as_bytes(), |i, b| {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if b == sep && depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
        true
    });
    out.push(&s[from..]);
    out
}

/// The identifiers of the code of `text` ([`code_bytes`]: none from comments or literals), in
/// order, each as often as it occurs (keywords too; numbers are not identifiers).
pub(crate) fn identifiers(text: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<std::ops::Range<usize>> = None;
    let mut flush = |word: &mut Option<std::ops::Range<usize>>| {
        if let Some(w) = word.take() {
            let w = String::from_utf8_lossy(&text[w]).into_owned();
            if is_ident(&w) {
                out.push(w);
            }
        }
    };
    code_bytes(text, |i, b| {
        let part = b.is_ascii_alphanumeric() || b == b'_';
        match &mut word {
            Some(w) if part && w.end == i => w.end = i + 1,
            _ => {
                flush(&mut word);
                word = part.then_some(i..i + 1);
            }
        }
        true
    });
    flush(&mut word);
    out
}

/// The byte offset of the start of every line of `text`.
pub(crate) fn line_starts(text: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            text.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect()
}

/// `bytes` as a C++ narrow string literal, quotes included, that holds exactly those bytes:
/// printable ASCII as itself (`"`, `\\` and `?` escaped, the last against trigraphs), every
/// other byte as a three-digit octal escape, so a path with `é`, a control character or a byte
/// that is not UTF-8 compiles and means the same bytes (issue 59).
pub(crate) fn string_literal(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'?' => s.push_str("\\?"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_skip_comments_and_literals() {
        let text =
            b"#define FV_COUNT 100\nint x[FV_COUNT]; // BV_SIZE\n/* A */ f(\"B C\", 2u, a/**/b);";
        assert_eq!(
            identifiers(text),
            ["define", "FV_COUNT", "int", "x", "FV_COUNT", "f", "a", "b"]
        );
    }

    #[test]
    fn a_string_literal_holds_exactly_the_bytes() {
        assert_eq!(
            string_literal(b"/tmp/x/probes.log"),
            "\"/tmp/x/probes.log\""
        );
        assert_eq!(
            string_literal("/tmp/é\t\"\\??=".as_bytes()),
            "\"/tmp/\\303\\251\\011\\\"\\\\\\?\\?=\""
        );
        assert_eq!(string_literal(b"\xff1"), "\"\\3771\"");
    }

    #[test]
    fn operands_are_parenthesised_unless_primary() {
        assert_eq!(as_operand("a"), "a");
        assert_eq!(as_operand(" iset::f(a, g(b)) "), "iset::f(a, g(b))");
        assert_eq!(as_operand("a + b"), "(a + b)");
        assert_eq!(as_operand("f(a) + g(b)"), "(f(a) + g(b))");
        assert_eq!(as_operand("-15"), "(-15)");
    }

    #[test]
    fn scanners_skip_literals_and_comments() {
        assert_eq!(matching_paren(b"f(a, \")\", /* ) */ b)", 1), Some(19));
        assert_eq!(
            split_top("a, f(b, c), \"d, e\"", b','),
            ["a", " f(b, c)", " \"d, e\""]
        );
        assert_eq!(line_starts(b"a\nbc\n"), [0, 2, 5]);
        assert!(is_ident("_x1") && !is_ident("1x") && !is_ident(""));
        assert_eq!(last_ident("const T& b"), "b");
    }

    #[test]
    fn parameter_names_are_the_last_identifier_of_each_part() {
        let t = b"T f(fuzz::fuzz_context ctx, std::map<int, long> m, const T& b) {}";
        assert_eq!(
            param_names(t, 0).unwrap(),
            vec!["ctx".to_string(), "m".to_string(), "b".to_string()]
        );
        assert_eq!(
            param_names(b"int main() {}", 0).unwrap(),
            Vec::<String>::new()
        );
    }
}
