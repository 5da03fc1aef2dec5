"""ggml_whisper on the multilingual Whisper base model (models/ggml-base.bin, tools/get_model.sh base;
every test is skipped, naming that command, when it is absent).

Reference: faster-whisper 1.2.1 on the same weights (models/faster-whisper-base), float32, given the
same samples: testdata/reference/base_language_detection.json, written by
tools/reference/fw_language_detection.py; for Chinese text, the AISHELL clip's segments with
transcribe()'s defaults (beam 5) and greedy (testdata/reference/base_zh_text.json,
tools/reference/fw_text_zh.py) and its word_timestamps=True words
(testdata/reference/base_zh_words.json, tools/reference/fw_words_zh.py).
"""
import json
import os

import numpy as np
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
    if not os.path.exists(BASE):
        pytest.skip("%s is absent: run `tools/get_model.sh base` (tools/test.sh does)" % BASE)
    return WhisperModel(BASE, cpu_threads=2)


ZH = "zh_aishell_BAC009S0764W0121.wav"
EOT = 50257  # <|endoftext|> of the multilingual vocabulary; timestamps and specials follow it


def _reference(name):
    with open(os.path.join(ROOT, "testdata", "reference", name), encoding="utf-8") as f:
        return json.load(f)


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


def test_empty_array_detects_as_faster_whisper(base):
    """faster-whisper 1.2.1 on base (float32) detects on a window of padding only for an empty array
    (or any shorter than a hop, 160 samples): detect_language and transcribe (no segments) both give
    "en" at 0.557259202003479 (run by hand, as tools/reference/fw_language_detection.py runs it). Ours
    encodes one all-zero mel frame there and gets "en" at 0.568: the window is padding either way,
    but its mel differs at the first frames, so the probability is checked to 0.02, not 1e-3."""
    empty = np.zeros(0, dtype=np.float32)
    for audio in (empty, np.zeros(80, dtype=np.float32)):
        language, probability, _ = base.detect_language(audio)
        assert language == "en" and abs(probability - 0.557259202003479) < 0.02
    segments, info = base.transcribe(empty)
    assert list(segments) == []
    assert info.language == "en" and abs(info.language_probability - 0.557259202003479) < 0.02
    # 160..200 samples (one frame; whisper_pcm_to_mel needs 201): faster-whisper 0.5478594899177551
    assert abs(base.detect_language(np.zeros(160, dtype=np.float32))[1] - 0.5478594899177551) < 2e-3


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


@pytest.mark.parametrize("decode,options", [("beam5", {}), ("greedy", {"beam_size": 1, "best_of": 2})])
def test_chinese_segments_are_faster_whispers(base, decode, options):
    """Language, segment times, text tokens and text (whole characters, U+FFFD nowhere) equal
    faster-whisper's; 几 and 乎 are each split over two tokens (6336 254, 2930 236)."""
    want = _reference("base_zh_text.json")["decodes"][decode]
    segments, info = base.transcribe(os.path.join(SHARED, "data", ZH), **options)
    segs = list(segments)
    assert info.language == want["language"] == "zh"
    assert [(s.start, s.end) for s in segs] == [(w["start"], w["end"]) for w in want["segments"]]
    assert [[t for t in s.tokens if t < EOT] for s in segs] == \
        [[t for t in w["tokens"] if t < EOT] for w in want["segments"]]
    assert [s.text for s in segs] == [w["text"] for w in want["segments"]]
    text = "".join(s.text for s in segs)
    assert "\ufffd" not in text and "几乎" in text
    assert text.encode("utf-8").decode("utf-8") == want["text"]


def test_chinese_words_are_faster_whispers(base):
    """word_timestamps=True: every character (or whole-character token) is a word, with
    faster-whisper's times within one 20 ms DTW step (it rounds to 10 ms)."""
    want = _reference("base_zh_words.json")["words"]
    segments, _ = base.transcribe(os.path.join(SHARED, "data", ZH), word_timestamps=True)
    words = [w for s in segments for w in s.words]
    assert [w.word for w in words] == [w["word"] for w in want]
    for got, ref in zip(words, want):
        assert abs(got.start - ref["start"]) <= 0.021 and abs(got.end - ref["end"]) <= 0.021, (got, ref)


def test_multilingual_windows_match_faster_whisper(base):
    """multilingual=True (faster-whisper's: a language per 30 s window) on the AISHELL clip, silence
    to 30 s, then jfk.wav, greedy without the previous text: each segment's tokens and its window's
    language (zh, then en) equal faster-whisper 1.2.1's (testdata/reference/base_multilingual.json,
    tools/reference/fw_multilingual.py); info.language is the one detected on the first window.
    Without multilingual the English window is decoded as Chinese and does not match."""
    ref = _reference("base_multilingual.json")
    d = next(x for x in ref["decodes"]
             if x["audio"] == "zh_silence_jfk" and x["decoding"] == "greedy_no_previous_text")
    first, n_zeros, last = ref["inputs"]["zh_silence_jfk"]["parts"]
    audio = np.concatenate([decode_audio(os.path.join(SHARED, "data", first)), np.zeros(n_zeros, np.float32),
                            decode_audio(os.path.join(SHARED, "data", last))])
    assert len(audio) == d["samples"]
    window_language = {w["seek"]: w["language"] for w in d["windows"]}
    want = [(s["tokens"], window_language[s["seek"]]) for s in d["segments"]]
    opts = dict(beam_size=1, best_of=1, temperature=0.0, condition_on_previous_text=False)
    segments, info = base.transcribe(audio, multilingual=True, **opts)
    got = [([t for t in s.tokens], s.language) for s in segments]
    assert info.language == d["language"] == "zh"
    assert [g[1] for g in got] == [lang for _, lang in want] and {"zh", "en"} <= {g[1] for g in got}
    # Timestamps included: faster-whisper's Segment.tokens start with the one that opened it.
    assert got == want
    segments, _ = base.transcribe(audio, multilingual=False, **opts)
    plain = [([t for t in s.tokens], s.language) for s in segments]
    assert [p[0] for p in plain] != [g[0] for g in got]
    assert all(p[1] is None for p in plain)


def test_multilingual_beam5_windows_at_temperature_0_match_faster_whisper(base):
    """multilingual.mp3 at beam 5 (the default) with multilingual=True: the segments of the two
    windows decoded at temperature 0 (from 0 and 24.56 s) have faster-whisper 1.2.1's tokens
    (testdata/reference/base_multilingual.json). Window 0 ends at <|24.56|> as CTranslate2's beam
    search ends it: finished beams refilled, every finished sequence ranked by its score (eot's
    log-probability included); that ranking with finished beams retired ends it later. The last
    window falls back to sampling, random in either runtime, and is left out."""
    ref = _reference("base_multilingual.json")
    d = next(x for x in ref["decodes"] if x["audio"] == "multilingual.mp3" and x["decoding"] == "beam5")
    want = [s["tokens"] for s in d["segments"] if s["seek"] < 5456]
    assert len(want) == 6 and d["segments"][4]["end"] == pytest.approx(24.56)
    segments, _ = base.transcribe(os.path.join(SHARED, "data", "multilingual.mp3"), multilingual=True)
    assert [list(s.tokens) for s in segments][:len(want)] == want


def test_multilingual_on_english_only_model_warns(caplog):
    """faster-whisper turns multilingual=True off on an English-only model, with its warning."""
    tiny_en = os.path.join(os.path.dirname(BASE), "ggml-tiny.en.bin")
    if not os.path.exists(tiny_en):
        pytest.skip("%s is absent: run tools/setup.sh" % tiny_en)
    model = WhisperModel(tiny_en, cpu_threads=2)
    with caplog.at_level("WARNING", logger="ggml_whisper"):
        segments, info = model.transcribe(os.path.join(SHARED, "data", "jfk.wav"), multilingual=True, beam_size=1)
        segments = list(segments)
    assert "multilingual parameter is set to True; setting to False instead" in caplog.text
    assert info.transcription_options.multilingual is False
    assert segments and all(s.language is None for s in segments)
