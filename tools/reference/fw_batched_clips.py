#!/usr/bin/env python3
"""faster-whisper 1.2.1's BatchedInferencePipeline with clip_timestamps, for the batched clips
check of the Python package and the C API (issue #38).

faster-whisper (transcribe.py BatchedInferencePipeline.transcribe) given clip_timestamps runs no
VAD: each clip {"start": s, "end": s} is one chunk, audio[int(start * 16000):int(end * 16000)], in
the order given; its mel is computed from the chunk alone and padded or cut to 30 s (pad_or_trim),
so a clip longer than 30 s is transcribed for its first 30 s only (it logs "Segment %d is longer
than 30 seconds, only the first 30 seconds will be transcribed"). The chunks are decoded
batch_size at a time (one generate call each, temperature[0] only, no fallback), and each chunk's
tokens are cut by _split_segments_by_timestamps with time_offset = the clip's start sample / 16000
and segment_duration = the clip's length: without_timestamps=True gives one segment [start, end]
per clip; with timestamps, the text after the last timestamp pair is dropped.

This records, per case: the clips, the segments (start, end, text, tokens) and the warnings.
Model: tiny.en CTranslate2 directory (models/faster-whisper-tiny.en), compute_type float32, cpu,
2 threads, language "en", greedy (beam_size 1), temperature 0, batch_size 8.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/fw_batched_clips.py [--out testdata/fw_batched_clips.json]
"""

import argparse
import json
import logging
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

JFK_CLIPS = [{"start": 0.0, "end": 2.8}, {"start": 2.8, "end": 8.0}, {"start": 8.0, "end": 11.0}]
# long_speech.flac: four clips of 22-29 s cut in pauses (Silero's), the last one before the third.
LONG_CLIPS = [{"start": 2.5, "end": 30.8}, {"start": 30.8, "end": 53.0}, {"start": 98.8, "end": 123.0},
              {"start": 56.0, "end": 83.5}]
# One clip of 33.2 s: faster-whisper transcribes its first 30 s only.
OVER_30S_CLIPS = [{"start": 56.0, "end": 89.2}]

# (name, audio file, clips, without_timestamps)
CASES = [
    ("jfk_no_timestamps", "jfk.wav", JFK_CLIPS, True),
    ("jfk_timestamps", "jfk.wav", JFK_CLIPS, False),
    ("long_no_timestamps", "long_speech.flac", LONG_CLIPS, True),
    ("long_timestamps", "long_speech.flac", LONG_CLIPS, False),
    ("over_30s_no_timestamps", "long_speech.flac", OVER_30S_CLIPS, True),
]


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main():
    import ctranslate2
    import faster_whisper
    from faster_whisper import BatchedInferencePipeline, WhisperModel, decode_audio

    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_batched_clips.json"))
    args = ap.parse_args()
    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    pipeline = BatchedInferencePipeline(model)
    warnings = Warnings()
    logging.getLogger("faster_whisper").addHandler(warnings)
    cases = []
    for name, audio_name, clips, without_timestamps in CASES:
        audio = decode_audio(os.path.join(shared_dir(), "data", audio_name))
        warnings.messages = []
        segments, info = pipeline.transcribe(audio, language="en", beam_size=1, temperature=0.0, batch_size=8,
                                             clip_timestamps=[dict(c) for c in clips],
                                             without_timestamps=without_timestamps)
        segs = [{"start": s.start, "end": s.end, "text": s.text, "tokens": list(s.tokens), "seek": s.seek}
                for s in segments]
        cases.append({"name": name, "audio": audio_name, "samples": int(audio.size), "clips": clips,
                      "without_timestamps": without_timestamps, "duration_after_vad": info.duration_after_vad,
                      "warnings": list(warnings.messages), "segments": segs})
        print(f"{name}: {len(segs)} segments, warnings {warnings.messages}")
        for s in segs:
            print(f"  [{s['start']:.3f} {s['end']:.3f}] {s['text']}")
    out = {
        "source": "tools/reference/fw_batched_clips.py",
        "model": "tiny.en (models/faster-whisper-tiny.en)",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": {"language": "en", "beam_size": 1, "temperature": 0.0, "batch_size": 8,
                    "compute_type": "float32"},
        "runs": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
