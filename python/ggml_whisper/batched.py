"""BatchedInferencePipeline: long audio cut into chunks of at most 30 s and decoded several at a time,
with faster-whisper 1.2.1's API (faster_whisper/transcribe.py, class BatchedInferencePipeline).

    from ggml_whisper import WhisperModel, BatchedInferencePipeline

    model = WhisperModel("models/ggml-base.bin", cpu_threads=2)
    batched = BatchedInferencePipeline(model)
    segments, info = batched.transcribe("audio.flac", batch_size=8)
    for segment in segments:
        print("[%.2fs -> %.2fs] %s" % (segment.start, segment.end, segment.text))

The work is whisper_full's batched mode (whisper_full_params.ggml_batch_size, whisper/whisper.h):
Silero VAD finds the pauses, the audio is cut there into chunks of at most chunk_length (30 s), and
batch_size chunks share every decoder step, none conditioned on another's text. Each chunk is
encoded and decoded once (one window, as faster-whisper's), but the text after its last timestamp
is kept and <|endoftext|> waits until the timestamps reach 1 s before VAD's speech end in the
chunk (whisper.h, ggml_batch_size), so by design the results differ from faster-whisper's batched
pipeline where that keeps the quality of sequential transcription:
  - without_timestamps defaults to False (faster-whisper: True): segments are cut at timestamp
    tokens (at most 30 s each) instead of one segment per chunk; True gives one segment per chunk
    (per window) as faster-whisper's;
  - temperature is the fallback sequence of WhisperModel.transcribe (faster-whisper's batched mode
    uses temperature[0] only), with compression_ratio_threshold, log_prob_threshold,
    no_speech_threshold and max_initial_timestamp applied per window as in sequential mode
    (faster-whisper's batched mode ignores them and forces max_initial_timestamp 0);
  - no audio is dropped: the chunks cover the whole input, cut at the pauses VAD finds (faster-whisper
    transcribes only what VAD calls speech, and Silero misses speech: the last 27 s of
    long_speech.flac). info.duration_after_vad is therefore the whole duration. Of vad_parameters
    only threshold moves the cuts (the pauses are those of min_silence_duration_ms 160, as
    faster-whisper's default here); the other options are checked as faster-whisper's VadOptions;
  - language detection reads the first 30 s of the audio (faster-whisper: of the VAD's speech);
  - word_timestamps=True aligns each window as sequential mode does (the library's DTW);
  - prefix and hallucination_silence_threshold are unused, as in faster-whisper's batched mode;
    condition_on_previous_text and prompt_reset_on_temperature too (chunks never hear each other);
  - batch_size must be 1 .. 64 (ValueError; faster-whisper fails on 0 while iterating and yields
    nothing for negative sizes). batch_size=1, audio no longer than chunk_length (one chunk) and
    vad_filter=False on audio shorter than chunk_length (one chunk: faster-whisper's rule) run the
    sequential loop without conditioning: the same segments, without the batched decoder state;
  - clip_timestamps ([{"start": s, "end": s}, ...] seconds): no VAD, each clip is a chunk, in
    order, decoded batch_size at a time as VAD's chunks are (whisper.h ggml_batch_size; batch_size=1:
    each clip alone with the sequential loop); info.duration_after_vad is the clips' total length
    as faster-whisper's. A clip starts at a whole 10 ms frame (round(start *
    100); faster-whisper: at its sample) and its mel is cut from the whole audio's (faster-whisper:
    computed from the clip alone); the chunk's <|endoftext|> waits until the timestamps reach 1 s
    before the clip's end. A clip longer than 30 s is transcribed whole, window after window as the
    sequential loop does (faster-whisper: its first 30 s, with a warning, and the rest is lost);
  - prepend_punctuations and append_punctuations work as in WhisperModel.transcribe (any str;
    TypeError for another type at the call); log_progress=True shows faster-whisper's tqdm bar over
    the audio's seconds, or logs percentages on the "ggml_whisper" logger without tqdm.
Errors: as WhisperModel.transcribe for the shared options; RuntimeError("No clip timestamps
found. ...") as faster-whisper for vad_filter=False on audio of chunk_length or more.
"""

import inspect
import math
import numbers
from typing import BinaryIO, Iterable, Iterator, List, Optional, Tuple, Union

import numpy as np

import ggml_whisper as _gw
from ggml_whisper import _core
from ggml_whisper._checks import check_option_types
from ggml_whisper._options import APPEND as _APPEND, PREPEND as _PREPEND, Progress, check_punctuations

__all__ = ["BatchedInferencePipeline"]



def _check_batch_size(batch_size):
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
            or not 1 <= batch_size <= _core.MAX_BATCH_SIZE:
        raise ValueError("batch_size=%r, expected an integer 1..%d (chunks decoded at a time)"
                         % (batch_size, _core.MAX_BATCH_SIZE))
    return int(batch_size)


def _clip_list(clip_timestamps) -> List[float]:
    """faster-whisper's batched clip_timestamps ([{"start": s, "end": s}, ...] seconds) as the flat
    start,end list of whisper_full_params.ggml_clip_timestamps. ValueError naming the option."""
    flat = []
    try:
        for clip in clip_timestamps:
            flat += [float(clip["start"]), float(clip["end"])]
    except (TypeError, KeyError, ValueError, IndexError):
        raise ValueError("clip_timestamps=%r, expected a list of {'start': seconds, 'end': seconds} dicts"
                         % (clip_timestamps,))
    if not all(math.isfinite(t) and t >= 0 for t in flat) or any(e < s for s, e in zip(flat[::2], flat[1::2])):
        raise ValueError("clip_timestamps=%r: each clip needs 0 <= start <= end, finite seconds" % (clip_timestamps,))
    return flat


def _clips_duration(clips, duration):
    """info.duration_after_vad: `duration` without clips; with them faster-whisper's sum of the
    clips' lengths in whole samples (int(seconds * 16000) each end, not capped to the audio)."""
    if clips is None:
        return duration
    return sum(int(e * 16000) - int(s * 16000) for s, e in zip(clips[::2], clips[1::2])) / 16000


def _vad_options(vad_parameters, chunk_length):
    """faster-whisper 1.2.1's batched VadOptions: None -> min_silence_duration_ms 160 and
    max_speech_duration_s chunk_length; a dict -> its options with max_speech_duration_s replaced by
    chunk_length; an object -> its attributes as they are."""
    if vad_parameters is None:
        return {"min_silence_duration_ms": 160, "max_speech_duration_s": chunk_length}
    if isinstance(vad_parameters, dict):
        return dict(vad_parameters, max_speech_duration_s=chunk_length)
    return vad_parameters


def _decoding_options(model, a):
    """(suppress_tokens, temperatures) of transcribe's arguments `a`, checked by WhisperModel's own
    _check_decoding_options: that of a (temperature, temperature_inc) pair, or the one taking
    n_vocab and returning the list (the temperature-list change of the h-fw37 branch)."""
    args = (a["task"], a["beam_size"], a["best_of"], a["temperature"], a["suppress_tokens"])
    if "n_vocab" in inspect.signature(_gw._check_decoding_options).parameters:
        return _gw._check_decoding_options(*args, model._model.dims[0])
    tokens, t0, t_inc = _gw._check_decoding_options(*args)
    return tokens, [t0 + i * t_inc for i in range(1 + (int(round((1.0 - t0) / t_inc)) if t_inc > 0 else 0))]


def _core_options(model, options, language, translate):
    """WhisperModel._core_options for `options` (TranscriptionOptions), whichever of its two
    signatures (with or without the temperature and its increment) the package has."""
    if len(inspect.signature(model._core_options).parameters) == 3:
        return model._core_options(options, language, translate)
    t = options.temperatures
    return model._core_options(options, t[0], t[1] - t[0] if len(t) > 1 else 0.0, language, translate)


class BatchedInferencePipeline:
    """faster-whisper 1.2.1's BatchedInferencePipeline over a ggml_whisper WhisperModel (see the
    module's docstring for what differs by design)."""

    def __init__(self, model: "_gw.WhisperModel"):
        if not isinstance(model, _gw.WhisperModel):
            raise TypeError("model is a %s, expected a ggml_whisper.WhisperModel" % type(model).__name__)
        self.model = model
        self.last_speech_timestamp = 0.0  # faster-whisper's attribute (its word alignment state)

    def transcribe(self, audio: Union[str, BinaryIO, np.ndarray], language: Optional[str] = None,
                   task: str = "transcribe", log_progress: bool = False, beam_size: int = 5, best_of: int = 5,
                   patience: float = 1, length_penalty: float = 1, repetition_penalty: float = 1,
                   no_repeat_ngram_size: int = 0,
                   temperature: Union[float, List[float], Tuple[float, ...]] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
                   compression_ratio_threshold: Optional[float] = 2.4, log_prob_threshold: Optional[float] = -1.0,
                   no_speech_threshold: Optional[float] = 0.6, condition_on_previous_text: bool = True,
                   prompt_reset_on_temperature: float = 0.5,
                   initial_prompt: Optional[Union[str, Iterable[int]]] = None, prefix: Optional[str] = None,
                   suppress_blank: bool = True, suppress_tokens: Optional[List[int]] = [-1],
                   without_timestamps: bool = False, max_initial_timestamp: float = 1.0,
                   word_timestamps: bool = False, prepend_punctuations: str = _PREPEND,
                   append_punctuations: str = _APPEND, multilingual: bool = False, vad_filter: bool = True,
                   vad_parameters=None, max_new_tokens: Optional[int] = None, chunk_length: Optional[int] = None,
                   clip_timestamps: Optional[List[dict]] = None,
                   hallucination_silence_threshold: Optional[float] = None, batch_size: int = 8,
                   hotwords: Optional[str] = None, language_detection_threshold: Optional[float] = 0.5,
                   language_detection_segments: int = 1,
                   ) -> Tuple[Iterator["_gw.Segment"], "_gw.TranscriptionInfo"]:
        """Transcribes `audio` (a path, a binary file object or float32 samples at 16 kHz) in chunks
        of at most chunk_length (30 s), batch_size chunks at a time.

        Returns (segments, info) as faster-whisper does: a lazy iterator of Segment (each chunk's
        segments arrive once it and every chunk before it are decoded) and TranscriptionInfo.
        Raises ValueError for bad options or audio, FileNotFoundError for a missing file or VAD model
        (ggml-silero-v6.bin beside the model, or $GGML_WHISPER_VAD_MODEL), RuntimeError for
        vad_filter=False on audio of chunk_length or more (faster-whisper's message) and from the
        iterator if decoding fails.
        """
        a = {k: v for k, v in locals().items() if k not in ("self", "audio")}  # the arguments by name
        m = self.model
        tokens_to_suppress, temperatures, clips, vad = self._check(a)
        multilingual = m._multilingual(multilingual)
        samples = _gw.decode_audio(audio)
        duration = samples.shape[0] / _gw.SAMPLE_RATE
        chunk_seconds = int(chunk_length or 30)
        if clips is None and vad is None and duration >= chunk_seconds:
            raise RuntimeError("No clip timestamps found. Set 'vad_filter' to True or provide 'clip_timestamps'.")
        language, translate, language_probability, all_probs = m._language(
            _gw._from_first_clip(samples, clips or []), language, task, language_detection_segments,
            language_detection_threshold)
        options = _gw.TranscriptionOptions(
            beam_size=beam_size, best_of=best_of, temperatures=temperatures,
            log_prob_threshold=log_prob_threshold, no_speech_threshold=no_speech_threshold,
            compression_ratio_threshold=_gw._compression_ratio_threshold(compression_ratio_threshold),
            condition_on_previous_text=False, initial_prompt=initial_prompt, suppress_blank=suppress_blank,
            suppress_tokens=tokens_to_suppress, without_timestamps=without_timestamps,
            max_initial_timestamp=max_initial_timestamp, word_timestamps=word_timestamps,
            multilingual=bool(multilingual), clip_timestamps=clips or "0",
            hallucination_silence_threshold=None, patience=patience, length_penalty=length_penalty,
            repetition_penalty=repetition_penalty, no_repeat_ngram_size=no_repeat_ngram_size,
            prompt_reset_on_temperature=0.5, max_new_tokens=max_new_tokens, prefix=prefix, hotwords=hotwords,
            prepend_punctuations=prepend_punctuations, append_punctuations=append_punctuations)
        o = _core_options(m, options, language, translate)
        o.no_context = True
        o.prefix = ""  # prefix and hallucination_silence_threshold: unused, as faster-whisper's batched mode
        o.hallucination_silence_thold = -1.0
        o.chunk_length = chunk_seconds if chunk_length else 0
        # Audio within one chunk is one chunk whatever VAD finds (whisper/batched_transcribe.h
        # PlanChunks), which the sequential loop gives as it is, without the batched state.
        # clip_timestamps: the clips are the chunks (whisper.h ggml_batch_size), whatever their count.
        if clips is not None and a["batch_size"] > 1:
            o.batch_size = int(a["batch_size"])
        elif vad is not None and a["batch_size"] > 1 and duration > chunk_seconds:
            o.batch_size = int(a["batch_size"])
            o.vad_model_path = _gw._fs_path("VAD model", m._vad_model_path())
            o.vad_params = vad[0]
        info = _gw.TranscriptionInfo(language=language, language_probability=language_probability,
                                     duration=duration, duration_after_vad=_clips_duration(clips, duration),
                                     all_language_probs=all_probs,
                                     transcription_options=options, vad_options=vad[1] if vad else None)
        if not samples.size:
            return iter(()), info
        run = (m._word_model() if word_timestamps else m._model).transcribe(samples, o)
        segments = _gw._Segments(run, bool(multilingual))
        return (Progress(segments, duration) if log_progress else segments), info

    def _check(self, a):
        """Checks transcribe's arguments `a` (by name) as WhisperModel.transcribe and faster-whisper
        check them; returns (suppress_tokens, temperatures, the clips as a flat list or None,
        (VadParams, options dict) or None without VAD). Raises ValueError or TypeError
        naming the first bad argument."""
        _check_batch_size(a["batch_size"])
        check_punctuations(a["prepend_punctuations"], a["append_punctuations"])
        clips = _clip_list(a["clip_timestamps"]) if a["clip_timestamps"] else None
        tokens_to_suppress, temperatures = _decoding_options(self.model, a)
        _gw._check_beam_options(a["beam_size"], a["patience"], a["length_penalty"], a["repetition_penalty"],
                                a["no_repeat_ngram_size"], a["max_new_tokens"], a["prompt_reset_on_temperature"])
        _gw._check_prompt_options(None, a["hotwords"], a["chunk_length"], a["initial_prompt"])
        check_option_types(a["log_prob_threshold"], a["no_speech_threshold"], a["suppress_blank"],
                           a["without_timestamps"])
        vad = None
        if a["vad_filter"] and clips is None:
            vad = self.model._vad_params(_vad_options(a["vad_parameters"], int(a["chunk_length"] or 30)))
        return tokens_to_suppress, temperatures, clips, vad
