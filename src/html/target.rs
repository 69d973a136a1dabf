//! Where a page (`--html FILE`, `batch page -o FILE`) may go, checked before anything runs: the
//! rules of [`crate::outputs`] (a regular file or a new name in an existing, writable directory;
//! never an input), and never another output of the same run, a file in a tree mfppr must not
//! write into (the library, the marked tree, a campaign's inputs), or a name the run writes in its
//! own output directory (`cover find --out`, a campaign's OUTDIR).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::coverage::paths::absolute;
use crate::error::{coded, ExitKind};
use crate::outputs::{self, Output};

/// The page's path and what it must not be.
#[derive(Clone, Debug)]
pub struct PageTarget {
    /// `--html FILE`.
    pub path: PathBuf,
    /// The flag that names the page (`--html`, `-o`).
    pub flag: &'static str,
    /// Files the run reads (coverage inputs, a markers file): never the page.
    pub inputs: Vec<PathBuf>,
    /// Directories the page must not lie in, with their flag (the library, the marked tree).
    pub trees: Vec<(&'static str, PathBuf)>,
    /// Files the same run writes, with their flag.
    pub outputs: Vec<(&'static str, PathBuf)>,
    /// The run's own output directory (`cover find`'s `--out`, a campaign's OUTDIR), where only
    /// a `.html` or `.htm` name is free.
    pub out_dir: Option<PathBuf>,
    /// What the run writes in `out_dir`, for the message that refuses another name there.
    pub out_dir_files: &'static str,
}

impl Default for PageTarget {
    /// `--html` of `cover find` (its `--out` files named), with nothing to refuse yet.
    fn default() -> PageTarget {
        PageTarget {
            path: PathBuf::new(),
            flag: "--html",
            inputs: Vec::new(),
            trees: Vec::new(),
            outputs: Vec::new(),
            out_dir: None,
            out_dir_files: "--out, where find writes its own files (summary.json, find.json, \
                            <id>.cpp)",
        }
    }
}

impl PageTarget {
    /// The outputs of `--lcov` (a directory, or the deprecated single `.info` file).
    pub fn add_lcov(&mut self, lcov: Option<&Path>) {
        let Some(lcov) = lcov else { return };
        if lcov.extension().is_some_and(|e| e == "info") && !lcov.is_dir() {
            self.outputs.push(("--lcov", lcov.to_path_buf()));
        } else {
            for name in ["suite.info", "fuzz.info", "new.info"] {
                self.outputs.push(("--lcov", lcov.join(name)));
            }
        }
    }
}

/// Check `t` (see the module docs); the path to write.
pub fn check_target(t: &PageTarget) -> Result<PathBuf> {
    let page = Output {
        what: "the page",
        flag: t.flag,
        path: &t.path,
        record: false,
    };
    let mut resolved = outputs::validate(Path::new(""), &[page])?.remove(0);
    for input in &t.inputs {
        resolved = outputs::validate(input, &[page])?.remove(0);
    }
    let refuse = |why: String| {
        coded(
            ExitKind::Input,
            format!(
                "the page {} {why}; choose another {}",
                t.path.display(),
                t.flag
            ),
        )
    };
    for (flag, other) in &t.outputs {
        if same_target(&resolved, other) {
            return Err(refuse(format!("is also {flag} {}", other.display())));
        }
    }
    let dir = canonical_dir(&resolved);
    let out = t
        .out_dir
        .as_ref()
        .and_then(|o| std::fs::canonicalize(o).ok());
    // `--out` is mfppr's own, also when it lies in the library's tree.
    let in_out = matches!((&dir, &out), (Some(d), Some(o)) if d.starts_with(o));
    for (flag, tree) in t.trees.iter().filter(|_| !in_out) {
        if let (Some(d), Ok(tree)) = (&dir, std::fs::canonicalize(tree)) {
            if d.starts_with(&tree) {
                return Err(refuse(format!(
                    "lies in {flag} {}, which mfppr must not write into",
                    tree.display()
                )));
            }
        }
    }
    if let (Some(d), Some(out)) = (&dir, &out) {
        let html = resolved
            .extension()
            .is_some_and(|e| e == "html" || e == "htm");
        if out == d && !html {
            return Err(refuse(format!(
                "is in {}; give it a .html name",
                t.out_dir_files
            )));
        }
    }
    Ok(resolved)
}

/// The canonical directory of `path`, when it exists.
fn canonical_dir(path: &Path) -> Option<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir).ok()
}

/// Whether `a` and `b` name the same file, existing or not: the same canonical directory and
/// name, else (a directory not made yet) the same absolute path.
fn same_target(a: &Path, b: &Path) -> bool {
    let key = |p: &Path| Some((canonical_dir(p)?, p.file_name()?.to_owned()));
    match (key(a), key(b)) {
        (Some(x), Some(y)) => x == y,
        _ => absolute(a) == absolute(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_never_an_input_an_output_a_library_file_or_a_name_of_find() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let lib = d.join("lib");
        let out = d.join("out");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(d.join("lcov")).unwrap();
        let suite = d.join("suite.json");
        std::fs::write(&suite, "{}").unwrap();
        let mut t = PageTarget {
            path: out.join("index.html"),
            inputs: vec![suite.clone()],
            trees: vec![("--source-root", lib.clone())],
            outputs: Vec::new(),
            out_dir: Some(out.clone()),
            ..PageTarget::default()
        };
        t.add_lcov(Some(&d.join("lcov")));
        assert_eq!(check_target(&t).unwrap(), out.join("index.html"));
        let msg = |path: PathBuf| {
            let t = PageTarget { path, ..t.clone() };
            format!("{:#}", check_target(&t).unwrap_err())
        };
        assert!(msg(suite.clone()).contains("is the input"));
        assert!(msg(d.join("lcov/new.info")).contains("is also --lcov"));
        assert!(msg(lib.join("page.html")).contains("lies in --source-root"));
        assert!(msg(out.join("summary.json")).contains("give it a .html name"));
        assert!(msg(out.clone()).contains("a directory"));
        assert!(msg(PathBuf::from("/dev/null")).contains("a device"));
        assert!(msg(d.join("missing/index.html")).contains("does not exist"));
    }
}
