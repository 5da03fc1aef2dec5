#!/usr/bin/env python3
"""Reference word timestamps by faster-whisper for the -dtw tests.

faster-whisper 1.2.1 (PyPI; CTranslate2 float32 on CPU) with word_timestamps=True (cross-attention
DTW over tiny.en's alignment heads, OpenAI's timing.py, then its add_word_timestamps rules) on the
same tiny.en weights (models/faster-whisper-tiny.en from tools/get_model.sh), as our CLI runs with
`-bs N -nf -sns -dtw tiny.en`: temperature 0 only, beam_size 1 (greedy) and 5,
condition_on_previous_text True, suppress_tokens [-1], no VAD, English.

Clips: jfk.wav; jfk.wav + 20 s of zeros + jfk.wav (42 s, the clip //whisper/e2e:cli_long_audio_test
builds); and the first 90 s of long_speech.flac (decoded by faster-whisper's PyAV as 16-bit
samples / 32768, the values our CLI reads from the 16-bit WAVs the test writes). Writes, per clip and
beam size, each segment's start, end and words (text, start, end) in seconds.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/check_word_timestamps.py [--out testdata/word_timestamps_faster_whisper.json]
"""
import argparse
import json
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "word_timestamps_faster_whisper.json"))
    args = ap.parse_args()

    import faster_whisper
    from faster_whisper import WhisperModel, decode_audio

    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32")
    import numpy as np
    clips = [("jfk.wav", None), ("jfk_20s_jfk", None), ("long_speech.flac", 90.0)]
    out = {"source": "tools/reference/check_word_timestamps.py", "faster_whisper_version": faster_whisper.__version__,
           "options": {"language": "en", "temperature": 0.0, "word_timestamps": True,
                       "condition_on_previous_text": True, "suppress_tokens": [-1], "vad_filter": False},
           "runs": []}
    for name, seconds in clips:
        if name == "jfk_20s_jfk":
            jfk = decode_audio(os.path.join(shared, "data", "jfk.wav"), sampling_rate=16000)
            audio = np.concatenate([jfk, np.zeros(20 * 16000, np.float32), jfk])
        else:
            audio = decode_audio(os.path.join(shared, "data", name), sampling_rate=16000)
        if seconds is not None:
            audio = audio[: int(seconds * 16000)]
        for beam in (1, 5):
            segments, _ = model.transcribe(audio, language="en", beam_size=beam, temperature=0.0,
                                           word_timestamps=True, condition_on_previous_text=True,
                                           suppress_tokens=[-1], vad_filter=False)
            run = {"audio": name, "seconds": round(len(audio) / 16000, 3), "beam_size": beam, "segments": []}
            for s in segments:
                run["segments"].append({"start": round(s.start, 3), "end": round(s.end, 3), "text": s.text,
                                        "words": [{"word": w.word, "start": round(w.start, 3),
                                                   "end": round(w.end, 3)} for w in s.words]})
            out["runs"].append(run)
            print(f"{name} beam {beam}: {len(run['segments'])} segments, "
                  f"{sum(len(s['words']) for s in run['segments'])} words")
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
