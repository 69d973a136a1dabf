"""Shared code of the mfppr interestingness scripts (Python 3, stdlib only).

Contract (set by the reducer): cwd is a fresh temp dir holding the candidate
under the original file name; argv[1] / MFPPR_CANDIDATE = the candidate's
absolute path; MFPPR_ORIGINAL = the user's original file; MFPPR_ORIGINAL_DIR =
its directory (always passed as -I); TMPDIR lies inside the temp dir.  Exit 0 =
interesting.  Everything written here goes to cwd (or TMPDIR).

Common environment (all scripts):
  CXX              compiler (default g++)
  CXXFLAGS         flags, split like a shell would (default "-std=c++17 -O0 -w");
                   -DEXECUTE=1 is always added
  MFPPR_INCLUDES   colon-separated extra include dirs, searched before
                   MFPPR_ORIGINAL_DIR (coverage mode puts the injected library first)
  LDFLAGS, LIBS    linker flags / libraries, appended after the source
  RUN_TIMEOUT      seconds a run may take (default 10)
  COMPILE_TIMEOUT  seconds a compile may take (default 60)
"""

import os
import shlex
import signal
import subprocess
import sys
import tempfile


def log(msg):
    """The one-line reason a user sees when running a script by hand."""
    sys.stderr.write("%s: %s\n" % (os.path.basename(sys.argv[0]), msg))


def env_float(name, default):
    v = os.environ.get(name, "")
    try:
        return float(v) if v.strip() else float(default)
    except ValueError:
        log("ignoring %s=%r (not a number)" % (name, v))
        return float(default)


def candidate_path():
    if len(sys.argv) > 1 and sys.argv[1]:
        return os.path.abspath(sys.argv[1])
    c = os.environ.get("MFPPR_CANDIDATE")
    if c:
        return os.path.abspath(c)
    log("no candidate: pass its path as argv[1] or set MFPPR_CANDIDATE")
    sys.exit(2)


def include_dirs(source):
    dirs = [d for d in os.environ.get("MFPPR_INCLUDES", "").split(":") if d]
    orig_dir = os.environ.get("MFPPR_ORIGINAL_DIR")
    if not orig_dir and os.environ.get("MFPPR_ORIGINAL"):
        orig_dir = os.path.dirname(os.path.abspath(os.environ["MFPPR_ORIGINAL"]))
    if orig_dir:
        dirs.append(orig_dir)
    return dirs


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def run_limited(argv, timeout, cwd=None):
    """Run argv in its own process group; kill the whole group on timeout.
    Returns (returncode or None on timeout, stdout, stderr)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ValueError):
            out, err = b"", b""
        return None, out.decode(errors="replace"), err.decode(errors="replace")
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def compile_test(source, exe_name="mfppr_candidate", cxxflags=None):
    """Compile source into ./exe_name; return the executable path or None."""
    cxx = shlex.split(os.environ.get("CXX", "g++"))
    flags = shlex.split(cxxflags if cxxflags is not None else os.environ.get("CXXFLAGS", "-std=c++17 -O0 -w"))
    incs = []
    for d in include_dirs(source):
        incs += ["-I", d]
    exe = os.path.join(os.getcwd(), exe_name)
    argv = cxx + flags + ["-DEXECUTE=1"] + incs + [source, "-o", exe] + \
        shlex.split(os.environ.get("LDFLAGS", "")) + shlex.split(os.environ.get("LIBS", ""))
    rc, _, err = run_limited(argv, env_float("COMPILE_TIMEOUT", 60))
    if rc is None:
        log("compile timed out: %s" % " ".join(argv))
        return None
    if rc != 0:
        first = next((l for l in err.splitlines() if "error" in l), err.strip().splitlines()[:1])
        log("compile error: %s" % (first if isinstance(first, str) else " ".join(first)))
        return None
    return exe


def run_test(exe, timeout=None):
    """(status, stdout, stderr); status = exit code, 128+signal, or None on timeout."""
    rc, out, err = run_limited([exe], timeout if timeout is not None else env_float("RUN_TIMEOUT", 10),
                               cwd=os.getcwd())
    if rc is None:
        return None, out, err
    return (128 - rc if rc < 0 else rc), out, err


def compile_and_run(source):
    """Compile `source` with CXXFLAGS and run it: (status, stdout, stderr), or None (logged)
    when it does not compile or the run times out."""
    exe = compile_test(source)
    if exe is None:
        return None
    status, out, err = run_test(exe)
    if status is None:
        log("timed out")
        return None
    return status, out, err


def reference_passes(source):
    """Differential mode: when REFERENCE_CXXFLAGS is set, the candidate must
    compile with those flags instead of CXXFLAGS and run to exit 0."""
    ref = os.environ.get("REFERENCE_CXXFLAGS")
    if ref is None:
        return True
    exe = compile_test(source, "mfppr_reference", ref)
    if exe is None:
        log("reference build failed to compile")
        return False
    status, _, _ = run_test(exe)
    if status != 0:
        log("reference build does not pass (status %s): a slip, not the library's fault" % status)
        return False
    return True


def setup_tmp():
    """Keep temporaries of the compiler inside cwd when TMPDIR is not set."""
    if not os.environ.get("TMPDIR"):
        os.environ["TMPDIR"] = os.getcwd()
    tempfile.tempdir = None
