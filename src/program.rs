//! The failure read from the program (issue 28 item 3): the report builds the standalone export
//! with the compiler and flags the bundled check scripts use (`$CXX`, `$CXXFLAGS`,
//! `-DEXECUTE=1`, `$MFPPR_CXXFLAGS`, then after the source `$MFPPR_LDFLAGS`, `$LDFLAGS`, `$LIBS`, read like the scripts read them) and
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

/// The compile command, for `sh -c SCRIPT SOURCE EXE`: each variable is split into words as a
/// shell splits a command line (`eval`), as the scripts split them (`shlex`).
const BUILD_SCRIPT: &str = r#"eval "exec ${CXX:-g++} ${CXXFLAGS-"-std=c++17 -O0 -w"} -DEXECUTE=1 $MFPPR_CXXFLAGS \"\$0\" -o \"\$1\" $MFPPR_LDFLAGS $LDFLAGS $LIBS" 2>&1"#;
/// The syntax check, for `sh -c SCRIPT sh ARGS…` (`-I` dirs and the source): the build's
/// compiler and flags with `-fsyntax-only`.
const SYNTAX_SCRIPT: &str = r#"eval "exec ${CXX:-g++} ${CXXFLAGS-"-std=c++17 -O0 -w"} -DEXECUTE=1 $MFPPR_CXXFLAGS -fsyntax-only \"\$@\"" 2>&1"#;
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
    let command = command_line(env);
    let failed = |why: String, tail: String| ProgramRun {
        command: command.clone(),
        built: false,
        end: why,
        stderr_tail: tail,
    };
    let scratch = match ScratchDir::new("mfppr-standalone-") {
        Ok(s) => s,
        Err(e) => {
            return failed(
                format!("not built: no scratch directory ({e})"),
                String::new(),
            )
        }
    };
    let src = scratch.path().join("standalone.cpp");
    let exe = scratch.path().join("standalone");
    if let Err(e) = std::fs::write(&src, source) {
        return failed(
            format!("not built: cannot write {} ({e})", src.display()),
            String::new(),
        );
    }
    // Relative names, so the program's messages name `standalone.cpp` as the report does.
    let mut build = shell(
        BUILD_SCRIPT,
        &["standalone.cpp", "standalone"],
        scratch.path(),
        env,
    );
    match capture(&mut build, b"", BUILD_TIMEOUT, CAP) {
        Ok(c) if c.finished.end.status() == Some(0) && exe.is_file() => {}
        Ok(c) => {
            return failed(
                format!("not built ({})", describe(c.finished.end)),
                tail(&c.stdout),
            )
        }
        Err(e) => {
            return failed(
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
    let mut args: Vec<String> = Vec::new();
    for dir in include_dirs {
        args.push("-I".to_string());
        args.push(dir.display().to_string());
    }
    args.push("candidate.cpp".to_string());
    let mut words = vec!["sh"];
    words.extend(args.iter().map(String::as_str));
    let mut build = shell(SYNTAX_SCRIPT, &words, scratch.path(), env);
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

/// The directories a bundled check script's build searches for `file`'s includes: `include_dirs`
/// (`-I`), the file's own directory, and `MFPPR_INCLUDES` (of the check's environment `env`, else
/// mfppr's), as the scripts read it.
pub(crate) fn check_include_dirs(
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

/// The build-and-run command with the variables' values in place, for the report.
fn command_line(env: &[(String, String)]) -> String {
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    };
    let cxx = var("CXX").filter(|c| !c.trim().is_empty());
    let words = [
        cxx.unwrap_or_else(|| "g++".to_string()),
        var("CXXFLAGS").unwrap_or_else(|| "-std=c++17 -O0 -w".to_string()),
        "-DEXECUTE=1".to_string(),
        var("MFPPR_CXXFLAGS").unwrap_or_default(),
        "standalone.cpp -o standalone".to_string(),
        var("MFPPR_LDFLAGS").unwrap_or_default(),
        var("LDFLAGS").unwrap_or_default(),
        var("LIBS").unwrap_or_default(),
    ];
    let build: Vec<&str> = words
        .iter()
        .map(|w| w.trim())
        .filter(|w| !w.is_empty())
        .collect();
    format!("{} && ./standalone", build.join(" "))
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
    fn the_command_line_names_the_checks_flags() {
        let env = [("MFPPR_CXXFLAGS".to_string(), "-I /spec".to_string())];
        let line = command_line(&env);
        assert!(
            line.contains("-DEXECUTE=1 -I /spec standalone.cpp -o standalone"),
            "{line}"
        );
        assert!(line.ends_with("&& ./standalone"), "{line}");
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
