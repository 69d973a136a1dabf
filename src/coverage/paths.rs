//! Lexical path normalisation (no file-system access: coverage data may name files that are gone).

use std::path::{Component, Path, PathBuf};

/// `base.join(path)` (or `path` when absolute) with `.` removed and `..` folded lexically.
pub fn join_lexically(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last_is_normal =
                    matches!(out.components().next_back(), Some(Component::Normal(_)));
                if last_is_normal {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Make `path` absolute against the process's current directory, lexically.
pub fn absolute(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    join_lexically(&cwd, path)
}

/// The key of `path` under `root`: relative (with `/`) when inside `root`, else `None`.
pub fn relative_to(path: &Path, root: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_dots() {
        assert_eq!(
            join_lexically(Path::new("/b/c"), Path::new("../x/./y.h")),
            Path::new("/b/x/y.h")
        );
        assert_eq!(
            join_lexically(Path::new(""), Path::new("../x.h")),
            Path::new("../x.h")
        );
        assert_eq!(
            join_lexically(Path::new("/b"), Path::new("/abs/x.h")),
            Path::new("/abs/x.h")
        );
        assert_eq!(
            relative_to(Path::new("/r/s/x.h"), Path::new("/r")).unwrap(),
            "s/x.h"
        );
        assert!(relative_to(Path::new("/q/x.h"), Path::new("/r")).is_none());
    }
}
