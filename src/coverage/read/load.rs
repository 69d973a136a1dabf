//! Load coverage files of any supported format (dispatch by content) and directories of them, and
//! normalise their paths into one [`Coverage`].
//!
//! Path keys: gcov JSON names are resolved against the document's `current_working_directory`;
//! names without a known base (text `.gcov`, gcovr) are resolved against `--source-root` when one
//! is given. With a source root, keys are relative to it (`/`-separated) and files outside it are
//! dropped (as gcovr's `--root` does); without one, keys are the resolved paths, and
//! [`unify_relative_keys`] folds a relative key into the one absolute key that ends with it, so
//! that gcov JSON and text `.gcov` of the same sources do not report each line under two paths.
//! [`Loaded::outside`] lists the files left out, so the report can say which.
//!
//! Hostile inputs: only regular files are read ([`check_regular_file`]: a FIFO would block the
//! read forever), and gzip input inflates to at most [`inflated_limit`] bytes.

use std::collections::BTreeSet;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use super::{gcov_json, gcov_text, gcovr};
use crate::coverage::model::Coverage;
use crate::coverage::paths::{join_lexically, relative_to};
use crate::error::{coded, ExitKind};

/// How to resolve and key file names.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Absolute, lexically normalised source root (`--source-root`).
    pub source_root: Option<PathBuf>,
}

/// Gzip input may inflate to this many times its compressed size: `gcov --json-format` writes
/// about 23× (g++ 12, a test of `<regex>` and `<map>`; `gzip -9` of the same JSON 26×), gcovr
/// JSON compresses alike, and deflate can reach 1032×, so a file past 64× is a gzip bomb or not
/// coverage data.
pub const MAX_INFLATION: u64 = 64;

/// Gzip input may always inflate to 64 MiB, whatever its ratio: a small file that compresses
/// well costs little.
pub const MIN_INFLATED_LIMIT: u64 = 64 << 20;

/// How many bytes a gzip file of `compressed` bytes may inflate to: [`MAX_INFLATION`] times its
/// size, at least [`MIN_INFLATED_LIMIT`]. Reading stops one byte past it, so memory stays
/// bounded by what the user can see on disk.
pub fn inflated_limit(compressed: u64) -> u64 {
    compressed
        .saturating_mul(MAX_INFLATION)
        .max(MIN_INFLATED_LIMIT)
}

/// What [`load`] read.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The summed coverage, keyed as the module docs say.
    pub coverage: Coverage,
    /// Files the data names that lie outside the source root and were left out (their resolved
    /// paths).
    pub outside: BTreeSet<String>,
}

/// Refuse `path` unless it is a regular file (or a symlink to one): a FIFO or device would make
/// the read block or never end. `what` names it in the error ("coverage input", "manifest").
/// A missing file passes: the read that follows says so.
pub fn check_regular_file(path: &Path, what: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(coded(
            ExitKind::Input,
            format!(
                "{what} {} is {}, which mfppr does not read (it could block forever); write the \
                 data to a regular file and give that",
                path.display(),
                crate::atomic::kind_of(&meta.file_type())
            ),
        )),
        _ => Ok(()),
    }
}

/// Load and sum every coverage file in `paths` (files or directories, walked recursively).
pub fn load(paths: &[PathBuf], opts: &LoadOptions) -> Result<Loaded> {
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
            check_regular_file(p, "coverage input")?;
            files.push(p.clone());
        }
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = crate::pool::map(workers, "mfppr-load", &files, |f| load_file(f, opts))?;
    let mut loaded = Loaded::default();
    for part in parts {
        loaded.coverage.merge(part.coverage);
        loaded.outside.extend(part.outside);
    }
    Ok(loaded)
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
        // Other JSON (compile_commands.json, …) is skipped: sniff its first 64 KiB (inflated)
        // for a format_version key.
        return Ok(String::from_utf8_lossy(&head(path, 1 << 16)?).contains("format_version\""));
    }
    Ok(false)
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

fn bad_gzip(path: &Path, e: std::io::Error) -> anyhow::Error {
    coded(
        ExitKind::Input,
        format!("{}: bad gzip data: {e}", path.display()),
    )
}

/// The first `n` bytes of `path`, inflated when it is gzip.
fn head(path: &Path, n: u64) -> Result<Vec<u8>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = std::io::BufReader::new(file);
    let gz = reader
        .fill_buf()
        .with_context(|| format!("cannot read {}", path.display()))?
        .starts_with(&GZIP_MAGIC);
    let mut out = Vec::new();
    if gz {
        flate2::bufread::MultiGzDecoder::new(reader)
            .take(n)
            .read_to_end(&mut out)
            .map_err(|e| bad_gzip(path, e))?;
    } else {
        reader
            .take(n)
            .read_to_end(&mut out)
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    Ok(out)
}

/// The bytes of `path`, inflated when it is gzip (to at most [`inflated_limit`] of its size).
fn read_maybe_gz(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if raw.starts_with(&GZIP_MAGIC) {
        inflate(&raw, path, inflated_limit(raw.len() as u64))
    } else {
        Ok(raw)
    }
}

/// Inflate the gzip data `raw` of `path`, refusing it once it passes `limit` bytes.
fn inflate(raw: &[u8], path: &Path, limit: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(raw)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| bad_gzip(path, e))?;
    if out.len() as u64 > limit {
        return Err(coded(
            ExitKind::Input,
            format!(
                "{}: gzip data inflates past {} MiB ({MAX_INFLATION}× its {} KiB, at least {} \
                 MiB): a gzip bomb or not coverage data; if it is real coverage, gunzip it and \
                 pass the uncompressed file",
                path.display(),
                limit >> 20,
                raw.len() >> 10,
                MIN_INFLATED_LIMIT >> 20
            ),
        ));
    }
    Ok(out)
}

/// Load one coverage file (format detected from its content) and normalise its keys.
pub fn load_file(path: &Path, opts: &LoadOptions) -> Result<Loaded> {
    let bytes = read_maybe_gz(path)?;
    let raw = parse_bytes(&bytes, path)?;
    Ok(split_outside(raw, opts))
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
                gcov_text::parse(&text, origin).map(|cov| without_inexact_names(cov, bytes, origin))
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

/// `cov` without the files whose `Source:` name in the raw text `bytes` is not UTF-8: their key is
/// a lossy copy (`U+FFFD` for each bad byte) that could name another file (one whose name holds
/// that very character) or none, so each is said and skipped, never matched inexactly.
fn without_inexact_names(mut cov: Coverage, bytes: &[u8], origin: &Path) -> Coverage {
    for line in bytes.split(|&b| b == b'\n') {
        let Some(at) = line.windows(7).position(|w| w == b"Source:") else {
            continue;
        };
        if std::str::from_utf8(line).is_ok() {
            continue;
        }
        let name = String::from_utf8_lossy(&line[at + 7..]).trim().to_string();
        if cov.files.remove(&name).is_some() {
            crate::messages::warn(format!(
                "{}: the source name {} is not UTF-8; mfppr cannot match it to a file exactly \
                 and skips it (rename the file, or regenerate its coverage from a UTF-8 path)",
                origin.display(),
                crate::messages::printable(&name)
            ));
        }
    }
    cov
}

/// Resolve raw keys (see the module docs), dropping files outside the source root.
pub fn normalise(raw: Coverage, opts: &LoadOptions) -> Coverage {
    split_outside(raw, opts).coverage
}

/// [`normalise`], keeping the resolved paths of the files it drops.
fn split_outside(raw: Coverage, opts: &LoadOptions) -> Loaded {
    let mut outside = BTreeSet::new();
    let coverage = raw.rekey(|key| {
        let p = Path::new(key);
        let resolved = match (&opts.source_root, p.is_absolute()) {
            (Some(root), false) => join_lexically(root, p),
            _ => join_lexically(Path::new(""), p),
        };
        match &opts.source_root {
            Some(root) => {
                let rel = relative_to(&resolved, root);
                if rel.is_none() {
                    outside.insert(resolved.to_string_lossy().into_owned());
                }
                rel
            }
            None => Some(resolved.to_string_lossy().into_owned()),
        }
    });
    Loaded { coverage, outside }
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
        // Every refusal is one line that names the file, with the input exit code.
        let refused = |bytes: &[u8], origin: &str| {
            let e = parse_bytes(bytes, Path::new(origin)).unwrap_err();
            let msg = format!("{e:#}");
            assert!(
                msg.starts_with(&format!("{origin}: ")) && !msg.contains('\n'),
                "{bytes:?}: {msg}"
            );
            assert_eq!(crate::error::exit_kind(&e), ExitKind::Input, "{msg}");
        };
        let inputs: [&[u8]; 6] = [b"", b"   ", b"\xff\xfe", b"{}", b"[1,2]", b"x:\n"];
        for bytes in inputs {
            refused(bytes, "g");
        }
        // Pseudo-random bytes with a JSON or gcov-ish start: neither is whole (no closing brace,
        // no `Source:` line), so each is refused the same way.
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
            refused(&v, "r");
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

    /// Gzip members of `mib` MiB of spaces each, `members` times: a bomb that is cheap to build.
    fn spaces_gz(mib: usize, members: usize) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(&vec![b' '; mib << 20]).unwrap();
        enc.finish().unwrap().repeat(members)
    }

    #[test]
    fn gzip_inflating_past_its_limit_is_refused_in_one_line_and_sniffing_reads_only_the_head() {
        let bomb = spaces_gz(1, 8);
        assert!(bomb.len() < 64 << 10, "{} bytes", bomb.len());
        let err = inflate(&bomb, Path::new("b.json.gz"), 4 << 20).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.starts_with("b.json.gz: gzip data inflates past 4 MiB")
                && msg.contains("gunzip it")
                && !msg.contains('\n'),
            "{msg}"
        );
        assert_eq!(crate::error::exit_kind(&err), ExitKind::Input);
        assert_eq!(
            inflate(&bomb, Path::new("b"), 8 << 20).unwrap().len(),
            8 << 20
        );
        assert_eq!(inflated_limit(1000), MIN_INFLATED_LIMIT);
        assert_eq!(inflated_limit(10 << 20), 640 << 20);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json.gz");
        std::fs::write(&path, &bomb).unwrap();
        assert_eq!(head(&path, 1 << 16).unwrap().len(), 1 << 16);
        assert!(!is_candidate(&path).unwrap());
    }

    #[test]
    fn neither_gcov_nor_gcovr_json_is_rejected() {
        let e = parse_bytes(br#"{"files": []}"#, Path::new("o.json")).unwrap_err();
        assert!(format!("{e:#}").contains("neither gcov JSON"));
    }
}
