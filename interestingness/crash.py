#!/usr/bin/env python3
"""crash.py — interesting iff the test compiles and dies by a signal.

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1,
and running it is killed by one of CRASH_SIGNALS; with CRASH_PATTERN set, its
stderr must also match that regular expression (re.search).  Note that a
failing assert is SIGABRT too: use CRASH_PATTERN (e.g. 'out_of_range') or
CRASH_SIGNALS=SEGV to tell a crash from a check failure.
Differential mode: with REFERENCE_CXXFLAGS set, the candidate compiled with
those flags instead of CXXFLAGS must run and exit 0.

Environment (defaults in brackets):
  CRASH_SIGNALS       comma/space separated names or numbers
                      [SEGV,ABRT,BUS,FPE,ILL]
  CRASH_PATTERN       regex required on stderr [unset]
  REFERENCE_CXXFLAGS  flags of the reference build [unset]
  REFERENCE_ENV       NAME=VALUE words: the same build, run with them, must exit 0 [unset]
  CXX [g++]  CXXFLAGS [-std=c++17 -O0 -w]  MFPPR_INCLUDES [none]  LDFLAGS  LIBS
  RUN_TIMEOUT [10]  COMPILE_TIMEOUT [60]

Exit: 0 interesting, 1 not interesting, 2 usage error.

Example:
  cd $(mktemp -d) && cp /path/t.cpp . && \
  MFPPR_ORIGINAL_DIR=/repo/fixtures/iset/spec CXXFLAGS="-std=c++17 -w -DISET_BUG_BOUND" \
  CRASH_PATTERN=out_of_range /repo/interestingness/crash.py $PWD/t.cpp; echo $?
"""
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # never write __pycache__ beside the scripts (only cwd/TMPDIR)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import _mfppr_check as mc  # noqa: E402


def wanted_signals():
    spec = os.environ.get("CRASH_SIGNALS", "SEGV,ABRT,BUS,FPE,ILL")
    sigs = set()
    for tok in re.split(r"[,\s]+", spec.strip()):
        if not tok:
            continue
        if tok.isdigit():
            sigs.add(int(tok))
            continue
        name = tok.upper()
        name = name if name.startswith("SIG") else "SIG" + name
        if not hasattr(signal, name):
            mc.log("unknown signal %r in CRASH_SIGNALS" % tok)
            sys.exit(2)
        sigs.add(int(getattr(signal, name)))
    return sigs


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    sigs = wanted_signals()
    pattern = os.environ.get("CRASH_PATTERN")
    ran = mc.compile_and_run(src)
    if ran is None:
        return 1
    status, _, err = ran
    if status <= 128 or (status - 128) not in sigs:
        mc.log("no crash by %s (status %s)" % (sorted(sigs), status))
        return 1
    if pattern and not re.search(pattern, err):
        mc.log("signal %d, but stderr does not match CRASH_PATTERN=%r" % (status - 128, pattern))
        return 1
    if not mc.reference_passes(src):
        return 1
    mc.log("matched: killed by signal %d" % (status - 128))
    return 0


if __name__ == "__main__":
    sys.exit(main())
