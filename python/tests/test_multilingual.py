"""ggml_whisper on the multilingual Whisper base model (models/ggml-base.bin, tools/get_model.sh base).

Reference: faster-whisper 1.2.1 on the same weights (models/faster-whisper-base), float32, given the
same samples: testdata/reference/base_language_detection.json, written by
tools/reference/fw_language_detection.py.
"""
import json
import os

import pytest

from ggml_whisper import WhisperModel, decode_audio

HERE = os.path.dirname(os.path.abspath(__file__))


def _repo_root():
    link = os.path.join(HERE, "..", "..", "testdata", "README.md")  # a symlink into the checkout
    if os.path.exists(link):
        return os.path.dirname(os.path.dirname(os.path.realpath(link)))
    return os.path.dirname(os.path.dirname(HERE))


ROOT = _repo_root()
SHARED = os.environ.get("GGML_WHISPER_SHARED") or os.path.join(ROOT, "..", "shared")
BASE = os.path.join(os.environ.get("GGML_WHISPER_MODELS") or os.path.join(ROOT, "models"), "ggml-base.bin")
# Probabilities within this of faster-whisper's (issue #34); the mel of a window differs at its
# last frames when faster-whisper computes features over more audio than the window.
TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def base():
    assert os.path.exists(BASE), "missing %s: run tools/get_model.sh base" % BASE
    return WhisperModel(BASE, cpu_threads=2)


def _cases():
    with open(os.path.join(ROOT, "testdata", "reference", "base_language_detection.json")) as f:
        return json.load(f)["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: "%s@%d/%d/%g" % (
    c["clip"], c["first_sample"], c["language_detection_segments"], c["language_detection_threshold"]))
def test_detect_language_matches_faster_whisper(base, case):
    audio = decode_audio(os.path.join(SHARED, "data", case["clip"]))[case["first_sample"]:]
    lang, prob, all_probs = base.detect_language(
        audio, language_detection_segments=case["language_detection_segments"],
        language_detection_threshold=case["language_detection_threshold"])
    assert lang == case["language"]
    assert abs(prob - case["language_probability"]) < TOLERANCE
    ref = dict(case["all_language_probs"])
    assert len(all_probs) == len(ref) == 99  # base: every language but yue
    assert [c for c, _ in all_probs[:3]] == [c for c, _ in case["all_language_probs"][:3]]
    assert max(abs(p - ref[c]) for c, p in all_probs) < TOLERANCE


def test_transcribe_reports_detection_with_its_options(base):
    """info.all_language_probs and language_probability follow the detection options: the
    threshold-1.0 vote over both windows of multilingual.mp3 (en, then de) picks the first, en."""
    audio = decode_audio(os.path.join(SHARED, "data", "multilingual.mp3"))
    case = [c for c in _cases() if c["language_detection_segments"] == 2][0]
    _, info = base.transcribe(audio, language_detection_segments=2,
                              language_detection_threshold=1.0, beam_size=1)
    assert info.language == case["language"] == "en"
    assert abs(info.language_probability - case["language_probability"]) < TOLERANCE
    assert info.all_language_probs[0][0] == case["all_language_probs"][0][0] == "de"  # the last window's


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_detection_segments_must_be_a_positive_integer(base, bad):
    with pytest.raises(ValueError, match="language_detection_segments"):
        base.detect_language(decode_audio(os.path.join(SHARED, "data", "jfk.wav")), language_detection_segments=bad)
