#!/usr/bin/env python3
"""faster-whisper's greedy tokens with its prompt and window options at values other than their
defaults (issue #37 part 2): prefix, hotwords, suppress_tokens, max_initial_timestamp,
without_timestamps and chunk_length.

Each case runs faster-whisper 1.2.1 (WhisperModel.transcribe, beam_size=1, the other options at
their defaults: temperature fallback 0, 0.2, ..., 1.0, condition_on_previous_text, suppress_tokens
[-1]) on one clip with one option changed, and records every window's prompt and the tokens
CTranslate2 returned (generate is wrapped, as in fw_fallback_repeat.py), each attempt's
temperature, and the segments. A window that fell back to a temperature above 0 is random
(CTranslate2's sampler): the case records it in "fallback_windows" and the tests compare only the
windows before it.

The model is a fresh WhisperModel per case: FeatureExtractor.__call__(chunk_length=N) keeps N for
every later call on the same model (faster-whisper 1.2.1 feature_extractor.py sets
self.n_samples and self.nb_max_frames), so one chunk_length case would change the next.

Cases: tiny.en (models/faster-whisper-tiny.en, the weights of models/ggml-tiny.en.bin) on
../shared/data/jfk.wav and long_speech.flac (210.4 s); base (models/faster-whisper-base) on
zh_aishell_BAC009S0764W0121.wav with language "zh" for prefix and hotwords in Chinese. Clips
are decoded by faster-whisper's own decode_audio (PyAV), as in the other references.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1` and the two CTranslate2
model directories, tools/get_model.sh and tools/get_model.sh base):
  python3 tools/reference/fw_prompt_options.py [--out testdata/fw_prompt_options.json] [--only NAME]
"""

import argparse
import copy
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (name, model directory under models/, clip under ../shared/data, transcribe() options).
CASES = [
    ("jfk_without_timestamps", "faster-whisper-tiny.en", "jfk.wav", {"without_timestamps": True}),
    # With the default temperatures window 3 falls back (random): temperature 0 only.
    ("long_without_timestamps", "faster-whisper-tiny.en", "long_speech.flac",
     {"without_timestamps": True, "temperature": 0.0}),
    ("jfk_max_initial_timestamp_0", "faster-whisper-tiny.en", "jfk.wav", {"max_initial_timestamp": 0.0}),
    ("long_max_initial_timestamp_0", "faster-whisper-tiny.en", "long_speech.flac", {"max_initial_timestamp": 0.0}),
    ("jfk_suppress_comma", "faster-whisper-tiny.en", "jfk.wav", {"suppress_tokens": [11]}),
    ("long_suppress_comma_nst", "faster-whisper-tiny.en", "long_speech.flac", {"suppress_tokens": [-1, 11, 13]}),
    ("jfk_hotwords", "faster-whisper-tiny.en", "jfk.wav", {"hotwords": "Kennedy, inaugural address"}),
    ("long_hotwords", "faster-whisper-tiny.en", "long_speech.flac", {"hotwords": "Shakespeare sonnets"}),
    ("jfk_prefix", "faster-whisper-tiny.en", "jfk.wav", {"prefix": "Well, my fellow"}),
    ("long_prefix", "faster-whisper-tiny.en", "long_speech.flac", {"prefix": "Sonnet one."}),
    ("long_prefix_hotwords", "faster-whisper-tiny.en", "long_speech.flac",
     {"prefix": "Sonnet one.", "hotwords": "Shakespeare sonnets", "temperature": 0.0}),
    ("jfk_prefix_without_timestamps", "faster-whisper-tiny.en", "jfk.wav",
     {"prefix": "Well, my fellow", "without_timestamps": True}),
    ("jfk_chunk_length_5", "faster-whisper-tiny.en", "jfk.wav", {"chunk_length": 5}),
    ("long_chunk_length_10", "faster-whisper-tiny.en", "long_speech.flac", {"chunk_length": 10, "temperature": 0.0}),
    ("zh_prefix", "faster-whisper-base", "zh_aishell_BAC009S0764W0121.wav", {"language": "zh", "prefix": "甚至"}),
    ("zh_hotwords", "faster-whisper-base", "zh_aishell_BAC009S0764W0121.wav",
     {"language": "zh", "hotwords": "交易停滞"}),
]


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def run_case(name, model_name, clip, options):
    """The case's record: options, windows (prompt, attempts, kept tokens) and segments."""
    import faster_whisper
    from faster_whisper import WhisperModel, decode_audio

    model_dir = os.path.join(REPO_ROOT, "models", model_name)
    if not os.path.isfile(os.path.join(model_dir, "model.bin")):
        sys.exit(f"fw_prompt_options.py: no {model_dir}/model.bin: run tools/get_model.sh"
                 + (" base" if "base" in model_name else ""))
    model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=2)
    inner = model.model
    calls = []

    class Recorder:
        def generate(self, features, prompts, **kw):
            result = inner.generate(features, prompts, **kw)
            calls.append({"prompt": [int(t) for t in prompts[0]],
                          "temperature": float(kw.get("sampling_temperature", 0.0)),
                          "tokens": [int(t) for t in result[0].sequences_ids[0]]})
            return result

        def __getattr__(self, attr):
            return getattr(inner, attr)

    model.model = Recorder()
    audio = decode_audio(os.path.join(shared_dir(), "data", clip))
    kw = {"language": "en", "beam_size": 1}
    kw.update(options)
    # A copy: get_suppressed_tokens extends a list without -1 in place (the specials it adds).
    segments, _ = model.transcribe(audio, **copy.deepcopy(kw))
    segs = [{"start": s.start, "end": s.end, "tokens": list(s.tokens), "text": s.text} for s in segments]
    windows = []
    for c in calls:
        if c["temperature"] == 0.0:
            windows.append([])
        windows[-1].append(c)
    fallback = [i for i, w in enumerate(windows) if len(w) > 1]
    print(f"{name}: {len(windows)} windows, {len(segs)} segments, "
          f"{sum(len(w[-1]['tokens']) for w in windows)} tokens, fallback windows {fallback}")
    return {
        "name": name,
        "model": model_name,
        "audio": clip,
        "faster_whisper_version": faster_whisper.__version__,
        "options": kw,
        "fallback_windows": fallback,
        "windows": [{"prompt": w[0]["prompt"], "tokens": w[-1]["tokens"],
                     "temperatures": [a["temperature"] for a in w]} for w in windows],
        "segments": segs,
    }


def main():
    import ctranslate2

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_prompt_options.json"))
    ap.add_argument("--only", help="run this case only and print it (no file written)")
    args = ap.parse_args()
    ctranslate2.set_random_seed(0)
    if args.only:
        for case in CASES:
            if case[0] == args.only:
                print(json.dumps(run_case(*case), ensure_ascii=False)[:4000])
        return
    out = {"source": "tools/reference/fw_prompt_options.py", "ctranslate2_version": ctranslate2.__version__,
           "cases": [run_case(*case) for case in CASES]}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
