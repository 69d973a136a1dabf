//! The failure read from the program (issue 28 item 3): the report builds the standalone export
//! with the compiler and flags the bundled check scripts use (`$CXX`, `$CXXFLAGS`,
//! `-DEXECUTE=1`, `$MFPPR_CXXFLAGS`, then after the source `$MFPPR_LDFLAGS`, `$LDFLAGS`, `$LIBS`,
//! split into words as the scripts split them with `shlex`: nothing is evaluated, issue 59) and
//! runs it once, through the process runner with a timeout, keeping its exit status and the last
//! lines of *its* stderr (the library's assertion or exception), not the check script's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::process::{capture, RunEnd, ScratchDir};

/// How long the build may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the program may run.
const RUN_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of the build's or the program's stderr is read.
const CAP: usize = 256 * 1024;
/// How many of its last lines the report shows.
const TAIL_LINES: usize = 8;

/// Runs its arguments as one command with stderr joined to stdout, for `sh -c SCRIPT sh WORDS…`:
/// the words are passed as they are, never evaluated.
const JOINED_SCRIPT: &str = r#"exec "$@" 2>&1"#;
/// The run, for `sh -c SCRIPT EXE`: stderr kept, stdout dropped.
const RUN_SCRIPT: &str = r#"exec "$0" 2>&1 >/dev/null"#;

/// One build and run of the standalone program.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramRun {
    /// The build command, as a shell would run it in the report directory.
    pub command: String,
    /// Whether it built.
    pub built: bool,
    /// How the run ended (`exit 0`, `signal 6`, `timeout`), or why there was none.
    pub end: String,
    /// The last lines of the program's stderr (of the compiler's output when it did not build).
    pub stderr_tail: String,
}

/// Build `source` (the standalone's text) as the check scripts would and run it once; `env` is
/// the check's extra environment (`MFPPR_CXXFLAGS`).
pub(crate) fn build_and_run(source: &[u8], env: &[(String, String)]) -> ProgramRun {
    let failed = |command: String, why: String, tail: String| ProgramRun {
        command,
        built: false,
        end: why,
        stderr_tail: tail,
    };
    // Relative names, so the program's messages name `standalone.cpp` as the report does.
    let words = match build_words(env) {
        Ok(w) => w,
        Err(e) => return failed(String::new(), format!("not built: {e}"), String::new()),
    };
    let command = format!("{} && ./standalone", quoted(&words));
    let scratch = match ScratchDir::new("mfppr-standalone-") {
        Ok(s) => s,
        Err(e) => {
            return failed(
                command,
                format!("not built: no scratch directory ({e})"),
                String::new(),
            )
        }
    };
    let src = scratch.path().join("standalone.cpp");
    let exe = scratch.path().join("standalone");
    if let Err(e) = std::fs::write(&src, source) {
        return failed(
            command,
            format!("not built: cannot write {} ({e})", src.display()),
            String::new(),
        );
    }
    let mut build = joined(&words, scratch.path(), env);
    match capture(&mut build, b"", BUILD_TIMEOUT, CAP) {
        Ok(c) if c.finished.end.status() == Some(0) && exe.is_file() => {}
        Ok(c) => {
            return failed(
                command,
                format!("not built ({})", describe(c.finished.end)),
                tail(&c.stdout),
            )
        }
        Err(e) => {
            return failed(
                command,
                format!("not built: the compiler could not be run ({e})"),
                String::new(),
            )
        }
    }
    let mut run = shell(RUN_SCRIPT, &["./standalone"], scratch.path(), env);
    match capture(&mut run, b"", RUN_TIMEOUT, CAP) {
        Ok(c) => ProgramRun {
            command: command.clone(),
            built: true,
            end: describe(c.finished.end),
            stderr_tail: tail(&c.stdout),
        },
        Err(e) => ProgramRun {
            command: command.clone(),
            built: true,
            end: format!("not run ({e})"),
            stderr_tail: String::new(),
        },
    }
}

/// Whether `source` (a test that includes the spec) compiles as the check scripts build it, with
/// `include_dirs` searched; `Err` holds the compiler's first error line, or why it did not run.
pub(crate) fn compiles(
    source: &[u8],
    include_dirs: &[PathBuf],
    env: &[(String, String)],
) -> Result<(), String> {
    let scratch = ScratchDir::new("mfppr-compiles-").map_err(|e| e.to_string())?;
    let src = scratch.path().join("candidate.cpp");
    std::fs::write(&src, source).map_err(|e| e.to_string())?;
    let mut args: Vec<String> = vec!["-fsyntax-only".to_string()];
    for dir in include_dirs {
        args.push("-I".to_string());
        args.push(dir.display().to_string());
    }
    args.push("candidate.cpp".to_string());
    let words = compiler_words(env, args)?;
    let mut build = joined(&words, scratch.path(), env);
    match capture(&mut build, b"", BUILD_TIMEOUT, CAP) {
        Ok(c) if c.finished.end.status() == Some(0) => Ok(()),
        Ok(c) => {
            let out = String::from_utf8_lossy(&c.stdout);
            let first = out.lines().find(|l| l.contains("error")).unwrap_or("");
            Err(format!("{}: {}", describe(c.finished.end), first.trim()))
        }
        Err(e) => Err(format!("the compiler could not be run ({e})")),
    }
}

/// The compile probe of a test at `file` ([`crate::case::Case::compiles`]): [`compiles`] with the
/// directories [`check_include_dirs`] gives for `include_dirs`, `file` and the check's `env`.
pub(crate) fn compile_probe(
    include_dirs: &[PathBuf],
    file: &Path,
    env: &[(String, String)],
) -> impl Fn(&[u8]) -> Result<(), String> {
    let dirs = check_include_dirs(include_dirs, file, env);
    let env = env.to_vec();
    move |candidate: &[u8]| compiles(candidate, &dirs, &env)
}

/// The directories a bundled check script's build searches for `file`'s includes: `include_dirs`
/// (`-I`), the file's own directory, and `MFPPR_INCLUDES` (of the check's environment `env`, else
/// mfppr's), as the scripts read it.
fn check_include_dirs(
    include_dirs: &[PathBuf],
    file: &Path,
    env: &[(String, String)],
) -> Vec<PathBuf> {
    let mut dirs = include_dirs.to_vec();
    if let Some(parent) = file.parent() {
        dirs.push(parent.to_path_buf());
    }
    let includes = env
        .iter()
        .find(|(k, _)| k == "MFPPR_INCLUDES")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("MFPPR_INCLUDES").ok())
        .unwrap_or_default();
    dirs.extend(
        includes
            .split(':')
            .filter(|d| !d.is_empty())
            .map(PathBuf::from),
    );
    dirs
}

fn shell(
    script: &str,
    args: &[&str],
    dir: &Path,
    env: &[(String, String)],
) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(script).args(args).current_dir(dir);
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command
}

/// `words` run as one command (stderr joined to stdout) in `dir`, with `env` added.
fn joined(words: &[String], dir: &Path, env: &[(String, String)]) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(JOINED_SCRIPT)
        .arg("sh")
        .args(words)
        .current_dir(dir);
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command
}

/// The value of `name` in the check's environment `env`, else in mfppr's.
fn var(env: &[(String, String)], name: &str) -> Option<String> {
    env.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(name).ok())
}

/// `name`'s value split into words as `shlex.split` splits it (quotes and backslashes, nothing
/// expanded or run); `default` when it is unset.
fn words_of(env: &[(String, String)], name: &str, default: &str) -> Result<Vec<String>, String> {
    let value = var(env, name).unwrap_or_else(|| default.to_string());
    shlex::split(&value).ok_or_else(|| {
        format!("{name} has an unbalanced quote ({value:?}); quote its words as a shell would")
    })
}

/// The compiler's words as the bundled scripts build them: `$CXX` (g++ when unset or empty),
/// `$CXXFLAGS` (`-std=c++17 -O0 -w` when unset), `-DEXECUTE=1`, `$MFPPR_CXXFLAGS`, then `rest`.
fn compiler_words(env: &[(String, String)], rest: Vec<String>) -> Result<Vec<String>, String> {
    let mut words = words_of(env, "CXX", "")?;
    if words.is_empty() {
        words.push("g++".to_string());
    }
    words.extend(words_of(env, "CXXFLAGS", "-std=c++17 -O0 -w")?);
    words.push("-DEXECUTE=1".to_string());
    words.extend(words_of(env, "MFPPR_CXXFLAGS", "")?);
    words.extend(rest);
    Ok(words)
}

/// The build of `standalone.cpp` into `standalone`, link flags (`$MFPPR_LDFLAGS`, `$LDFLAGS`,
/// `$LIBS`) after the source.
fn build_words(env: &[(String, String)]) -> Result<Vec<String>, String> {
    let mut rest: Vec<String> = ["standalone.cpp", "-o", "standalone"]
        .map(String::from)
        .to_vec();
    for name in ["MFPPR_LDFLAGS", "LDFLAGS", "LIBS"] {
        rest.extend(words_of(env, name, "")?);
    }
    compiler_words(env, rest)
}

/// `words` as a shell command line that runs exactly them (each quoted where it needs it).
fn quoted(words: &[String]) -> String {
    words
        .iter()
        .map(|w| crate::oracle::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn describe(end: RunEnd) -> String {
    match end {
        RunEnd::Exited {
            signal: Some(s), ..
        } => format!("signal {s}"),
        RunEnd::Exited { status, .. } => format!("exit {status}"),
        RunEnd::TimedOut => "timeout".to_string(),
        RunEnd::Cancelled => "cancelled".to_string(),
    }
}

/// The last [`TAIL_LINES`] non-blank lines of `bytes`.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_non_blank_lines() {
        let text: String = (1..=20).map(|i| format!("line {i}\n\n")).collect();
        let t = tail(text.as_bytes());
        assert!(t.starts_with("line 13\n") && t.ends_with("line 20"), "{t}");
    }

    #[test]
    fn the_build_splits_flags_like_shlex_and_evaluates_nothing() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let words = build_words(&env(&[
            ("CXX", "g++"),
            ("CXXFLAGS", "-std=c++17"),
            ("MFPPR_CXXFLAGS", "-I /spec -DNAME='a b'"),
            ("MFPPR_LDFLAGS", ""),
            ("LDFLAGS", "-Wl,-rpath,$ORIGIN/lib"),
            ("LIBS", "-lm $(touch P) `id`"),
        ]))
        .unwrap();
        let want = [
            "g++",
            "-std=c++17",
            "-DEXECUTE=1",
            "-I",
            "/spec",
            "-DNAME=a b",
            "standalone.cpp",
            "-o",
            "standalone",
            "-Wl,-rpath,$ORIGIN/lib",
            "-lm",
            "$(touch",
            "P)",
            "`id`",
        ];
        assert_eq!(words, want);
        let line = quoted(&words);
        assert!(line.contains("'-Wl,-rpath,$ORIGIN/lib'"), "{line}");
        assert!(line.contains("'-DNAME=a b'"), "{line}");
        let bad = build_words(&env(&[("LIBS", "-l'm")])).unwrap_err();
        assert!(bad.contains("LIBS has an unbalanced quote"), "{bad}");
    }

    #[test]
    fn a_program_that_aborts_is_read_back() {
        if !crate::tools::available("g++") {
            return;
        }
        let env = [
            ("CXX".to_string(), "g++".to_string()),
            ("CXXFLAGS".to_string(), "-std=c++17 -w".to_string()),
        ];
        let src = b"#include <cassert>\n#include <cstdio>\nint main() { std::puts(\"out\"); assert(1 == 2); }\n";
        let run = build_and_run(src, &env);
        assert!(run.built, "{run:?}");
        assert_eq!(run.end, "signal 6", "{run:?}");
        assert!(
            run.stderr_tail.contains("Assertion `1 == 2' failed"),
            "{run:?}"
        );
        assert!(!run.stderr_tail.contains("out"), "{run:?}");
        let broken = build_and_run(b"int main() { return x; }\n", &env);
        assert!(
            !broken.built && broken.stderr_tail.contains("was not declared"),
            "{broken:?}"
        );
    }

    #[test]
    fn compiles_searches_the_dirs_and_names_the_first_error() {
        if !crate::tools::available("g++") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("lib.h"),
            "inline int seven() { return 7; }\n",
        )
        .unwrap();
        let env = [("CXXFLAGS".to_string(), "-std=c++17 -w".to_string())];
        let dirs = [dir.path().to_path_buf()];
        let good = b"#include \"lib.h\"\nint main() { return seven() - 7; }\n";
        assert_eq!(compiles(good, &dirs, &env), Ok(()));
        let missing = compiles(good, &[], &env).unwrap_err();
        assert!(missing.contains("lib.h"), "{missing}");
        let broken = compiles(b"int main() { return x; }\n", &dirs, &env).unwrap_err();
        assert!(broken.contains("was not declared"), "{broken}");
    }
}
