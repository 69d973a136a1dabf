//! Versions for a report without `--library-version` (issue 28 item 5): the compiler's
//! `--version` (its first line) and, for each library header the standalone includes from the
//! compiler's own include path, the Debian package that owns it (`dpkg -S`) and its version
//! (`dpkg-query`), when dpkg answers. Each query runs through the process runner with a timeout;
//! one that cannot run or says nothing is left out.

use std::time::Duration;

use crate::process::capture;

/// How long one query may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How much of its output is read.
const CAP: usize = 16 * 1024;
/// How long one line of the report may be.
const LINE_MAX: usize = 200;
/// Packages of the toolchain: their headers are not the library's.
const TOOLCHAIN: [&str; 3] = ["libc6-dev", "libstdc++", "linux-libc-dev"];

/// The link flags `pkg-config --libs` gives for the packages that own the library headers of
/// `standalone` (each package's `.pc` files, as `dpkg -L` lists them), or `None` when it gives
/// none: how the report links a standalone when neither `--` nor `LIBS`/`LDFLAGS` say.
pub(crate) fn pkg_config_libs(packages: &[(String, String)]) -> Option<String> {
    let mut flags: Vec<String> = Vec::new();
    for (_, package) in packages {
        let listed = output_lines("exec dpkg -L \"$0\"", &[package]);
        for module in listed.iter().filter_map(|f| {
            f.strip_suffix(".pc")
                .filter(|_| f.contains("/pkgconfig/"))
                .and_then(|f| f.rsplit('/').next())
        }) {
            let libs = output_lines("exec pkg-config --libs \"$0\"", &[module]);
            for word in libs.iter().flat_map(|l| l.split_whitespace()) {
                if !flags.iter().any(|f| f == word) {
                    flags.push(word.to_string());
                }
            }
        }
    }
    (!flags.is_empty()).then(|| flags.join(" "))
}

/// Each library header of `standalone` found on the compiler's path, with the Debian package
/// that owns it (toolchain packages left out).
pub(crate) fn header_packages(standalone: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for header in library_headers(standalone) {
        let Some(path) = crate::compiler::find(&header) else {
            continue;
        };
        let path = path.to_string_lossy().into_owned();
        let Some(owner) = first_line("exec dpkg -S \"$0\"", &[&path]) else {
            continue;
        };
        let package = owner.split(':').next().unwrap_or_default().to_string();
        if package.is_empty() || TOOLCHAIN.iter().any(|t| package.starts_with(t)) {
            continue;
        }
        out.push((header, package));
    }
    out
}

/// One short line each: the compiler, then the package of each library header of `standalone`.
pub(crate) fn versions(packages: &[(String, String)]) -> Vec<String> {
    let mut lines = Vec::new();
    let cxx = std::env::var("CXX")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "c++".to_string());
    if let Some(v) = first_line("exec $0 --version", &[&cxx]) {
        lines.push(format!("compiler: {v}"));
    }
    for (header, package) in packages {
        let version = first_line("exec dpkg-query -W -f '${Version}' \"$0\"", &[package]);
        lines.push(match version {
            Some(v) => format!("{header}: {package} {v}"),
            None => format!("{header}: {package}"),
        });
    }
    lines
}

/// The headers `text` includes (quoted, or angle-bracketed with an extension), in order.
fn library_headers(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        let name = match rest.chars().next() {
            Some('"') => rest[1..].split('"').next(),
            Some('<') => rest[1..].split('>').next().filter(|n| n.contains('.')),
            _ => None,
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
    }
    out
}

/// The first non-blank line of `sh -c SCRIPT ARGS…`'s stdout when it exits 0, cut short.
fn first_line(script: &str, args: &[&str]) -> Option<String> {
    output_lines(script, args).into_iter().next()
}

/// The non-blank lines of `sh -c SCRIPT ARGS…`'s stdout when it exits 0 (none otherwise), each
/// cut short and without control characters.
fn output_lines(script: &str, args: &[&str]) -> Vec<String> {
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(script).args(args);
    let Ok(c) = capture(&mut command, b"", TIMEOUT, CAP) else {
        return Vec::new();
    };
    if c.finished.end.status() != Some(0) {
        return Vec::new();
    }
    String::from_utf8_lossy(&c.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            line.chars()
                .filter(|c| !c.is_control())
                .take(LINE_MAX)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_headers_are_quoted_or_have_an_extension() {
        let text = "#include <cassert>\n#include \"z3++.h\"\n  #  include <isl/set.h>\n#include \"z3++.h\"\nint x;\n";
        assert_eq!(library_headers(text), ["z3++.h", "isl/set.h"]);
    }

    #[test]
    fn the_compiler_is_named_first() {
        if !crate::tools::available("c++") {
            return;
        }
        let v = versions(&header_packages("#include <cassert>\n"));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("compiler: "), "{v:?}");
    }
}
