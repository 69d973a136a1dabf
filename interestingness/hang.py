#!/usr/bin/env python3
"""hang.py — interesting iff the test compiles and is still running after HANG_SECS.

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1,
and the program has not finished after HANG_SECS seconds; its whole process
group is then killed.  A program that ends (whatever its status) is not
interesting.

Environment (defaults in brackets):
  HANG_SECS  seconds after which a still running program counts as hung [5]
  CXX [g++]  CXXFLAGS [-std=c++17 -O0 -w]  MFPPR_INCLUDES [none]  LDFLAGS  LIBS
  COMPILE_TIMEOUT [60]  (RUN_TIMEOUT is not used: HANG_SECS is the limit)

Exit: 0 interesting, 1 not interesting, 2 usage error.

Example:
  cd $(mktemp -d) && cp /path/t.cpp . && MFPPR_ORIGINAL_DIR=/repo/fixtures/iset/spec \
  HANG_SECS=3 /repo/interestingness/hang.py $PWD/t.cpp; echo $?
"""
import os
import sys

sys.dont_write_bytecode = True  # never write __pycache__ beside the scripts (only cwd/TMPDIR)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import _mfppr_check as mc  # noqa: E402


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    secs = mc.env_float("HANG_SECS", 5)
    exe = mc.compile_test(src)
    if exe is None:
        return 1
    status, _, _ = mc.run_test(exe, timeout=secs)
    if status is None:
        mc.log("matched: still running after %gs (process group killed)" % secs)
        return 0
    mc.log("finished with status %s within %gs" % (status, secs))
    return 1


if __name__ == "__main__":
    sys.exit(main())
