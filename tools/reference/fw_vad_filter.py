#!/usr/bin/env python3
"""faster-whisper 1.2.1's vad_filter=True, for the Python package's check (issue #37).

faster-whisper (transcribe.py WhisperModel.transcribe) runs vad.py get_speech_timestamps on the
audio with VadOptions, concatenates audio[start:end] of each speech chunk (collect_chunks), detects
the language and transcribes that, and restores segment and word times with SpeechTimestampsMap
(restore_speech_timestamps). This records, per case: the speech chunks in samples,
duration_after_vad, and the segments (start, end, text, tokens, words with word_timestamps).

Clip: 5 s of zeros, jfk.wav, 3 s of zeros, jfk.wav, 1 s of zeros (int16 samples of
../shared/data/jfk.wav, as float32 / 32768). Model: tiny.en CTranslate2 directory
(models/faster-whisper-tiny.en), compute_type float32, cpu, language "en", greedy (beam_size 1),
temperature 0.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/fw_vad_filter.py [--out testdata/fw_vad_filter.json]
"""

import argparse
import json
import os
import wave

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (name, vad_parameters, word_timestamps)
CASES = [
    ("defaults", None, False),
    ("defaults_words", None, True),
    ("options", {"threshold": 0.6, "neg_threshold": 0.3, "min_silence_duration_ms": 500, "speech_pad_ms": 100,
                 "min_speech_duration_ms": 250, "max_speech_duration_s": 8.0}, False),
]


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def clip():
    with wave.open(os.path.join(shared_dir(), "data", "jfk.wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        jfk = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768.0
    z = lambda s: np.zeros(int(s * 16000), np.float32)  # noqa: E731
    return np.concatenate([z(5), jfk, z(3), jfk, z(1)])


def main():
    import ctranslate2
    import faster_whisper
    from faster_whisper import WhisperModel
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_vad_filter.json"))
    args = ap.parse_args()
    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    audio = clip()
    cases = []
    for name, params, words in CASES:
        opts = VadOptions(**params) if params else VadOptions()
        chunks = get_speech_timestamps(audio, opts)
        segments, info = model.transcribe(audio, language="en", beam_size=1, temperature=0.0, vad_filter=True,
                                          vad_parameters=params, word_timestamps=words)
        segs = []
        for s in segments:
            seg = {"start": s.start, "end": s.end, "text": s.text, "tokens": list(s.tokens)}
            if words:
                seg["words"] = [{"start": w.start, "end": w.end, "word": w.word} for w in s.words]
            segs.append(seg)
        cases.append({"name": name, "vad_parameters": params, "word_timestamps": words,
                      "speech_chunks": [[c["start"], c["end"]] for c in chunks],
                      "duration_after_vad": info.duration_after_vad, "segments": segs})
        print(f"{name}: {len(chunks)} chunks {[[c['start'], c['end']] for c in chunks]}, {len(segs)} segments")
    out = {
        "source": "tools/reference/fw_vad_filter.py",
        "audio": "5 s zeros + jfk.wav + 3 s zeros + jfk.wav + 1 s zeros (int16 / 32768)",
        "samples": int(audio.size),
        "model": "tiny.en (models/faster-whisper-tiny.en)",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": {"language": "en", "beam_size": 1, "temperature": 0.0, "compute_type": "float32"},
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
