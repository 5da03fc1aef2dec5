#!/usr/bin/env python3
"""faster-whisper's transcript of jfk.wav three times over (33 s), where every temperature fails.

Issue #37 part 1: when every temperature of the fallback fails its checks, faster-whisper 1.2.1
(transcribe.py generate_with_fallback) keeps the attempt with the highest avg_logprob among those
whose compression ratio is at most 2.4, else among all. On this clip, beam 5, window 1 (0-29 s)
repeats the sentence (compression ratio 3.01 at T = 0) and every attempt (T = 0, 0.2, ..., 1.0)
is above 2.4, so the kept one is the attempt of highest avg_logprob: the beam-search attempt at 0.

The attempts at T > 0 are random (CTranslate2's sampler), so this script runs the transcription
with several seeds (ctranslate2.set_random_seed) and stops with an error unless every run keeps
the same tokens: the reference is then independent of the sampling. It logs each window's
attempts (temperature, avg_logprob as faster-whisper computes it, compression ratio).

Clip: the 176000 int16 samples of ../shared/data/jfk.wav repeated 3 times (what
whisper/e2e/cli_long_audio_test.cc builds). Settings: tiny.en CTranslate2 directory
(models/faster-whisper-tiny.en), compute_type float32, cpu, language "en", beam_size 5, the other
options at faster-whisper's defaults (suppress_tokens [-1], condition_on_previous_text, the
temperature list 0, 0.2, ..., 1.0).

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/fw_fallback_repeat.py [--out testdata/jfk_x3_faster_whisper_beam5.json]
  python3 tools/reference/fw_fallback_repeat.py --compression_ratio_threshold 4 \
      --out testdata/jfk_x3_faster_whisper_beam5_cr4.json
"""

import argparse
import json
import os
import wave

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPEATS = 3
SEEDS = 5


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def clip():
    with wave.open(os.path.join(shared_dir(), "data", "jfk.wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    assert x.size == 176000, x.size
    return np.tile(x, REPEATS)


def recording(model, calls):
    """Wraps model.model so that every generate() call appends its prompt, temperature, tokens,
    avg_logprob (faster-whisper's, from CTranslate2's length-normalized score), compression ratio
    and no-speech probability to `calls`."""
    from faster_whisper.transcribe import get_compression_ratio

    inner = model.model

    class Recorder:
        def generate(self, features, prompts, **kw):
            result = inner.generate(features, prompts, **kw)
            tokens = [int(t) for t in result[0].sequences_ids[0]]
            n = len(tokens)
            calls.append({
                "prompt": [int(t) for t in prompts[0]],
                "temperature": float(kw.get("sampling_temperature", 0.0)),
                "tokens": tokens,
                "avg_logprob": float(result[0].scores[0]) * n ** kw["length_penalty"] / (n + 1),
                "compression_ratio": get_compression_ratio(
                    model.hf_tokenizer.decode([t for t in tokens if t < 50256]).strip()),
                "no_speech_prob": float(result[0].no_speech_prob),
            })
            return result

        def __getattr__(self, name):
            return getattr(inner, name)

    return Recorder()


def run_seeds(model, calls, audio, threshold):
    """[(segments, windows)] for seeds 0 .. SEEDS - 1; windows: each window's generate() calls."""
    import ctranslate2

    runs = []
    for seed in range(SEEDS):
        ctranslate2.set_random_seed(seed)
        calls.clear()
        segments, _ = model.transcribe(audio, beam_size=5, language="en", compression_ratio_threshold=threshold)
        # seek, temperature, avg_logprob and compression_ratio are the segment's window's
        # (whisper_ggml_full_get_segment_window, Python Segment's fields).
        segs = [{"start": s.start, "end": s.end, "tokens": list(s.tokens), "text": s.text, "seek": s.seek,
                 "temperature": s.temperature, "avg_logprob": s.avg_logprob, "compression_ratio": s.compression_ratio}
                for s in segments]
        windows = []
        for c in calls:
            if c["temperature"] == 0.0:
                windows.append([])
            windows[-1].append(c)
        runs.append((segs, windows))
        for i, w in enumerate(windows):
            print(f"seed {seed} window {i}: " + ", ".join(
                f"T {a['temperature']:.1f} avg {a['avg_logprob']:.4f} cr {a['compression_ratio']:.3f}" for a in w))
    return runs


def main():
    import ctranslate2
    import faster_whisper
    from faster_whisper import WhisperModel

    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "jfk_x3_faster_whisper_beam5.json"))
    # Another value checks the option itself (issue #37 part 2): at 4.0 window 1's attempt at T = 0
    # (ratio 3.01) passes and is kept -- testdata/jfk_x3_faster_whisper_beam5_cr4.json.
    ap.add_argument("--compression_ratio_threshold", type=float, default=2.4)
    args = ap.parse_args()
    threshold = args.compression_ratio_threshold

    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    calls = []
    model.model = recording(model, calls)
    runs = run_seeds(model, calls, clip().astype(np.float32) / 32768.0, threshold)
    first = runs[0][0]
    for segs, _ in runs[1:]:
        if [s["tokens"] for s in segs] != [s["tokens"] for s in first]:
            raise SystemExit("faster-whisper keeps different tokens with different seeds: no reference")
    windows = runs[0][1]
    all_failed = [i for i, w in enumerate(windows) if len(w) == 6 and all(
        a["compression_ratio"] > threshold or a["avg_logprob"] < -1.0 for a in w)]
    if not all_failed and threshold == 2.4:
        raise SystemExit("no window where every temperature fails")
    out = {
        "source": "tools/reference/fw_fallback_repeat.py",
        "audio": f"jfk.wav x {REPEATS} (int16 samples repeated, {REPEATS * 11}.0 s)",
        "model": "tiny.en (models/faster-whisper-tiny.en)",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": {"language": "en", "beam_size": 5, "compute_type": "float32", "seeds": SEEDS,
                    "compression_ratio_threshold": threshold},
        "windows_every_temperature_failed": all_failed,
        "windows": [{"prompt": w[0]["prompt"], "tokens": min(w, key=lambda a: -a["avg_logprob"])["tokens"] if i in all_failed else w[-1]["tokens"],
                     "attempts": [{k: a[k] for k in ("temperature", "avg_logprob", "compression_ratio")} for a in w]}
                    for i, w in enumerate(windows)],
        "segments": first,
        "text": "".join(s["text"] for s in first),
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}: every temperature failed in windows {all_failed}")


if __name__ == "__main__":
    main()
