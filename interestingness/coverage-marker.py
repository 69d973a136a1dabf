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

Environment (defaults in brackets):
  MARKER_ID     id of the marker to reach [required]
  MFPPR_RUN     shell command with {test} that builds and runs the candidate
                against the marked library [unset: compile with CXX/CXXFLAGS]
  MFPPR_INJECTED  the marked tree, for MFPPR_RUN commands [unset]
  REQUIRE_PASS  1: the run must exit 0; 0: any status [1]
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


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    marker = os.environ.get("MARKER_ID", "").strip()
    if not marker:
        mc.log("MARKER_ID is required")
        return 2
    require_pass = os.environ.get("REQUIRE_PASS", "1").strip() != "0"
    run_cmd = os.environ.get("MFPPR_RUN", "").strip()
    if run_cmd:
        status, out, err = mc.run_limited(
            ["sh", "-c", run_cmd.replace("{test}", shlex.quote(src))],
            mc.env_float("COMPILE_TIMEOUT", 60) + mc.env_float("RUN_TIMEOUT", 10), cwd=os.getcwd())
        if status is None:
            mc.log("MFPPR_RUN timed out")
            return 1
        err = err + "\n" + out
    else:
        ran = mc.compile_and_run(src)
        if ran is None:
            return 1
        status, _, err = ran
    prefix = "MFPPR-COV %s " % marker
    if not any(line.startswith(prefix) for line in err.splitlines()):
        mc.log("marker %s not reached (status %s)" % (marker, status))
        return 1
    if require_pass and status != 0:
        mc.log("marker %s reached, but status %s (REQUIRE_PASS=1)" % (marker, status))
        return 1
    mc.log("matched: marker %s reached (status %s)" % (marker, status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
