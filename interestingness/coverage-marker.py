#!/usr/bin/env python3
"""coverage-marker.py — interesting iff the test reaches a coverage marker (and passes).

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1
against the marker-injected library (put it first with MFPPR_INCLUDES), and the
program's stderr contains a line starting with `MFPPR-COV <MARKER_ID> ` (as
printed by `mfppr cover inject`).  Unless REQUIRE_PASS=0, the program must
also exit 0: a test worth adding to a regression suite must pass.

With MFPPR_RUN set (a compiled library: `mfppr cover find --reduce-with-run`),
the candidate is built and run by that shell command instead, as `find` does:
`{test}` is replaced by the quoted candidate path, it runs with `sh -c` in the
current directory, and its stdout and stderr are both searched for the marker.

With MC_PAIR=k (`mfppr cover find --metamorphic` sets it for a line that a
checked pair (r_0, r_k) of the source test covers metamorphically), the marker
must also stay metamorphically covered: the candidate is split by
`$MFPPR_EXE cover isolate` (variant elimination, as mfppr reads the test) into
r_0 alone and r_k alone (its checks deleted), each is built and run the same
way (any exit status), and exactly one of the two may print the marker.

Environment (defaults in brackets):
  MARKER_ID     id of the marker to reach [required]
  MFPPR_RUN     shell command with {test} that builds and runs the candidate
                against the marked library [unset: compile with CXX/CXXFLAGS]
  MFPPR_INJECTED  the marked tree, for MFPPR_RUN commands [unset]
  REQUIRE_PASS  1: the run must exit 0; 0: any status [1]
  MC_PAIR       k: exactly one of r_0 alone and r_k alone reaches the marker [unset]
  MFPPR_EXE     the mfppr binary that splits the candidate for MC_PAIR [mfppr]
  MFPPR_INCLUDES  colon-separated include dirs searched first, e.g. the injected copy of the library
  CXX [g++]  CXXFLAGS [-std=c++17 -O0 -w]  LDFLAGS  LIBS  RUN_TIMEOUT [10]  COMPILE_TIMEOUT [60]

Exit: 0 interesting, 1 not interesting, 2 usage error.

Example:
  cd $(mktemp -d) && cp /path/t.cpp . && MARKER_ID=7 \
  MFPPR_INCLUDES=/tmp/injected/iset MFPPR_ORIGINAL_DIR=/repo/fixtures/iset/spec \
  /repo/interestingness/coverage-marker.py $PWD/t.cpp; echo $?
"""
import os
import shlex
import sys

sys.dont_write_bytecode = True  # never write __pycache__ beside the scripts (only cwd/TMPDIR)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import _mfppr_check as mc  # noqa: E402


def build_and_run(src, run_cmd, exe_name):
    """Build and run src: (status, output searched for markers), or None (logged) when it does
    not build or times out."""
    if run_cmd:
        status, out, err = mc.run_limited(
            ["sh", "-c", run_cmd.replace("{test}", shlex.quote(src))],
            mc.env_float("COMPILE_TIMEOUT", 60) + mc.env_float("RUN_TIMEOUT", 10), cwd=os.getcwd())
        if status is None:
            mc.log("MFPPR_RUN timed out")
            return None
        return status, err + "\n" + out
    exe = mc.compile_test(src, exe_name)
    if exe is None:
        return None
    status, _, err = mc.run_test(exe)
    if status is None:
        mc.log("timed out")
        return None
    return status, err


def sides_reaching(src, k, prefix, run_cmd):
    """Which of r_0 alone and r_k alone print the marker: [bool, bool], or None (logged)."""
    mfppr = os.environ.get("MFPPR_EXE", "").strip() or "mfppr"
    status, out, err = mc.run_limited(
        [mfppr, "cover", "isolate", src, "--variant", "0", "--variant", k,
         "--out-dir", os.getcwd()], mc.env_float("COMPILE_TIMEOUT", 60), cwd=os.getcwd())
    files = out.splitlines()
    if status != 0 or len(files) != 2:
        last = (err.strip().splitlines() or ["status %s" % status])[-1]
        mc.log("cannot split the candidate into r_0 and r_%s: %s" % (k, last))
        return None
    reached = []
    for side, path in zip(("0", k), files):
        ran = build_and_run(path, run_cmd, "mfppr_side_%s" % side)
        if ran is None:
            mc.log("r_%s alone does not build and run" % side)
            return None
        reached.append(any(line.startswith(prefix) for line in ran[1].splitlines()))
    return reached


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    marker = os.environ.get("MARKER_ID", "").strip()
    if not marker:
        mc.log("MARKER_ID is required")
        return 2
    pair = os.environ.get("MC_PAIR", "").strip()
    if pair and not pair.isdigit():
        mc.log("MC_PAIR must be the k of the pair (r_0, r_k), not %r" % pair)
        return 2
    require_pass = os.environ.get("REQUIRE_PASS", "1").strip() != "0"
    run_cmd = os.environ.get("MFPPR_RUN", "").strip()
    ran = build_and_run(src, run_cmd, "mfppr_candidate")
    if ran is None:
        return 1
    status, err = ran
    prefix = "MFPPR-COV %s " % marker
    if not any(line.startswith(prefix) for line in err.splitlines()):
        mc.log("marker %s not reached (status %s)" % (marker, status))
        return 1
    if require_pass and status != 0:
        mc.log("marker %s reached, but status %s (REQUIRE_PASS=1)" % (marker, status))
        return 1
    if pair:
        sides = sides_reaching(src, pair, prefix, run_cmd)
        if sides is None:
            return 1
        if sides[0] == sides[1]:
            mc.log("marker %s reached by %s of the pair (r_0, r_%s): not metamorphic"
                   % (marker, "both sides" if sides[0] else "neither side", pair))
            return 1
        mc.log("matched: marker %s reached (status %s), by r_%s alone of the pair (r_0, r_%s)"
               % (marker, status, "0" if sides[0] else pair, pair))
        return 0
    mc.log("matched: marker %s reached (status %s)" % (marker, status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
