//! The standard headers a spec header includes that nothing in the export uses any more, left
//! out (a library header includes what it uses itself).

use std::collections::HashSet;

use super::qualified_names;
use crate::export::Chunk;

/// Standard headers a spec header includes that the export needs only if it uses one of the
/// names listed (a library header includes what it uses itself).
const STD_HEADERS: [(&str, &[&str]); 2] = [
    ("#include <cassert>", &["assert"]),
    (
        "#include <string>",
        &[
            "std::string",
            "std::to_string",
            "std::stoi",
            "std::stol",
            "std::stoll",
            "std::getline",
        ],
    ),
];

/// `includes` less the [`STD_HEADERS`] whose names neither the chunks nor the test use.
pub(in crate::export) fn used_includes(
    includes: Vec<String>,
    chunks: &[Chunk],
    test: &str,
) -> Vec<String> {
    let names: HashSet<String> = chunks
        .iter()
        .map(|c| c.text.as_str())
        .chain(std::iter::once(test))
        .flat_map(qualified_names)
        .map(|(_, n)| n.trim_start_matches("::").to_string())
        .collect();
    includes
        .into_iter()
        .filter(|inc| {
            STD_HEADERS
                .iter()
                .find(|(line, _)| line == inc)
                .is_none_or(|(_, uses)| uses.iter().any(|u| names.contains(*u)))
        })
        .collect()
}
