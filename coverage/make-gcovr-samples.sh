#!/usr/bin/env bash
# Regenerate the real gcovr JSON samples in coverage/gcovr/ from coverage/src: for each gcovr
# release below (installed from PyPI into a virtual environment under $VENVS, default
# /tmp/mfppr-gcovr-venvs), `gcovr --json --decisions --calls` of the suite run (`prog 1 3`) and of
# the fuzz run (`prog -2 200`), as coverage/make-samples.sh runs them. Needs g++, gcov, python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venvs=${VENVS:-/tmp/mfppr-gcovr-venvs}
releases=(7.0 8.0 8.3 8.4 8.8)
work=/tmp/mfppr-cov-sample.zQkZyx
[ ! -e "$work" ] || { echo "error: $work exists; remove it first" >&2; exit 1; }
mkdir "$work"
trap 'rm -rf "$work"' EXIT
cp "$here/src/tiny.hpp" "$here/src/main.cpp" "$work/"
(cd "$work" && g++ --coverage -O0 -o prog main.cpp)
mkdir -p "$here/gcovr"
for rel in "${releases[@]}"; do
  venv=$venvs/gcovr-$rel
  [ -x "$venv/bin/gcovr" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q "gcovr==$rel"; }
  for run in suite fuzz; do
    case $run in suite) args=(1 3) ;; fuzz) args=(-2 200) ;; esac
    (cd "$work" && rm -f ./*.gcda && ./prog "${args[@]}" >/dev/null &&
      "$venv/bin/gcovr" -r . --json "$here/gcovr/$run-gcovr-$rel.json" --decisions --calls >/dev/null 2>&1)
  done
  fmt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gcovr/format_version"])' \
    "$here/gcovr/fuzz-gcovr-$rel.json")
  echo "gcovr $rel: format $fmt"
done
