#!/usr/bin/env python3
"""Reference 128-bin log-mel of jfk.wav from faster-whisper's feature extractor.

Writes testdata/jfk_mel128_faster_whisper.npz, which //whisper:mel_faster_whisper_test compares
our whisper/mel.h against (with OpenAI's mel_128 filterbank from models/mel_filters.npz, the one
large-v3 files carry): float32 [128, 100] arrays, rows = mel bins, columns = frames,
  frames_0_100       frames 0..99 (the front reflect padding and the first second of speech);
  frames_1000_1100   frames 1000..1099 (the end of the audio: frame 1099 reaches 40 samples into
                     the zero padding).
Frame 1100 and later differ by design: faster-whisper pads 160 zeros and reflects the end
(numpy stft center=True), whisper.cpp and ours append 30 s of zeros (whisper/mel.h step 1). The
normalization max (global max - 8) is the same: it comes from the speech frames.

Input: ../shared/data/jfk.wav (16-bit PCM, 16 kHz mono) read with the wave module and scaled by
1/32768, which is exactly what libsndfile's float read gives our loader (apps/common/audio.h), so
both sides start from identical float32 samples.

Needs faster-whisper 1.2.1 (`pip install faster-whisper==1.2.1`; its FeatureExtractor is NumPy
only). Usage (from the repo root):
  python3 tools/reference/mel128_faster_whisper.py [--audio WAV] [--out NPZ]
"""

import argparse
import os
import sys
import wave

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLICES = {"frames_0_100": (0, 100), "frames_1000_1100": (1000, 1100)}


def read_pcm16(path):
    with wave.open(path, "rb") as w:
        if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, 16000):
            sys.exit(f"{path}: expected 16-bit mono 16 kHz PCM, got {w.getparams()}")
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return pcm.astype(np.float32) / np.float32(32768.0)


def main():
    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.join(REPO_ROOT, "..", "shared")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audio", default=os.path.join(shared, "data", "jfk.wav"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "jfk_mel128_faster_whisper.npz"))
    args = ap.parse_args()

    import faster_whisper
    from faster_whisper.feature_extractor import FeatureExtractor

    if faster_whisper.__version__ != "1.2.1":
        sys.exit(f"faster-whisper {faster_whisper.__version__} is installed; the reference is from 1.2.1 "
                 "(pip install faster-whisper==1.2.1)")
    samples = read_pcm16(args.audio)
    mel = FeatureExtractor(feature_size=128)(samples)  # padding=160, as WhisperModel.transcribe
    if mel.shape != (128, 1101) or mel.dtype != np.float32:
        sys.exit(f"unexpected feature shape {mel.shape} {mel.dtype} for {len(samples)} samples")
    arrays = {k: np.ascontiguousarray(mel[:, a:b]) for k, (a, b) in SLICES.items()}
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out}: {', '.join(f'{k} {v.shape}' for k, v in arrays.items())}; "
          f"whole mel {mel.shape}, min {mel.min():.6f}, max {mel.max():.6f}")


if __name__ == "__main__":
    main()
