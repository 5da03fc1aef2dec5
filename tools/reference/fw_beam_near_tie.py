#!/usr/bin/env python3
"""CTranslate2's beam-5 hypotheses for window 0 of jfk.wav + 20 s of zeros + jfk.wav (faster-whisper
1.2.1's tiny.en, float32, CPU), with their scores, to show where the beam search is a near-tie.

faster-whisper keeps " And so, my fellow Americans ask not ..." there
(testdata/jfk_20s_jfk_faster_whisper_beam5.json), but CTranslate2's runner-up, " And so my fellow
Americans ask not ...", scores within 2e-4 per token of it (cum_logprob / length, length_penalty
1): a difference that float rounding alone can swap (whisper/e2e/cli_long_audio_test.cc). The
window's prompt is faster-whisper's for its first window (<|startoftranscript|> on tiny.en), with
its options at beam 5 (suppress_blank, suppress_tokens [-1], max_initial_timestamp 1.0 s).

Usage (from the repo root; `pip install faster-whisper==1.2.1`, tools/get_model.sh):
  python3 tools/reference/fw_beam_near_tie.py [--out testdata/jfk_20s_jfk_beam5_hypotheses.json]
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_decoding_limits as limits  # noqa: E402 -- audio() and model_dir()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(limits.REPO_ROOT, "testdata", "jfk_20s_jfk_beam5_hypotheses.json"))
    args = ap.parse_args()
    try:
        import ctranslate2
        import faster_whisper
        from faster_whisper import WhisperModel
        from faster_whisper.audio import pad_or_trim
    except ImportError as e:
        sys.exit(f"fw_beam_near_tie: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    model = WhisperModel(limits.model_dir("tiny.en"), device="cpu", compute_type="float32", cpu_threads=2)
    jfk = limits.audio("jfk")
    samples = np.concatenate([jfk, np.zeros(20 * 16000, np.float32), jfk])
    encoded = model.encode(pad_or_trim(model.feature_extractor(samples)[:, :3000]))
    result = model.model.generate(encoded, [[50257]], beam_size=5, num_hypotheses=5, return_scores=True,
                                  length_penalty=1, max_length=224, max_initial_timestamp_index=50,
                                  suppress_blank=True, suppress_tokens=[-1])[0]
    hyps = []
    for ids, score in zip(result.sequences_ids, result.scores):
        text = model.hf_tokenizer.decode([t for t in ids if t < 50256])
        hyps.append({"score": score, "tokens": list(ids), "text": text})
        print("%.5f %s" % (score, text))
    out = {"source": "tools/reference/fw_beam_near_tie.py", "audio": "jfk.wav + 20 s of zeros + jfk.wav, window 0",
           "model": "models/faster-whisper-tiny.en, compute_type float32",
           "faster_whisper_version": faster_whisper.__version__, "ctranslate2_version": ctranslate2.__version__,
           "hypotheses": hyps}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
