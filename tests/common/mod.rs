//! Helpers shared by the integration tests: the repository and the built binary, running
//! commands, what a test needs from outside (tools, `../shared`) and golden files.
//!
//! A test whose tool or `../shared` directory is absent skips with a `skip:` line, unless
//! `MFPPR_REQUIRE_TOOLS=1` (set by `.ci/run`): then it fails, so a green CI means it ran.
//! Golden files are in [`golden`]: a unified diff on mismatch, `MFPPR_BLESS=1` rewrites them.

pub(crate) mod batch;
pub(crate) mod browser;
mod golden;
pub(crate) use golden::assert_golden;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The built `mfppr` binary.
pub(crate) fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mfppr"))
}

/// Run the built `mfppr` with `args` in `dir`.
pub(crate) fn mfppr(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run mfppr")
}

/// Run `cmd` in `dir`, panicking with its output on failure.
pub(crate) fn run_ok(dir: &Path, cmd: &str, args: &[&str]) -> Output {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed in {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `out`'s stdout, after asserting that the command `what` succeeded (its output shown if not).
pub(crate) fn assert_ok(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {:?}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A check script's exit code and stderr (it must not have been killed).
pub(crate) fn code_and_stderr(out: &Output) -> (i32, String) {
    (
        out.status.code().expect("the script was killed"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Write `text` to `path`, creating its directory.
pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Write `text` to `path` as an executable script (a check, a wrapper).
pub(crate) fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The spec of the tiny libraries of the coverage tests (`lib.h`): a check, one MR (mfppr
/// reduces only tests whose spec has MRs), the fuzz region markers and a reduction function for
/// `int` (-1: the reducer's simplest input).
pub(crate) const TINY_SPEC: &str = r#"#pragma once
#include <cstdlib>
#include "lib.h"
namespace fuzz {
inline void mfr_fuzz_start(const char*) {}
inline void mfr_fuzz_end(const char*) {}
}
namespace metalib {
namespace checks {
inline void check_equal(int a, int b) { if (a != b) std::exit(1); }
}
namespace relations { namespace identity {
inline int base(int a) { return a; }
} }
}
inline int mfr_int() { return -1; }
"#;

/// A test of the tiny spec: only r_1 runs `lib.h`'s line 4 (`twice(-1)`; r_0 runs it only for a
/// negative input, r_2 is not needed for it); every side runs `half`'s odd branch, in the input.
pub(crate) const SPEC_TEST: &str = r#"#include "spec.h"
int main() {
    fuzz::mfr_fuzz_start("v");
    int v = half(11);
    fuzz::mfr_fuzz_end("v");
    int output_var_0 = v;

// Meta test 0
int r_0 = twice(output_var_0);
r_0 = neg(neg(r_0));

// Meta test 1
int r_1 = neg(output_var_0);
r_1 = neg(twice(r_1)) + twice(-1) + 2;
metalib::checks::check_equal(r_1, r_0);

// Meta test 2
int r_2 = twice(neg(neg(output_var_0)));
metalib::checks::check_equal(r_2, r_0);

return 0;
}
"#;

/// Build `test` into `dir/t` (`dir` created) with `g++ flags -DEXECUTE=1 extra… -I includes…`.
pub(crate) fn build_test(dir: &Path, test: &Path, includes: &[&Path], flags: &str, extra: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut args: Vec<String> = flags.split_whitespace().map(String::from).collect();
    args.push("-DEXECUTE=1".into());
    args.extend(extra.iter().map(|e| e.to_string()));
    for d in includes {
        args.extend(["-I".into(), d.to_string_lossy().into_owned()]);
    }
    args.extend([test.to_string_lossy().into_owned(), "-o".into(), "t".into()]);
    run_ok(
        dir,
        "g++",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
}

/// Build `test` with `--coverage` ([`build_test`]) in `dir`, run it (it must pass) and run
/// `gcov --json-format` there on its `.gcda` files.
pub(crate) fn covered_build(dir: &Path, test: &Path, includes: &[&Path], flags: &str) {
    build_test(dir, test, includes, flags, &["--coverage"]);
    run_ok(dir, "./t", &[]);
    let gcdas: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".gcda"))
        .collect();
    let mut args = vec!["--json-format"];
    args.extend(gcdas.iter().map(String::as_str));
    run_ok(dir, "gcov", &args);
}

/// Whether `tool` runs (`tool --version`).
pub(crate) fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a test must fail rather than skip when something it needs is absent: only
/// `MFPPR_REQUIRE_TOOLS=1` says so (any other value, or none, lets it skip).
pub(crate) fn tools_required() -> bool {
    std::env::var_os("MFPPR_REQUIRE_TOOLS").is_some_and(|v| v == "1")
}

/// The test cannot run (`why`, e.g. "g++ is absent"): print the skip line, or panic under
/// `MFPPR_REQUIRE_TOOLS=1`. The one place that reads that variable.
pub(crate) fn skip(why: &str) {
    if tools_required() {
        panic!("{why} and MFPPR_REQUIRE_TOOLS=1 (bash scripts/setup installs the tools)");
    }
    eprintln!("skip: {why} (MFPPR_REQUIRE_TOOLS=1 makes this a failure)");
}

/// Whether every tool in `tools` runs; otherwise the test skips (or fails, see the module doc).
pub(crate) fn require_tools(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    let verb = if missing.len() == 1 { "is" } else { "are" };
    skip(&format!("{} {verb} absent", missing.join(", ")));
    false
}

/// `../shared/<name>` beside the repository, or `None` after a skip line when it is absent (a
/// failure under `MFPPR_REQUIRE_TOOLS=1`).
pub(crate) fn shared(name: &str) -> Option<PathBuf> {
    let path = root().join("..").join("shared").join(name);
    if path.exists() {
        Some(path)
    } else {
        skip(&format!("../shared/{name} is absent"));
        None
    }
}

/// A check script in `memo` that runs `script` on its argument and remembers the exit status and
/// what it printed by the candidate's bytes: reducing the same test again with the same check
/// (and environment) runs only the candidates no earlier run judged, and a remembered verdict
/// prints what the script printed (mfppr reads the failure from it). A real check still judges
/// every candidate once; what a rerun at another `-j` tests is the search, which sees the same
/// verdicts.
pub(crate) fn memo_check(script: &Path, memo: &Path) -> PathBuf {
    std::fs::create_dir_all(memo).unwrap();
    let check = memo.join("memo-check.sh");
    let text = format!(
        "#!/bin/sh\n\
         m='{memo}'/$(sha256sum < \"$1\" | cut -d' ' -f1)\n\
         if [ -f \"$m\" ]; then cat \"$m.out\"; cat \"$m.err\" >&2; exit \"$(cat \"$m\")\"; fi\n\
         '{script}' \"$1\" > \"$m.out.$$\" 2> \"$m.err.$$\"\n\
         rc=$?\n\
         cat \"$m.out.$$\"; cat \"$m.err.$$\" >&2\n\
         mv \"$m.out.$$\" \"$m.out\"; mv \"$m.err.$$\" \"$m.err\"\n\
         echo \"$rc\" > \"$m.$$\" && mv \"$m.$$\" \"$m\"\n\
         exit \"$rc\"\n",
        memo = memo.display(),
        script = script.display()
    );
    std::fs::write(&check, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).unwrap();
    check
}

/// One `MFPPR_CACHE_DIR` for the check runs of every test that asks for it: the bundled scripts
/// then precompile each include block once per suite run instead of once per mfppr run (a block
/// is keyed by the compiler, the flags, the include dirs and its text, so runs with other flags
/// never share one). Tests of the cache's own behaviour (`pch`, `safety`) keep mfppr's per-run
/// cache. It lives in the target directory's scratch space, one per test process; those of
/// earlier processes that are gone are removed when the first test asks.
pub(crate) fn check_cache() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let prefix = "check-cache-";
        for entry in std::fs::read_dir(&scratch).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let gone = name
                .strip_prefix(prefix)
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
            if gone {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = scratch.join(format!("{prefix}{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// A command running the built `mfppr` whose check runs share [`check_cache`].
pub(crate) fn mfppr_cached() -> Command {
    let mut cmd = Command::new(bin());
    cmd.env("MFPPR_CACHE_DIR", check_cache());
    cmd
}
