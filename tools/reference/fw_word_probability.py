#!/usr/bin/env python3
"""faster-whisper 1.2.1's Word.probability (issue #37): transcribe(word_timestamps=True) on the same
weights as ggml_whisper's tests, every segment's tokens and every word with its start, end and
probability (the mean of its tokens' probabilities in the alignment pass: transcribe.py
find_alignment, CTranslate2's Whisper align text_token_probs).

Runs (float32, cpu, temperature 0 only so that no attempt is sampled; the other options at
faster-whisper's defaults):
  - tiny.en (models/faster-whisper-tiny.en) on jfk.wav, greedy and beam 5, language "en";
  - base (models/faster-whisper-base) on the AISHELL clip (Mandarin), greedy and beam 5, and on
    jfk.wav, greedy, the language detected (zh, en).

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`, tools/get_model.sh and
tools/get_model.sh base):
  python3 tools/reference/fw_word_probability.py [--out testdata/fw_word_probability.json]
"""

import argparse
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (model, audio file in shared/data, seconds to keep (0: all), options)
RUNS = [
    ("tiny.en", "jfk.wav", 0, {"beam_size": 1, "language": "en"}),
    ("tiny.en", "jfk.wav", 0, {"beam_size": 5, "language": "en"}),
    ("base", "zh_aishell_BAC009S0764W0121.wav", 0, {"beam_size": 1}),
    ("base", "zh_aishell_BAC009S0764W0121.wav", 0, {"beam_size": 5}),
    ("base", "jfk.wav", 0, {"beam_size": 1}),
]


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_word_probability.json"))
    args = ap.parse_args()
    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel, decode_audio
    except ImportError as e:
        sys.exit(f"fw_word_probability: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    models = {}
    runs = []
    for model_name, audio_name, seconds, options in RUNS:
        model_dir = os.path.join(REPO_ROOT, "models", "faster-whisper-" + model_name)
        if not os.path.isfile(os.path.join(model_dir, "model.bin")):
            sys.exit(f"fw_word_probability: no {model_dir}/model.bin: run tools/get_model.sh {model_name}")
        if model_name not in models:
            models[model_name] = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=2)
        audio = decode_audio(os.path.join(shared_dir(), "data", audio_name))
        if seconds:
            audio = audio[:seconds * 16000]
        segments, info = models[model_name].transcribe(audio, temperature=0.0, word_timestamps=True, **options)
        out = [{"start": s.start, "end": s.end, "text": s.text, "tokens": list(s.tokens),
                "words": [{"word": w.word, "start": w.start, "end": w.end, "probability": w.probability}
                          for w in s.words]} for s in segments]
        print(model_name, audio_name, options, info.language, sum(len(s["words"]) for s in out), "words")
        runs.append({"model": model_name, "audio": audio_name, "seconds": seconds, "options": options,
                     "language": info.language, "segments": out})
    result = {
        "source": "tools/reference/fw_word_probability.py",
        "models": "models/faster-whisper-tiny.en and models/faster-whisper-base, compute_type float32",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": {"temperature": 0.0, "word_timestamps": True},
        "runs": runs,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}: {len(runs)} runs")


if __name__ == "__main__":
    main()
