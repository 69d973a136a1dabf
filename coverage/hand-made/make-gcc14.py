#!/usr/bin/env python3
"""Write the hand-made GCC 14 samples {suite,fuzz}-gcc14-v2.gcov.json from the real GCC 12 ones.

No GCC 14 was at hand (Debian 12 ships GCC 12), so the documents GCC 14's
`gcov --json-format --conditions` writes for `g++ -fcondition-coverage` builds are made here after
the JSON description in GCC 14's "Invoking gcov" manual: format_version "2", and per line
`block_ids`, `calls` ({source_block_id, destination_block_id, returned}) and `conditions`
({count, covered, not_covered_false, not_covered_true}). The conditions are derived from the real
branch counts (`gcov -b`) of the one-term `if` lines of tiny.hpp (10 and 15): the fallthrough
edge is the `then` edge, so term 0 was seen true when it was taken and false when the other edge
was. Calls are given to main.cpp's calling lines, `returned` = the line's count. Rerun after
coverage/make-samples.sh:  python3 coverage/hand-made/make-gcc14.py
"""
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
IF_LINES = {("tiny.hpp", 10), ("tiny.hpp", 15)}
CALL_LINES = {("main.cpp", 10), ("main.cpp", 12), ("main.cpp", 13)}


def convert(doc):
    doc["format_version"] = "2"
    doc["gcc_version"] = "14.2.0"
    block = 2
    for f in doc["files"]:
        for line in f["lines"]:
            key = (f["file"], line["line_number"])
            line["block_ids"] = [block]
            line["calls"] = []
            line["conditions"] = []
            if key in CALL_LINES:
                line["calls"].append({"source_block_id": block, "destination_block_id": block + 1,
                                      "returned": line["count"]})
            if key in IF_LINES and len(line["branches"]) == 2:
                then = next(b for b in line["branches"] if b["fallthrough"])
                other = next(b for b in line["branches"] if not b["fallthrough"])
                line["conditions"].append({
                    "count": 2,
                    "covered": int(then["count"] > 0) + int(other["count"] > 0),
                    "not_covered_true": [] if then["count"] > 0 else [0],
                    "not_covered_false": [] if other["count"] > 0 else [0],
                })
            block += 2
    return doc


for run in ("suite", "fuzz"):
    with gzip.open(os.path.join(HERE, "..", "gcc12", run, "json", "prog-main.gcov.json.gz")) as src:
        doc = convert(json.load(src))
    with open(os.path.join(HERE, f"{run}-gcc14-v2.gcov.json"), "w") as out:
        json.dump(doc, out, indent=1)
        out.write("\n")
