//! Load coverage files of any supported format (dispatch by content) and directories of them, and
//! normalise their paths into one [`Coverage`].
//!
//! Path keys: gcov JSON names are resolved against the document's `current_working_directory`;
//! names without a known base (text `.gcov`, gcovr) are resolved against `--source-root` when one
//! is given. With a source root, keys are relative to it (`/`-separated) and files outside it are
//! dropped (as gcovr's `--root` does); without one, keys are the resolved paths, and
//! [`unify_relative_keys`] folds a relative key into the one absolute key that ends with it, so
//! that gcov JSON and text `.gcov` of the same sources do not report each line under two paths.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde_json::Value;

use super::model::Coverage;
use super::paths::{join_lexically, relative_to};
use super::{gcov_json, gcov_text, gcovr};
use crate::error::{coded, ExitKind};

/// How to resolve and key file names.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Absolute, lexically normalised source root (`--source-root`).
    pub source_root: Option<PathBuf>,
}

/// Load and sum every coverage file in `paths` (files or directories, walked recursively).
pub fn load(paths: &[PathBuf], opts: &LoadOptions) -> Result<Coverage> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .with_context(|| format!("cannot read coverage input {}", p.display()))?;
        if meta.is_dir() {
            let before = files.len();
            for entry in walkdir::WalkDir::new(p).sort_by_file_name() {
                let entry = entry.with_context(|| format!("cannot walk {}", p.display()))?;
                if entry.file_type().is_file() && is_candidate(entry.path())? {
                    files.push(entry.into_path());
                }
            }
            if files.len() == before {
                return Err(coded(
                    ExitKind::Input,
                    format!(
                        "{}: no coverage files found (looked for *.gcov, *.gcov.json[.gz] and gcov/gcovr *.json[.gz])",
                        p.display()
                    ),
                ));
            }
        } else {
            files.push(p.clone());
        }
    }
    let parts: Vec<Coverage> = files
        .par_iter()
        .map(|f| load_file(f, opts))
        .collect::<Result<_>>()?;
    let mut cov = Coverage::default();
    for part in parts {
        cov.merge(part);
    }
    Ok(cov)
}

/// Whether a file met while walking a directory is coverage data.
fn is_candidate(path: &Path) -> Result<bool> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.ends_with(".gcov") || name.ends_with(".gcov.json") || name.ends_with(".gcov.json.gz") {
        return Ok(true);
    }
    if name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".jsonl") {
        // Other JSON (compile_commands.json, …) is skipped: sniff for a format_version key.
        let bytes = read_maybe_gz(path)?;
        let head = &bytes[..bytes.len().min(1 << 16)];
        return Ok(String::from_utf8_lossy(head).contains("format_version\""));
    }
    Ok(false)
}

fn read_maybe_gz(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| {
                coded(
                    ExitKind::Input,
                    format!("{}: bad gzip data: {e}", path.display()),
                )
            })?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Load one coverage file (format detected from its content) and normalise its keys.
pub fn load_file(path: &Path, opts: &LoadOptions) -> Result<Coverage> {
    let bytes = read_maybe_gz(path)?;
    let raw = parse_bytes(&bytes, path)?;
    Ok(normalise(raw, opts))
}

/// Parse the (decompressed) content of a coverage file; `origin` names it in errors.
pub fn parse_bytes(bytes: &[u8], origin: &Path) -> Result<Coverage> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => Err(coded(
            ExitKind::Input,
            format!("{}: empty coverage file", origin.display()),
        )),
        Some(b'{') => parse_json_stream(bytes, origin),
        Some(_) => {
            let text = String::from_utf8_lossy(bytes);
            if gcov_text::looks_like_gcov_text(&text) {
                gcov_text::parse(&text, origin)
            } else {
                Err(coded(
                    ExitKind::Input,
                    format!(
                        "{}: not coverage data (expected gcov JSON, gcovr JSON or a text .gcov file)",
                        origin.display()
                    ),
                ))
            }
        }
    }
}

/// One or more JSON documents (`gcov --stdout --json-format` writes one per line).
fn parse_json_stream(bytes: &[u8], origin: &Path) -> Result<Coverage> {
    let mut cov = Coverage::default();
    let mut docs = 0usize;
    for doc in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
        let doc = doc.map_err(|e| {
            coded(
                ExitKind::Input,
                format!(
                    "{}: malformed JSON: {e}; the file is cut off or not JSON: regenerate it with `gcov --json-format`",
                    origin.display()
                ),
            )
        })?;
        docs += 1;
        let part = if gcovr::is_gcovr_json(&doc) {
            gcovr::parse(doc, origin)?
        } else if gcov_json::is_gcov_json(&doc) {
            gcov_json::parse(doc, origin)?
        } else {
            return Err(coded(
                ExitKind::Input,
                format!(
                    "{}: JSON document {docs} is neither gcov JSON (format_version) nor gcovr JSON (gcovr/format_version)",
                    origin.display()
                ),
            ));
        };
        cov.merge(part);
    }
    Ok(cov)
}

/// Resolve raw keys (see the module docs).
pub fn normalise(raw: Coverage, opts: &LoadOptions) -> Coverage {
    raw.rekey(|key| {
        let p = Path::new(key);
        let resolved = match (&opts.source_root, p.is_absolute()) {
            (Some(root), false) => join_lexically(root, p),
            _ => join_lexically(Path::new(""), p),
        };
        match &opts.source_root {
            Some(root) => relative_to(&resolved, root),
            None => Some(resolved.to_string_lossy().into_owned()),
        }
    })
}

/// What [`unify_relative_keys`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unified {
    /// (relative key, the absolute key it was folded into).
    pub merged: Vec<(String, String)>,
    /// Relative keys that end more than one absolute key, left as they are.
    pub ambiguous: Vec<String>,
}

/// Without a source root, fold each relative key of `covs` (text `.gcov`, gcovr) into the single
/// absolute key (gcov JSON) that ends with it once leading `./` and `../` are dropped: they name
/// the same file from two bases. A key that matches several absolute keys is left alone.
pub fn unify_relative_keys(covs: &mut [&mut Coverage]) -> Unified {
    let absolute: Vec<String> = covs
        .iter()
        .flat_map(|c| c.files.keys())
        .filter(|k| Path::new(k).is_absolute())
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut map = std::collections::BTreeMap::new();
    let mut unified = Unified::default();
    let relative: std::collections::BTreeSet<String> = covs
        .iter()
        .flat_map(|c| c.files.keys())
        .filter(|k| !Path::new(k).is_absolute())
        .cloned()
        .collect();
    for key in relative {
        let tail: PathBuf = Path::new(&key)
            .components()
            .skip_while(|c| {
                matches!(
                    c,
                    std::path::Component::CurDir | std::path::Component::ParentDir
                )
            })
            .collect();
        if tail.as_os_str().is_empty() {
            continue;
        }
        let hits: Vec<&String> = absolute
            .iter()
            .filter(|a| Path::new(a).ends_with(&tail))
            .collect();
        match hits.as_slice() {
            [] => {}
            [one] => {
                map.insert(key.clone(), (*one).clone());
                unified.merged.push((key, (*one).clone()));
            }
            _ => unified.ambiguous.push(key),
        }
    }
    if !map.is_empty() {
        for c in covs.iter_mut() {
            let taken = std::mem::take(&mut **c);
            **c = taken.rekey(|k| Some(map.get(k).cloned().unwrap_or_else(|| k.to_string())));
        }
    }
    unified
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_names_file_and_position() {
        let e = parse_bytes(
            b"{\"format_version\": \"1\",\n \"files\": [",
            Path::new("bad.json"),
        )
        .unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.starts_with("bad.json: malformed JSON:") && msg.contains("line 2"),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn garbage_never_panics() {
        let inputs: [&[u8]; 6] = [b"", b"   ", b"\xff\xfe", b"{}", b"[1,2]", b"x:\n"];
        for bytes in inputs {
            assert!(parse_bytes(bytes, Path::new("g")).is_err());
        }
        // Pseudo-random bytes with a JSON or gcov-ish start.
        let mut seed = 12345u64;
        for i in 0..500 {
            let mut v: Vec<u8> = if i % 2 == 0 {
                b"{\"format_version\":\"1\",".to_vec()
            } else {
                b"  1:  2:x\n".to_vec()
            };
            for _ in 0..(i % 64) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                v.push((seed >> 33) as u8);
            }
            let _ = parse_bytes(&v, Path::new("r"));
        }
    }

    #[test]
    fn jsonl_documents_are_summed_and_keys_made_relative() {
        let one = r#"{"format_version":"1","current_working_directory":"/b","files":[{"file":"s/x.h","lines":[{"line_number":2,"count":1}],"functions":[]}]}"#;
        let text = format!("{one}\n{one}\n");
        let raw = parse_bytes(text.as_bytes(), Path::new("s.jsonl")).unwrap();
        let opts = LoadOptions {
            source_root: Some(PathBuf::from("/b/s")),
        };
        let c = normalise(raw, &opts);
        assert_eq!(c.files["x.h"].lines[&2], 2);
    }

    #[test]
    fn relative_keys_fold_into_the_one_absolute_key_ending_with_them() {
        let mut suite = Coverage::default();
        suite.add_line("/b/src/x.h", 3, 1);
        suite.add_line("/b/src/y.h", 3, 1);
        suite.add_line("/c/src/y.h", 3, 1);
        let mut fuzz = Coverage::default();
        fuzz.add_line("../src/x.h", 3, 2);
        fuzz.add_line("src/y.h", 3, 2);
        fuzz.add_line("z.h", 1, 1);
        let u = unify_relative_keys(&mut [&mut suite, &mut fuzz]);
        assert_eq!(
            u.merged,
            vec![("../src/x.h".to_string(), "/b/src/x.h".to_string())]
        );
        assert_eq!(u.ambiguous, vec!["src/y.h".to_string()]);
        assert_eq!(fuzz.files["/b/src/x.h"].lines[&3], 2);
        let keys: Vec<&str> = fuzz.files.keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["/b/src/x.h", "src/y.h", "z.h"]);
        // A suffix must match whole components: "x.h" is not the tail of "/b/src/xx.h".
        let mut only = Coverage::default();
        only.add_line("/b/xx.h", 1, 1);
        only.add_line("x.h", 1, 1);
        assert!(unify_relative_keys(&mut [&mut only]).merged.is_empty());
    }

    #[test]
    fn neither_gcov_nor_gcovr_json_is_rejected() {
        let e = parse_bytes(br#"{"files": []}"#, Path::new("o.json")).unwrap_err();
        assert!(format!("{e:#}").contains("neither gcov JSON"));
    }
}
