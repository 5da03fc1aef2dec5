#!/usr/bin/env python3
"""Benchmark (not a test) of tools/batch/transcribe_ray.py: files/min and real-time factor with 1
and 2 workers on a local Ray instance, against the same files done by the CLI in a shell loop.

    python3 tools/batch/bench_ray.py [--files 40] [--cli bazel-bin/apps/cli/cli] [--model ...]

The files are cuts of jfk.wav (2 to 4 s). Needs ggml_whisper importable (pip install ./python).
Prints one line per configuration; compare ratios measured in one run, not absolute times.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def make_files(jfk, n, out_dir):
    with wave.open(jfk) as w:
        pcm = w.readframes(w.getnframes())
    total = 0.0
    for i in range(n):
        dur = 2.0 + (i % 3)
        off = (i * 1.3) % (11.0 - dur)
        with wave.open(os.path.join(out_dir, "f%03d.wav" % i), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(pcm[int(off * 16000) * 2:int((off + dur) * 16000) * 2])
        total += dur
    return total


def report(name, n, audio_s, wall):
    print("%-28s %4d files  %7.1f s wall  %6.1f files/min  real-time factor %.4f" %
          (name, n, wall, 60.0 * n / wall, wall / audio_s), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--cli", default=os.path.join(ROOT, "bazel-bin", "apps", "cli", "cli"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "ggml-tiny.en.bin"))
    ap.add_argument("--jfk", default=os.path.join(ROOT, "..", "shared", "data", "jfk.wav"))
    a = ap.parse_args()
    work = tempfile.mkdtemp()
    in_dir = os.path.join(work, "in")
    os.makedirs(in_dir)
    audio_s = make_files(a.jfk, a.files, in_dir)
    files = sorted(os.listdir(in_dir))

    t = time.time()
    subprocess.run(["sh", "-c", 'for f in "$@"; do "%s" -m "%s" -f "$f" -t 1 -np > /dev/null || exit 1; done' %
                    (a.cli, a.model), "sh"] + [os.path.join(in_dir, f) for f in files], check=True)
    report("CLI shell loop, -t 1", len(files), audio_s, time.time() - t)

    for workers in (1, 2):
        out = os.path.join(work, "out%d" % workers)
        t = time.time()
        subprocess.run([sys.executable, os.path.join(HERE, "transcribe_ray.py"), "--input", in_dir, "--output", out,
                        "--model", a.model, "--workers", str(workers), "--threads", "1"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        report("Ray, %d worker(s) x 1 thread" % workers, len(files), audio_s, time.time() - t)


if __name__ == "__main__":
    main()
