//! The C++ compiler's own include search path, asked once per process: headers found there are
//! library headers (`#include "z3++.h"` found in `/usr/include`), which the catalogue does not
//! read and export keeps as includes.
//!
//! The compiler is `$CXX`, else `c++`; it is asked with `-E -x c++ - -v` through the process
//! runner (10 s at most). A compiler that cannot be run gives no directories, and a header found
//! nowhere is then reported as before, naming the directories searched.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// What asking the compiler gave: its include directories, or why there are none.
struct SearchPath {
    dirs: Vec<PathBuf>,
    problem: Option<String>,
}

fn search_path() -> &'static SearchPath {
    static PATH: OnceLock<SearchPath> = OnceLock::new();
    PATH.get_or_init(|| {
        let cxx = std::env::var("CXX")
            .ok()
            .filter(|c| !c.trim().is_empty())
            .unwrap_or_else(|| "c++".to_string());
        let mut command = std::process::Command::new("sh");
        // `-v` writes the search list on stderr; the runner keeps stdout only.
        command
            .arg("-c")
            .arg("exec $0 -E -x c++ - -v 2>&1")
            .arg(&cxx);
        let asked = crate::process::capture(&mut command, b"", Duration::from_secs(10), 256 * 1024);
        let dirs = asked
            .as_ref()
            .map(|c| parse_search_list(&String::from_utf8_lossy(&c.stdout)))
            .unwrap_or_default();
        let problem = match &asked {
            _ if !dirs.is_empty() => None,
            Ok(c) => Some(format!(
                "the compiler `{cxx}` ($CXX, else c++) could not be run or named no include \
                 directory ({}): set CXX to a C++ compiler",
                c.finished.end
            )),
            Err(e) => Some(format!(
                "the compiler `{cxx}` ($CXX, else c++) could not be run ({e}): set CXX to a C++ \
                 compiler"
            )),
        };
        SearchPath { dirs, problem }
    })
}

/// The compiler's include directories, in search order (quoted, then angle-bracket ones).
pub(crate) fn include_dirs() -> &'static [PathBuf] {
    &search_path().dirs
}

/// Why the compiler gave no include directories (it could not be run), if it did not.
pub(crate) fn problem() -> Option<&'static str> {
    search_path().problem.as_deref()
}

/// The directories of a `-v` search list (`#include "..." search starts here:` … `End of search
/// list.`), framework markers dropped.
fn parse_search_list(text: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("#include ") && line.ends_with("search starts here:") {
            inside = true;
        } else if line.starts_with("End of search list.") {
            inside = false;
        } else if inside && line.starts_with(' ') {
            let dir = PathBuf::from(line.trim().trim_end_matches(" (framework directory)"));
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The path of `name` in the compiler's include directories, if it is there.
pub(crate) fn find(name: &str) -> Option<PathBuf> {
    let name = Path::new(name);
    if name.is_absolute() {
        return None;
    }
    include_dirs()
        .iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_list_of_g_plus_plus_v_is_read() {
        let text = "ignoring nonexistent directory \"/usr/local/include/x86_64-linux-gnu\"\n\
                    #include \"...\" search starts here:\n\
                    \x20/opt/quoted\n\
                    #include <...> search starts here:\n\
                    \x20/usr/include/c++/12\n\
                    \x20/usr/include\n\
                    \x20/Library/Frameworks (framework directory)\n\
                    End of search list.\n\
                    \x20/not/a/dir\n";
        assert_eq!(
            parse_search_list(text),
            [
                "/opt/quoted",
                "/usr/include/c++/12",
                "/usr/include",
                "/Library/Frameworks"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn the_installed_compiler_finds_its_standard_headers() {
        if !crate::tools::available("c++") {
            return;
        }
        assert!(find("vector").is_some(), "{:?}", include_dirs());
        assert!(find("no-such-header-mfppr.h").is_none());
    }
}
