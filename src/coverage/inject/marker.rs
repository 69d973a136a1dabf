//! The text of a marker (a statement, or a void expression for a comma expression) and its
//! stable id. Pure: reads and writes nothing.

use super::{Marker, MarkerKind};

/// `s` as the body of a C string literal used as a `printf` format: the one C++ escaper
/// ([`crate::cpp_text::string_literal`]) without its quotes, `%` doubled.
fn c_string_body(s: &str) -> String {
    let literal = crate::cpp_text::string_literal(s.as_bytes());
    literal[1..literal.len() - 1].replace('%', "%%")
}

fn print_call(id: &str, file: &str, line: u32) -> String {
    format!(
        "fprintf(stderr, \"MFPPR-COV {id} {}:{line}\\n\")",
        c_string_body(file)
    )
}

/// The marker statement for `id` at `file:line`.
pub fn marker_statement(kind: MarkerKind, id: &str, file: &str, line: u32) -> String {
    let print = print_call(id, file, line);
    match kind {
        MarkerKind::Log => format!("{{ {print}; }} "),
        MarkerKind::Abort => format!("{{ {print}; abort(); }} "),
    }
}

/// The marker as a void expression, for the left side of a comma expression around an operand
/// (a continuation line in a `&&`/`||` operand or a `?:` branch).
pub fn marker_expression(kind: MarkerKind, id: &str, file: &str, line: u32) -> String {
    let print = print_call(id, file, line);
    match kind {
        MarkerKind::Log => format!("(void){print}"),
        MarkerKind::Abort => format!("(void){print}, abort()"),
    }
}

/// The stable id of a marker placed on `line` of `file`: the file key with every character other
/// than a letter or digit turned into `_`, then `-L<line>` (`src/isl_point.c`, 408 →
/// `src_isl_point_c-L408`). It depends on nothing else, so filters and other files do not move it.
pub fn marker_id(file: &str, line: u32) -> String {
    let stem: String = file
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{stem}-L{line}")
}

/// `id`, or `id.2`, `id.3`, … when a marker already has it (two markers on one line).
pub(super) fn unique_id<'a>(id: String, taken: impl Iterator<Item = &'a Marker> + Clone) -> String {
    let free = |c: &str| !taken.clone().any(|m| m.id == c);
    if free(&id) {
        return id;
    }
    (2..)
        .map(|n| format!("{id}.{n}"))
        .find(|c| free(c))
        .unwrap_or(id)
}

/// Prepended to each edited file (see the module docs).
pub const PRELUDE: &str = "#include <stdio.h>\n#include <stdlib.h>\n#line 1\n";
