"""faster-whisper 1.2.1's prepend_punctuations, append_punctuations and log_progress (issue #37).

The punctuation sets against faster-whisper on the same weights (models/ggml-tiny.en.bin and
ggml-base.bin against models/faster-whisper-*, float32): testdata/fw_punctuations.json
(tools/reference/fw_punctuations.py): tiny.en on jfk.wav with the defaults, both sets "" and
append_punctuations="." only (beam 5); base on the AISHELL clip (Mandarin, greedy, with a Chinese
initial prompt so that the text ends with "。") with the defaults and with an append set without the CJK marks. The
words must be equal and their times within one 20 ms DTW step, as in test_word_probability.py.
"""
import json
import logging
import os
import sys

import pytest

from ggml_whisper import BatchedInferencePipeline, WhisperModel, decode_audio

from model_cache import cached_model as _model
from test_ggml_whisper import ROOT, SHARED, MODEL

JFK = os.path.join(SHARED, "data", "jfk.wav")

with open(os.path.join(ROOT, "testdata", "fw_punctuations.json"), encoding="utf-8") as f:
    RUNS = {r["name"]: r for r in json.load(f)["runs"]}

@pytest.mark.parametrize("name", sorted(RUNS))
def test_words_equal_faster_whisper(name):
    run = RUNS[name]
    segments, info = _model(run["model"]).transcribe(os.path.join(SHARED, "data", run["audio"]),
                                                     word_timestamps=True, **run["options"])
    segments = list(segments)
    assert info.language == run["language"]
    assert info.transcription_options.append_punctuations == run["options"].get(
        "append_punctuations", "\"'.。,，!！?？:：”)]}、")
    assert [s.text for s in segments] == run["texts"]
    ours = [w for s in segments for w in s.words]
    assert [w.word for w in ours] == [w["word"] for w in run["words"]]
    for a, b in zip(ours, run["words"]):  # DTW on either side: times within a step of 20 ms
        assert abs(a.start - b["start"]) <= 0.02 + 1e-6 and abs(a.end - b["end"]) <= 0.02 + 1e-6, (a, b)


def test_reference_runs_differ():
    """The option is seen in the reference: each set moves a mark ("," "." "。") between words."""
    words = {name: [w["word"] for w in run["words"]] for name, run in RUNS.items()}
    assert " so," in words["jfk_defaults"] and ["so", ","] == [w.strip() for w in words["jfk_none"][1:3]]
    assert words["jfk_none"][-1] == "." and words["jfk_append_period"][-1] == " country."
    assert words["zh_defaults"][-1] == "情况。" and words["zh_ascii_append"][-2:] == ["情况", "。"]


def test_batched_pipeline_merges_the_given_sets():
    """BatchedInferencePipeline takes the sets too: with both "" the words are those of the default
    run with every mark of faster-whisper's append set split off, and the text is unchanged."""
    pipeline = BatchedInferencePipeline(_model("tiny.en"))
    audio = decode_audio(JFK)
    merged = [w.word for s in pipeline.transcribe(audio, word_timestamps=True)[0] for w in s.words]
    split = [w.word for s in pipeline.transcribe(audio, word_timestamps=True, prepend_punctuations="",
                                                 append_punctuations="")[0] for w in s.words]
    assert "".join(merged) == "".join(split)
    marks = [w for w in split if w in "\"'.。,，!！?？:：”)]}、"]
    assert marks and len(split) == len(merged) + len(marks)


def test_bad_sets_raise():
    model = _model("tiny.en")
    with pytest.raises(TypeError, match="prepend_punctuations"):
        model.transcribe(JFK, word_timestamps=True, prepend_punctuations=None)
    with pytest.raises(TypeError, match="append_punctuations"):
        model.transcribe(JFK, word_timestamps=True, append_punctuations=[","])
    with pytest.raises(ValueError, match="append_punctuations has a NUL"):
        model.transcribe(JFK, word_timestamps=True, append_punctuations=".\0")
    with pytest.raises(TypeError, match="prepend_punctuations"):
        BatchedInferencePipeline(model).transcribe(decode_audio(JFK), prepend_punctuations=1)


def test_log_progress_shows_a_bar_over_the_seconds(capsys):
    """faster-whisper's tqdm(total=duration, unit="seconds"): the bar reaches the 11 s of jfk.wav."""
    pytest.importorskip("tqdm")
    segments, info = _model("tiny.en").transcribe(JFK, log_progress=True)
    texts = [s.text for s in segments]
    err = capsys.readouterr().err
    assert texts and "seconds" in err and "11.0/11.0" in err, err
    segments, _ = _model("tiny.en").transcribe(JFK)
    assert [s.text for s in segments] == texts
    assert "seconds" not in capsys.readouterr().err


def test_log_progress_without_tqdm_logs_percentages(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` raises ImportError
    with caplog.at_level(logging.INFO, logger="ggml_whisper"):
        segments, _ = _model("tiny.en").transcribe(JFK, log_progress=True)
        list(segments)
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("transcribe: ")]
    assert progress and progress[-1] == "transcribe: 100% (11.00 of 11.00 s)", progress


def test_every_faster_whisper_argument_is_accepted():
    """WhisperModel.transcribe has every keyword of faster-whisper 1.2.1's (issue #37), and the three
    added last have its defaults."""
    fw = pytest.importorskip("faster_whisper")
    import inspect
    ours = inspect.signature(WhisperModel.transcribe).parameters
    theirs = inspect.signature(fw.WhisperModel.transcribe).parameters
    assert set(theirs) <= set(ours)
    for name in ("prepend_punctuations", "append_punctuations", "log_progress"):
        assert ours[name].default == theirs[name].default, name
