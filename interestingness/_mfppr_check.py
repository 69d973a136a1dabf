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
  MFPPR_CXXFLAGS   the compiler flags given to mfppr after `--` (shell words, include dirs
                   made absolute), appended after the include dirs above: -I, -D, -std ...
  MFPPR_LDFLAGS    the link flags given to mfppr after `--` (-l, -L, -Wl,), after the source
  LDFLAGS, LIBS    linker flags / libraries, appended after the source
  REFERENCE_CXXFLAGS, REFERENCE_ENV  differential mode (see reference_passes)
  RUN_TIMEOUT      seconds a run may take (default 10)
  COMPILE_TIMEOUT  seconds a compile may take (default 60)
  MFPPR_CACHE_DIR  directory of precompiled include blocks (mfppr sets a per-run one);
                   unset: no precompiled header, every compile is plain
  MFPPR_PCH        0: never use a precompiled header (default 1)

A test mfppr instrumented to localise a wrong value (`#define MFPPR_VALUE_LOG "DIR/probes.log"`
on a line of its own) is built once per compiler command: the executable is kept in DIR, which
mfppr removes when that localisation ends; its value knockouts, the same text with one more line
(`#define MFPPR_VALUE_FIXES "record way"`), reuse that build, told the pairs in the environment.

Precompiled include block: the leading lines of a candidate that are blank, comments or
preprocessor lines (MF++'s #includes and #ifdef EXECUTE branches) are compiled once with
`-x c++-header` and the same compiler, flags and include dirs, into
MFPPR_CACHE_DIR/pch-<key>/ (key: compiler path and --version, flags, include dirs, the block's
bytes), on the second candidate that has that block.  Later candidates compile
`-include <that dir>/mfppr-pch-block.h` plus the rest of the file (the block replaced by a
`#line` directive, so file names and line numbers stay those of the candidate).  One builder per
key (an O_EXCL lock; the finished directory appears by an atomic rename); the others compile
plainly meanwhile.  Anything unusual (a failed build, a header changed since the build, a
compile with the precompiled header that fails) falls back to the plain compile, so a verdict
never depends on the precompiled header.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time


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


def run_limited(argv, timeout, cwd=None, env=None):
    """Run argv in its own process group (with `env`, else this environment); kill the whole
    group on timeout.  Returns (returncode or None on timeout, stdout, stderr)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True, env=env)
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


PCH_HEADER = "mfppr-pch-block.h"
# Flags whose outputs are named after the source file or that instrument it: no PCH with them.
_NO_PCH_FLAGS = ("--coverage", "-fprofile-", "-ftest-coverage", "-save-temps", "-M")
_INCLUDE_DIR_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")
_KEY_ENV = ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH")


def _strip_comments(line, in_comment):
    """The code of one line without its comments, and whether a /* comment is open after it."""
    out = []
    i, n, quote = 0, len(line), None
    while i < n:
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i, in_comment = j + 2, False
            out.append(" ")
            continue
        c = line[i]
        if quote:
            out.append(line[i:i + 2] if c == "\\" else c)
            i += 2 if c == "\\" else 1
            if c == quote:
                quote = None
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            i, in_comment = i + 2, True
            continue
        if c in "\"'":
            quote = c
        out.append(c)
        i += 1
    return "".join(out), in_comment


def include_block(text):
    """(block, lines): the longest prefix of `text` (a str) made of blank lines, comments and
    preprocessor lines that ends outside any comment, continuation and #if, and its line count."""
    in_comment, cont, depth = False, False, 0
    best, best_lines, pos, count = 0, 0, 0, 0
    parts = text.split("\n")  # the compiler's lines: not str.splitlines (\f, \x1c, ... split there)
    for line in [p + "\n" for p in parts[:-1]] + [parts[-1]]:
        code, in_comment_after = _strip_comments(line, in_comment)
        stripped = code.strip()
        if cont:
            directive = None
        elif stripped.startswith("#"):
            directive = stripped[1:].lstrip().split("(")[0].split()
            directive = directive[0] if directive else ""
        elif stripped:
            break
        else:
            directive = None
        if directive in ("if", "ifdef", "ifndef"):
            depth += 1
        elif directive == "endif":
            depth -= 1
        cont = (cont or directive is not None) and line.rstrip("\r\n").endswith("\\")
        in_comment = in_comment_after
        pos += len(line)
        count += 1
        if not in_comment and not cont and depth == 0:
            best, best_lines = pos, count
    return text[:best], best_lines


def _quoted_includes(block):
    """Names of the block's `#include "..."` lines, or None when an include is neither "..." nor
    <...> (a macro) or the block asks __has_include: then the block is not precompiled."""
    names = []
    for line in block.splitlines():
        code = _strip_comments(line, False)[0].strip()
        if "__has_include" in code:
            return None
        if not code.startswith("#"):
            continue
        rest = code[1:].lstrip()
        for kw in ("include_next", "include", "import"):
            if rest.startswith(kw):
                arg = rest[len(kw):].strip()
                if arg.startswith('"') and arg.count('"') >= 2:
                    names.append(arg[1:arg.index('"', 1)])
                elif not arg.startswith("<"):
                    return None
                break
    return names


def _relative_include_dir(flags):
    """Whether an include dir is relative (so it means another dir in another cwd)."""
    prev = None
    for f in flags:
        if prev in _INCLUDE_DIR_FLAGS and not os.path.isabs(f):
            return True
        if f.startswith("-I") and len(f) > 2 and not os.path.isabs(f[2:]):
            return True
        prev = f
    return False


def _deps(path):
    """The prerequisites in a make rule written by -MD (the target dropped)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read().replace("\\\n", " ")
    words, cur, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in " #":
            cur.append(text[i + 1])
            i += 2
            continue
        if c == "$" and text.startswith("$$", i):
            cur.append("$")
            i += 2
            continue
        if c.isspace():
            if cur:
                words.append("".join(cur))
                cur = []
        else:
            cur.append(c)
        i += 1
    if cur:
        words.append("".join(cur))
    return [w for w in words[1:] if not w.endswith(":")]


def _stamp(path):
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns]


class _Pch:
    """The precompiled include block of one compile: `use()` gives the argv pieces and writes
    the rest of the source, or None (compile plainly)."""

    def __init__(self, cache, cxx, flags, incs, ldflags, source):
        self.cache, self.cxx, self.flags, self.incs = cache, cxx, flags, incs
        self.ldflags, self.source = ldflags, source
        self.rest = None

    def _key(self, block):
        exe = shutil.which(self.cxx[0])
        if exe is None:
            return None
        rc, out, _ = run_limited(self.cxx + ["--version"], 30)
        if rc != 0:
            return None
        h = hashlib.blake2b(digest_size=16)
        parts = [os.path.realpath(exe), out] + self.cxx + ["--"] + self.flags + ["--"] + \
            self.incs + ["--"] + self.ldflags + ["--"] + \
            ["%s=%s" % (k, os.environ.get(k, "")) for k in _KEY_ENV]
        if _relative_include_dir(self.flags + self.incs + self.ldflags):
            parts.append("cwd=" + os.getcwd())
        for p in parts:
            b = p.encode("utf-8", "surrogateescape")
            h.update(b"%d:" % len(b) + b)
        h.update(block.encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def use(self):
        if any(f.startswith(bad) for f in self.flags + self.incs + self.ldflags
               for bad in _NO_PCH_FLAGS):
            return None
        with open(self.source, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        block, lines = include_block(text)
        names = _quoted_includes(block)
        if not block.strip() or names is None:
            return None
        src_dir = os.path.dirname(self.source)
        if any(n.startswith(PCH_HEADER) or n == "deps.json" or
               os.path.exists(os.path.join(src_dir, n)) for n in names):
            return None  # the candidate's own directory would resolve the include differently
        key = self._key(block)
        if key is None:
            return None
        final = os.path.join(self.cache, "pch-" + key)
        if not self._valid(final) and not self._build(final, block):
            return None
        self.rest = os.path.join(src_dir, ".mfppr-pch-" + os.path.basename(self.source))
        quoted = self.source.replace("\\", "\\\\").replace('"', '\\"')
        with open(self.rest, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write('#line %d "%s"\n' % (lines + 1, quoted))
            f.write(text[len(block):])
        return ["-include", os.path.join(final, PCH_HEADER), "-Winvalid-pch", self.rest]

    def cleanup(self):
        if self.rest:
            try:
                os.unlink(self.rest)
            except OSError:
                pass

    def _valid(self, final):
        """Whether the built block in `final` exists and its headers are unchanged; a stale one
        is moved away (the next candidate with the block rebuilds it)."""
        try:
            with open(os.path.join(final, "deps.json"), encoding="utf-8") as f:
                deps = json.load(f)
        except (OSError, ValueError):
            return False
        try:
            if all(_stamp(p) == s for p, s in deps):
                return True
        except OSError:
            pass
        gone = "%s.stale-%d" % (final, os.getpid())
        try:
            os.rename(final, gone)
            shutil.rmtree(gone, ignore_errors=True)
        except OSError:
            pass
        return False

    def _build(self, final, block):
        """Build the block into `final` on the second sighting of its key, by one process;
        True once `final` is there."""
        seen = final + ".seen"
        if os.path.exists(final + ".failed") or _create_excl(seen):
            return False  # the first candidate with a block compiles plainly: it may be the only one
        lock = final + ".lock"
        if not _create_excl(lock):
            try:
                age = time.time() - os.stat(lock).st_mtime
            except OSError:
                return False
            if age < env_float("COMPILE_TIMEOUT", 60) + 30:
                return False  # someone builds it: compile plainly meanwhile
            try:
                os.unlink(lock)
            except OSError:
                return False
            if not _create_excl(lock):
                return False
        work = "%s.build-%d" % (final, os.getpid())
        try:
            os.mkdir(work)
            header = os.path.join(work, PCH_HEADER)
            with open(header, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(block)
            dep_file = os.path.join(work, "deps.d")
            argv = self.cxx + self.flags + ["-DEXECUTE=1"] + self.incs + self.ldflags + \
                ["-x", "c++-header", header, "-o", header + ".gch", "-MD", "-MF", dep_file]
            rc, _, err = run_limited(argv, env_float("COMPILE_TIMEOUT", 60))
            deps = [d for d in _deps(dep_file) if os.path.basename(d) != PCH_HEADER] \
                if rc == 0 else []
            if rc != 0 or not deps or any(not os.path.isabs(d) for d in deps):
                _create_excl(final + ".failed")
                first = (err or "").strip().splitlines()[:1]
                warn_once(self.cache, "cannot precompile the include block (%s); compiling plainly"
                          % (first[0] if first else "status %s" % rc))
                return False
            with open(os.path.join(work, "deps.json"), "w", encoding="utf-8") as f:
                json.dump([[d, _stamp(d)] for d in deps], f)
            os.unlink(dep_file)
            os.rename(work, final)
            work = None
            return True
        except OSError as e:
            warn_once(self.cache, "cannot precompile the include block (%s); compiling plainly" % e)
            return os.path.isdir(final) and self._valid(final)
        finally:
            if work is not None:
                shutil.rmtree(work, ignore_errors=True)
            try:
                os.unlink(lock)
            except OSError:
                pass


def _create_excl(path):
    """Create `path` if it does not exist: True when this call created it."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except OSError:
        return False


def warn_once(cache, msg):
    """Log `msg` if no warning was logged for this cache directory yet."""
    if _create_excl(os.path.join(cache, "warned")):
        log(msg)


def pch_cache():
    """The cache directory for precompiled blocks, or None (MFPPR_CACHE_DIR unset, MFPPR_PCH=0,
    or the directory cannot be made)."""
    cache = os.environ.get("MFPPR_CACHE_DIR", "")
    if not cache or os.environ.get("MFPPR_PCH", "1").strip() == "0":
        return None
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError:
        return None
    return os.path.abspath(cache)


# A value knockout's pairs `record way`, defined in its own text (mfppr's value localiser).
_VALUE_FIXES = re.compile(rb'^#define MFPPR_VALUE_FIXES "([0-9 ]*)"\n', re.M)


def _kept_build(source, argv):
    """Where the build of `source` by `argv` (the compiler command but source and output) is kept:
    beside the probe log of a test mfppr instrumented (see the module's doc), named by a hash of
    the source's bytes but its value knockout's define, and of the command; None for any other
    source.  The knockout's pairs then reach the build, kept or not, through the environment
    (MFPPR_VALUE_FIXES, empty for none), which the probes' runtime reads before its define."""
    try:
        with open(source, "rb") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(rb'^#define MFPPR_VALUE_LOG "([^"\\\n]*)"$', text, re.M)
    if not m:
        return None
    folder = os.path.dirname(m.group(1).decode("utf-8", "surrogateescape"))
    if not os.path.isdir(folder):
        return None
    fixes = _VALUE_FIXES.search(text)
    os.environ["MFPPR_VALUE_FIXES"] = fixes.group(1).decode() if fixes else ""
    h = hashlib.sha256(_VALUE_FIXES.sub(b"", text))
    for word in argv:
        h.update(b"\0" + word.encode("utf-8", "surrogateescape"))
    return os.path.join(folder, "build-" + h.hexdigest()[:32])


def _reuse(kept, exe):
    """Copy the kept build `kept` to `exe`; whether it was there."""
    try:
        shutil.copy2(kept, exe)
        return True
    except OSError:
        return False


def _keep(exe, kept):
    """Keep a copy of the build `exe` at `kept` (atomically; a failure only costs a rebuild)."""
    part = "%s.%d.part" % (kept, os.getpid())
    try:
        shutil.copy2(exe, part)
        os.replace(part, kept)
    except OSError:
        try:
            os.unlink(part)
        except OSError:
            pass


def compile_test(source, exe_name="mfppr_candidate", cxxflags=None):
    """Compile source into ./exe_name; return the executable path or None.  With a cache
    directory, try the precompiled include block first and compile plainly if that fails.  An
    instrumented test's build is reused when kept (see the module's doc)."""
    cxx = shlex.split(os.environ.get("CXX", "g++"))
    flags = shlex.split(cxxflags if cxxflags is not None else os.environ.get("CXXFLAGS", "-std=c++17 -O0 -w"))
    incs = []
    for d in include_dirs(source):
        incs += ["-I", d]
    incs += shlex.split(os.environ.get("MFPPR_CXXFLAGS", ""))  # part of the PCH key with incs
    exe = os.path.join(os.getcwd(), exe_name)
    ldflags = shlex.split(os.environ.get("MFPPR_LDFLAGS", "")) + shlex.split(os.environ.get("LDFLAGS", ""))
    tail = ["-o", exe] + ldflags + shlex.split(os.environ.get("LIBS", ""))
    head = cxx + flags + ["-DEXECUTE=1"] + incs
    kept = _kept_build(source, head + tail[2:])  # the source by its bytes, not its path
    if kept is not None and _reuse(kept, exe):
        return exe
    built = _compile(source, head, tail, cxx, flags, incs, ldflags)
    if built is not None and kept is not None:
        _keep(built, kept)
    return built


def _compile(source, head, tail, cxx, flags, incs, ldflags):
    """The compile of `compile_test`: the executable path (tail's `-o`) or None (logged)."""
    exe = tail[1]
    timeout = env_float("COMPILE_TIMEOUT", 60)
    cache = pch_cache()
    if cache is not None and cxx:
        pch = _Pch(cache, cxx, flags, incs, ldflags, source)
        try:
            middle = pch.use()
            if middle is not None and run_limited(head + middle + tail, timeout)[0] == 0:
                return exe
        except (OSError, ValueError):
            pass
        finally:
            pch.cleanup()
    argv = head + [source] + tail
    rc, _, err = run_limited(argv, timeout)
    if rc is None:
        log("compile timed out: %s" % " ".join(argv))
        return None
    if rc != 0:
        first = next((l for l in err.splitlines() if "error" in l), err.strip().splitlines()[:1])
        log("compile error: %s" % (first if isinstance(first, str) else " ".join(first)))
        return None
    return exe


def run_test(exe, timeout=None, env=None):
    """(status, stdout, stderr); status = exit code, 128+signal, or None on timeout."""
    rc, out, err = run_limited([exe], timeout if timeout is not None else env_float("RUN_TIMEOUT", 10),
                               cwd=os.getcwd(), env=env)
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


def reference_env():
    """REFERENCE_ENV: the environment of the reference run, this one changed by shell words
    `K=V` (`K=` sets K to empty); None when unset."""
    words = os.environ.get("REFERENCE_ENV")
    if words is None:
        return None
    env = dict(os.environ)
    for word in shlex.split(words):
        key, sep, value = word.partition("=")
        if not sep or not key:
            log("REFERENCE_ENV: %r is not K=V" % word)
            sys.exit(2)
        env[key] = value
    return env


def reference_passes(source):
    """Differential mode: the reference run must exit 0.  With REFERENCE_CXXFLAGS the candidate
    is compiled again with those flags instead of CXXFLAGS (a fixed library build); with only
    REFERENCE_ENV the candidate's own executable runs again in that environment (a fault switched
    off by an environment variable, e.g. an LD_PRELOAD shim's).  Neither set: no reference run."""
    ref = os.environ.get("REFERENCE_CXXFLAGS")
    env = reference_env()
    if ref is None and env is None:
        return True
    if ref is not None:
        exe = compile_test(source, "mfppr_reference", ref)
        if exe is None:
            log("reference build failed to compile")
            return False
    else:
        exe = os.path.join(os.getcwd(), "mfppr_candidate")
    status, _, _ = run_test(exe, env=env)
    if status != 0:
        log("reference build does not pass (status %s): a slip, not the library's fault" % status)
        return False
    return True


def setup_tmp():
    """Keep temporaries of the compiler inside cwd when TMPDIR is not set."""
    if not os.environ.get("TMPDIR"):
        os.environ["TMPDIR"] = os.getcwd()
    tempfile.tempdir = None
