#!/usr/bin/env python3
"""same-exit.py — interesting iff the test exits like the original (MF++R's contract).

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1,
and its exit status (a signal counts as 128+signal) equals EXPECTED_EXIT, or,
when EXPECTED_EXIT is unset, the status of MFPPR_ORIGINAL compiled and run the
same way (the original is built in cwd as mfppr_original).  A compile failure
is never interesting; a timeout is never interesting.

Environment (defaults in brackets):
  EXPECTED_EXIT  the status to reproduce [that of MFPPR_ORIGINAL]
  MFPPR_ORIGINAL the original test (needed when EXPECTED_EXIT is unset)
  CXX [g++]  CXXFLAGS [-std=c++17 -O0 -w]  MFPPR_INCLUDES [none]  LDFLAGS  LIBS
  RUN_TIMEOUT [10]  COMPILE_TIMEOUT [60]

Exit: 0 interesting, 1 not interesting, 2 usage error.

Example:
  cd $(mktemp -d) && cp /path/t.cpp . && MFPPR_ORIGINAL=/path/t.cpp \
  MFPPR_ORIGINAL_DIR=/repo/fixtures/iset/spec CXXFLAGS="-std=c++17 -w -DISET_BUG_MERGE" \
  /repo/interestingness/same-exit.py $PWD/t.cpp; echo $?
"""
import os
import sys

sys.dont_write_bytecode = True  # never write __pycache__ beside the scripts (only cwd/TMPDIR)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import _mfppr_check as mc  # noqa: E402


def expected_status():
    v = os.environ.get("EXPECTED_EXIT", "").strip()
    if v:
        try:
            return int(v)
        except ValueError:
            mc.log("EXPECTED_EXIT=%r is not an integer" % v)
            sys.exit(2)
    orig = os.environ.get("MFPPR_ORIGINAL")
    if not orig:
        mc.log("set EXPECTED_EXIT or MFPPR_ORIGINAL")
        sys.exit(2)
    exe = mc.compile_test(os.path.abspath(orig), "mfppr_original")
    if exe is None:
        mc.log("the original does not compile")
        sys.exit(1)
    status, _, _ = mc.run_test(exe)
    if status is None:
        mc.log("the original timed out")
        sys.exit(1)
    return status


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    want = expected_status()
    ran = mc.compile_and_run(src)
    if ran is None:
        return 1
    status, _, _ = ran
    if status != want:
        mc.log("status %s, expected %s" % (status, want))
        return 1
    mc.log("matched: status %s" % status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
