#!/usr/bin/env python3
"""Reference word timestamps by faster-whisper, for the -dtw tests and the stream benchmark.

faster-whisper 1.2.1 (PyPI; CTranslate2 float32 on CPU) with word_timestamps=True (cross-attention
DTW over tiny.en's alignment heads, OpenAI's timing.py, then its add_word_timestamps rules) on the
same tiny.en weights (models/faster-whisper-tiny.en from tools/get_model.sh), English, no VAD.
Audio is decoded by faster-whisper's PyAV (16-bit samples / 32768, the values our CLI reads from
the 16-bit WAVs the tests write). Two reference sets, each written to its own file:

  dtw     testdata/word_timestamps_faster_whisper.json, for the -dtw tests
          (//whisper/e2e:cli_word_timestamps_test, the server's and the Python package's word tests),
          as our CLI runs with `-bs N -nf -sns -dtw tiny.en`: temperature 0 only, beam_size 1
          (greedy) and 5, condition_on_previous_text True, suppress_tokens [-1]. Clips: jfk.wav;
          jfk.wav + 20 s of zeros + jfk.wav (42 s, the clip //whisper/e2e:cli_long_audio_test
          builds); the first 90 s of long_speech.flac. Per clip and beam size, each segment's start,
          end, text and words (text, start, end) in seconds.
  stream  testdata/stream_word_times.json, for apps/stream's latency benchmark and pipe test (how
          long after a word's end it first shows on the stream's stdout): greedy, faster-whisper's
          default temperature fallback, condition_on_previous_text False. Clips: jfk.wav; the first
          60 s of long_speech.flac. Per clip, each word with its start and end in seconds.

With --check nothing is written: each set is computed and compared with the file on disk (same
options, same clips, same words in order, every time within --tolerance seconds); every difference
is printed and the exit status is 1 when there is one.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`):
  python3 tools/reference/word_timestamps.py [--only dtw|stream] [--check]
      [--dtw_out testdata/word_timestamps_faster_whisper.json] [--stream_out testdata/stream_word_times.json]
Exit status: 0 written or equal, 1 a difference under --check, 2 a setup error (no model, no clip).
"""
import argparse
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = "tools/reference/word_timestamps.py"
SAMPLE_RATE = 16000


def fail_setup(message):
    print(f"word_timestamps: {message}", file=sys.stderr)
    sys.exit(2)


def load_clip(shared, name, seconds):
    """Float32 mono 16 kHz samples of a shared clip ("jfk_20s_jfk": jfk.wav, 20 s of zeros, jfk.wav),
    cut to its first `seconds` when given."""
    import numpy as np
    from faster_whisper import decode_audio

    def decode(file_name):
        path = os.path.join(shared, "data", file_name)
        if not os.path.isfile(path):
            fail_setup(f"no {path}: set GGML_WHISPER_SHARED to the folder holding data/{file_name}")
        return decode_audio(path, sampling_rate=SAMPLE_RATE)

    if name == "jfk_20s_jfk":
        jfk = decode("jfk.wav")
        audio = np.concatenate([jfk, np.zeros(20 * SAMPLE_RATE, np.float32), jfk])
    else:
        audio = decode(name)
    if seconds is not None:
        audio = audio[: int(seconds * SAMPLE_RATE)]
    return audio


def duration(audio):
    return round(len(audio) / SAMPLE_RATE, 3)


def words_of(segment):
    return [{"word": w.word, "start": round(w.start, 3), "end": round(w.end, 3)} for w in segment.words]


def dtw_set(model, shared, version):
    """The -dtw tests' reference: per clip and beam size (1, 5), segments with their words."""
    options = {"language": "en", "temperature": 0.0, "word_timestamps": True,
               "condition_on_previous_text": True, "suppress_tokens": [-1], "vad_filter": False}
    out = {"source": SOURCE, "faster_whisper_version": version, "options": options, "runs": []}
    for name, seconds in (("jfk.wav", None), ("jfk_20s_jfk", None), ("long_speech.flac", 90.0)):
        audio = load_clip(shared, name, seconds)
        for beam in (1, 5):
            segments, _ = model.transcribe(audio, beam_size=beam, **options)
            run = {"audio": name, "seconds": duration(audio), "beam_size": beam, "segments": []}
            for s in segments:
                run["segments"].append({"start": round(s.start, 3), "end": round(s.end, 3), "text": s.text,
                                        "words": words_of(s)})
            out["runs"].append(run)
            print(f"dtw: {name} beam {beam}: {len(run['segments'])} segments, "
                  f"{sum(len(s['words']) for s in run['segments'])} words")
    return out


def stream_set(model, shared, version):
    """The stream benchmark's reference: per clip, every word (greedy, no previous-text conditioning)."""
    options = {"beam_size": 1, "language": "en", "word_timestamps": True, "condition_on_previous_text": False}
    out = {"source": SOURCE, "faster_whisper_version": version, "options": options, "clips": []}
    for name, seconds in (("jfk.wav", None), ("long_speech.flac", 60.0)):
        audio = load_clip(shared, name, seconds)
        segments, _ = model.transcribe(audio, vad_filter=False, **options)
        words = [w for s in segments for w in words_of(s)]
        out["clips"].append({"audio": name, "seconds": duration(audio), "words": words})
        print(f"stream: {name}: {len(words)} words")
    return out


def differences(want, got, tolerance, where=""):
    """Differences between two JSON values, as lines: numbers within `tolerance` are equal, keys named
    "source" are not compared (the file records the script that wrote it)."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for key in sorted(set(want) | set(got)):
            if key == "source":
                continue
            if key not in want or key not in got:
                out.append(f"{where}/{key}: only in the {'computed' if key in got else 'file'}")
            else:
                out += differences(want[key], got[key], tolerance, f"{where}/{key}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where}: {len(want)} entries in the file, {len(got)} computed"]
        return [d for i, (w, g) in enumerate(zip(want, got)) for d in differences(w, g, tolerance, f"{where}[{i}]")]
    numbers = (int, float)
    if isinstance(want, numbers) and isinstance(got, numbers) and not isinstance(want, bool):
        return [] if abs(want - got) <= tolerance else [f"{where}: {want} in the file, {got} computed"]
    return [] if want == got else [f"{where}: {want!r} in the file, {got!r} computed"]


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", path)


def check_json(path, value, tolerance):
    """Prints the differences between `value` and the JSON file at `path`; returns their count."""
    try:
        with open(path, encoding="utf-8") as f:
            want = json.load(f)
    except (OSError, ValueError) as e:
        print(f"word_timestamps: {path}: {e}", file=sys.stderr)
        return 1
    found = differences(want, value, tolerance)
    for line in found:
        print(f"DIFF {path}: {line}")
    print(f"{'ok  ' if not found else 'FAIL'} {path}: {len(found)} differences (tolerance {tolerance} s)")
    return len(found)


def main():
    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-tiny.en"))
    ap.add_argument("--dtw_out", default=os.path.join(REPO_ROOT, "testdata", "word_timestamps_faster_whisper.json"))
    ap.add_argument("--stream_out", default=os.path.join(REPO_ROOT, "testdata", "stream_word_times.json"))
    ap.add_argument("--only", choices=("dtw", "stream"), help="compute one set (default: both)")
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    ap.add_argument("--tolerance", type=float, default=0.005,
                    help="seconds two times may differ by under --check (default 0.005: a DTW step is 0.02)")
    args = ap.parse_args()

    try:
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        fail_setup(f"{e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    if not os.path.isfile(os.path.join(args.model_dir, "model.bin")):
        fail_setup(f"no {args.model_dir}/model.bin: run tools/get_model.sh")
    model = WhisperModel(args.model_dir, device="cpu", compute_type="float32")

    sets = {"dtw": (dtw_set, args.dtw_out), "stream": (stream_set, args.stream_out)}
    n_diff = 0
    for name in [args.only] if args.only else list(sets):
        compute, path = sets[name]
        value = compute(model, shared, faster_whisper.__version__)
        if args.check:
            n_diff += check_json(path, value, args.tolerance)
        else:
            write_json(path, value)
    sys.exit(1 if n_diff else 0)


if __name__ == "__main__":
    main()
