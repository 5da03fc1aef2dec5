#!/usr/bin/env python3
"""Reference for ggml_whisper's WhisperModel.detect_language: faster-whisper 1.2.1's
detect_language on Whisper base (models/faster-whisper-base, tools/get_model.sh base), float32,
on the shared clips, with language_detection_segments / language_detection_threshold set.

Both sides get the same samples: the clip decoded by ggml_whisper.decode_audio (libsndfile +
libsamplerate), so the comparison is of language identification, not of audio decoders.
Writes testdata/reference/base_language_detection.json (read by python/tests).
Usage: python3 tools/reference/fw_language_detection.py   (needs pip faster-whisper==1.2.1 and
       ggml_whisper installed: python3 -m pip install ./python)
"""
import json
import os
import sys

import ggml_whisper
from faster_whisper import WhisperModel

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(os.environ.get("GGML_WHISPER_SHARED", os.path.join(REPO, "..", "shared")), "data")

# (clip, first sample, language_detection_segments, language_detection_threshold)
CASES = [
    ("jfk.wav", 0, 1, 0.5),
    ("zh_aishell_BAC009S0764W0121.wav", 0, 1, 0.5),
    ("multilingual.mp3", 0, 1, 0.5),
    ("multilingual.mp3", 30 * 16000, 1, 0.5),  # the German half
    ("multilingual.mp3", 0, 2, 1.0),           # no window passes: a vote of en against de
]


def main():
    model = WhisperModel(os.path.join(REPO, "models", "faster-whisper-base"), device="cpu",
                         compute_type="float32", cpu_threads=2)
    out = []
    for clip, first, segments, threshold in CASES:
        audio = ggml_whisper.decode_audio(os.path.join(DATA, clip))[first:]
        lang, prob, all_probs = model.detect_language(audio, language_detection_segments=segments,
                                                      language_detection_threshold=threshold)
        out.append({"clip": clip, "first_sample": first, "language_detection_segments": segments,
                    "language_detection_threshold": threshold, "language": lang,
                    "language_probability": prob, "all_language_probs": [[c, p] for c, p in all_probs]})
        print(clip, first, segments, threshold, lang, round(prob, 5), all_probs[:3], file=sys.stderr)
    dst = os.path.join(REPO, "testdata", "reference", "base_language_detection.json")
    with open(dst, "w") as f:
        json.dump({"source": "faster-whisper 1.2.1 (CTranslate2 %s) on models/faster-whisper-base, float32"
                   % __import__("ctranslate2").__version__, "cases": out}, f, indent=1)
    print("wrote", dst, file=sys.stderr)


if __name__ == "__main__":
    main()
