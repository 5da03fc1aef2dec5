#!/usr/bin/env python3
"""faster-whisper 1.2.1's prepend_punctuations and append_punctuations (issue #37):
transcribe(word_timestamps=True) with punctuation sets other than the defaults, every word with
its text, start and end (seconds), on the same weights as ggml_whisper's tests (float32, cpu,
beam 5, transcribe()'s default, unless the run says otherwise):
  - tiny.en (models/faster-whisper-tiny.en) on jfk.wav, language "en" (text " And so, my fellow
    Americans ... your country."): the defaults (" so," and " country." merged), both sets ""
    (the "," and "." stay words of their own) and append_punctuations="." only (" so" and ","
    apart, " country." merged);
  - base (models/faster-whisper-base) on the AISHELL clip (Mandarin), greedy, with an initial
    prompt in Chinese with punctuation so that the text ends with "。": the defaults ("情况。"
    merged) and an append set without the CJK marks (。，！？：、), which leaves "。" a word of its
    own; and that set at beam 5 (transcribe()'s default): the last word's end moves the seek to
    3.84 s, and the 0.36 s left decodes to a repetition at avg_logprob -1.13 with no_speech_prob
    0.97, dropped as silence (one segment). The prompt's tokens there are faster-whisper's
    tokenizer.json's (标 = 162 + 3921), not whisper.cpp's greedy match (8987 + 229), which changed
    window 0's log-probabilities, its words' times and so that seek (tools/reference/fw_tokenize.py).

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`, tools/get_model.sh and
tools/get_model.sh base):
  python3 tools/reference/fw_punctuations.py [--out testdata/fw_punctuations.json]
"""

import argparse
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZH_PROMPT = "以下是普通话的句子，使用标点符号。"
ASCII_APPEND = "\"'.,!?:”)]}"  # faster-whisper's default append set without 。，！？：、

# (name, model, audio file in shared/data, transcribe options)
RUNS = [
    ("jfk_defaults", "tiny.en", "jfk.wav", {"language": "en"}),
    ("jfk_none", "tiny.en", "jfk.wav", {"language": "en", "prepend_punctuations": "", "append_punctuations": ""}),
    ("jfk_append_period", "tiny.en", "jfk.wav", {"language": "en", "append_punctuations": "."}),
    ("zh_defaults", "base", "zh_aishell_BAC009S0764W0121.wav", {"initial_prompt": ZH_PROMPT, "beam_size": 1}),
    ("zh_ascii_append", "base", "zh_aishell_BAC009S0764W0121.wav",
     {"initial_prompt": ZH_PROMPT, "append_punctuations": ASCII_APPEND, "beam_size": 1}),
    ("zh_ascii_append_beam5", "base", "zh_aishell_BAC009S0764W0121.wav",
     {"initial_prompt": ZH_PROMPT, "append_punctuations": ASCII_APPEND}),
]


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_punctuations.json"))
    args = ap.parse_args()
    try:
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"fw_punctuations: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    models = {}
    runs = []
    for name, model_name, audio_name, options in RUNS:
        model_dir = os.path.join(REPO_ROOT, "models", "faster-whisper-" + model_name)
        if not os.path.isfile(os.path.join(model_dir, "model.bin")):
            sys.exit(f"fw_punctuations: no {model_dir}/model.bin: run tools/get_model.sh {model_name}")
        if model_name not in models:
            models[model_name] = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=2)
        segments, info = models[model_name].transcribe(os.path.join(shared_dir(), "data", audio_name),
                                                       word_timestamps=True, **options)
        segments = list(segments)
        runs.append({
            "name": name, "model": model_name, "audio": audio_name, "options": options,
            "language": info.language, "texts": [s.text for s in segments],
            "words": [{"word": w.word, "start": float(w.start), "end": float(w.end)}
                      for s in segments for w in s.words],
        })
        print(name, [w["word"] for w in runs[-1]["words"]])
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"source": "faster-whisper %s, float32, cpu, word_timestamps=True"
                   % faster_whisper.__version__, "script": "tools/reference/fw_punctuations.py", "runs": runs},
                  f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
