//! Scale-out on an existing engine (`--emit-tasks`): one self-contained shell command per test,
//! for GNU parallel (`scripts/batch-parallel`) or a Slurm job array
//! (`scripts/batch-slurm.sbatch`, line N for array index N).
//!
//! Every command is `mfppr batch --one STEM INPUT …` with absolute paths and the campaign's
//! options spelled out (the check script's environment included, through `--env`); it reduces
//! one test into `OUTDIR/<stem>/` and writes `OUTDIR/<stem>/result.json`, which
//! `mfppr batch --collect OUTDIR` merges into the journal and the summary.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{BatchOptions, Test};
use crate::atomic::write_atomic;
use crate::oracle::shell_quote;
use crate::reduce::ReduceOptions;

fn quoted(path: &Path) -> anyhow::Result<String> {
    let abs = std::path::absolute(path)
        .with_context(|| format!("cannot resolve the path {}", path.display()))?;
    Ok(shell_quote(&abs.to_string_lossy()))
}

/// The command that reduces `test` on its own, run by `exe` (the mfppr binary).
pub fn command(exe: &Path, test: &Test, opts: &BatchOptions) -> anyhow::Result<String> {
    let ro = &opts.reduce;
    let mut words = vec![
        quoted(exe)?,
        "batch".to_string(),
        "--one".to_string(),
        shell_quote(&test.stem),
        quoted(&test.input)?,
        "--check".to_string(),
        quoted(&ro.check)?,
        "-o".to_string(),
        quoted(&opts.out_dir)?,
        "-j".to_string(),
        opts.jobs_per_test().to_string(),
    ];
    for dir in &ro.include_dirs {
        words.push("-I".to_string());
        words.push(quoted(dir)?);
    }
    for spec in &ro.specs {
        words.push("--spec".to_string());
        words.push(quoted(spec)?);
    }
    if ro.keep_checks {
        words.push("--keep-checks".to_string());
    }
    if ro.drop_oracle {
        words.push("--drop-oracle".to_string());
    }
    if let Some(t) = ro.timeout {
        words.push("--timeout".to_string());
        words.push(t.as_secs_f64().to_string());
    }
    if ro.interesting_exit_auto {
        words.push("--interesting-exit".to_string());
        words.push("auto".to_string());
    }
    if !ro.cache {
        words.push("--no-cache".to_string());
    }
    if !ro.tail {
        words.push("--no-tail".to_string());
    }
    if ro.recheck != ReduceOptions::new("", "").recheck {
        words.push("--recheck".to_string());
        words.push(ro.recheck.to_string());
    }
    for (k, v) in &ro.extra_env {
        words.push("--env".to_string());
        words.push(shell_quote(&format!("{k}={v}")));
    }
    words.push("--resume".to_string());
    words.push("-q".to_string());
    Ok(words.join(" "))
}

/// Write one command per test (in the campaign's smallest-first order) to `file`.
pub fn emit(file: &Path, tests: &[Test], opts: &BatchOptions) -> anyhow::Result<()> {
    let exe: PathBuf =
        std::env::current_exe().context("cannot find the path of the mfppr binary")?;
    let mut text = String::new();
    for t in tests {
        text.push_str(&command(&exe, t, opts)?);
        text.push('\n');
    }
    write_atomic(file, text.as_bytes())
        .with_context(|| format!("cannot write the task file {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::ReduceOptions;
    use std::time::Duration;

    #[test]
    fn a_command_spells_out_every_option_with_absolute_paths() {
        let mut ro = ReduceOptions::new("ignored.cpp", "/s/check.py");
        ro.include_dirs = vec![PathBuf::from("/spec")];
        ro.timeout = Some(Duration::from_millis(2500));
        ro.cache = false;
        ro.extra_env = vec![("CXXFLAGS".into(), "-std=c++17 -w".into())];
        let opts = BatchOptions {
            reduce: ro,
            out_dir: PathBuf::from("/out"),
            jobs: 4,
            tests_at_once: 2,
            resume: false,
            quiet: false,
        };
        let test = Test {
            input: PathBuf::from("/t/a b.cpp"),
            stem: "a b".into(),
            bytes: 1,
        };
        let cmd = command(Path::new("/bin/mfppr"), &test, &opts).unwrap();
        assert_eq!(
            cmd,
            "/bin/mfppr batch --one 'a b' '/t/a b.cpp' --check /s/check.py -o /out -j 2 \
             -I /spec --timeout 2.5 --no-cache --env 'CXXFLAGS=-std=c++17 -w' --resume -q"
        );
    }
}
