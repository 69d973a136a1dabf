//! Scale-out on an existing engine (`batch emit`): one self-contained shell command per test,
//! for GNU parallel (`scripts/batch-parallel`) or a Slurm job array
//! (`scripts/batch-slurm.sbatch`, line N for array index N), and the record of what was emitted
//! (`OUTDIR/tasks.json`, [`TaskList`]), by which `--collect` finds the tasks that left no result.
//!
//! Every command is `mfppr batch --one=STEM … INPUT` with absolute paths and the campaign's
//! options spelled out (the check script's environment included, through `--env=`); it reduces
//! one test into `OUTDIR/<stem>/` and writes `OUTDIR/<stem>/result.json`, which
//! `mfppr batch --collect OUTDIR` merges into the journal and the summary.
//!
//! A task file is one line per test whatever the bytes of its paths, and each line is one bash
//! command: a word is left bare when it is made of `[A-Za-z0-9/._+=:,@-]`, single-quoted when it
//! is UTF-8 without control characters, and ANSI-C quoted (`$'…'`, control and non-ASCII bytes as
//! `\xNN`) otherwise, so a newline in a file name never ends a line. `$'…'` needs bash (or zsh,
//! ksh): the scripts run the lines with bash, and GNU parallel runs them with the shell that
//! started it. Values that may begin with `-` (the stem, `--env`) are attached to their option
//! (`--one=-x`), and the input, an absolute path, comes last.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::campaign::{lock_out_dir, BatchOptions, MANIFEST};
use super::discover::Test;
use crate::atomic::write_atomic;
use crate::engine::Inputs;
use crate::reduce::ReduceOptions;

/// `OUTDIR/tasks.json`: the tests of the last task file emitted for OUTDIR, in its line order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TaskList {
    /// The task file (absolute path).
    pub task_file: PathBuf,
    /// One entry per line of the task file.
    pub tasks: Vec<Task>,
}

/// One emitted task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Task {
    /// Its directory name under OUTDIR.
    pub stem: String,
    /// Its input (absolute path).
    pub input: PathBuf,
}

/// `word` as one bash word that evaluates to exactly its bytes (see the module doc).
pub(crate) fn quote_word(word: &[u8]) -> String {
    let bare = |b: &u8| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(b);
    if !word.is_empty() && word.iter().all(bare) {
        return String::from_utf8_lossy(word).into_owned();
    }
    match std::str::from_utf8(word) {
        Ok(s) if !s.chars().any(char::is_control) => format!("'{}'", s.replace('\'', "'\\''")),
        _ => {
            let mut out = String::from("$'");
            for &b in word {
                match b {
                    b'\\' => out.push_str("\\\\"),
                    b'\'' => out.push_str("\\'"),
                    b'\n' => out.push_str("\\n"),
                    b'\t' => out.push_str("\\t"),
                    0x20..=0x7e => out.push(char::from(b)),
                    _ => out.push_str(&format!("\\x{b:02x}")),
                }
            }
            out.push('\'');
            out
        }
    }
}

/// `prefix` followed by the absolute form of `path`, as one word.
fn quoted(prefix: &str, path: &Path) -> anyhow::Result<String> {
    let abs = std::path::absolute(path)
        .with_context(|| format!("cannot resolve the path {}", path.display()))?;
    let mut word = prefix.as_bytes().to_vec();
    word.extend_from_slice(abs.as_os_str().as_bytes());
    Ok(quote_word(&word))
}

/// `--check=…`: a built-in check by its name (the task's own mfppr writes it), never by the
/// temporary path this process removes; any other script by its absolute path.
fn check_word(script: &Path) -> anyhow::Result<String> {
    match crate::checks::builtin_at(script) {
        Some(b) => Ok(format!("--check={}{}", crate::checks::PREFIX, b.name)),
        None => quoted("--check=", script),
    }
}

/// The command that reduces `test` on its own, run by `exe` (the mfppr binary).
pub(crate) fn command(exe: &Path, test: &Test, opts: &BatchOptions) -> anyhow::Result<String> {
    let ro = &opts.reduce;
    let mut words = vec![
        quoted("", exe)?,
        "batch".to_string(),
        quote_word(format!("--one={}", test.stem).as_bytes()),
        check_word(&ro.check)?,
        quoted("--output=", &opts.out_dir)?,
        format!("--jobs={}", opts.jobs_per_test()),
    ];
    for dir in &ro.include_dirs {
        words.push("-I".to_string());
        words.push(quoted("", dir)?);
    }
    for spec in &ro.specs {
        words.push(quoted("--spec=", spec)?);
    }
    if ro.keep_checks {
        words.push("--keep-checks".to_string());
    }
    if ro.drop_oracle {
        words.push("--drop-oracle".to_string());
    }
    if let Some(t) = ro.timeout {
        words.push(format!("--timeout={}", t.as_secs_f64()));
    }
    if ro.interesting_exit_auto {
        words.push("--interesting-exit=auto".to_string());
    }
    if !ro.cache {
        words.push("--no-cache".to_string());
    }
    if !ro.tail {
        words.push("--no-tail".to_string());
    }
    if !ro.check_cut {
        words.push("--no-check-cut".to_string());
    }
    if ro.guided_cut {
        words.push("--guided-cut".to_string());
    }
    if ro.inputs == Inputs::Anytime {
        words.push("--inputs=anytime".to_string());
    }
    if ro.recheck != ReduceOptions::new("", "").recheck {
        words.push(format!("--recheck={}", ro.recheck));
    }
    for (k, v) in &ro.extra_env {
        words.push(quote_word(format!("--env={k}={v}").as_bytes()));
    }
    if !opts.repair_slips {
        words.push("--keep-slips".to_string());
    }
    if opts.group_by != crate::batch::triage::GroupBy::default() {
        words.push(format!("--group-by={:?}", opts.group_by).to_lowercase());
    }
    words.push("--resume".to_string());
    words.push("-q".to_string());
    words.push(quoted("", &test.input)?);
    Ok(words.join(" "))
}

/// Write one command per test (in the campaign's smallest-first order) to `file`, and the
/// [`TaskList`] of those tests to `OUTDIR/tasks.json` (replacing an earlier one).
pub(crate) fn emit(file: &Path, tests: &[Test], opts: &BatchOptions) -> anyhow::Result<()> {
    let exe: PathBuf =
        std::env::current_exe().context("cannot find the path of the mfppr binary")?;
    let mut text = String::new();
    for t in tests {
        text.push_str(&command(&exe, t, opts)?);
        text.push('\n');
    }
    let _lock = lock_out_dir(&opts.out_dir)?;
    let manifest = TaskList {
        task_file: std::path::absolute(file)
            .with_context(|| format!("cannot resolve the path {}", file.display()))?,
        tasks: tests
            .iter()
            .map(|t| Task {
                stem: t.stem.clone(),
                input: t.input.clone(),
            })
            .collect(),
    };
    let json = serde_json::to_vec_pretty(&manifest).context("cannot serialise the task list")?;
    let path = opts.out_dir.join(MANIFEST);
    write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
    write_atomic(file, text.as_bytes())
        .with_context(|| format!("cannot write the task file {}", file.display()))
}

/// The manifest of the last `batch emit` for `out_dir`, if any.
pub(crate) fn read_manifest(out_dir: &Path) -> anyhow::Result<Option<TaskList>> {
    let path = out_dir.join(MANIFEST);
    let Some(bytes) =
        crate::input::read_if_any(&path, crate::input::MAX_RECORD_BYTES, "a task list")?
    else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).with_context(|| {
        format!(
            "{} is not a task list; emit the tasks again with `mfppr batch emit`",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A campaign's options (fuzzed inputs last, batch's default) around `ro`.
    fn options(mut ro: ReduceOptions, out_dir: &str) -> BatchOptions {
        ro.inputs = Inputs::Last;
        BatchOptions {
            reduce: ro,
            out_dir: PathBuf::from(out_dir),
            jobs: 4,
            tests_at_once: 2,
            resume: false,
            quiet: false,
            group_by: crate::batch::triage::GroupBy::default(),
            repair_slips: true,
        }
    }

    #[test]
    fn a_command_spells_out_every_option_with_absolute_paths() {
        let mut ro = ReduceOptions::new("ignored.cpp", "/s/check.py");
        ro.include_dirs = vec![PathBuf::from("/spec")];
        ro.timeout = Some(Duration::from_millis(2500));
        ro.cache = false;
        ro.extra_env = vec![("CXXFLAGS".into(), "-std=c++17 -w".into())];
        let test = Test {
            input: PathBuf::from("/t/a b.cpp"),
            stem: "a b".into(),
            bytes: 1,
        };
        let cmd = command(Path::new("/bin/mfppr"), &test, &options(ro, "/out")).unwrap();
        assert_eq!(
            cmd,
            "/bin/mfppr batch '--one=a b' --check=/s/check.py --output=/out --jobs=2 -I /spec \
             --timeout=2.5 --no-cache '--env=CXXFLAGS=-std=c++17 -w' --resume -q '/t/a b.cpp'"
        );
        let mut anytime = options(ReduceOptions::new("ignored.cpp", "/s/check.py"), "/out");
        anytime.reduce.inputs = Inputs::Anytime;
        let cmd = command(Path::new("/bin/mfppr"), &test, &anytime).unwrap();
        assert!(cmd.contains(" --inputs=anytime "), "{cmd}");
        assert!(!cmd.contains("slips"), "{cmd}");
        anytime.repair_slips = false;
        let cmd = command(Path::new("/bin/mfppr"), &test, &anytime).unwrap();
        assert!(cmd.contains(" --keep-slips "), "{cmd}");
        anytime.repair_slips = true;
        anytime.group_by = crate::batch::triage::GroupBy::Library;
        let cmd = command(Path::new("/bin/mfppr"), &test, &anytime).unwrap();
        assert!(
            !cmd.contains("slips") && cmd.contains(" --group-by=library "),
            "{cmd}"
        );
    }

    /// What bash makes of `quoted` as the arguments of `printf %s`.
    fn bash_eval(quoted: &str) -> Vec<u8> {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {quoted}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{quoted}");
        out.stdout
    }

    #[test]
    fn every_word_quotes_to_one_line_that_bash_reads_back_byte_for_byte() {
        let words: &[&[u8]] = &[
            b"plain/path-1.cpp",
            b"",
            b"a b",
            b"nl\n$(touch PWNED)",
            b"`touch PWNED`",
            b"it's \"quoted\"",
            b"back\\slash\\x41",
            b"-x",
            "caf\u{e9}".as_bytes(),
            "cr\r tab\t del\x7f c1\u{85}".as_bytes(),
            b"bad utf-8 \xff\xfe\x80 then 7",
            b"'\n'",
        ];
        for word in words {
            let quoted = quote_word(word);
            assert!(!quoted.contains(['\n', '\r']), "{quoted}");
            assert_eq!(bash_eval(&quoted), *word, "{quoted}");
        }
        assert_eq!(quote_word(b"nl\nx"), "$'nl\\nx'");
        assert_eq!(quote_word("caf\u{e9}".as_bytes()), "'caf\u{e9}'");
        assert_eq!(quote_word(b"a\xffb"), "$'a\\xffb'");
    }

    #[test]
    fn a_hostile_stem_and_paths_stay_on_one_line_and_options_never_take_a_leading_dash() {
        let mut ro = ReduceOptions::new("ignored.cpp", "/s/ch\neck.py");
        ro.include_dirs = vec![PathBuf::from("/sp\nec")];
        ro.extra_env = vec![("-X".into(), "a\nb".into())];
        let test = Test {
            input: PathBuf::from("/t/nl\n$(touch PWNED).cpp"),
            stem: "-nl\n$(touch PWNED)".into(),
            bytes: 1,
        };
        let cmd = command(Path::new("/bin/mfppr"), &test, &options(ro, "/o\nut")).unwrap();
        assert_eq!(cmd.lines().count(), 1, "{cmd}");
        assert_eq!(
            cmd,
            "/bin/mfppr batch $'--one=-nl\\n$(touch PWNED)' $'--check=/s/ch\\neck.py' \
             $'--output=/o\\nut' --jobs=2 -I $'/sp\\nec' $'--env=-X=a\\nb' --resume -q \
             $'/t/nl\\n$(touch PWNED).cpp'"
        );
    }
}
