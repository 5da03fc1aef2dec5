#!/usr/bin/env python3
"""faster-whisper's transcripts with clip_timestamps and with hallucination_silence_threshold.

Issue #37 part 2: both options of faster-whisper 1.2.1's WhisperModel.transcribe at values other
than their defaults ("0" and None), on the tiny.en weights our models/ggml-tiny.en.bin holds
(models/faster-whisper-tiny.en, CTranslate2 float32 on the CPU), greedy (beam_size 1), language
"en", the other options at faster-whisper's defaults (temperature fallback 0, 0.2, ..., 1.0,
condition_on_previous_text, suppress_tokens [-1]) -- what our CLI runs with `-bs 1 -sns`.

Runs (each with every segment's start, end, text, tokens and seek; words when word_timestamps):
  clip_jfk         jfk.wav, clip_timestamps "1.5,5,7" (1.5-5 s, then 7 s to the end)
  clip_long        long_speech.flac (210 s), clip_timestamps "5,40,100,150"
  clip_past_end    long_speech.flac, clip_timestamps "98.8,123.0", condition_on_previous_text False:
                   the last window (119.68 s, 3.32 s of the clip left) ends its one segment at
                   <|28.14|>, 147.82 s: faster-whisper cuts no segment at the clip's end
  hal_jfk          jfk.wav, word_timestamps, hallucination_silence_threshold 2 (no change there)
  hal_silence      long_speech.flac 85-100 s, 25 s of zeros, long_speech.flac 100-140 s (80 s),
                   word_timestamps, hallucination_silence_threshold 2: the window after the zeros
                   starts with an anomalous segment 4.9 s into it, so it is decoded again from there
Each hal_* run also records the same transcription without the option ("baseline"): on
hal_silence the script stops with an error unless the option changes faster-whisper's text there.
(The whole long_speech.flac with 15 s of zeros at 40 s and 25 s at 100 s is no reference: with the
option, a window there keeps a sampled attempt, and seeds 0 and 1 disagree.) A window whose every temperature fails keeps an attempt that may have
been sampled (CTranslate2's random sampler), so each run is made with SEEDS seeds
(ctranslate2.set_random_seed) and the script stops with an error unless they agree.

Audio: faster-whisper's decode_audio (16-bit samples / 32768, what our CLI reads from the WAVs the
tests write); the built clips are made from those samples (np.tile, np.concatenate with zeros).

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/fw_clip_hallucination.py [--out testdata/fw_clip_hallucination.json]
"""

import argparse
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RATE = 16000
SEEDS = 3


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def clips():
    """name -> (description, float32 samples)."""
    import numpy as np
    from faster_whisper import decode_audio

    def load(name):
        path = os.path.join(shared_dir(), "data", name)
        if not os.path.isfile(path):
            sys.exit(f"fw_clip_hallucination: no {path}: set GGML_WHISPER_SHARED")
        return decode_audio(path, sampling_rate=RATE)

    jfk, long_speech = load("jfk.wav"), load("long_speech.flac")
    assert jfk.size == 176000, jfk.size
    zeros = lambda s: np.zeros(s * RATE, np.float32)  # noqa: E731
    return {
        "jfk.wav": ("jfk.wav", jfk),
        "long_speech.flac": ("long_speech.flac", long_speech),
        "silence_80s": ("long_speech.flac 85-100 s, 25 s of zeros, long_speech.flac 100-140 s",
                        np.concatenate([long_speech[85 * RATE:100 * RATE], zeros(25), long_speech[100 * RATE:140 * RATE]])),
    }


def transcribe(model, audio, **options):
    """The segments, the same for SEEDS seeds (else exits)."""
    import ctranslate2

    runs = []
    for seed in range(SEEDS):
        ctranslate2.set_random_seed(seed)
        runs.append(transcribe_once(model, audio, **options))
        if runs[-1] != runs[0]:
            sys.exit(f"fw_clip_hallucination: {options}: seeds 0 and {seed} give different segments: no reference")
    return runs[0]


def transcribe_once(model, audio, **options):
    segments, _ = model.transcribe(audio, beam_size=1, language="en", **options)
    out = []
    for s in segments:
        seg = {"seek": s.seek, "start": s.start, "end": s.end, "text": s.text, "tokens": list(s.tokens)}
        if s.words is not None:
            seg["words"] = [{"word": w.word, "start": w.start, "end": w.end, "probability": round(w.probability, 4)}
                            for w in s.words]
        out.append(seg)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_clip_hallucination.json"))
    args = ap.parse_args()
    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"fw_clip_hallucination: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    if not os.path.isfile(os.path.join(args.model_dir, "model.bin")):
        sys.exit(f"fw_clip_hallucination: no {args.model_dir}/model.bin: run tools/get_model.sh")
    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    audio = clips()
    runs = []
    for name, clip, options in (
            ("clip_jfk", "jfk.wav", {"clip_timestamps": "1.5,5,7"}),
            ("clip_long", "long_speech.flac", {"clip_timestamps": "5,40,100,150"}),
            ("clip_past_end", "long_speech.flac",
             {"clip_timestamps": "98.8,123.0", "condition_on_previous_text": False}),
            ("hal_jfk", "jfk.wav", {"word_timestamps": True, "hallucination_silence_threshold": 2.0}),
            ("hal_silence", "silence_80s", {"word_timestamps": True, "hallucination_silence_threshold": 2.0})):
        description, samples = audio[clip]
        run = {"name": name, "audio": description, "seconds": samples.size / RATE, "options": options,
               "segments": transcribe(model, samples, **options)}
        if "hallucination_silence_threshold" in options:
            base = dict(options, hallucination_silence_threshold=None)
            run["baseline"] = transcribe(model, samples, **base)
            changed = [s["text"] for s in run["segments"]] != [s["text"] for s in run["baseline"]]
            if not changed and name != "hal_jfk":
                sys.exit(f"fw_clip_hallucination: {name}: the option does not change faster-whisper's output")
        runs.append(run)
        print(f"{name}: {len(run['segments'])} segments; windows at {sorted({s['seek'] for s in run['segments']})}")
    out = {
        "source": "tools/reference/fw_clip_hallucination.py",
        "model": "tiny.en (models/faster-whisper-tiny.en)",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": {"language": "en", "beam_size": 1, "compute_type": "float32"},
        "runs": runs,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
