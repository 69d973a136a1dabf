#!/usr/bin/env python3
"""check-failure.py — interesting iff the test compiles and a metamorphic check fails.

What it checks: the candidate (argv[1]) compiles with CXXFLAGS and -DEXECUTE=1,
and running it aborts with glibc's assertion message naming a check, e.g.
  t: t.cpp:9: void metalib::checks::check_equal(...): Assertion `...' failed.
With CHECK_NAME set, that check must be the one that failed.
With SAME_FAILURE=1 it must fail the way the original (MFPPR_ORIGINAL, built
with CXXFLAGS) fails: the same check call, e.g. check_equal(r_2, r_0) (the
same two variants compared: both builds print each `metalib::checks::` call
written on a line of its own before making it); or, when no check fails there
but the original dies (an uncaught exception, a signal), the same death: the
same exception type, else the same signal.  A campaign with several bugs on at
once then keeps each test's own failure (no slip from one bug to another that
ends in another check call or kind of crash).  The original's failure is worked out on
the first call whose candidate is the original itself and kept in
MFPPR_CACHE_DIR (without one, the original is built on every call).
Differential mode: with REFERENCE_CXXFLAGS set, the candidate is also compiled
with those flags (instead of CXXFLAGS) — the fixed / reference library — and
that build must run and exit 0, so a reduction cannot slip into a failure the
library is not responsible for.

Environment (defaults in brackets):
  CHECK_NAME          name of the check that must fail, e.g. check_equal [any]
  SAME_FAILURE        1: the original's failure, crashes included (above) [0]
  REFERENCE_CXXFLAGS  flags of the reference build [unset: no differential check]
  REFERENCE_ENV       shell words K=V: the reference run's environment changes; without
                      REFERENCE_CXXFLAGS the candidate's own build runs again with them (a
                      fault an LD_PRELOAD shim switches by a variable, e.g. MFPPR_FAULTS=) [unset]
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
import hashlib
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True  # never write __pycache__ beside the scripts (only cwd/TMPDIR)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import _mfppr_check as mc  # noqa: E402


# A check call written on a line of its own, as MF++ writes them.
CHECK_LINE = re.compile(r"^(\s*)metalib::checks::(\w+)\(([^;]*)\);\s*$")
MARK = "mfppr-check: "


def failure_of(status, err):
    """How a run failed: `check <name>` (a metalib::checks assertion, or one in a global
    function `check...`, as mfppr's minimal standalone writes a check), `check <name>(<args>)`
    when a marked build ([`marked`]) said which call it was, `exception <type>` (an uncaught
    exception), `signal <n>`, `exit <n>`; None when it exited 0."""
    call = None
    for line in err.splitlines():
        if line.startswith(MARK):
            call = line[len(MARK):].strip()
        if "Assertion" in line and "failed" in line:
            m = re.search(r"metalib::checks::(\w+)", line) or re.search(
                r"(?:^|[\s*&])(check\w*)\(", line)
            if m:
                named = call if call and call.split("(", 1)[0] == m.group(1) else m.group(1)
                return "check " + named
    if status == 0:
        return None
    m = re.search(r"terminate called after throwing an instance of '([^']+)'", err)
    if m and status > 128:
        return "exception " + m.group(1)
    return ("signal %d" % (status - 128)) if status > 128 else ("exit %d" % status)


def marked(src):
    """SAME_FAILURE: a copy of `src` in the working directory that prints on stderr, before
    each check call written on a line of its own, which call it makes (so that a failed check
    names its call); `src` itself when it has none."""
    with open(src, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    out = []
    for line in lines:
        m = CHECK_LINE.match(line)
        if m:
            call = "%s(%s)" % (m.group(2), " ".join(m.group(3).split()))
            text = call.replace("\\", "\\\\").replace('"', '\\"')
            out.append('%sstd::fprintf(stderr, "%s%%s\\n", "%s");' % (m.group(1), MARK, text))
        out.append(line)
    if len(out) == len(lines):
        return src
    path = os.path.join(os.getcwd(), "mfppr-marked-" + os.path.basename(src))
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("#include <cstdio>\n" + "\n".join(out))
    return path


def same_failure(failure, expected):
    """Whether two failures are the same: the same check call when both runs named it, else the
    same check (or death)."""
    if failure == expected:
        return True
    if failure is None or expected is None or not failure.startswith("check "):
        return False
    return failure.split("(", 1)[0] == expected.split("(", 1)[0] and (
        "(" not in failure or "(" not in expected)


def original_failure(src, ran):
    """SAME_FAILURE: the failure of MFPPR_ORIGINAL built with CXXFLAGS (None if it passes).
    `ran` is the candidate's run, which is the original's when the bytes are the same."""
    orig = os.environ.get("MFPPR_ORIGINAL")
    if not orig:
        mc.log("SAME_FAILURE=1 needs MFPPR_ORIGINAL (set by mfppr)")
        sys.exit(2)
    with open(orig, "rb") as f:
        orig_bytes = f.read()
    with open(src, "rb") as f:
        same = f.read() == orig_bytes
    h = hashlib.sha256(orig_bytes)
    for part in (os.environ.get(k, "") for k in ("CXX", "CXXFLAGS", "MFPPR_INCLUDES", "MFPPR_CXXFLAGS",
                                                 "LDFLAGS", "LIBS")):
        h.update(b"\0" + part.encode("utf-8", "surrogateescape"))
    cache = os.environ.get("MFPPR_CACHE_DIR", "")
    path = os.path.join(cache, "same-failure-" + h.hexdigest()) if cache else None
    if path and not same:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read() or None
        except OSError:
            pass
    if same:
        found = failure_of(ran[0], ran[2])
    else:
        copy = os.path.join(os.getcwd(), "mfppr-original-" + os.path.basename(orig))
        with open(copy, "wb") as f:
            f.write(orig_bytes)
        run = mc.compile_and_run(marked(copy))
        if run is None:
            mc.log("SAME_FAILURE: the original does not build or run: %s" % shlex.quote(orig))
            return None
        found = failure_of(run[0], run[2])
    if path:
        try:
            os.makedirs(cache, exist_ok=True)
            tmp = "%s.%d" % (path, os.getpid())
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(found or "")
            os.replace(tmp, path)
        except OSError:
            pass
    return found


def main():
    mc.setup_tmp()
    src = mc.candidate_path()
    want = os.environ.get("CHECK_NAME", "").strip()
    same = os.environ.get("SAME_FAILURE", "").strip() not in ("", "0")
    ran = mc.compile_and_run(marked(src) if same else src)
    if ran is None:
        return 1
    status, _, err = ran
    failure = failure_of(status, err)
    failed = failure[len("check "):].split("(", 1)[0] if failure and failure.startswith("check ") else None
    if same:
        expected = original_failure(src, ran)
        if expected is None:
            mc.log("SAME_FAILURE: the original does not fail")
            return 1
        if not same_failure(failure, expected):
            mc.log("%s, but the original fails with %s (SAME_FAILURE)" % (failure or "no failure", expected))
            return 1
    elif failed is None:
        mc.log("no metalib::checks assertion failed (status %s)" % status)
        return 1
    if want and failed != want:
        mc.log("check %s failed, but CHECK_NAME=%s" % (failed, want))
        return 1
    if not mc.reference_passes(src):
        return 1
    mc.log("matched: %s (status %s)" % ("metalib::checks::%s failed" % failed if failed else failure, status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
