"""faster-whisper 1.2.1's transcribe options that only shape the output: prepend_punctuations and
append_punctuations (checked here, merged by the library: whisper_full_params.ggml_prepend/append_
punctuations, whisper/whisper.h) and log_progress (Progress, a bar over the audio's seconds)."""

import logging

# faster-whisper 1.2.1's defaults (WhisperModel.transcribe and BatchedInferencePipeline.transcribe).
PREPEND = "\"'“¿([{-"
APPEND = "\"'.。,，!！?？:：”)]}、"

_LOG = logging.getLogger("ggml_whisper")


def check_punctuations(prepend_punctuations, append_punctuations):
    """Raises TypeError unless both are str (faster-whisper's merge_punctuations tests `word in
    set`, which fails with TypeError once words are merged for most other types), ValueError for a
    NUL or a lone surrogate (the C API takes NUL-terminated UTF-8). Any str is a set of marks, ""
    none: a word is merged when it is a substring of the set, as in faster-whisper."""
    from ggml_whisper import _check_text
    for name, value in (("prepend_punctuations", prepend_punctuations), ("append_punctuations", append_punctuations)):
        if not isinstance(value, str):
            raise TypeError("%s=%r: expected a str of punctuation marks (faster-whisper's default %r)"
                            % (name, value, PREPEND if name[0] == "p" else APPEND))
        _check_text(name, value)


class Progress:
    """Segments passed through unchanged, with faster-whisper's log_progress bar: tqdm(total=the
    audio's duration, unit="seconds"), moved to each segment's end. Without tqdm (faster-whisper
    depends on it; ggml_whisper does not), "transcribe: N% (t of T s)" at INFO level on the
    "ggml_whisper" logger, once per segment."""

    def __init__(self, segments, duration):
        self._segments = segments
        self._total = round(duration, 2)
        self._done = 0.0
        try:
            from tqdm import tqdm
            self._bar = tqdm(total=self._total, unit="seconds")
        except ImportError:
            self._bar = None

    def __iter__(self):
        return self

    def _advance(self, to):
        to = min(max(to, self._done), self._total)
        if self._bar is not None:
            self._bar.update(round(to - self._done, 2))
        elif to > self._done:
            _LOG.info("transcribe: %d%% (%.2f of %.2f s)", round(100 * to / self._total) if self._total else 100,
                      to, self._total)
        self._done = to

    def __next__(self):
        try:
            segment = next(self._segments)
        except StopIteration:
            self._advance(self._total)  # the audio after the last segment
            if self._bar is not None:
                self._bar.close()
            raise
        self._advance(segment.end)
        return segment

    def close(self):
        close = getattr(self._segments, "close", None)
        if close is not None:
            close()
        if self._bar is not None:
            self._bar.close()
