#!/usr/bin/env python3
"""Batched (--batch-size N) against sequential transcription of long audio: wall time and word
error rate (issue 38 part 2).

Runs the optimized CLI (bazel build -c opt //apps/cli:cli) on long_speech.flac (210 s: LibriVox
readings of Shakespeare's sonnets 1-3, then 52 s of spontaneous speech) sequentially and with
--batch-size N, each --runs times (the best wall time and the best user + system CPU time are
reported: on a shared machine the CPU time is the steadier figure), and scores each transcript:
  - sonnets: the segments that start before --sonnets-end seconds (157.5: the readings end at
    158.7 s, and a segment of the next speaker may start at 158.2)
    against the public text of sonnets 1-3 (SONNETS below, the 1609 Quarto's words in modern
    spelling, as LibriVox's readers read them; the readers also say the numbers "1", "2", "3",
    which are not in it and count as insertions for every transcript alike);
  - all: the whole transcript against --reference (a JSON file of faster-whisper 1.2.1's
    sequential segments, {"KEY": {"segments": [[start, end, text], ...]}}, KEY given by
    --reference-key), when given.
Words are normalised as apps/stream/wer.cc does (OpenAI's basic English comparison: lowercase,
every character that is not a letter, digit or apostrophe separates words); WER = word-level
Levenshtein distance / reference words.

Usage: tools/compare/batched_long_audio.py --cli bazel-bin/apps/cli/cli -m models/ggml-tiny.en.bin
         [--beam 1] [--batch 8] [--threads 2] [--runs 1] [--audio ../shared/data/long_speech.flac]
         [--reference /tmp/fw_ref.json --reference-key tiny.en_seq_beam1] [-- extra CLI flags]
"""
import argparse
import json
import re
import resource
import subprocess
import sys
import time

SONNETS = """
From fairest creatures we desire increase, That thereby beauty's rose might never die, But as the
riper should by time decease, His tender heir might bear his memory: But thou contracted to thine
own bright eyes, Feed'st thy light's flame with self-substantial fuel, Making a famine where
abundance lies, Thy self thy foe, to thy sweet self too cruel: Thou that art now the world's fresh
ornament, And only herald to the gaudy spring, Within thine own bud buriest thy content, And tender
churl mak'st waste in niggarding: Pity the world, or else this glutton be, To eat the world's due,
by the grave and thee.
When forty winters shall besiege thy brow, And dig deep trenches in thy beauty's field, Thy youth's
proud livery so gazed on now, Will be a tatter'd weed of small worth held: Then being asked, where
all thy beauty lies, Where all the treasure of thy lusty days; To say, within thine own deep sunken
eyes, Were an all-eating shame, and thriftless praise. How much more praise deserv'd thy beauty's
use, If thou couldst answer 'This fair child of mine Shall sum my count, and make my old excuse,'
Proving his beauty by succession thine! This were to be new made when thou art old, And see thy
blood warm when thou feel'st it cold.
Look in thy glass and tell the face thou viewest Now is the time that face should form another;
Whose fresh repair if now thou not renewest, Thou dost beguile the world, unbless some mother. For
where is she so fair whose unear'd womb Disdains the tillage of thy husbandry? Or who is he so fond
will be the tomb Of his self-love, to stop posterity? Thou art thy mother's glass and she in thee
Calls back the lovely April of her prime; So thou through windows of thine age shalt see, Despite
of wrinkles this thy golden time. But if thou live, remember'd not to be, Die single and thine
image dies with thee.
"""

LINE = re.compile(r"^\[(\d+):(\d+):(\d+\.\d+) --> (\d+):(\d+):(\d+\.\d+)\]\s+(.*)$")


def words(text):
    """apps/stream/wer.cc NormalizedWords."""
    out, w = [], []
    for ch in text:
        if ch.isalnum() and ord(ch) < 0x80 or ch == "'" or ord(ch) >= 0x80:
            w.append(ch.lower() if ord(ch) < 0x80 else ch)
        elif w:
            out.append("".join(w))
            w = []
    if w:
        out.append("".join(w))
    return out


def wer(reference, hypothesis):
    r, h = words(reference), words(hypothesis)
    if not r:
        return float(len(h))
    prev = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        cur = [i] + [0] * len(h)
        for j in range(1, len(h) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] != h[j - 1]))
        prev = cur
    return prev[len(h)] / len(r)


def run_cli(args, batch):
    cmd = [args.cli, "-m", args.model, "-f", args.audio, "-t", str(args.threads), "-bs", str(args.beam),
           "-np"] + (["--batch-size", str(batch)] if batch > 1 else []) + args.extra
    best, best_cpu, segs = None, None, []
    for _ in range(args.runs):
        t = time.time()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, capture_output=True, text=True, check=True)
        dt = time.time() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        best = dt if best is None else min(best, dt)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        segs = []
        for line in p.stdout.splitlines():
            m = LINE.match(line)
            if m:
                t0 = int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3])
                segs.append((t0, m[7]))
    return best, best_cpu, segs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--audio", default="../shared/data/long_speech.flac")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--sonnets-end", type=float, default=157.5)
    ap.add_argument("--reference")
    ap.add_argument("--reference-key")
    ap.add_argument("--batched-only", action="store_true", help="skip the sequential run")
    ap.add_argument("--save", help="write each transcript's segments to SAVE.sequential.json / SAVE.batched.json")
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()
    ref_all = None
    if args.reference:
        ref_all = " ".join(s[2] for s in json.load(open(args.reference))[args.reference_key]["segments"])
    modes = (("sequential", 0), (f"batch {args.batch}", args.batch))
    for name, batch in modes[1:] if args.batched_only else modes:
        wall, cpu, segs = run_cli(args, batch)
        if args.save:
            json.dump({"wall_s": wall, "cpu_s": cpu, "segments": [[t0, None, t] for t0, t in segs]},
                      open(f"{args.save}.{'batched' if batch > 1 else 'sequential'}.json", "w"), indent=1)
        text = " ".join(t for _, t in segs)
        sonnets = " ".join(t for t0, t in segs if t0 < args.sonnets_end)
        row = f"{name:12s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  words {len(words(text)):4d}  sonnets WER {100 * wer(SONNETS, sonnets):5.2f}%"
        if ref_all is not None:
            row += f"  WER vs {args.reference_key} {100 * wer(ref_all, text):5.2f}%"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
