#!/usr/bin/env python3
"""Encoder and decoder times of the larger Whisper shapes: our //tools:bench against whisper.cpp
1.8.5's whisper-bench, on the same random-weight model files, interleaved.

We ship one real model (tiny.en); the larger shapes (base, small, medium, large, and the 128-mel
large-v3 and large-v3-turbo) are made by //tools:make_model with random weights (the timings are those of real models of that shape; the
text would be noise, and neither bench decodes text). Both programs run whisper.cpp's bench
sequence on the file: one 30 s encoder window (whisper_set_mel zeros), 256 single-token decodes,
64 five-token batches, 16 prompts of 256 tokens; each prints whisper_print_timings lines, which
this script reads ("encode time = X ms / N runs (P ms per run)").

  python3 tools/compare/compare_bench.py                          # base and small, 2 threads, 3 rounds
  python3 tools/compare/compare_bench.py --shapes base,small,medium --threads 1,2 --rounds 3
  python3 tools/compare/compare_bench.py --shapes large-v3-turbo --type q4_0 --rounds 1

Columns: the median over rounds of each program's per-run time (ms) and x = whisper.cpp / ours
(above 1: ours faster), for encode (per window), decode (per token), batchd (per token of the
5-token batches) and prompt (per token). Both flash attention (whisper-bench's default in 1.8.5,
and ours). Models are cached in --models-dir (made once per shape and type, e.g. 1.5 GB for
medium F16; making medium takes about a minute and 3 GB of memory; large-v3 F16 3.1 GB, about a minute and
3.7 GB).

Needs: bazel; tools/whisper_cpp/build_whisper_cpp.sh (builds whisper-bench from the PyPI sdist
pywhispercpp==1.5.1 with GGML_NATIVE=ON; cached).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHASES = ("encode", "decode", "batchd", "prompt")
SHAPES = ("tiny", "base", "small", "medium", "large", "large-v3", "large-v3-turbo")  # make_model --shape
MEL_FILTERS = os.path.join(REPO, "models", "mel_filters.npz")  # written by tools/get_model.sh
LINE = re.compile(r"whisper_print_timings:\s+(\w+) time =\s+([0-9.]+) ms /\s+(\d+) runs \(\s*([0-9.]+) ms per run\)")


def bazel_bin(bazel):
    return subprocess.run([bazel, "info", "-c", "opt", "bazel-bin"], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-1]


def build_ours(bazel):
    """Our bench and make_model, built -c opt; private copies (a later build must not swap them)."""
    subprocess.run([bazel, "build", "-c", "opt", "//tools/bench", "//tools/make_model"], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = bazel_bin(bazel)
    tmp = tempfile.mkdtemp(prefix="compare_bench_")
    bench = shutil.copy2(os.path.join(out, "tools", "bench", "bench"), os.path.join(tmp, "bench"))
    make = shutil.copy2(os.path.join(out, "tools", "make_model", "make_model"), os.path.join(tmp, "make_model"))
    return bench, make


def build_whisper_bench():
    script = os.path.join(REPO, "tools", "whisper_cpp", "build_whisper_cpp.sh")
    p = subprocess.run([script], cwd=REPO, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_bench: {script} failed:\n{p.stderr[-3000:]}")
    prefix = p.stdout.strip().splitlines()[-1]
    dst = os.path.join(tempfile.mkdtemp(prefix="compare_bench_wcpp_"), "whisper-bench")
    shutil.copy2(os.path.join(prefix, "bin", "whisper-bench"), dst)
    return dst


def model_file(make_model, models_dir, shape, wtype):
    path = os.path.join(models_dir, f"ggml-{shape}-random-{wtype}.bin")
    if not os.path.exists(path):
        os.makedirs(models_dir, exist_ok=True)
        print(f"compare_bench: making {path}", file=sys.stderr, flush=True)
        subprocess.run([make_model, "--shape", shape, "--type", wtype, "--out", path, "--mel_filters", MEL_FILTERS],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def run_bench(binary, model, threads):
    """Per-run ms of each phase, from one run of a whisper-bench-like program."""
    p = subprocess.run([binary, "-m", model, "-t", str(threads)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_bench: {binary} -m {model} -t {threads} exited {p.returncode}:\n{p.stderr[-2000:]}")
    got = {}
    for m in LINE.finditer(p.stderr):
        if m.group(1) in PHASES and int(m.group(3)) > 0:
            got[m.group(1)] = float(m.group(4))
    missing = [ph for ph in PHASES if ph not in got]
    if missing:
        sys.exit(f"compare_bench: no {', '.join(missing)} timings in the output of {binary}:\n{p.stderr[-2000:]}")
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="base,small", help="comma-separated: " + ", ".join(SHAPES))
    ap.add_argument("--type", default="f16", help="weight type of the model files (f16, q8_0, q5_0, ...)")
    ap.add_argument("--threads", default="2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    ap.add_argument("--models-dir", default=os.path.expanduser("~/.cache/ggml_whisper/random-models"))
    ap.add_argument("--bazel", default=os.environ.get("BAZEL", "bazel"))
    ap.add_argument("--json", help="write every run here")
    args = ap.parse_args()
    unknown = [s for s in args.shapes.split(",") if s and s not in SHAPES]
    if unknown:
        ap.error(f"--shapes: unknown shape(s) {', '.join(unknown)} (expected {', '.join(SHAPES)})")

    bench, make_model = build_ours(args.bazel)
    wbench = build_whisper_bench()
    shapes = [s for s in args.shapes.split(",") if s]
    threads = [int(t) for t in args.threads.split(",") if t]
    models = {s: model_file(make_model, args.models_dir, s, args.type) for s in shapes}

    runs = []
    for r in range(args.rounds):
        for s in shapes:
            for t in threads:
                for system, binary in (("ours", bench), ("whisper.cpp", wbench)):
                    runs.append({"round": r, "shape": s, "threads": t, "system": system,
                                 **run_bench(binary, models[s], t)})
        print(f"compare_bench: round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)

    head = "| shape | th |" + "".join(f" {ph} ours ms | {ph} whisper.cpp ms | x {ph} |" for ph in PHASES)
    print(head)
    print("|" + "---|" * (2 + 3 * len(PHASES)))
    for s in shapes:
        for t in threads:
            row = f"| {s} {args.type} | {t} |"
            for ph in PHASES:
                med = {}
                for system in ("ours", "whisper.cpp"):
                    med[system] = statistics.median(
                        x[ph] for x in runs if x["shape"] == s and x["threads"] == t and x["system"] == system)
                row += f" {med['ours']:.2f} | {med['whisper.cpp']:.2f} | {med['whisper.cpp'] / med['ours']:.2f} |"
            print(row)


if __name__ == "__main__":
    main()
