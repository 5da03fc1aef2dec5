"""One WhisperModel per model file for the test modules that compare against faster-whisper on
tiny.en and base (test_decoding_limits, test_punctuations, test_word_probability): loading each
once keeps python_test's time down."""
import os

import pytest

from ggml_whisper import WhisperModel

from test_ggml_whisper import MODEL

BASE = os.path.join(os.path.dirname(MODEL), "ggml-base.bin")

_MODELS = {}


def cached_model(name):
    """The WhisperModel of "tiny.en" (MODEL) or of base (BASE), 2 threads, made on first use;
    skips the test when base has not been fetched (tools/get_model.sh base)."""
    path = MODEL if name == "tiny.en" else BASE
    if not os.path.exists(path):
        pytest.skip("%s is absent: run tools/get_model.sh base" % path)
    if path not in _MODELS:
        _MODELS[path] = WhisperModel(path, cpu_threads=2)
    return _MODELS[path]
