#!/usr/bin/env python3
"""Compares two outputs of testdata/whisper_cpp_compat/compat.c: whisper.cpp's (first) and ours.

Greedy must print identically. Beam search samples its candidates (whisper.cpp's
whisper_sample_token_topk, which our whisper.cpp rules reproduce draw for draw), so a timestamp
whose neighbours are nearly equally likely can land one or two 20 ms steps apart when the engines'
logits differ in the last bits (different matmul kernels and FFT). In the beam-search section only,
a segment's t0/t1 may differ by up to 4 cs and a timestamp token's id by up to 2; every other line
(all text tokens and segment texts included) must be identical.

Usage: compare_compat.py WHISPER_CPP_OUTPUT OURS_OUTPUT. Exit 0 when they agree (printing how many
lines were tolerated), 1 otherwise (naming the first line that differs).
"""
import re
import sys

SEGMENT = re.compile(r"^segment (\d+) t0 (\d+) t1 (\d+) text (.*)$")
TIMESTAMP_TOKEN = re.compile(r'^  token (\d+) id (\d+) text "\[_TT_(\d+)\]"$')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a = open(sys.argv[1]).read().splitlines()
    b = open(sys.argv[2]).read().splitlines()
    if len(a) != len(b):
        print("compare_compat: %d lines vs %d" % (len(a), len(b)))
        return 1
    beam, tolerated = False, 0
    for n, (x, y) in enumerate(zip(a, b), 1):
        beam = beam or x.startswith("== beam_search")
        if x == y:
            continue
        sx, sy = SEGMENT.match(x), SEGMENT.match(y)
        if (beam and sx and sy and sx.group(1) == sy.group(1) and sx.group(4) == sy.group(4)
                and abs(int(sx.group(2)) - int(sy.group(2))) <= 4
                and abs(int(sx.group(3)) - int(sy.group(3))) <= 4):
            tolerated += 1
            continue
        tx, ty = TIMESTAMP_TOKEN.match(x), TIMESTAMP_TOKEN.match(y)
        if beam and tx and ty and tx.group(1) == ty.group(1) and abs(int(tx.group(2)) - int(ty.group(2))) <= 2:
            tolerated += 1
            continue
        print("compare_compat: line %d differs: %r (whisper.cpp) vs %r (ours)" % (n, x, y))
        return 1
    print("compare_compat: %d lines agree, %d beam-search timestamp lines within tolerance" % (len(a), tolerated))
    return 0


if __name__ == "__main__":
    sys.exit(main())
