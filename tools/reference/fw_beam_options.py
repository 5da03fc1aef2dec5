#!/usr/bin/env python3
"""faster-whisper's transcripts with patience, length_penalty, repetition_penalty,
no_repeat_ngram_size, max_new_tokens and prompt_reset_on_temperature at values other than their
defaults (issue #37 part 2), on the tiny.en weights.

Each run is faster-whisper 1.2.1's WhisperModel.transcribe on models/faster-whisper-tiny.en
(compute_type float32, cpu, language "en", the other options at faster-whisper's defaults: the
temperature fallback 0, 0.2, ..., 1.0, suppress_tokens [-1], condition_on_previous_text) with one
option changed: greedy (beam_size 1) for repetition_penalty, no_repeat_ngram_size and
max_new_tokens, beam 5 for patience and length_penalty, and prompt_reset_on_temperature on
jfk.wav three times over at beam 5, where every temperature of window 1 fails and faster-whisper
reports the attempt it keeps (T = 0's) at the final temperature 1.0: at 1.0 (not above it) the
prompt is kept for window 2, at the default 0.5 it is reset. Then the same options with a prefix
(faster-whisper's prefix: forced tokens, which CTranslate2's RepetitionPenalty and NoRepeatNgram
read as earlier output and its max_length counts). A run is recorded with its default-option twin
(the same audio, beam_size and prefix), so a test can see the option changed the output (or that
it did not).

Attempts at T > 0 are random (CTranslate2's sampler): every run is repeated with SEEDS seeds
(ctranslate2.set_random_seed) and the script stops with an error unless all keep the same tokens.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1` and tools/get_model.sh):
  python3 tools/reference/fw_beam_options.py [--out testdata/faster_whisper_beam_options.json]
"""

import argparse
import json
import os
import sys
import wave

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = 3

PREFIX_SHORT = "And so my fellow Americans"
PREFIX_LONG = "And so my fellow Americans, ask not what your country can do for you"

# (audio, options); the audio is jfk.wav ("jfk") or its 176000 samples repeated 3 times ("jfk_x3").
RUNS = [
    ("jfk", {"beam_size": 1}),
    ("jfk", {"beam_size": 1, "repetition_penalty": 1.5}),
    ("jfk", {"beam_size": 1, "no_repeat_ngram_size": 2}),
    ("jfk", {"beam_size": 1, "no_repeat_ngram_size": 1}),
    ("jfk", {"beam_size": 1, "max_new_tokens": 20}),
    ("jfk", {"beam_size": 5}),
    ("jfk", {"beam_size": 5, "patience": 0.5}),
    ("jfk", {"beam_size": 5, "patience": 2}),
    ("jfk", {"beam_size": 5, "length_penalty": 0}),
    ("jfk", {"beam_size": 5, "length_penalty": 2}),
    ("jfk_x3", {"beam_size": 5}),
    ("jfk_x3", {"beam_size": 5, "prompt_reset_on_temperature": 1.0}),
    # With a prefix (forced after <|0.00|>): CTranslate2's repetition penalty and n-gram ban see the
    # forced tokens (<|0.00|> and the prefix) as earlier output, and its max_length counts them.
    ("jfk", {"beam_size": 1, "prefix": PREFIX_SHORT}),
    ("jfk", {"beam_size": 1, "prefix": PREFIX_SHORT, "no_repeat_ngram_size": 1}),
    ("jfk", {"beam_size": 1, "prefix": PREFIX_SHORT, "max_new_tokens": 10}),
    ("jfk", {"beam_size": 1, "prefix": PREFIX_LONG}),
    ("jfk", {"beam_size": 1, "prefix": PREFIX_LONG, "no_repeat_ngram_size": 2}),
    ("jfk", {"beam_size": 1, "prefix": PREFIX_LONG, "repetition_penalty": 1.5}),
    ("jfk", {"beam_size": 5, "prefix": PREFIX_LONG}),
    ("jfk", {"beam_size": 5, "prefix": PREFIX_LONG, "no_repeat_ngram_size": 2}),
    ("jfk", {"beam_size": 5, "prefix": PREFIX_LONG, "repetition_penalty": 1.5}),
]


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def audio(name):
    with wave.open(os.path.join(shared_dir(), "data", "jfk.wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    assert x.size == 176000, x.size
    return (np.tile(x, 3) if name == "jfk_x3" else x).astype(np.float32) / 32768.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "faster_whisper_beam_options.json"))
    args = ap.parse_args()
    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"fw_beam_options: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    if not os.path.isfile(os.path.join(args.model_dir, "model.bin")):
        sys.exit(f"fw_beam_options: no {args.model_dir}/model.bin: run tools/get_model.sh")
    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    runs = []
    for name, options in RUNS:
        results = []
        for seed in range(SEEDS):
            ctranslate2.set_random_seed(seed)
            segments, _ = model.transcribe(audio(name), language="en", **options)
            results.append([{"start": s.start, "end": s.end, "tokens": list(s.tokens), "text": s.text}
                            for s in segments])
        if any([s["tokens"] for s in r] != [s["tokens"] for s in results[0]] for r in results[1:]):
            sys.exit(f"fw_beam_options: {name} {options}: the seeds keep different tokens, no reference")
        print(name, options, "".join(s["text"] for s in results[0]))
        runs.append({"audio": name, "options": options, "segments": results[0]})
    out = {
        "source": "tools/reference/fw_beam_options.py",
        "model": "tiny.en (models/faster-whisper-tiny.en), compute_type float32",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "seeds": SEEDS,
        "runs": runs,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}: {len(runs)} runs")


if __name__ == "__main__":
    main()
