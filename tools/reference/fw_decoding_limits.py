#!/usr/bin/env python3
"""faster-whisper 1.2.1's transcripts for the decoding limits of issue #37: temperature lists,
beam sizes above whisper.cpp's 8, CTranslate2's max_length (224 decoding steps without
max_new_tokens, the prefix's included), and the errors it raises for some option values.

Each run is WhisperModel.transcribe on models/faster-whisper-tiny.en (or -base), float32, cpu, with
the options listed (the rest at faster-whisper's defaults). "jfk_x3" is jfk.wav's 176000 samples
three times over, where every temperature of window 1 fails its checks at beam 5. Attempts at
T > 0 are random (CTranslate2's sampler): a run with a temperature above 0 is repeated with SEEDS
seeds (ctranslate2.set_random_seed) and the script stops with an error unless all keep the same
tokens; a run at temperature <= 0 only is deterministic and runs once.
Runs that reach max_length suppress <|endoftext|> (id 50256 on tiny.en, 50257 on base) with
temperature 0 and no compression-ratio check, so that the sequence can only end there.

Errors: each case records where it failed ("transcribe" or "iterate") and the exception type, or,
for the one that crashes the interpreter (run in a child process), the signal.

Usage (from the repo root; needs `pip install faster-whisper==1.2.1`, tools/get_model.sh and
tools/get_model.sh base):
  python3 tools/reference/fw_decoding_limits.py [--out testdata/fw_decoding_limits.json] [--only A,B]
  (--only: just the runs of those names, for a busy machine; the errors are always recorded)
"""

import argparse
import json
import os
import subprocess
import sys
import wave

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = 3
LONG_PROMPT = " ".join(["hello"] * 260)  # more than the 223 tokens a prompt keeps

# (name, model, audio, options); audio "jfk" or "jfk_x3".
RUNS = [
    ("temperature_single_0_x3", "tiny.en", "jfk_x3", {"beam_size": 5, "temperature": 0.0}),
    # Window 1 fails at every temperature: the two beam searches are the same, the first is kept and
    # reported at -1.0, which (not above prompt_reset_on_temperature) keeps the prompt.
    ("temperature_list_0_neg1_x3", "tiny.en", "jfk_x3", {"beam_size": 5, "temperature": [0.0, -1.0]}),
    ("temperature_negative", "tiny.en", "jfk", {"beam_size": 1, "temperature": -0.5}),
    # Fallback through sampled attempts: window 0 fails its checks at 0.0 (compression ratio 3.01 >
    # 2.4), 0.4 and 0.8; the attempt kept (highest avg_logprob among those under the ratio
    # threshold, else among all) is the beam search at 0.0 for every seed tried, reported at 0.8.
    # (Greedy, beam_size 1, keeps a sampled attempt for some seeds: no reference.)
    ("temperature_list_fallback_x3", "tiny.en", "jfk_x3", {"beam_size": 5, "temperature": [0.0, 0.4, 0.8]}),
    ("beam_10", "tiny.en", "jfk", {"beam_size": 10, "temperature": 0.0}),
    ("beam_16", "tiny.en", "jfk", {"beam_size": 16, "temperature": 0.0}),
    ("beam_10_base", "base", "jfk", {"beam_size": 10, "temperature": 0.0, "language": "en"}),
    ("max_length_no_timestamps", "tiny.en", "jfk",
     {"beam_size": 1, "temperature": 0.0, "compression_ratio_threshold": None, "without_timestamps": True,
      "suppress_tokens": [-1, 50256]}),
    ("max_length_timestamps", "tiny.en", "jfk",
     {"beam_size": 1, "temperature": 0.0, "compression_ratio_threshold": None, "suppress_tokens": [-1, 50256]}),
    ("max_length_prefix", "tiny.en", "jfk",
     {"beam_size": 1, "temperature": 0.0, "compression_ratio_threshold": None, "without_timestamps": True,
      "suppress_tokens": [-1, 50256], "prefix": "And so my fellow Americans"}),
    # base's prompt: <|startofprev|>, 223 prompt tokens, <|startoftranscript|>, language, task,
    # <|notimestamps|>: 228 tokens, so max_length = min(224, 448 - 227) = 221 steps.
    ("max_length_long_prompt_base", "base", "jfk",
     {"beam_size": 1, "temperature": 0.0, "compression_ratio_threshold": None, "without_timestamps": True,
      "suppress_tokens": [-1, 50257], "language": "en", "initial_prompt": LONG_PROMPT}),
]

# (name, options as Python source, audio): faster-whisper's behaviour on bad values.
ERRORS = [
    ("max_new_tokens_long_prompt", "dict(max_new_tokens=440, initial_prompt='hello ' * 100)", "jfk"),
    ("suppress_tokens_out_of_vocabulary", "dict(suppress_tokens=[99999999])", "jfk"),
    ("max_initial_timestamp_none", "dict(max_initial_timestamp=None)", "jfk"),
    ("temperature_empty", "dict(temperature=[])", "jfk"),
    ("temperature_string", "dict(temperature='0.5')", "jfk"),
    ("beam_size_0", "dict(beam_size=0)", "jfk"),
    ("best_of_0", "dict(best_of=0, temperature=0.5)", "jfk"),
]

# Cases that crash faster-whisper 1.2.1 (SIGSEGV in CTranslate2): run in a child process.
CRASHES = ("suppress_tokens_out_of_vocabulary",)

CHILD = r"""
import sys, numpy as np
from faster_whisper import WhisperModel
model_dir, audio_path, options = sys.argv[1], sys.argv[2], eval(sys.argv[3])
m = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=2)
stage = "transcribe"
try:
    segments, _ = m.transcribe(np.load(audio_path), language="en", **options)
    stage = "iterate"
    n = len(list(segments))
    print("OK", n)
except Exception as e:
    print("RAISES", stage, type(e).__name__)
"""


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def audio(name):
    with wave.open(os.path.join(shared_dir(), "data", "jfk.wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    assert x.size == 176000, x.size
    return (np.tile(x, 3) if name == "jfk_x3" else x).astype(np.float32) / 32768.0


def model_dir(name):
    path = os.path.join(REPO_ROOT, "models", "faster-whisper-" + name)
    if not os.path.isfile(os.path.join(path, "model.bin")):
        sys.exit(f"fw_decoding_limits: no {path}/model.bin: run tools/get_model.sh {name}")
    return path


def record_runs(WhisperModel, ctranslate2, only):
    models = {}
    runs = []
    for name, model_name, audio_name, options in RUNS:
        if only and name not in only:
            continue
        if model_name not in models:
            models[model_name] = WhisperModel(model_dir(model_name), device="cpu", compute_type="float32",
                                              cpu_threads=2)
        kwargs = dict(options)
        kwargs.setdefault("language", "en")
        results = []
        t = options.get("temperature", 1.0)
        sampled = any(x > 0 for x in (t if isinstance(t, (list, tuple)) else [t]))
        for seed in range(SEEDS if sampled else 1):
            ctranslate2.set_random_seed(seed)
            segments, _ = models[model_name].transcribe(audio(audio_name), **kwargs)
            results.append([{"start": s.start, "end": s.end, "tokens": list(s.tokens), "text": s.text,
                             "temperature": s.temperature} for s in segments])
        if any([s["tokens"] for s in r] != [s["tokens"] for s in results[0]] for r in results[1:]):
            sys.exit(f"fw_decoding_limits: {name}: the seeds keep different tokens, no reference")
        print(name, [(s["temperature"], len(s["tokens"])) for s in results[0]], flush=True)
        runs.append({"name": name, "model": model_name, "audio": audio_name, "options": options,
                     "segments": results[0]})
    return runs


def in_process(model, options, audio_name):
    """CHILD's output line for one case, run here."""
    stage = "transcribe"
    try:
        segments, _ = model.transcribe(audio(audio_name), language="en", **eval(options))
        stage = "iterate"
        return "OK %d" % len(list(segments))
    except Exception as e:  # noqa: BLE001 -- the type is what is recorded
        return "RAISES %s %s" % (stage, type(e).__name__)


def record_errors(tmp, model):
    errors = []
    for name, options, audio_name in ERRORS:
        if name in CRASHES:
            path = os.path.join(tmp, audio_name + ".npy")
            np.save(path, audio(audio_name))
            p = subprocess.run([sys.executable, "-c", CHILD, model_dir("tiny.en"), path, options],
                               capture_output=True, text=True)
            lines = p.stdout
        else:
            p = subprocess.CompletedProcess([], 0)
            lines = in_process(model, options, audio_name)
        words = (lines.strip().splitlines() or [""])[-1].split()
        if p.returncode < 0:
            outcome = {"signal": -p.returncode}
        elif words and words[0] == "RAISES":
            outcome = {"raises": words[2], "at": words[1]}
        elif words and words[0] == "OK":
            outcome = {"segments": int(words[1])}
        else:
            sys.exit(f"fw_decoding_limits: {name}: exit {p.returncode}: {p.stderr[-500:]}")
        print(name, outcome, flush=True)
        errors.append({"name": name, "options": options, "audio": audio_name, "outcome": outcome})
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_decoding_limits.json"))
    ap.add_argument("--only", default="", help="comma-separated run names (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) - {""}
    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"fw_decoding_limits: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        errors = record_errors(tmp, WhisperModel(model_dir("tiny.en"), device="cpu", compute_type="float32",
                                                 cpu_threads=2))
    out = {
        "source": "tools/reference/fw_decoding_limits.py",
        "models": "models/faster-whisper-tiny.en and -base, compute_type float32",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "seeds": SEEDS,
        "runs": record_runs(WhisperModel, ctranslate2, only),
        "errors": errors,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}: {len(out['runs'])} runs, {len(errors)} error cases")


if __name__ == "__main__":
    main()
