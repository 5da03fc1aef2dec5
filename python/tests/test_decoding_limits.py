"""Decoding limits of issue #37 against faster-whisper 1.2.1's output on the same weights
(models/ggml-tiny.en.bin and ggml-base.bin against models/faster-whisper-*, float32): temperature
lists, beam sizes 10 and 16 (and 10 on base), CTranslate2's max_length (224 steps, with and without
timestamps, the prefix and a long prompt counted) and the errors faster-whisper raises,
testdata/fw_decoding_limits.json
(tools/reference/fw_decoding_limits.py).

Runs whose attempts at T > 0 sample are recorded only when three CTranslate2 seeds keep the same
tokens (the attempt kept is then one at T = 0), so the comparison does not depend on either
sampler's random numbers.
"""
import json
import os

import numpy as np
import pytest

from ggml_whisper import decode_audio

from model_cache import cached_model as _model
from test_ggml_whisper import ROOT, SHARED, MODEL

def _json(name):
    with open(os.path.join(ROOT, "testdata", name), encoding="utf-8") as f:
        return json.load(f)


LIMITS = _json("fw_decoding_limits.json")
RUNS = {r["name"]: r for r in LIMITS["runs"]}
ERRORS = {e["name"]: e for e in LIMITS["errors"]}

def _audio(name):
    x = decode_audio(os.path.join(SHARED, "data", "jfk.wav"))
    return np.tile(x, 3) if name == "jfk_x3" else x


def _check_run(name):
    run = RUNS[name]
    options = dict(run["options"])
    options.setdefault("language", "en")
    segments, _ = _model(run["model"]).transcribe(_audio(run["audio"]), **options)
    ours = list(segments)
    ref = run["segments"]
    assert [s.tokens for s in ours] == [s["tokens"] for s in ref], [s.text for s in ours]
    for s, r in zip(ours, ref):
        assert s.start == pytest.approx(r["start"], abs=1e-6)
        assert s.end == pytest.approx(r["end"], abs=1e-6)
        assert s.temperature == pytest.approx(r["temperature"], abs=1e-6)
    return ours


@pytest.mark.parametrize("name", sorted(n for n in RUNS if n.startswith("temperature_")))
def test_temperature_list_equals_faster_whisper(name):
    _check_run(name)


@pytest.mark.parametrize("name", sorted(n for n in RUNS if n.startswith("beam_")))
def test_large_beam_equals_faster_whisper(name):
    _check_run(name)


@pytest.mark.parametrize("name", sorted(n for n in RUNS if n.startswith("max_length_")))
def test_max_length_equals_faster_whisper(name):
    ours = _check_run(name)
    if not RUNS[name]["options"].get("without_timestamps"):
        # With timestamps each window's sequence runs to max_length too, but only its closed
        # segments are kept: the window seeks to the last timestamp (here 18 windows, one of 10.74 s
        # and 17 of one word each, the last ones closing at <|29.96|> then <|29.98|>: after text the
        # next timestamp is a later one, CTranslate2's rule, or the seek would stop at 40.70 s).
        assert len(ours) == 18 and ours[-1].end == pytest.approx(40.72, abs=1e-6)
        return
    # The sequence ran to CTranslate2's max_length: 224 steps less the prefix's, fewer with a prompt
    # of more than 225 tokens (base, language and task: 221).
    n = sum(len([t for t in s.tokens if t < 50257]) for s in ours)
    assert n >= 200


def _outcome(name):
    case = ERRORS[name]
    options = eval(case["options"])  # the reference's own literal
    want = case["outcome"]
    try:
        segments, _ = _model("tiny.en").transcribe(_audio(case["audio"]), language="en", **options)
    except Exception as e:  # noqa: BLE001 -- the type is the point
        return want, {"raises": type(e).__name__, "at": "transcribe"}
    try:
        return want, {"segments": len(list(segments))}
    except Exception as e:  # noqa: BLE001
        return want, {"raises": type(e).__name__, "at": "iterate"}


@pytest.mark.parametrize("name", ["max_new_tokens_long_prompt", "max_initial_timestamp_none", "temperature_empty"])
def test_error_equals_faster_whisper(name):
    want, got = _outcome(name)
    if name == "temperature_empty":
        # faster-whisper fails in its first window (max() of no attempt); ours refuses it at once.
        assert want == {"raises": "ValueError", "at": "iterate"} and got == {"raises": "ValueError", "at": "transcribe"}
    else:
        assert got == want


def test_errors_where_faster_whisper_differs():
    # faster-whisper 1.2.1 crashes the interpreter (SIGSEGV) on a token id past the vocabulary;
    # ours raises ValueError naming it. Its str temperature fails at '>' (TypeError) in the first
    # window; ours at once. beam_size and best_of 0: CTranslate2's ValueError in the first window.
    assert ERRORS["suppress_tokens_out_of_vocabulary"]["outcome"] == {"signal": 11}
    assert _outcome("suppress_tokens_out_of_vocabulary")[1] == {"raises": "ValueError", "at": "transcribe"}
    assert _outcome("temperature_string") == ({"raises": "TypeError", "at": "iterate"},
                                              {"raises": "TypeError", "at": "transcribe"})
    for name in ("beam_size_0", "best_of_0"):
        assert _outcome(name) == ({"raises": "ValueError", "at": "iterate"},
                                  {"raises": "ValueError", "at": "transcribe"})
