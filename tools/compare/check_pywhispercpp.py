#!/usr/bin/env python3
"""Runs whisper.cpp itself (through the PyPI package pywhispercpp) on our converted model file.

Two questions:
  1. Does whisper.cpp load models/ggml-tiny.en.bin (made by tools/convert from the CTranslate2
     weights)? That checks the converter's output against the format's owner.
  2. Does whisper.cpp transcribe ../shared/data/jfk.wav (and jfk + 20 s of zeros + jfk, two 30 s
     windows) as our CLI does? Compared per mode:
       greedy: pywhispercpp sampling strategy GREEDY   vs  our `cli -bs 1`
       beam:   BEAM_SEARCH beam_size 5, patience -1     vs  our `cli` (whisper-cli's default -bs 5)
     Both sides keep whisper.cpp's other defaults (temperature fallback on, suppress_blank, no
     non-speech suppression, n_threads as given, no_context as pywhispercpp sets it: True).
     Printed: each side's segments (times in seconds) and whether texts and times are equal.
     Known reasons for differences (not bugs): whisper.cpp leaves the log-mel of its 30 s zero
     padding in the window after the audio, where we (as OpenAI's pad_or_trim and faster-whisper)
     put 0.0 (whisper/state.h Encode); whisper.cpp's beam search samples its candidates, ours keeps
     the top-k by log-probability (whisper/decoding.h).

The script re-runs itself in a virtual environment (--venv, default /tmp/pywhispercpp_venv; made
on first use, with `pip install pywhispercpp`: PyPI ships manylinux wheels that bundle libwhisper
and libggml; without a matching wheel pip builds whisper.cpp from source with CMake), so the
result does not depend on what the system Python has; --current_python skips that. An
installation failure is printed with pip's last lines.

Needs models/ggml-tiny.en.bin (tools/setup.sh) and an optimized CLI
(`bazel build -c opt //whisper:cli`, bazel-out/k8-opt/bin/apps/cli/cli) or --cli PATH.
Exit status: 0 when every comparison agrees, 1 when one differs, 2 on a setup error.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import wave

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEGMENT_LINE = re.compile(r"^\[(\d\d):(\d\d):(\d\d)\.(\d\d\d) --> (\d\d):(\d\d):(\d\d)\.(\d\d\d)\]  (.*)$")


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def fail_setup(message):
    print(f"check_pywhispercpp: {message}", file=sys.stderr)
    sys.exit(2)


def ensure_pywhispercpp(venv):
    """Re-executes this script inside `venv` (made, and pywhispercpp pip-installed, on first use)
    unless it already runs there; venv None: use the current interpreter as it is."""
    if venv is None or os.path.realpath(sys.prefix) == os.path.realpath(venv):
        try:
            import pywhispercpp  # noqa: F401
        except ImportError as e:
            fail_setup(f"{e} in {sys.prefix}: `pip install pywhispercpp` (PyPI)")
        return
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"check_pywhispercpp: creating {venv}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([python, "-c", "import pywhispercpp"], capture_output=True).returncode != 0:
        print(f"check_pywhispercpp: {venv}: pip install pywhispercpp", flush=True)
        proc = subprocess.run([python, "-m", "pip", "install", "pywhispercpp"], capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
            fail_setup(f"`pip install pywhispercpp` failed (exit {proc.returncode}):\n{tail}")
        for line in proc.stdout.splitlines():
            if "pywhispercpp" in line and any(w in line for w in ("Downloading", "Building", "Successfully", "Using")):
                print(f"  pip: {line.strip()}")
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def make_long_clip(tmp):
    """jfk.wav + 20 s of zeros + jfk.wav, 16 kHz mono 16-bit."""
    src = os.path.join(shared_dir(), "data", "jfk.wav")
    with wave.open(src, "rb") as w:
        params = w.getparams()
        frames = w.readframes(w.getnframes())
    if params.framerate != 16000 or params.nchannels != 1 or params.sampwidth != 2:
        fail_setup(f"{src}: expected 16 kHz mono 16-bit")
    path = os.path.join(tmp, "jfk_20s_jfk.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(frames + b"\x00\x00" * (20 * 16000) + frames)
    return path


def run_whisper_cpp(model_path, audio, beam, threads):
    from pywhispercpp.model import Model

    kwargs = dict(n_threads=threads, print_progress=False, print_realtime=False, language="en")
    if beam:
        model = Model(model_path, params_sampling_strategy=1, redirect_whispercpp_logs_to=None,
                      beam_search={"beam_size": 5, "patience": -1.0}, **kwargs)
    else:
        model = Model(model_path, params_sampling_strategy=0, redirect_whispercpp_logs_to=None, **kwargs)
    # pywhispercpp Segment: t0/t1 in centiseconds (whisper_full_get_segment_t0/t1).
    return [(int(s.t0), int(s.t1), s.text) for s in model.transcribe(audio)]


def run_ours(cli, model_path, audio, beam, threads):
    cmd = [cli, "-m", model_path, "-f", audio, "-t", str(threads), "-np"] + ([] if beam else ["-bs", "1"])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        fail_setup(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    segments = []
    for line in proc.stdout.splitlines():
        m = SEGMENT_LINE.match(line)
        if m is None:
            continue
        g = [int(x) for x in m.groups()[:8]]
        t0 = ((g[0] * 60 + g[1]) * 60 + g[2]) * 100 + g[3] // 10
        t1 = ((g[4] * 60 + g[5]) * 60 + g[6]) * 100 + g[7] // 10
        segments.append((t0, t1, m.group(9)))
    return segments


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=os.path.join(REPO_ROOT, "bazel-out/k8-opt/bin/apps/cli/cli"))
    parser.add_argument("--model", default=os.path.join(REPO_ROOT, "models/ggml-tiny.en.bin"))
    parser.add_argument("--venv", default="/tmp/pywhispercpp_venv")
    parser.add_argument("--current_python", action="store_true", help="use this interpreter, no venv")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    if not os.path.isfile(args.model):
        fail_setup(f"no {args.model}: run tools/setup.sh")
    if not os.access(args.cli, os.X_OK):
        fail_setup(f"no CLI at {args.cli}: run `bazel build -c opt //whisper:cli` or pass --cli")
    ensure_pywhispercpp(None if args.current_python else args.venv)
    from importlib.metadata import version

    print(f"pywhispercpp {version('pywhispercpp')} (python {sys.version.split()[0]}), model {args.model}")
    all_same = True
    with tempfile.TemporaryDirectory(prefix="check_pywhispercpp_") as tmp:
        clips = [("jfk.wav", os.path.join(shared_dir(), "data", "jfk.wav")), ("jfk + 20 s + jfk", make_long_clip(tmp))]
        for name, audio in clips:
            for beam in (False, True):
                mode = "beam 5" if beam else "greedy"
                theirs = run_whisper_cpp(args.model, audio, beam, args.threads)
                ours = run_ours(args.cli, args.model, audio, beam, args.threads)
                texts = [s[2].strip() for s in ours] == [s[2].strip() for s in theirs]
                times = [s[:2] for s in ours] == [s[:2] for s in theirs]
                all_same &= texts and times
                print(f"{name}, {mode}: text {'EQUAL' if texts else 'DIFFERENT'}, segment times "
                      f"{'EQUAL' if times else 'DIFFERENT'}")
                for label, segs in (("whisper.cpp", theirs), ("ours", ours)):
                    for t0, t1, text in segs:
                        print(f"  {label:>11} [{t0 / 100:6.2f} --> {t1 / 100:6.2f}] {text!r}")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
