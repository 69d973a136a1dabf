//! Golden files: [`assert_golden`] compares a whole output, [`assert_golden_diff`] stores an
//! output as a unified diff against its input, so a reviewer sees only the changed lines. Both
//! print a unified diff on mismatch; `MFPPR_BLESS=1` rewrites the golden. Shared by the
//! integration tests (through `tests/common`) and the pass unit tests (through `#[path]`).

use std::path::Path;

/// A unified diff from `before` to `after`, with file headers `from` and `to`.
fn unified(before: &[u8], after: &[u8], from: &str, to: &str) -> String {
    let (before, after) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(from, to)
        .to_string()
}

/// Assert that the file at `path` holds `got`, printing a unified diff (expected → got) when not.
/// With `MFPPR_BLESS` set, write `got` there first (creating the directory).
pub(crate) fn assert_golden(path: &Path, got: &[u8]) {
    if std::env::var_os("MFPPR_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, got).unwrap();
    }
    let want = std::fs::read(path).unwrap_or_default();
    if want != got {
        let diff = unified(&want, got, &path.display().to_string(), "got");
        panic!(
            "{} differs (MFPPR_BLESS=1 to accept):\n{diff}",
            path.display()
        );
    }
}

/// Assert that the golden diff at `path` (a unified diff from `input`, named `input_name`, to the
/// expected output) is the diff from `input` to `got`.
#[allow(dead_code)] // the suite compares whole outputs; the pass unit tests use this (`#[path]`)
pub(crate) fn assert_golden_diff(path: &Path, input_name: &str, input: &[u8], got: &[u8]) {
    let name = path.file_name().unwrap().to_string_lossy();
    assert_golden(path, unified(input, got, input_name, &name).as_bytes());
}
