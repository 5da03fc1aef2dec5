#!/usr/bin/env python3
"""faster-whisper 1.2.1's per-window scores (issue #37: avg_logprob): for each decoding window,
CTranslate2's tokens, its cumulative log-probability (faster-whisper's cum_logprob = scores[0] *
seq_len ** length_penalty), avg_logprob = cum_logprob / (seq_len + 1) and no_speech_prob, and
each Segment's avg_logprob; for greedy runs also the log-probability of every step (the
sampled token's, <|endoftext|>'s last), computed here in float64 from the logits CTranslate2
returns after its logits processors (return_logits_vocab: suppressed entries at the float minimum).

Runs: tiny.en (models/faster-whisper-tiny.en) on jfk.wav with clip_timestamps 0, 8, 10 and 10.5 s
and on jfk.wav's samples three times over ("jfk_x3", 33 s: two windows, the second prompted with
the first's text); base (models/faster-whisper-base) on the AISHELL Mandarin clip
(language "zh") and on jfk.wav (language "en"); each greedy and beam 5. Every run is
WhisperModel.transcribe with compute_type float32 on the cpu, temperature 0.0 alone (no fallback),
no_speech_threshold None (no window skipped), the other options at faster-whisper's defaults
(suppress_tokens [-1], suppress_blank, condition_on_previous_text, max_initial_timestamp 1.0).

Usage (from the repo root; needs `pip install faster-whisper==1.2.1` and tools/get_model.sh, base):
  python3 tools/reference/fw_avg_logprob.py [--out testdata/reference/fw_avg_logprob.json]
"""

import argparse
import json
import os
import sys

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (model, audio file in ../shared/data or "jfk_x3", language, clip_timestamps, beam_size)
RUNS = []
for _beam in (1, 5):
    for _clip in ("0", "8", "10", "10.5"):
        RUNS.append(("tiny.en", "jfk.wav", "en", _clip, _beam))
    RUNS.append(("tiny.en", "jfk_x3", "en", "0", _beam))
    RUNS.append(("base", "zh_aishell_BAC009S0764W0121.wav", "zh", "0", _beam))
    RUNS.append(("base", "jfk.wav", "en", "0", _beam))

MODEL_DIRS = {"tiny.en": "faster-whisper-tiny.en", "base": "faster-whisper-base"}


def audio_input(name):
    """A path in ../shared/data, or for "jfk_x3" jfk.wav's 176000 samples tiled 3 times (float32)."""
    if name != "jfk_x3":
        return os.path.join(shared_dir(), "data", name)
    import wave
    with wave.open(os.path.join(shared_dir(), "data", "jfk.wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    assert x.size == 176000, x.size
    return np.tile(x, 3).astype(np.float32) / 32768.0


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


class Recorder:
    """Wraps a ctranslate2.models.Whisper: every generate call is recorded (one per window here,
    as temperature 0.0 alone never falls back)."""

    def __init__(self, inner, eot):
        self.inner = inner
        self.eot = eot
        self.windows = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def generate(self, features, prompts, **kw):
        greedy = kw.get("beam_size", 5) == 1
        if greedy:
            kw["return_logits_vocab"] = True
        results = self.inner.generate(features, prompts, **kw)
        r = results[0]
        tokens = list(r.sequences_ids[0])
        seq_len = len(tokens)
        cum = r.scores[0] * seq_len ** kw.get("length_penalty", 1)
        window = {"prompt_length": len(prompts[0]), "tokens": tokens, "score": r.scores[0],
                  "cum_logprob": cum, "avg_logprob": cum / (seq_len + 1), "no_speech_prob": r.no_speech_prob}
        if greedy:
            steps = []
            sampled = tokens + [self.eot]
            for t, logits in zip(sampled, r.logits[0]):
                x = np.asarray(logits, dtype=np.float64)
                live = x > np.finfo(np.float32).min  # DisableTokens writes the float minimum
                m = x[live].max()
                lse = m + np.log(np.exp(x[live] - m).sum())
                steps.append(float(x[t] - lse))
            if len(steps) != len(sampled):
                sys.exit(f"fw_avg_logprob: {len(r.logits[0])} logits for {len(sampled)} steps")
            if abs(sum(steps) - cum) > 1e-2:  # CTranslate2 sums in float32
                sys.exit(f"fw_avg_logprob: steps sum to {sum(steps)}, CTranslate2's score to {cum}")
            window["step_logprobs"] = steps
        self.windows.append(window)
        return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.path.join(REPO_ROOT, "models"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "reference", "fw_avg_logprob.json"))
    args = ap.parse_args()
    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"fw_avg_logprob: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    models = {}
    runs = []
    for model_name, audio, language, clip, beam in RUNS:
        if model_name not in models:
            path = os.path.join(args.models, MODEL_DIRS[model_name])
            if not os.path.isfile(os.path.join(path, "model.bin")):
                sys.exit(f"fw_avg_logprob: no {path}/model.bin: run tools/get_model.sh")
            models[model_name] = WhisperModel(path, device="cpu", compute_type="float32", cpu_threads=1)
        model = models[model_name]
        inner = model.model
        rec = Recorder(inner, model.hf_tokenizer.token_to_id("<|endoftext|>"))
        model.model = rec
        try:
            segments, _ = model.transcribe(audio_input(audio), language=language,
                                           beam_size=beam, temperature=0.0, no_speech_threshold=None,
                                           clip_timestamps=clip)
            segments = [{"seek": s.seek, "start": s.start, "end": s.end, "tokens": list(s.tokens),
                         "avg_logprob": s.avg_logprob, "no_speech_prob": s.no_speech_prob, "text": s.text}
                        for s in segments]
        finally:
            model.model = inner
        name = f"{model_name} {audio} clip={clip} beam={beam}"
        print(name, [round(w["avg_logprob"], 5) for w in rec.windows], "".join(s["text"] for s in segments))
        runs.append({"name": name, "model": model_name, "audio": audio, "language": language,
                     "clip_timestamps": [float(c) for c in clip.split(",")], "beam_size": beam,
                     "windows": rec.windows, "segments": segments})
    out = {
        "source": "tools/reference/fw_avg_logprob.py",
        "models": "models/faster-whisper-tiny.en and models/faster-whisper-base, compute_type float32",
        "faster_whisper_version": faster_whisper.__version__,
        "ctranslate2_version": ctranslate2.__version__,
        "runs": runs,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}: {len(runs)} runs")


if __name__ == "__main__":
    main()
