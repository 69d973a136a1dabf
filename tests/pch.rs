//! End-to-end tests of the precompiled include block of the bundled check scripts (issue 13):
//! the real `interestingness/check-failure.py` with the real g++ on a fixture test, with and
//! without `MFPPR_CACHE_DIR`, must give the same verdicts; a broken or shared cache must not
//! change them. Skips without g++/python3 (fails under `MFPPR_REQUIRE_TOOLS=1`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{require_tools, root, write_script};

fn fixture() -> Vec<u8> {
    std::fs::read(root().join("fixtures/tests/iset_merge_small_a.cpp")).unwrap()
}

/// One check of `test` the way mfppr runs it (fresh directory, candidate under its name), with
/// the merge bug on (`bug`) or off, in differential mode when `reference`; the cache directory
/// when given, else `MFPPR_PCH=0`. Returns the exit code.
fn check(test: &[u8], bug: bool, reference: bool, cache: Option<&Path>) -> i32 {
    check_with(test, bug, reference, cache, None).0
}

/// [`check`] with `CXX=cxx` when given; also returns the script's stderr.
fn check_with(
    test: &[u8],
    bug: bool,
    reference: bool,
    cache: Option<&Path>,
    cxx: Option<&Path>,
) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let cand = dir.path().join("t.cpp");
    std::fs::write(&cand, test).unwrap();
    let flags = if bug {
        "-std=c++17 -w -DISET_BUG_MERGE"
    } else {
        "-std=c++17 -w"
    };
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("interestingness/check-failure.py"))
        .arg(&cand)
        .current_dir(dir.path())
        .env("TMPDIR", dir.path())
        .env("MFPPR_ORIGINAL_DIR", root().join("fixtures/iset/spec"))
        .env("CXXFLAGS", flags)
        .env("CHECK_NAME", "check_equal")
        .env_remove("REFERENCE_CXXFLAGS")
        .env_remove("MFPPR_INCLUDES")
        .env_remove("CXX")
        .env_remove("LDFLAGS")
        .env_remove("LIBS")
        .env_remove("MFPPR_CACHE_DIR")
        .env_remove("MFPPR_PCH");
    if reference {
        cmd.env("REFERENCE_CXXFLAGS", "-std=c++17 -w");
    }
    match cache {
        Some(c) => cmd.env("MFPPR_CACHE_DIR", c),
        None => cmd.env("MFPPR_PCH", "0"),
    };
    if let Some(cxx) = cxx {
        cmd.env("CXX", cxx);
    }
    let out = cmd.output().unwrap();
    assert!(
        !dir.path().join(".mfppr-pch-t.cpp").exists(),
        "the rest of the source is left behind"
    );
    (
        out.status.code().expect("check-failure.py was killed"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `.gch` files in `cache`, one per built include block.
fn built(cache: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.join("mfppr-pch-block.h.gch"))
        .filter(|g| g.is_file())
        .collect();
    found.sort();
    found
}

#[test]
fn precompiled_block_keeps_every_verdict() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let test = fixture();
    // (bug on, differential): the plain verdicts are the reference.
    let cases = [(true, false), (true, true), (false, false), (false, true)];
    let plain: Vec<i32> = cases
        .iter()
        .map(|&(bug, r)| check(&test, bug, r, None))
        .collect();
    assert_eq!(plain, [0, 0, 1, 1], "plain verdicts of the fixture");
    // Twice each: the first sighting of a block compiles plainly, the second builds and uses it.
    for _ in 0..2 {
        let with: Vec<i32> = cases
            .iter()
            .map(|&(bug, r)| check(&test, bug, r, Some(cache.path())))
            .collect();
        assert_eq!(with, plain, "verdicts with the precompiled block");
    }
    // Two flag sets: with the bug macro, and without it (bug off and the reference build).
    assert_eq!(built(cache.path()).len(), 2, "one .gch per set of flags");
    let other = String::from_utf8(test.clone()).unwrap().replacen(
        "#include <cassert>",
        "#include <cassert>\n#include <vector>",
        1,
    );
    for _ in 0..2 {
        assert_eq!(check(other.as_bytes(), true, false, Some(cache.path())), 0);
    }
    assert_eq!(
        built(cache.path()).len(),
        3,
        "a candidate whose include block differs gets its own .gch"
    );
}

#[test]
fn corrupted_gch_falls_back_to_the_plain_compile() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let test = fixture();
    for _ in 0..2 {
        assert_eq!(check(&test, true, false, Some(cache.path())), 0);
    }
    let gch = built(cache.path());
    assert_eq!(gch.len(), 1);
    std::fs::write(&gch[0], b"not a precompiled header").unwrap();
    assert_eq!(check(&test, true, false, Some(cache.path())), 0);
    assert_eq!(check(&test, false, false, Some(cache.path())), 1);
    // A missing .gch: g++ reads the block's text instead.
    std::fs::remove_file(&gch[0]).unwrap();
    assert_eq!(check(&test, true, false, Some(cache.path())), 0);
}

#[test]
fn concurrent_runs_share_one_cache() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let test = fixture();
    let codes: Vec<i32> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..3)
            .map(|_| s.spawn(|| check(&test, true, false, Some(cache.path()))))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(codes, [0, 0, 0]);
    assert_eq!(check(&test, true, false, Some(cache.path())), 0);
    assert_eq!(built(cache.path()).len(), 1, "one builder per key");
    let leftovers: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".build-") || n.ends_with(".lock") || n.contains(".stale-"))
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

#[test]
fn compiler_without_pch_support_falls_back_with_one_warning() {
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cxx = dir.path().join("no-pch-g++");
    write_script(
        &cxx,
        "#!/bin/sh\ncase \" $* \" in *\" c++-header \"*) echo 'no PCH here' >&2; exit 1;; esac\n\
         exec g++ \"$@\"\n",
    );
    let cache = dir.path().join("cache");
    let test = fixture();
    let mut warnings = 0;
    for (bug, want) in [(true, 0), (true, 0), (true, 0), (false, 1), (false, 1)] {
        let (code, err) = check_with(&test, bug, false, Some(&cache), Some(&cxx));
        assert_eq!(
            code, want,
            "verdict with a compiler that cannot precompile: {err}"
        );
        warnings += err.matches("cannot precompile").count();
    }
    assert_eq!(warnings, 1, "one warning per cache directory");
    assert!(built(&cache).is_empty());
}

#[test]
fn an_instrumented_test_is_built_once_per_compiler_command_beside_its_probe_log() {
    // mfppr's value knockouts run the instrumented text again, told by a file beside its probe
    // log which value to replace: the script keeps the build there and reuses it for the same
    // bytes and command; another command (the bug off) builds again; without that folder
    // nothing is kept.
    if !require_tools(&["g++", "python3"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("compiles");
    let cxx = dir.path().join("counting-g++");
    write_script(
        &cxx,
        &format!(
            "#!/bin/sh\necho x >> '{}'\nexec g++ \"$@\"\n",
            count.display()
        ),
    );
    let probes = dir.path().join("values");
    std::fs::create_dir(&probes).unwrap();
    let mut test = format!(
        "#define MFPPR_VALUE_LOG \"{}\"\n",
        probes.join("probes.log").display()
    )
    .into_bytes();
    test.extend(fixture());
    let compiles = || {
        std::fs::read_to_string(&count)
            .unwrap_or_default()
            .lines()
            .count()
    };
    for (bug, want, compiled) in [(true, 0, 1), (true, 0, 1), (false, 1, 2), (false, 1, 2)] {
        let (code, err) = check_with(&test, bug, false, None, Some(&cxx));
        assert_eq!(code, want, "{err}");
        assert_eq!(compiles(), compiled, "bug {bug}: {err}");
    }
    let kept = std::fs::read_dir(&probes).unwrap().count();
    assert_eq!(kept, 2, "one build per compiler command");
    std::fs::remove_dir_all(&probes).unwrap();
    for compiled in [3, 4] {
        let (code, err) = check_with(&test, true, false, None, Some(&cxx));
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            compiles(),
            compiled,
            "nothing kept without the log's folder"
        );
    }
}

/// `mfppr reduce` of the fixture with a shell check that records `$MFPPR_CACHE_DIR` and accepts
/// everything; returns the directories it saw and the `--stats` JSON.
fn reduce_recording(user_cache: Option<&Path>) -> (Vec<String>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.txt");
    let script = dir.path().join("record.sh");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\necho \"$MFPPR_CACHE_DIR\" >> '{}'\nexit 0\n",
            seen.display()
        ),
    );
    let input = dir.path().join("t.cpp");
    std::fs::write(&input, fixture()).unwrap();
    let stats = dir.path().join("stats.json");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mfppr"));
    cmd.arg("reduce")
        .arg(&input)
        .arg("--check")
        .arg(&script)
        .arg("-I")
        .arg(root().join("fixtures/iset/spec"))
        .arg("--stats")
        .arg(&stats)
        .args(["-q", "-j", "2"])
        .env("TMPDIR", &tmp)
        .env_remove("MFPPR_CACHE_DIR");
    if let Some(c) = user_cache {
        cmd.env("MFPPR_CACHE_DIR", c);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let leftovers: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(leftovers.is_empty(), "left in TMPDIR: {leftovers:?}");
    let mut dirs: Vec<String> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    dirs.dedup();
    let json = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    (dirs, json)
}

#[test]
fn reduce_gives_the_scripts_one_cache_dir_per_run_and_removes_it() {
    let (dirs, json) = reduce_recording(None);
    assert_eq!(dirs.len(), 1, "one cache dir for every check: {dirs:?}");
    assert!(dirs[0].contains("mfppr-cache-"), "{dirs:?}");
    assert!(
        !Path::new(&dirs[0]).exists(),
        "the cache dir outlived the run"
    );
    assert!(json["mean_oracle_secs"].as_f64().unwrap() > 0.0, "{json}");

    let mine = tempfile::tempdir().unwrap();
    let (dirs, _) = reduce_recording(Some(mine.path()));
    assert_eq!(dirs, [mine.path().display().to_string()]);
    assert!(mine.path().is_dir(), "the user's cache dir was removed");
}
