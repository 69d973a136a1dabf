#!/usr/bin/env bash
# Regenerate the real gcov samples in coverage/gcc<N>/ from coverage/src (needs g++ and gcov).
# suite run: `prog 1 3`; fuzz run: `prog -2 200` (reaches the negative and the clamp branches).
# The build directory is always /tmp/mfppr-cov-sample.zQkZyx (recorded in the samples as
# current_working_directory; the tests use it as --source-root), created and removed here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ver="$(g++ -dumpversion | cut -d. -f1)"
out="$here/gcc$ver"
work=/tmp/mfppr-cov-sample.zQkZyx
[ ! -e "$work" ] || { echo "error: $work exists; remove it first" >&2; exit 1; }
mkdir "$work"
trap 'rm -rf "$work"' EXIT
cp "$here/src/tiny.hpp" "$here/src/main.cpp" "$work/"
rm -rf "$out" && mkdir -p "$out"
run() { # name args...
  local name="$1"; shift
  (cd "$work" && rm -f ./*.gcda ./*.gcov ./*.gcov.json.gz && ./prog "$@" >/dev/null)
  mkdir -p "$out/$name/json" "$out/$name/text"
  # -r: only files with relative paths (our sources, not libstdc++ headers) to keep samples small.
  # -b: branch counts in the JSON documents (lines[].branches).
  (cd "$work" && gcov -r -b --json-format prog-main.gcda >/dev/null && mv prog-main.gcov.json.gz "$out/$name/json/")
  (cd "$work" && gcov -r -b --stdout --json-format prog-main.gcda > "$out/$name/stdout.jsonl")
  (cd "$work" && gcov -r -m prog-main.gcda >/dev/null && mv ./*.gcov "$out/$name/text/")
}
(cd "$work" && g++ --coverage -O0 -o prog main.cpp)
run suite 1 3
run fuzz -2 200
echo "samples written to $out (cwd recorded in them: $work)"
