#!/usr/bin/env python3
"""faster-whisper 1.2.1 with compute_type="int8" on tiny.en: jfk.wav's segments, greedy and beam 5.

The reference for ggml_whisper's compute_type="int8" (weights converted to Q8_0 at load).
CTranslate2's int8 keeps one float scale per output row (per-channel) and quantizes the
activations to int8 too, ggml's Q8_0 one fp16 scale per 32 weights with F32 activations: the
numbers differ, so the texts are compared, not asserted equal where they are not
(python/tests/test_ggml_whisper.py says which).

Settings: faster-whisper's transcribe defaults (temperature fallback, conditioning on previous
text, suppress_blank, suppress_tokens=[-1]) with beam_size 1 and 5, cpu_threads=2.
Needs `pip install faster-whisper==1.2.1` and models/faster-whisper-tiny.en (tools/setup.sh).

Usage (from the repo root):
  python3 tools/reference/faster_whisper_int8.py [--model_dir DIR] [--audio WAV] [--out JSON]
"""
import argparse
import json

from faster_whisper import WhisperModel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", default="models/faster-whisper-tiny.en")
    ap.add_argument("--audio", default="../shared/data/jfk.wav")
    ap.add_argument("--out", default="testdata/jfk_faster_whisper_int8.json")
    args = ap.parse_args()
    model = WhisperModel(args.model_dir, device="cpu", compute_type="int8", cpu_threads=2)
    runs = []
    for beam_size in (1, 5):
        segments, _ = model.transcribe(args.audio, beam_size=beam_size)
        runs.append({"beam_size": beam_size, "segments": [
            {"start": round(s.start, 2), "end": round(s.end, 2), "text": s.text,
             "tokens": [t for t in s.tokens if t < 50257]}  # text tokens (timestamps dropped)
            for s in segments]})
    with open(args.out, "w") as f:
        json.dump({"model": args.model_dir, "audio": "jfk.wav", "compute_type": "int8", "runs": runs}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
