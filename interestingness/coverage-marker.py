#!/usr/bin/env python3
"""coverage-marker.py — interesting iff the test reaches a coverage marker (and passes).

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1
against the marker-injected library (put it first with MFPPR_INCLUDES), and the
program's stderr contains a line starting with `MFPPR-COV <MARKER_ID> ` (as
printed by `mfppr cover inject`).  Unless REQUIRE_PASS=0, the program must
also exit 0: a test worth adding to a regression suite must pass.

Environment (defaults in brackets):
  MARKER_ID     id of the marker to reach [required]
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
