//! Hand-written scanners of C++ bytes that the passes (mostly the tail's) use on text the
//! document model does not split further: whether an expression needs parentheses to stand as
//! an operand, the `)` that closes a `(`, the parameter names of a `(…)` list.
//!
//! Why not tree-sitter: the model (built on the parsed [`crate::document::Document`]) already
//! finds the definitions, calls and arguments; these answer small questions at the offsets it
//! gives, or on an argument's text, including text a pass has just built (a substituted
//! operand) that no parsed document covers. A parse per question would cost more than the scan
//! and answer nothing better for these few shapes. Each scanner skips string and character
//! literals and nothing more (no comments, no raw strings), which is all MF++ output needs.

/// Whether `s` can replace an expression without parentheses: a (qualified) name, a number, or
/// a call of a qualified name whose argument list closes at the end.
pub(super) fn is_primary(s: &str) -> bool {
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

/// The index of the `)` that closes the `(` at `open`, skipping string and character literals.
pub(super) fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += usize::from(b[i] == b'\\') + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The names of the parameters in the `(…)` list that starts at or after `from` in `text`:
/// the last identifier of each top-level comma-separated part (empty for an unnamed one).
pub(super) fn param_names(text: &[u8], from: usize) -> Option<Vec<String>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_parenthesised_unless_primary() {
        assert_eq!(as_operand("a"), "a");
        assert_eq!(as_operand(" iset::f(a, g(b)) "), "iset::f(a, g(b))");
        assert_eq!(as_operand("a + b"), "(a + b)");
        assert_eq!(as_operand("f(a) + g(b)"), "(f(a) + g(b))");
        assert_eq!(as_operand("-15"), "(-15)");
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
