//! Output and resume planning (design §7): where one reduction writes (the result, its origin
//! record, the stats), validated together before the first check run, and `--resume`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;

use super::{default_output, ReduceOptions, StatsFile};
use crate::atomic::write_atomic;
use crate::catalogue::Completeness;
use crate::engine::Stats;
use crate::error::{coded, ExitKind};
use crate::line_endings::LineEndings;
use crate::oracle::{Expected, Oracle, Verdict};
use crate::outputs::{validate, Output};

/// Where one reduction writes: the result, the record of what it was derived from (for
/// `--resume`), and the stats. Validated together before the first check run.
#[derive(Debug)]
pub(super) struct ReducePaths {
    pub(super) result: PathBuf,
    pub(super) origin: PathBuf,
    pub(super) stats: Option<PathBuf>,
}

/// The output paths of `opts`, validated (design §7).
pub(super) fn plan_outputs(opts: &ReduceOptions) -> anyhow::Result<ReducePaths> {
    let result = opts
        .output
        .clone()
        .unwrap_or_else(|| default_output(&opts.input));
    let origin = origin_path(&result);
    let mut outputs = vec![
        Output {
            what: "the output",
            flag: "-o",
            path: &result,
            record: false,
        },
        Output {
            what: "the output's origin record",
            flag: "-o",
            path: &origin,
            record: true,
        },
    ];
    if let Some(stats) = &opts.stats {
        outputs.push(Output {
            what: "the stats file",
            flag: "--stats",
            path: stats,
            record: false,
        });
    }
    let mut valid = validate(&opts.input, &outputs)?.into_iter();
    let (Some(result), Some(origin)) = (valid.next(), valid.next()) else {
        unreachable!("validate returns one path per output");
    };
    Ok(ReducePaths {
        result,
        origin,
        stats: valid.next(),
    })
}

/// `<output>.mfppr-origin`: the input a result was derived from.
pub(crate) fn origin_path(result: &Path) -> PathBuf {
    let mut name = result.as_os_str().to_owned();
    name.push(".mfppr-origin");
    PathBuf::from(name)
}

/// The content of the origin record.
#[derive(Serialize, serde::Deserialize, PartialEq, Eq)]
struct Origin {
    input: PathBuf,
    input_blake3: String,
}

impl Origin {
    fn of(input: &Path, text: &[u8]) -> Origin {
        Origin {
            input: std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf()),
            input_blake3: blake3::hash(text).to_hex().to_string(),
        }
    }
}

impl ReducePaths {
    /// Replace the result on disk with `text`.
    pub(super) fn write_result(&self, text: &[u8]) -> anyhow::Result<()> {
        write_atomic(&self.result, text).with_context(|| {
            format!(
                "cannot write the output {} ({} bytes); the previous result is still there",
                self.result.display(),
                text.len()
            )
        })
    }

    /// Record which input the result is derived from (`text`: the input as mfppr reads it).
    pub(super) fn write_origin(&self, input: &Path, text: &[u8]) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(&Origin::of(input, text))
            .context("cannot serialise the origin record")?;
        crate::atomic::replace_atomic(&self.origin, &json)
            .with_context(|| format!("cannot write {}", self.origin.display()))
    }

    /// Whether the result on disk was derived from this input.
    fn derived_from(&self, input: &Path, text: &[u8]) -> bool {
        std::fs::read(&self.origin)
            .ok()
            .and_then(|b| serde_json::from_slice::<Origin>(&b).ok())
            .is_some_and(|o| o.input_blake3 == Origin::of(input, text).input_blake3)
    }

    /// Write the `--stats` JSON, if asked for.
    pub(super) fn write_stats(
        &self,
        opts: &ReduceOptions,
        (timeout, expected): (Duration, Expected),
        stats: &Stats,
        completeness: &Completeness,
        interrupted: bool,
    ) -> anyhow::Result<()> {
        let Some(path) = &self.stats else {
            return Ok(());
        };
        let doc = StatsFile {
            input: &opts.input,
            output: &self.result,
            timeout_secs: timeout.as_secs_f64(),
            interesting_status: match expected {
                Expected::Zero => None,
                Expected::Status(s) => Some(s),
            },
            interrupted,
            catalogue: completeness,
            stats,
        };
        let json = serde_json::to_vec_pretty(&doc).context("cannot serialise the stats")?;
        write_atomic(path, &json)
            .with_context(|| format!("cannot write the stats file {}", path.display()))
    }
}

/// `--resume`: the existing output, if it was derived from this input and is an MF++ test that
/// is still interesting.
pub(super) fn resume_from(
    opts: &ReduceOptions,
    oracle: &dyn Oracle,
    paths: &ReducePaths,
    text: &[u8],
) -> anyhow::Result<Option<Vec<u8>>> {
    let output = &paths.result;
    let Ok(previous) = std::fs::read(output) else {
        if !opts.quiet {
            crate::messages::progress(format!(
                "mfppr: nothing to resume from in {}; starting from the input",
                output.display()
            ));
        }
        return Ok(None);
    };
    if !paths.derived_from(&opts.input, text) {
        crate::messages::warn(format!(
            "{} was not derived from {} (no matching {}); starting from the input",
            output.display(),
            opts.input.display(),
            paths.origin.display()
        ));
        return Ok(None);
    }
    let previous = LineEndings::of(&previous).to_internal(&previous);
    let usable = crate::model::check_is_mfpp_test(&previous).is_ok()
        && oracle.verdict(&previous, &AtomicBool::new(false))? == Verdict::Interesting;
    if crate::interrupt::requested() {
        return Err(coded(
            ExitKind::Interrupted,
            format!(
                "interrupted while checking {}; it was not changed",
                output.display()
            ),
        ));
    }
    if usable {
        if !opts.quiet {
            crate::messages::progress(format!(
                "mfppr: resuming from {} ({} bytes)",
                output.display(),
                previous.len()
            ));
        }
        Ok(Some(previous))
    } else {
        crate::messages::warn(format!(
            "{} is not an interesting MF++ test any more; starting from the input",
            output.display()
        ));
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_validated_together() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.cpp");
        std::fs::write(&input, "x").unwrap();
        let mut opts = ReduceOptions::new(&input, "check.sh");
        let paths = plan_outputs(&opts).unwrap();
        assert_eq!(paths.result, dir.path().join("t.reduced.cpp"));
        assert_eq!(paths.origin, dir.path().join("t.reduced.cpp.mfppr-origin"));
        opts.stats = Some(input.clone());
        assert!(format!("{:#}", plan_outputs(&opts).unwrap_err()).contains("is the input"));
        opts.stats = Some(dir.path().join("t.reduced.cpp"));
        assert!(format!("{:#}", plan_outputs(&opts).unwrap_err()).contains("is also the output"));
        opts.stats = Some(dir.path().join("missing/s.json"));
        assert!(format!("{:#}", plan_outputs(&opts).unwrap_err()).contains("does not exist"));
    }
}
