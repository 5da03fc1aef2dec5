"""Checks of transcribe()'s options that would otherwise reach the extension module unchecked,
shared by WhisperModel.transcribe and BatchedInferencePipeline.transcribe: a value of the wrong
type for a field of _core.Options (a pybind11 setter) raised pybind11's bare "incompatible
function arguments" TypeError, which names neither the option nor what it takes. And the warning
for an option that has no effect in the call (hallucination_silence_threshold)."""

import logging
import numbers

import numpy as np

_LOG = logging.getLogger("ggml_whisper")


def check_transcribe(a, hallucination_silence_threshold, decoding):
    """WhisperModel.transcribe's checks of its arguments `a` (by name): _check_prompt_options,
    check_punctuations, check_option_types; then warn_unused_hallucination_threshold (the threshold
    as checked, and the model's decoding rules). Raises as they do."""
    from ggml_whisper import _check_prompt_options
    from ggml_whisper._options import check_punctuations
    _check_prompt_options(a["prefix"], a["hotwords"], a["chunk_length"], a["initial_prompt"])
    check_punctuations(a["prepend_punctuations"], a["append_punctuations"])
    check_option_types(a["log_prob_threshold"], a["no_speech_threshold"], a["suppress_blank"], a["without_timestamps"])
    warn_unused_hallucination_threshold(hallucination_silence_threshold, a["word_timestamps"], decoding)


def check_option_types(log_prob_threshold, no_speech_threshold, suppress_blank, without_timestamps):
    """Raises TypeError naming the first option of the wrong type: log_prob_threshold and
    no_speech_threshold take a number or None (faster-whisper 1.2.1 raises TypeError for a str at
    its first window: "'>' not supported between instances of 'float' and 'str'"; here it is
    raised at the call; a bool is refused, as by _check_beam_options); suppress_blank and
    without_timestamps take a bool (or an integer, a numpy bool, or None for False: what the
    _core.Options setters convert)."""
    for name, value in (("log_prob_threshold", log_prob_threshold), ("no_speech_threshold", no_speech_threshold)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise TypeError("%s=%r: expected a number or None, got %s" % (name, value, type(value).__name__))
    for name, value in (("suppress_blank", suppress_blank), ("without_timestamps", without_timestamps)):
        if value is not None and not isinstance(value, (bool, np.bool_, numbers.Integral)):
            raise TypeError("%s=%r: expected True or False, got %s" % (name, value, type(value).__name__))


def warn_unused_hallucination_threshold(threshold, word_timestamps, decoding):
    """Logs a warning on the "ggml_whisper" logger when hallucination_silence_threshold is set but
    has no effect: faster-whisper 1.2.1 applies it only with word_timestamps=True, and this
    runtime only under OpenAI's decoding rules. The library's own warning says the same to the
    CLI (--hallucination-silence-threshold without -dtw, or with --decoding whisper.cpp) and the
    server: whisper_full_params.ggml_hallucination_silence_thold is ignored, as it needs DTW word
    timestamps and OpenAI's decoding rules."""
    if threshold is None or (word_timestamps and decoding == "openai"):
        return
    _LOG.warning("hallucination_silence_threshold=%g is ignored: it needs DTW word timestamps "
                 "(word_timestamps=True) and OpenAI's decoding rules (decoding='openai'); decoding is %r",
                 threshold, decoding)
