#!/usr/bin/env python3
"""Compares two outputs of testdata/whisper_cpp_compat/compat.c: whisper.cpp's (first) and ours.

Greedy must print identically. Beam search samples its candidates (whisper.cpp's
whisper_sample_token_topk, which our whisper.cpp rules reproduce draw for draw), so a timestamp
whose neighbours are nearly equally likely can land one or two 20 ms steps apart when the engines'
logits differ in the last bits (different matmul kernels and FFT). In the beam-search section only,
a segment's t0/t1 may differ by up to 4 cs and a timestamp token's id by up to 2; every other line
(all text tokens and segment texts included) must be identical.

--skip-beam leaves the beam-search section out (from its "== beam_search" line to the end): with
flash attention on, whisper.cpp 1.8.5 computes attention in F16 with the CPU's own F16 arithmetic
where it has it, so its beam search there depends on the machine (jfk.wav, beam 5: two segments
ending at 794 cs on AMD Zen 5; one segment " and so my fellow Americans ... your country" ending
at 1036 cs on an Intel Xeon with AVX512-FP16). Greedy and the -nfa runs do not.
Usage: compare_compat.py [--skip-beam] WHISPER_CPP_OUTPUT OURS_OUTPUT. Exit 0 when they agree
(printing how many lines were tolerated), 1 otherwise (naming the first line that differs).
"""
import re
import sys

SEGMENT = re.compile(r"^segment (\d+) t0 (\d+) t1 (\d+) text (.*)$")
TIMESTAMP_TOKEN = re.compile(r'^  token (\d+) id (\d+) text "\[_TT_(\d+)\]"$')


def main():
    args = sys.argv[1:]
    skip_beam = "--skip-beam" in args
    args = [x for x in args if x != "--skip-beam"]
    if len(args) != 2:
        sys.exit(__doc__)
    a = open(args[0]).read().splitlines()
    b = open(args[1]).read().splitlines()
    if skip_beam:
        a = [x for i, x in enumerate(a) if not any(y.startswith("== beam_search") for y in a[:i + 1])]
        b = [x for i, x in enumerate(b) if not any(y.startswith("== beam_search") for y in b[:i + 1])]
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
    print("compare_compat: %d lines agree, %d beam-search timestamp lines within tolerance%s"
          % (len(a), tolerated, " (beam search left out: --skip-beam)" if skip_beam else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
