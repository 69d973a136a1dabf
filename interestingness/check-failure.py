#!/usr/bin/env python3
"""check-failure.py — interesting iff the test compiles and a metamorphic check fails.

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1,
and running it aborts with glibc's assertion message naming a check, e.g.
  t: t.cpp:9: void metalib::checks::check_equal(...): Assertion `...' failed.
With CHECK_NAME set, that check must be the one that failed.
Differential mode: with REFERENCE_CXXFLAGS set, the candidate is also compiled
with those flags (instead of CXXFLAGS) — the fixed / reference library — and
that build must run and exit 0, so a reduction cannot slip into a failure the
library is not responsible for.

Environment (defaults in brackets):
  CHECK_NAME          name of the check that must fail, e.g. check_equal [any]
  REFERENCE_CXXFLAGS  flags of the reference build [unset: no differential check]
  CXX [g++]  CXXFLAGS [-std=c++17 -O0 -w]  MFPPR_INCLUDES [none]  LDFLAGS  LIBS
  MFPPR_CXXFLAGS  the flags given to mfppr after --, appended to both builds
  RUN_TIMEOUT [10]  COMPILE_TIMEOUT [60]  MFPPR_CACHE_DIR  MFPPR_PCH  (see _mfppr_check.py)
  MFPPR_ORIGINAL_DIR is always an include dir; MFPPR_CANDIDATE is used when no argv[1].

Exit: 0 interesting, 1 not interesting, 2 usage error.

Example:
  cd $(mktemp -d) && cp /path/t.cpp . && \
  MFPPR_ORIGINAL_DIR=/repo/fixtures/iset/spec CXXFLAGS="-std=c++17 -w -DISET_BUG_MERGE" \
  REFERENCE_CXXFLAGS="-std=c++17 -w" CHECK_NAME=check_equal \
  /repo/interestingness/check-failure.py $PWD/t.cpp; echo $?
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # never write __pycache__ beside the scripts (only cwd/TMPDIR)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import _mfppr_check as mc  # noqa: E402


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    want = os.environ.get("CHECK_NAME", "").strip()
    ran = mc.compile_and_run(src)
    if ran is None:
        return 1
    status, _, err = ran
    failed = None
    for line in err.splitlines():
        if "Assertion" in line and "failed" in line:
            m = re.search(r"metalib::checks::(\w+)", line)
            if m:
                failed = m.group(1)
                break
    if failed is None:
        mc.log("no metalib::checks assertion failed (status %s)" % status)
        return 1
    if want and failed != want:
        mc.log("check %s failed, but CHECK_NAME=%s" % (failed, want))
        return 1
    if not mc.reference_passes(src):
        return 1
    mc.log("matched: metalib::checks::%s failed (status %s)" % (failed, status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
