"""ggml_whisper: Whisper speech recognition on the ggml_whisper runtime, with faster-whisper's API.

    from ggml_whisper import WhisperModel

    model = WhisperModel("models/ggml-tiny.en.bin", cpu_threads=2)
    segments, info = model.transcribe("audio.wav", beam_size=5)
    print(info.language, info.language_probability, info.duration)
    for segment in segments:  # lazy: each segment is decoded as the loop asks for it
        print("[%.2fs -> %.2fs] %s" % (segment.start, segment.end, segment.text))

A script written for faster-whisper's sequential API (faster_whisper.WhisperModel, transcribe's
keyword arguments, the Segment and TranscriptionInfo fields) runs with its import changed, within
the differences below; BatchedInferencePipeline is in ggml_whisper/batched.py. Differences:
  - the model is a whisper.cpp ggml file or a CTranslate2 folder (converted in memory at each load,
    tools/convert/ct2_folder.h), not a model size name (nothing is downloaded); device "cpu"/"auto";
  - compute_type converts the weight matrices at load to a ggml type (the tensors and kernels of
    whisper.cpp's quantize): int8, int8_float32, int8_float16, int8_bfloat16 -> q8_0 (8-bit
    weights; products quantize activations to 8 bits per block of 32, as ggml's vec_dot, in an
    int8 GEMM on CPUs with VNNI); float16 -> f16; float32 -> f32; bfloat16 -> f16 (no
    bfloat16 kernels; a warning says so); "default" and "auto" keep the file's types. int16 is
    refused (ValueError). CTranslate2's int8 rounds differently, so int8 texts can differ a little;
  - decoding follows OpenAI's rules (as faster-whisper does) unless decoding="whisper.cpp";
  - vad_filter=True needs the Silero VAD v6 model converted (ggml-silero-v6.bin beside the model
    file, or $GGML_WHISPER_VAD_MODEL); it then works as faster-whisper's (speech chunks by its
    rules, concatenated, times restored as its SpeechTimestampsMap); word_timestamps=True loads a
    second context of the same (memory-mapped) file with the model's alignment heads;
  - chunk_length accepts whole seconds 1..30 (faster-whisper's longer chunks skip audio);
  - multilingual=True (a language per 30 s window, as faster-whisper's) also tells each segment's
    language in Segment.language, a field faster-whisper's Segment does not have (None without it);
  - beam_size and best_of are at most 32 (whisper.h's WHISPER_GGML_MAX_DECODERS; faster-whisper sets
    no limit, whisper.cpp 8);
  - bad values raise at the call where faster-whisper's first window raises (temperature=[] or a
    string, beam_size or best_of 0: the same exception types), and a suppress_tokens id past the
    vocabulary raises ValueError (faster-whisper 1.2.1 crashes the interpreter);
  - probabilities (Word.probability, avg_logprob, no_speech_prob, language probabilities) differ
    from CTranslate2's float32 ones in the third decimal (ggml's F16 arithmetic), and a near tie of
    two tokens can then decode differently.

The GIL is released while audio decodes and while a segment is being decoded, so several threads
can transcribe with one model at once (each call has its own decoding state).
"""

import bisect
import logging
import math
import numbers
import os
import threading
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator, List, Optional, Tuple, Union

import numpy as np

from ggml_whisper import _checks, _core, _options

__all__ = ["WhisperModel", "Segment", "Word", "TranscriptionInfo", "TranscriptionOptions", "decode_audio"]

__version__ = _core.version()

SAMPLE_RATE = 16000

# Warnings about a request changed to fit the model (faster-whisper logs its own to "faster_whisper").
_LOG = logging.getLogger("ggml_whisper")

# faster-whisper's compute_type names this runtime has a ggml weight type for (int16 has none).
_COMPUTE_TYPES = ("default", "auto", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "float16", "bfloat16",
                  "float32")


@dataclass
class Word:
    start: float
    end: float
    word: str
    probability: float


@dataclass
class Segment:
    id: int
    seek: int
    start: float
    end: float
    text: str
    tokens: List[int]
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    words: Optional[List[Word]]
    temperature: Optional[float]
    # Not in faster-whisper: the language of the segment's window, with multilingual=True.
    language: Optional[str] = None


@dataclass
class TranscriptionOptions:
    beam_size: int
    best_of: int
    temperatures: List[float]
    log_prob_threshold: Optional[float]
    no_speech_threshold: Optional[float]
    compression_ratio_threshold: Optional[float]
    condition_on_previous_text: bool
    initial_prompt: Optional[Union[str, Iterable[int]]]
    suppress_blank: bool
    suppress_tokens: Optional[List[int]]
    without_timestamps: bool
    max_initial_timestamp: float
    word_timestamps: bool
    multilingual: bool = False
    clip_timestamps: Union[str, List[float]] = "0"
    hallucination_silence_threshold: Optional[float] = None
    patience: float = 1
    length_penalty: float = 1
    repetition_penalty: float = 1
    no_repeat_ngram_size: int = 0
    prompt_reset_on_temperature: float = 0.5
    max_new_tokens: Optional[int] = None
    prefix: Optional[str] = None
    hotwords: Optional[str] = None
    prepend_punctuations: str = _options.PREPEND
    append_punctuations: str = _options.APPEND


@dataclass
class TranscriptionInfo:
    language: str
    language_probability: float
    duration: float
    duration_after_vad: float
    all_language_probs: Optional[List[Tuple[str, float]]]
    transcription_options: TranscriptionOptions
    vad_options: Optional[dict] = None


def decode_audio(audio: Union[str, os.PathLike, BinaryIO, np.ndarray]) -> np.ndarray:
    """Mono float32 samples at 16 kHz (shape [n_samples]) from a path, a binary file object or an
    array (float32 at 16 kHz already; other float dtypes are converted, not resampled).

    Files are decoded by libsndfile (WAV, FLAC, OGG/Vorbis/Opus, MP3, AIFF, ...) and resampled with
    libsamplerate, exactly as the ggml_whisper CLI reads them. Raises FileNotFoundError for a
    missing path and ValueError for data that is not audio (the message names the file), for an
    empty file, and for array samples that are NaN, infinite or past the magnitude float files may
    hold (_core.MAX_FLOAT_SAMPLE, 1e4; full scale is 1.0). A file that ends before the frames its
    header announces (a truncated WAV) is decoded as far as it goes, with the CLI's warning on the
    "ggml_whisper" logger naming the file and both counts. An empty array is returned as it is
    (transcribe gives no segments for it, as faster-whisper 1.2.1 does).
    """
    if isinstance(audio, np.ndarray):
        return _checked_samples(audio)
    if isinstance(audio, (str, os.PathLike)):
        samples, warning = _core.decode_audio_file(_fs_path("audio", audio))
    elif hasattr(audio, "read"):
        data = audio.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ValueError("audio file object returned %s from read(), expected bytes (open it in 'rb' mode)"
                             % type(data).__name__)
        name = str(getattr(audio, "name", "<file object>")).encode("utf-8", "backslashreplace")
        samples, warning = _core.decode_audio_bytes(bytes(data), name)
    else:
        raise TypeError("audio is a %s, expected a path, a binary file object or a float32 numpy array"
                        % type(audio).__name__)
    if warning:
        _LOG.warning("%s", warning)
    return samples


def _checked_samples(audio: np.ndarray) -> np.ndarray:
    """decode_audio for an array: float32, one dimension, every sample finite and within
    _core.MAX_FLOAT_SAMPLE, the CLI's bound for float files (faster-whisper 1.2.1, tiny.en float32,
    2 s of NaN, inf or 1e30: 224 ')' characters after 3 minutes; of 1e5: " No, no, no.")."""
    if audio.ndim != 1:
        raise ValueError("audio array has shape %s, expected one dimension of mono samples at 16 kHz"
                         % (audio.shape,))
    if not np.issubdtype(audio.dtype, np.floating):
        raise ValueError("audio array has dtype %s, expected float32 samples in [-1, 1]" % audio.dtype)
    if not np.all(np.isfinite(audio)):
        bad = int(np.flatnonzero(~np.isfinite(audio))[0])
        raise ValueError("audio array sample %d is %s, expected finite samples" % (bad, audio[bad]))
    samples = np.ascontiguousarray(audio, dtype=np.float32)
    loud = np.abs(samples) > _core.MAX_FLOAT_SAMPLE
    if loud.any():
        bad = int(np.flatnonzero(loud)[0])
        raise ValueError("audio array sample %d is %g, expected a magnitude of at most %g (full scale is 1.0)"
                         % (bad, float(audio[bad]), _core.MAX_FLOAT_SAMPLE))
    return samples


def _fs_path(name, path) -> bytes:
    """`path` (str or os.PathLike) as the bytes the file system takes (os.fsencode: a name with
    undecodable bytes round-trips), for the C++ side. Raises ValueError naming the argument for a
    NUL byte (a C string would end there and name another file) or a str that has no encoding."""
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError as e:
        raise ValueError("%s path %r cannot be encoded as a file name (%s)" % (name, os.fspath(path), e.reason)) from None
    if b"\0" in raw:
        raise ValueError("%s path %r contains a NUL character" % (name, os.fspath(path)))
    return raw


def _check_text(name, text):
    """A str option passed to the C API as UTF-8 text that ends at its first NUL: raises ValueError
    naming the option for a NUL character (what follows would be dropped without a word;
    faster-whisper tokenizes it, this API cannot carry it) and for a lone surrogate, which is not
    text and has no UTF-8 form (pybind11 raised a bare TypeError)."""
    nul = text.find("\0")
    if nul >= 0:
        raise ValueError("%s has a NUL character at index %d: whisper_full takes NUL-terminated text; remove it"
                         % (name, nul))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("%s has %r at index %d, a lone surrogate that is not text (no UTF-8 encoding)"
                         % (name, text[e.start], e.start)) from None


def _temperatures(temperature) -> List[float]:
    """faster-whisper's temperature as the list of temperatures to fall back through: a list or
    tuple as it is (any finite numbers, in any order: <= 0 decodes by beam search or greedily,
    above 0 samples best_of candidates), any other number as [temperature]. Raises TypeError for a
    value that is not a number, ValueError for an empty list and NaN or infinity."""
    values = list(temperature) if isinstance(temperature, (list, tuple)) else [temperature]
    if not values:
        raise ValueError("temperature=%r: expected a number or a non-empty list of numbers" % (temperature,))
    for t in values:
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise TypeError("temperature=%r: expected a number or a list or tuple of numbers" % (temperature,))
        if not math.isfinite(t):
            raise ValueError("temperature=%r: expected finite numbers" % (temperature,))
    return [float(t) for t in values]


def _check_decoding_options(task, beam_size, best_of, temperature, suppress_tokens, n_vocab):
    """Checks transcribe's task and decoding options; returns (suppress_tokens as a list, the
    temperatures). Raises ValueError naming the first bad option (TypeError for a temperature that
    is not a number)."""
    if task not in ("transcribe", "translate"):
        raise ValueError("task=%r, expected 'transcribe' or 'translate'" % task)
    for name, value in (("beam_size", beam_size), ("best_of", best_of)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= _core.MAX_DECODERS:
            # CTranslate2: "The beam size must be > 0", "The number of hypotheses must be > 0".
            raise ValueError("%s is %r, expected 1..%d (whisper.h's WHISPER_GGML_MAX_DECODERS)"
                             % (name, value, _core.MAX_DECODERS))
    tokens_to_suppress = list(suppress_tokens) if suppress_tokens is not None else []
    for t in tokens_to_suppress:  # faster-whisper's get_suppressed_tokens: ids, -1 = non-speech set
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or not -1 <= t < n_vocab:
            # faster-whisper 1.2.1 crashes (SIGSEGV in CTranslate2) on an id past the vocabulary.
            raise ValueError("suppress_tokens=%r: expected token ids in [0, %d) and -1 (the non-speech tokens)"
                             % (suppress_tokens, n_vocab))
    return tokens_to_suppress, _temperatures(temperature)


def _check_prompt_options(prefix, hotwords, chunk_length, initial_prompt=None):
    """prefix and hotwords: a string or None; initial_prompt: a string, token ids or None; every
    string without NUL characters or lone surrogates (_check_text); chunk_length: whole seconds
    1..30 or None (30; faster-whisper's longer chunks would skip audio). Raises ValueError naming
    the option."""
    for name, text in (("prefix", prefix), ("hotwords", hotwords)):
        if text is not None and not isinstance(text, str):
            raise ValueError("%s=%r, expected a string or None" % (name, text))
        if text is not None:
            _check_text(name, text)
    if isinstance(initial_prompt, str):
        _check_text("initial_prompt", initial_prompt)
    if chunk_length is not None and (isinstance(chunk_length, bool) or not isinstance(chunk_length, numbers.Integral)
                                     or not 1 <= chunk_length <= 30):
        raise ValueError("chunk_length=%r, expected whole seconds 1..30 or None (30)" % (chunk_length,))


def _check_beam_options(beam_size, patience, length_penalty, repetition_penalty, no_repeat_ngram_size,
                        max_new_tokens, prompt_reset_on_temperature):
    """Checks faster-whisper's patience, length_penalty, repetition_penalty, no_repeat_ngram_size,
    max_new_tokens and prompt_reset_on_temperature as CTranslate2's validate_decoding_options would
    when faster-whisper passes them on. Raises ValueError naming the first bad option."""
    def number(name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
            raise ValueError("%s=%r, expected a number" % (name, value))
    for name, value in (("patience", patience), ("length_penalty", length_penalty),
                        ("repetition_penalty", repetition_penalty),
                        ("prompt_reset_on_temperature", prompt_reset_on_temperature)):
        number(name, value)
    if patience <= 0 or round(beam_size * patience) < 1:
        raise ValueError("patience=%r: expected > 0 with round(beam_size * patience) >= 1 (CTranslate2)" % (patience,))
    if math.isinf(length_penalty):
        raise ValueError("length_penalty=%r, expected a finite number" % (length_penalty,))
    if repetition_penalty <= 0 or math.isinf(repetition_penalty):
        raise ValueError("repetition_penalty=%r, expected a finite number > 0 (1: off)" % (repetition_penalty,))
    for name, value, low in (("no_repeat_ngram_size", no_repeat_ngram_size, 0),
                             ("max_new_tokens", 1 if max_new_tokens is None else max_new_tokens, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low or value > 2 ** 31 - 1:
            raise ValueError("%s=%r, expected %san integer >= %d" % (name, value, "None or " * low, low))


def _alignment_preset(dims):
    """whisper-cli's -dtw preset for a model of dims (n_vocab, n_audio_layer, n_text_layer): the
    released Whisper sizes (OpenAI's _ALIGNMENT_HEADS); None for anything else. large-v1 and v2
    have the same shape: v2's heads are used."""
    n_vocab, n_audio_layer, n_text_layer = dims
    if n_vocab == 51864:
        return {4: "tiny.en", 6: "base.en", 12: "small.en", 24: "medium.en"}.get(n_text_layer)
    if n_vocab == 51865:
        return {4: "tiny", 6: "base", 12: "small", 24: "medium", 32: "large.v2"}.get(n_text_layer)
    if n_vocab == 51866:
        return {(32, 32): "large.v3", (32, 4): "large.v3.turbo"}.get((n_audio_layer, n_text_layer))
    return None


class WhisperModel:
    """A loaded Whisper model (one whisper_context), shared by every transcribe() call.

    model_size_or_path: a whisper.cpp ggml model file or a CTranslate2 folder (models/faster-whisper-tiny.en).
    cpu_threads: threads per transcription, 0..512 (0: min(4, the machine's cores), as CTranslate2;
        512 is the CLI's -t limit, ggml's thread pool size).
    decoding: "openai" (OpenAI's and faster-whisper's rules, the default) or "whisper.cpp".
    Raises FileNotFoundError for a missing file or model.bin, ValueError for a file or folder that is not a model.
    """

    def __init__(self, model_size_or_path: str, device: str = "auto", device_index: int = 0,
                 compute_type: str = "default", cpu_threads: int = 0, num_workers: int = 1,
                 download_root: Optional[str] = None, local_files_only: bool = False,
                 decoding: str = "openai"):
        if decoding not in ("openai", "whisper.cpp"):
            raise ValueError("decoding=%r, expected 'openai' or 'whisper.cpp'" % (decoding,))
        if device not in ("auto", "cpu"):
            raise ValueError("device=%r: ggml_whisper runs on the CPU ('cpu' or 'auto')" % device)
        # CTranslate2's compute types: the weights are converted at load (whisper_ggml_set_compute_type).
        if compute_type not in _COMPUTE_TYPES:
            raise ValueError("compute_type=%r is not supported, expected one of %s"
                             % (compute_type, ", ".join(_COMPUTE_TYPES)))
        if not isinstance(cpu_threads, numbers.Integral) or isinstance(cpu_threads, bool):
            raise TypeError("cpu_threads is %r, expected an int in 0..%d" % (cpu_threads, _core.MAX_THREADS))
        if not 0 <= cpu_threads <= _core.MAX_THREADS:
            raise ValueError("cpu_threads is %d, expected 0..%d (0: min(4, the machine's cores); %d is the CLI's "
                             "-t limit)" % (cpu_threads, _core.MAX_THREADS, _core.MAX_THREADS))
        path = os.fspath(model_size_or_path)
        if not os.path.exists(path):
            raise FileNotFoundError(
                "model %r not found: ggml_whisper loads whisper.cpp ggml model files and CTranslate2 model folders "
                "(run tools/get_model.sh); model size names are not downloaded" % path)
        self._model = _core.Model(_fs_path("model", path), decoding, "", compute_type)
        if self._model.compute_type_note:
            _LOG.warning("%s", self._model.compute_type_note)
        self._compute_type = compute_type
        self._decoding = decoding
        self._words = None  # the context for word_timestamps=True, made when first needed
        self._words_lock = threading.Lock()
        self._threads = cpu_threads if cpu_threads > 0 else min(4, os.cpu_count() or 1)
        self.model_path = path

    @property
    def is_multilingual(self) -> bool:
        return self._model.multilingual

    def detect_language(self, audio=None, language_detection_segments: int = 1,
                        language_detection_threshold: float = 0.5) -> Tuple[str, float, List[Tuple[str, float]]]:
        """(language code, its probability, every (code, probability) sorted by probability), as
        faster-whisper 1.2.1's WhisperModel.detect_language: each of the first
        language_detection_segments 30 s windows in turn (whisper_lang_auto_detect on it) until one's
        most probable language is above language_detection_threshold; if none is, the language most
        often on top, with its highest probability, and the last window's list. English-only models
        give ("en", 1.0, [("en", 1.0)]). Raises ValueError for bad audio or arguments."""
        if audio is None:
            raise ValueError("detect_language: audio is required (mel features are not accepted)")
        return self._detect(decode_audio(audio), language_detection_segments, language_detection_threshold)

    def _detect(self, samples, segments=1, threshold=0.5):
        if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
            raise ValueError("language_detection_segments is %r, expected an integer >= 1" % (segments,))
        if threshold is None or not isinstance(threshold, (int, float)) or math.isnan(threshold):
            raise ValueError("language_detection_threshold is %r, expected a probability" % (threshold,))
        if not self._model.multilingual:
            return "en", 1.0, [("en", 1.0)]
        window = 30 * SAMPLE_RATE
        votes = {}
        end = max(1, min(samples.shape[0], segments * window))  # no audio: one window of padding
        for begin in range(0, end, window):
            lang_id, probs = self._model.detect_language(samples[begin:min(end, begin + window)], self._threads)
            ranked = sorted(((_core.lang_str(i), float(probs[i])) for i in range(self._model.n_languages)),
                            key=lambda x: -x[1])
            language, probability = ranked[0]
            if probability > threshold:
                return language, probability, ranked
            votes.setdefault(language, []).append(probability)
        language = max(votes, key=lambda code: len(votes[code]))  # ties: the first seen, as max() there
        return language, max(votes[language]), ranked

    def transcribe(self, audio, language: Optional[str] = None, task: str = "transcribe",
                   beam_size: int = 5, best_of: int = 5, patience: float = 1, length_penalty: float = 1,
                   repetition_penalty: float = 1, no_repeat_ngram_size: int = 0,
                   temperature=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0),
                   compression_ratio_threshold: Optional[float] = 2.4,
                   log_prob_threshold: Optional[float] = -1.0, no_speech_threshold: Optional[float] = 0.6,
                   condition_on_previous_text: bool = True, prompt_reset_on_temperature: float = 0.5,
                   initial_prompt: Optional[Union[str, Iterable[int]]] = None, prefix: Optional[str] = None,
                   suppress_blank: bool = True, suppress_tokens: Optional[List[int]] = (-1,),
                   without_timestamps: bool = False, max_initial_timestamp: float = 1.0,
                   word_timestamps: bool = False, vad_filter: bool = False, vad_parameters=None,
                   language_detection_threshold: Optional[float] = 0.5, language_detection_segments: int = 1,
                   multilingual: bool = False, clip_timestamps: Union[str, List[float]] = "0",
                   hallucination_silence_threshold: Optional[float] = None, max_new_tokens: Optional[int] = None,
                   chunk_length: Optional[int] = None, hotwords: Optional[str] = None, log_progress: bool = False,
                   prepend_punctuations: str = _options.PREPEND, append_punctuations: str = _options.APPEND,
                   **unsupported) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """Transcribes `audio` (a path, a binary file object or float32 samples at 16 kHz).

        Returns (segments, info) as faster-whisper does: `segments` is a lazy iterator (decoding
        runs on a worker thread and each next() waits, without the GIL, for the next segment);
        `info` is ready at once (language detection, when needed, runs here). On an English-only
        model, another language or task="translate" is transcribed in English with faster-whisper's
        warning on the "ggml_whisper" logger (the CLI and the server say the same). Raises ValueError
        for bad audio or options, FileNotFoundError for a missing file (or VAD model with
        vad_filter); the iterator raises as faster-whisper's windows do (ValueError for a prompt +
        max_new_tokens past 448, TypeError for max_initial_timestamp=None), or RuntimeError. word_timestamps=True
        times words as faster-whisper does (cross-attention DTW; segments move to their words).
        multilingual=True detects the language of every 30 s window from its encoder output and
        decodes the window in it, as faster-whisper 1.2.1 does (info.language stays the one
        detected, or given, for the whole audio; each Segment.language is its window's); on an
        English-only model it is turned off with faster-whisper's warning. clip_timestamps ("0": all;
        "start,end,..." seconds or a list; vad_filter is then ignored and language detection reads
        the first clip), hallucination_silence_threshold (with word_timestamps=True), prefix,
        hotwords, suppress_tokens (any ids; -1: the non-speech set), chunk_length (1..30 s), the
        prepend/append_punctuations sets (str) and the beam and repetition options are faster-whisper
        1.2.1's (whisper_full_params.ggml_* fields); log_progress: ggml_whisper/_options.py."""
        if unsupported:
            raise TypeError("transcribe() got unsupported arguments: %s" % ", ".join(sorted(unsupported)))
        clips = _clip_timestamps(clip_timestamps)
        hallucination = _hallucination_silence_threshold(hallucination_silence_threshold)
        # faster-whisper 1.2.1: "vad_filter will be ignored if clip_timestamps is used" (!= "0").
        vad_filter = vad_filter and _is_default_clip(clip_timestamps)
        vad_params = self._vad_params(vad_parameters) if vad_filter else None
        tokens_to_suppress, temperatures = _check_decoding_options(
            task, beam_size, best_of, temperature, suppress_tokens, self._model.dims[0])
        _check_beam_options(beam_size, patience, length_penalty, repetition_penalty, no_repeat_ngram_size,
                            max_new_tokens, prompt_reset_on_temperature)
        _checks.check_transcribe(dict(locals()), hallucination, self._decoding)  # the options by name
        multilingual = self._multilingual(multilingual)
        samples = decode_audio(audio)
        duration = samples.shape[0] / SAMPLE_RATE
        speech_map = None
        if vad_filter:
            samples, speech_map = self._speech_only(samples, vad_params)
        language, translate, language_probability, all_probs = self._language(
            _from_first_clip(samples, clips), language,
            task, language_detection_segments, language_detection_threshold)
        options = TranscriptionOptions(
            beam_size=beam_size, best_of=best_of, temperatures=temperatures,
            log_prob_threshold=log_prob_threshold, no_speech_threshold=no_speech_threshold,
            compression_ratio_threshold=_compression_ratio_threshold(compression_ratio_threshold),
            condition_on_previous_text=condition_on_previous_text, initial_prompt=initial_prompt,
            suppress_blank=suppress_blank, suppress_tokens=tokens_to_suppress,
            without_timestamps=without_timestamps, max_initial_timestamp=max_initial_timestamp,
            word_timestamps=word_timestamps, multilingual=bool(multilingual), clip_timestamps=clip_timestamps,
            hallucination_silence_threshold=hallucination, patience=patience, length_penalty=length_penalty,
            repetition_penalty=repetition_penalty, no_repeat_ngram_size=no_repeat_ngram_size,
            prompt_reset_on_temperature=prompt_reset_on_temperature, max_new_tokens=max_new_tokens,
            prefix=prefix, hotwords=hotwords, prepend_punctuations=prepend_punctuations,
            append_punctuations=append_punctuations)
        info = TranscriptionInfo(language=language, language_probability=language_probability,
                                 duration=duration, duration_after_vad=samples.shape[0] / SAMPLE_RATE,
                                 all_language_probs=all_probs, transcription_options=options,
                                 vad_options=vad_params[1] if vad_filter else None)
        early = _no_windows(samples, max_initial_timestamp)
        if early is not None:
            return early, info
        o = self._core_options(options, language, translate)
        o.chunk_length = int(chunk_length or 0)
        run = (self._word_model() if word_timestamps else self._model).transcribe(samples, o)
        segments = _Segments(run, bool(multilingual), speech_map)
        return (_options.Progress(segments, info.duration_after_vad) if log_progress else segments), info

    def _multilingual(self, multilingual):
        """multilingual, or False with faster-whisper 1.2.1's warning on an English-only model (its
        text lacks the space before "True")."""
        if multilingual and not self._model.multilingual:
            _LOG.warning("The current model is English-only but the multilingual parameter is set to "
                         "True; setting to False instead.")
            return False
        return multilingual

    def _speech_only(self, samples, vad_params):
        """faster-whisper 1.2.1's vad_filter (transcribe.py): the speech chunks of get_speech_timestamps
        (Silero VAD v6, faster-whisper's rules: whisper_ggml_vad_speech_faster_whisper) concatenated
        with nothing between (collect_chunks), and the _SpeechTimestampsMap that restores times."""
        params, opts = vad_params
        neg = opts["neg_threshold"]
        chunks = _core.speech_chunks(_fs_path("VAD model", self._vad_model_path()), samples, params,
                                     -1.0 if neg is None else float(neg), self._threads)
        if not chunks:
            return np.zeros(0, np.float32), None
        return np.concatenate([samples[s:e] for s, e in chunks]), _SpeechTimestampsMap(chunks)

    def _language(self, samples, language, task, detection_segments, detection_threshold):
        """(language, translate, language_probability, all_language_probs) for transcribe: the
        requested language checked, faster-whisper's rule for English-only models applied (shared
        with the CLI and the server; its notes logged), then detected when none was requested."""
        if language is not None and not _is_language_code(language):
            # faster-whisper's Tokenizer accepts codes only ("en", not "english").
            raise ValueError("language=%r is not a Whisper language code (e.g. 'en', 'zh', 'de')" % (language,))
        requested = "auto" if language is None else language
        language, translate, notes = _core.decide_language(self._model.multilingual, requested,
                                                           task == "translate")
        for level, message in notes:
            (_LOG.warning if level == "warning" else _LOG.info)(message)
        if requested == "auto":
            language, language_probability, all_probs = self._detect(
                samples, detection_segments, detection_threshold)
        else:
            language_probability, all_probs = 1.0, None
        return language, translate, language_probability, all_probs

    def _core_options(self, options, language, translate):
        """whisper_full's parameters (_core.Options) for the checked TranscriptionOptions, the
        decided language and task."""
        o = _core.Options()
        o.strategy = _core.SAMPLING_BEAM_SEARCH if options.beam_size > 1 else _core.SAMPLING_GREEDY
        o.beam_size = options.beam_size
        o.best_of = options.best_of
        o.temperatures = options.temperatures  # whisper_full_params.ggml_temperatures
        o.logprob_thold = options.log_prob_threshold if options.log_prob_threshold is not None else -math.inf
        o.no_speech_thold = options.no_speech_threshold if options.no_speech_threshold is not None else math.inf
        # whisper_full_params.ggml_compression_ratio_thold: None -> 0 (no check).
        o.compression_ratio_thold = options.compression_ratio_threshold or 0.0
        # ggml_clip_timestamps: seconds; the default "0" (the whole audio) is no clip at all.
        clip = options.clip_timestamps
        o.clip_timestamps = [] if _is_default_clip(clip) else _clip_timestamps(clip)
        # ggml_hallucination_silence_thold: None -> -1 (off); 0 is on, as in faster-whisper.
        if options.hallucination_silence_threshold is not None:
            o.hallucination_silence_thold = options.hallucination_silence_threshold
        o.no_context = not options.condition_on_previous_text
        o.patience = options.patience
        o.length_penalty = options.length_penalty
        o.repetition_penalty = options.repetition_penalty
        o.no_repeat_ngram_size = options.no_repeat_ngram_size
        o.max_new_tokens = options.max_new_tokens or 0
        o.prompt_reset_on_temperature = options.prompt_reset_on_temperature
        o.no_timestamps = options.without_timestamps
        o.suppress_blank = options.suppress_blank
        o.suppress_nst = False
        o.suppress_tokens = [int(t) for t in options.suppress_tokens]  # ggml_suppress_tokens
        o.prefix = options.prefix or ""
        o.hotwords = options.hotwords or ""
        o.prepend_punctuations = options.prepend_punctuations  # ggml_prepend/append_punctuations
        o.append_punctuations = options.append_punctuations
        o.max_initial_ts = options.max_initial_timestamp
        o.translate = translate
        o.multilingual = options.multilingual
        o.language = language
        o.n_threads = self._threads
        if isinstance(options.initial_prompt, str):
            o.initial_prompt = options.initial_prompt
        elif options.initial_prompt is not None:
            o.prompt_tokens = [int(t) for t in options.initial_prompt]
        return o

    # faster-whisper 1.2's VadOptions defaults (vad_filter=True without vad_parameters).
    _VAD_DEFAULTS = {"threshold": 0.5, "neg_threshold": None, "min_speech_duration_ms": 0,
                     "max_speech_duration_s": math.inf, "min_silence_duration_ms": 2000, "speech_pad_ms": 400}

    def _vad_params(self, vad_parameters):
        """(_core.VadParams, the options as a dict) from faster-whisper's vad_parameters: None, a
        dict, or an object with VadOptions' attributes (neg_threshold None: max(threshold - 0.15, 0.01))."""
        given = {}
        if isinstance(vad_parameters, dict):
            given = dict(vad_parameters)
        elif vad_parameters is not None:
            given = {k: getattr(vad_parameters, k) for k in self._VAD_DEFAULTS if hasattr(vad_parameters, k)}
        unknown = sorted(set(given) - set(self._VAD_DEFAULTS))
        if unknown:
            raise TypeError("vad_parameters: unknown option(s) %s (expected %s)"
                            % (", ".join(unknown), ", ".join(self._VAD_DEFAULTS)))
        opts = dict(self._VAD_DEFAULTS, **given)
        neg = opts["neg_threshold"]
        if neg is not None and (isinstance(neg, bool) or not isinstance(neg, numbers.Real) or not 0.0 <= neg < 1.0):
            raise ValueError("vad_parameters neg_threshold=%r, expected None or 0 <= neg_threshold < 1" % (neg,))
        if not 0.0 < opts["threshold"] < 1.0:
            raise ValueError("vad_parameters threshold=%r, expected 0 < threshold < 1" % opts["threshold"])
        for k in ("min_speech_duration_ms", "min_silence_duration_ms", "speech_pad_ms"):
            if int(opts[k]) != opts[k] or opts[k] < 0:
                raise ValueError("vad_parameters %s=%r, expected a whole number of ms >= 0" % (k, opts[k]))
        if not opts["max_speech_duration_s"] > 0:
            raise ValueError("vad_parameters max_speech_duration_s=%r, expected > 0" % opts["max_speech_duration_s"])
        p = _core.VadParams()
        p.threshold = float(opts["threshold"])
        p.min_speech_duration_ms = int(opts["min_speech_duration_ms"])
        p.min_silence_duration_ms = int(opts["min_silence_duration_ms"])
        p.max_speech_duration_s = min(float(opts["max_speech_duration_s"]), 3.4e38)
        p.speech_pad_ms = int(opts["speech_pad_ms"])
        return p, opts

    def _vad_model_path(self):
        """The Silero VAD v6 model for vad_filter: $GGML_WHISPER_VAD_MODEL, else ggml-silero-v6.bin
        beside the Whisper model file (where tools/get_model.sh puts both)."""
        path = os.environ.get("GGML_WHISPER_VAD_MODEL") or os.path.join(
            os.path.dirname(os.path.abspath(self.model_path)), "ggml-silero-v6.bin")
        if not os.path.exists(path):
            raise FileNotFoundError(
                "vad_filter=True needs the Silero VAD model %r (tools/get_vad_model.sh makes it; "
                "or set GGML_WHISPER_VAD_MODEL)" % path)
        return path

    def _word_model(self):
        """The context with DTW timestamps on (made at the first word_timestamps=True call: the
        model file is memory-mapped, so its weights are shared with self._model's pages)."""
        with self._words_lock:
            if self._words is None:
                preset = _alignment_preset(self._model.dims)
                if preset is None:
                    raise ValueError("word_timestamps=True: no alignment heads are known for a model of dims %s "
                                     "(n_vocab, n_audio_layer, n_text_layer)" % (self._model.dims,))
                self._words = _core.Model(_fs_path("model", self.model_path), self._decoding, preset,
                                          self._compute_type)
            return self._words


def _compression_ratio_threshold(value) -> Optional[float]:
    """faster-whisper's compression_ratio_threshold checked: None (no check) or a number >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise ValueError("compression_ratio_threshold=%r, expected a number >= 0 or None" % (value,))
    return float(value)


def _clip_timestamps(value) -> List[float]:
    """faster-whisper's clip_timestamps as seconds: a string split at commas ("" -> none) or a list
    of numbers; each finite and >= 0 (ValueError otherwise, naming the option)."""
    try:
        if isinstance(value, str):
            out = [float(t) for t in value.split(",")] if value else []
        else:
            out = [float(t) for t in value if not isinstance(t, bool) and isinstance(t, numbers.Real)]
            if len(out) != len(value):
                raise ValueError
    except (TypeError, ValueError):
        raise ValueError("clip_timestamps=%r, expected \"start,end,...\" seconds or a list of them" % (value,))
    if not all(math.isfinite(t) and t >= 0 for t in out):
        raise ValueError("clip_timestamps=%r: each time must be a finite number of seconds >= 0" % (value,))
    return out


def _is_default_clip(clip_timestamps) -> bool:
    """Whether clip_timestamps is faster-whisper's default, the string "0" (the whole audio)."""
    return isinstance(clip_timestamps, str) and clip_timestamps == "0"


def _from_first_clip(samples: np.ndarray, clips: List[float]) -> np.ndarray:
    """The samples language detection reads: faster-whisper 1.2.1 transcribe() detects from frame
    int(first clip start * 100) when it lies inside the audio, else from the start."""
    frame = int(clips[0] * 100) if clips else 0
    return samples[frame * 160:] if frame < samples.shape[0] // 160 else samples


def _hallucination_silence_threshold(value) -> Optional[float]:
    """faster-whisper's hallucination_silence_threshold checked: None (off) or a finite number >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
        raise ValueError("hallucination_silence_threshold=%r, expected seconds >= 0 or None" % (value,))
    return float(value)


def _raising(error):
    """A segment iterator whose first next() raises `error`: faster-whisper's generate_segments
    fails there for some option values, after transcribe() has returned."""
    raise error
    yield  # a generator


def _no_windows(samples, max_initial_timestamp):
    """The segments of a transcription that decodes no window, or None: none for no audio (or no
    speech after VAD), as faster-whisper; a TypeError at the first next() for a max_initial_timestamp
    that is not a number (faster-whisper 1.2.1 divides it by time_precision in its first window)."""
    if not samples.size:
        return iter(())
    if isinstance(max_initial_timestamp, bool) or not isinstance(max_initial_timestamp, numbers.Real):
        return _raising(TypeError("max_initial_timestamp=%r, expected a number of seconds" % (max_initial_timestamp,)))
    return None


def _is_language_code(language) -> bool:
    """Whether `language` is one of Whisper's language codes ("en", "zh", ...): whisper.cpp's
    whisper_lang_id also takes names ("english"), faster-whisper 1.2.1's Tokenizer does not."""
    if not isinstance(language, str) or not language.isascii() or "\0" in language:
        return False
    lang = _core.lang_id(language)
    return lang >= 0 and _core.lang_str(lang) == language


class _SpeechTimestampsMap:
    """faster-whisper 1.2.1's vad.py SpeechTimestampsMap: a time in the concatenated speech goes
    back to the input by adding the silence removed before its chunk (rounded to 10 ms)."""

    def __init__(self, chunks):
        self.chunk_end_sample = []
        self.total_silence_before = []
        previous_end = silent = 0
        for start, end in chunks:
            silent += start - previous_end
            previous_end = end
            self.chunk_end_sample.append(end - silent)
            self.total_silence_before.append(silent / SAMPLE_RATE)

    def original_time(self, time, chunk_index=None, is_end=False):
        if chunk_index is None:
            chunk_index = self.chunk_index(time, is_end)
        return round(self.total_silence_before[chunk_index] + time, 2)

    def chunk_index(self, time, is_end=False):
        sample = int(time * SAMPLE_RATE)
        if is_end and sample in self.chunk_end_sample:
            return self.chunk_end_sample.index(sample)
        return min(bisect.bisect(self.chunk_end_sample, sample), len(self.chunk_end_sample) - 1)

    def restore(self, segment):
        """restore_speech_timestamps for one Segment: its words by their middle's chunk (and the
        segment to its first and last word), else its start and end."""
        if segment.words:
            for w in segment.words:
                i = self.chunk_index((w.start + w.end) / 2)
                w.start, w.end = self.original_time(w.start, i), self.original_time(w.end, i)
            segment.start, segment.end = segment.words[0].start, segment.words[-1].end
        else:
            segment.start = self.original_time(segment.start)
            segment.end = self.original_time(segment.end, is_end=True)
        return segment


class _Segments:
    """The lazy segment iterator of one transcription; closing it (or dropping it) stops the run."""

    def __init__(self, run, multilingual=False, speech_map=None):
        self._run = run
        self._multilingual = multilingual
        self._speech_map = speech_map  # vad_filter: times go back to the input
        self._id = 0
        self._lock = threading.Lock()
        self._pending = b""  # bytes of a character split across segments, carried to the next

    def __iter__(self):
        return self

    def __next__(self) -> Segment:
        with self._lock:
            if self._run is None:
                raise StopIteration
            item = self._run.next()
            if item is None:
                self.close()
                raise StopIteration
            t0, t1, text_bytes, tokens, _, no_speech_prob, word_items, language, window = item
            seek, temperature, avg_logprob, compression_ratio = window
            text = self._text(text_bytes)
            words = None
            if word_items is not None:
                words = [Word(start=w0 / 100.0, end=w1 / 100.0,
                              word=wb.decode("utf-8", errors="replace"), probability=float(p))
                         for w0, w1, wb, p in word_items]
            self._id += 1
            segment = Segment(id=self._id, seek=int(seek), start=t0 / 100.0, end=t1 / 100.0, text=text,
                           tokens=list(tokens), avg_logprob=float(avg_logprob),
                           compression_ratio=float(compression_ratio), no_speech_prob=float(no_speech_prob),
                           words=words, temperature=float(temperature),
                           language=language if self._multilingual else None)
            return self._speech_map.restore(segment) if self._speech_map else segment

    def _text(self, text_bytes: bytes) -> str:
        # Token bytes can split a UTF-8 character across segments: keep an incomplete tail for the
        # next segment; other ill-formed bytes become U+FFFD.
        data = self._pending + text_bytes
        cut = len(data)
        for back in range(1, min(4, len(data)) + 1):
            b = data[-back]
            if b & 0xC0 == 0x80:
                continue  # a continuation byte: look further back for its lead
            need = 2 if b & 0xE0 == 0xC0 else 3 if b & 0xF0 == 0xE0 else 4 if b & 0xF8 == 0xF0 else 1
            if need > back:
                cut = len(data) - back
            break
        self._pending = data[cut:]
        return data[:cut].decode("utf-8", errors="replace")

    def close(self):
        if self._run is not None:
            self._run.close()
            self._run = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


# faster-whisper's batched pipeline (ggml_whisper/batched.py), imported as faster-whisper's users do.
from ggml_whisper.batched import BatchedInferencePipeline  # noqa: E402

__all__.append("BatchedInferencePipeline")
