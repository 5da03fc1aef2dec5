#!/usr/bin/env python3
"""Reference for word timestamps in a language written without spaces: faster-whisper 1.2.1's
transcribe(word_timestamps=True) on the AISHELL clip with Whisper base (models/faster-whisper-base,
float32, beam 5 and language detection: its defaults, as the CLI's), every word with its start and
end in seconds. Writes testdata/reference/base_zh_words.json (read by whisper/e2e/base_model_test).
Usage: python3 tools/reference/fw_words_zh.py   (needs pip faster-whisper==1.2.1; tools/get_model.sh base)
"""
import json
import os

from faster_whisper import WhisperModel

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(os.environ.get("GGML_WHISPER_SHARED", os.path.join(REPO, "..", "shared")), "data")
CLIP = "zh_aishell_BAC009S0764W0121.wav"


def main():
    model = WhisperModel(os.path.join(REPO, "models", "faster-whisper-base"), device="cpu",
                         compute_type="float32", cpu_threads=2)
    segments, info = model.transcribe(os.path.join(DATA, CLIP), beam_size=5, word_timestamps=True)
    words = [{"word": w.word, "start": w.start, "end": w.end} for s in segments for w in s.words]
    dst = os.path.join(REPO, "testdata", "reference", "base_zh_words.json")
    with open(dst, "w") as f:
        json.dump({"source": "faster-whisper 1.2.1 on models/faster-whisper-base, float32, beam 5, "
                   "word_timestamps=True", "clip": CLIP, "language": info.language, "words": words},
                  f, indent=1, ensure_ascii=False)
    print("wrote", dst, len(words), "words")


if __name__ == "__main__":
    main()
