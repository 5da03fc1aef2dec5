#!/usr/bin/env python3
"""Reference word end times for the streaming latency benchmark, by faster-whisper.

faster-whisper 1.2.1 (PyPI) with word_timestamps=True (cross-attention DTW over the model's
alignment heads, OpenAI's timing.py) on the same tiny.en weights (models/faster-whisper-tiny.en,
from tools/get_model.sh), greedy, English, no VAD. Writes, per clip, each word with its start
and end in seconds: the benchmark measures how long after a word's end it first shows on the
stream's stdout.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/check_word_times.py [--out testdata/stream_word_times.json]
"""
import argparse
import json
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "stream_word_times.json"))
    args = ap.parse_args()

    import faster_whisper
    from faster_whisper import WhisperModel, decode_audio

    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32")
    clips = [("jfk.wav", None), ("long_speech.flac", 60.0)]
    out = {"source": "tools/reference/check_word_times.py", "faster_whisper_version": faster_whisper.__version__,
           "options": {"beam_size": 1, "language": "en", "word_timestamps": True, "condition_on_previous_text": False},
           "clips": []}
    for name, seconds in clips:
        audio = decode_audio(os.path.join(shared, "data", name), sampling_rate=16000)
        if seconds is not None:
            audio = audio[: int(seconds * 16000)]
        segments, _ = model.transcribe(audio, language="en", beam_size=1, word_timestamps=True,
                                       condition_on_previous_text=False, vad_filter=False)
        words = [{"word": w.word, "start": round(w.start, 3), "end": round(w.end, 3)}
                 for s in segments for w in s.words]
        out["clips"].append({"audio": name, "seconds": round(len(audio) / 16000.0, 3), "words": words})
        print("%s: %d words" % (name, len(words)))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
