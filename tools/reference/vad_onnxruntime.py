#!/usr/bin/env python3
"""Reference Silero VAD v6 speech probabilities by onnxruntime for //whisper:silero_vad_test.

Runs faster-whisper 1.2.1's ONNX model (faster_whisper/assets/silero_vad_v6.onnx) with onnxruntime
on CPU exactly as faster_whisper.vad.SileroVADModel does (512-sample windows, each with the previous
window's last 64 samples in front, zeros for the first; h and c carried), on:
  - jfk.wav, zero-padded to a multiple of 512 samples;
  - "gap": 1 s of zeros, the first 3 s of jfk.wav, 2 s of zeros, jfk.wav from 3 s to 6 s.
Writes each clip's per-window probabilities, and faster-whisper's get_speech_timestamps (samples)
with VadOptions() (threshold 0.5, min silence 2000 ms, pad 400 ms), with whisper.cpp's defaults
(min speech 250 ms, min silence 100 ms, pad 30 ms) and with those plus max_speech_duration_s 2.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1 onnxruntime`):
  python3 tools/reference/vad_onnxruntime.py [--out testdata/vad_onnxruntime.json]
"""
import argparse
import json
import os

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "vad_onnxruntime.json"))
    args = ap.parse_args()

    import faster_whisper
    import onnxruntime
    from faster_whisper import decode_audio
    from faster_whisper.vad import SileroVADModel, VadOptions, get_speech_timestamps

    model_path = os.path.join(os.path.dirname(faster_whisper.__file__), "assets", "silero_vad_v6.onnx")
    model = SileroVADModel(model_path)
    jfk = decode_audio(os.path.join(shared, "data", "jfk.wav"), sampling_rate=16000)
    sr = 16000
    gap = np.concatenate([np.zeros(sr, np.float32), jfk[: 3 * sr], np.zeros(2 * sr, np.float32), jfk[3 * sr: 6 * sr]])
    out = {"source": "tools/reference/vad_onnxruntime.py", "onnxruntime_version": onnxruntime.__version__,
           "faster_whisper_version": faster_whisper.__version__, "clips": []}
    for name, audio in (("jfk", jfk), ("gap", gap)):
        padded = np.pad(audio, (0, (-len(audio)) % 512))
        probs = model(padded)
        spans = {}
        for key, opts in (("default", VadOptions()),
                          ("whisper_cpp", VadOptions(min_speech_duration_ms=250, min_silence_duration_ms=100,
                                                     speech_pad_ms=30)),
                          ("max2s", VadOptions(min_speech_duration_ms=250, min_silence_duration_ms=100,
                                               speech_pad_ms=30, max_speech_duration_s=2.0))):
            spans[key] = [[int(x["start"]), int(x["end"])] for x in get_speech_timestamps(audio, opts)]
        out["clips"].append({"name": name, "samples": int(len(audio)), "padded_samples": int(len(padded)),
                             "probs": [float(round(p, 7)) for p in np.asarray(probs).ravel()],
                             "speech": spans})
        print("  speech:", spans)
        print("%s: %d windows, max %.3f" % (name, len(out["clips"][-1]["probs"]), float(np.max(probs))))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
