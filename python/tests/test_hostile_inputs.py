"""Hostile inputs to the ggml_whisper Python package: truncated and garbage WAV files, array
samples out of range, text options the C API cannot carry (NUL, lone surrogates), paths.

Each raises a ValueError naming the file or option, or, for a truncated file, transcribes what
decodes with the CLI's warning. References: hand-laid-out WAV headers (44 bytes: 'data' size at
byte 40), jfk.wav's 176000 samples, and the CLI's warning for the same file.
"""
import logging
import os
import struct
import subprocess

import numpy as np
import pytest

from ggml_whisper import WhisperModel, decode_audio

HERE = os.path.dirname(os.path.abspath(__file__))
LINK = os.path.join(HERE, "..", "..", "testdata", "README.md")
ROOT = os.path.dirname(os.path.dirname(os.path.realpath(LINK))) if os.path.exists(LINK) else os.path.dirname(
    os.path.dirname(HERE))
SHARED = os.environ.get("GGML_WHISPER_SHARED") or os.path.join(ROOT, "..", "shared")
MODEL = os.path.join(os.environ.get("GGML_WHISPER_MODELS") or os.path.join(ROOT, "models"), "ggml-tiny.en.bin")
JFK = os.path.join(SHARED, "data", "jfk.wav")


@pytest.fixture(scope="module")
def model():
    assert os.path.exists(MODEL), "missing %s: run tools/setup.sh" % MODEL
    return WhisperModel(MODEL, cpu_threads=2)


def _wav(data_size, pcm):
    """A 16 kHz mono 16-bit WAV whose 'data' chunk header says data_size bytes, followed by pcm."""
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, 16000, 32000, 2, 16)
    return b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " + fmt + b"data" + struct.pack("<I", data_size) + pcm


def _jfk_pcm():
    with open(JFK, "rb") as f:
        wav = f.read()
    at = wav.index(b"data")
    return wav[at + 8:at + 8 + 352000]  # 176000 samples


def test_truncated_wav_warns_naming_the_file_as_the_cli(model, tmp_path, caplog):
    """Its header announces jfk.wav's 176000 frames, 16000 are present: the 1 s present is
    transcribed (as faster-whisper and the CLI do) with the CLI's warning, word for word; before,
    nothing said the file was cut."""
    path = tmp_path / "cut.wav"
    path.write_bytes(_wav(352000, _jfk_pcm()[:32000]))
    expected = ("%s: decoding stopped after 16000 of the 176000 frames the header announces (corrupt or truncated "
                "data): transcribing the 1.00 s decoded" % path)
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"):
        segments, info = model.transcribe(str(path))
        list(segments)
    assert info.duration == pytest.approx(1.0)
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [expected]
    cli = os.environ.get("WHISPER_CLI")
    if cli:
        err = subprocess.run([os.path.abspath(cli), "-m", MODEL, "-f", str(path), "-np", "-t", "2"],
                             capture_output=True, text=True, check=True).stderr
        assert "warning: " + expected in err
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"), open(path, "rb") as f:
        assert decode_audio(f).shape == (16000,)
    assert [r.getMessage() for r in caplog.records] == [expected]


def test_garbage_wav_of_1000_bytes_is_an_error_or_a_warning(model, tmp_path, caplog):
    """1000 bytes: random bytes after 'RIFF' are not audio (ValueError naming the file); a header
    announcing 100000 data bytes over 956 random ones decodes 478 frames with the warning."""
    rng = np.random.RandomState(0)
    noise = tmp_path / "noise.wav"
    noise.write_bytes(b"RIFF" + struct.pack("<I", 992) + b"WAVE" + rng.randint(0, 256, 988).astype(np.uint8).tobytes())
    with pytest.raises(ValueError, match="noise.wav: not a readable audio file"):
        model.transcribe(str(noise))
    short = tmp_path / "short.wav"
    short.write_bytes(_wav(100000, rng.randint(0, 256, 956).astype(np.uint8).tobytes()))
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"):
        assert decode_audio(str(short)).shape == (478,)
    assert [r.getMessage() for r in caplog.records] == [
        "%s: decoding stopped after 478 of the 50000 frames the header announces (corrupt or truncated data): "
        "transcribing the 0.03 s decoded" % short]


def test_unknown_length_wav_is_whole_and_quiet(tmp_path, caplog):
    """A 'data' size of 0xFFFFFFFF (ffmpeg's WAV to a pipe) is a stream of unknown length."""
    path = tmp_path / "pipe.wav"
    path.write_bytes(_wav(0xFFFFFFFF, _jfk_pcm()))
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"):
        assert decode_audio(str(path)).shape == (176000,)
    assert caplog.records == []


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e30, -2e4])
def test_array_samples_must_be_finite_and_within_float_files_bound(model, value):
    """NaN and infinities, and magnitudes past 1e4 (the CLI's bound for float WAV samples), raise
    naming the first bad sample; 1e30 was transcribed to nothing without a word (faster-whisper
    1.2.1 gives a run of ')' for NaN, inf and 1e30)."""
    for dtype in (np.float32, np.float64):
        audio = np.zeros(32000, dtype=dtype)
        audio[777] = value
        with pytest.raises(ValueError, match="audio array sample 777 is"):
            model.transcribe(audio)
    audio = np.zeros(32000, dtype=np.float32)
    audio[5] = 1e4  # the bound itself is accepted
    segments, _ = model.transcribe(audio)
    list(segments)


@pytest.mark.parametrize("option", ["initial_prompt", "prefix", "hotwords"])
def test_text_options_without_a_c_string_form_raise_naming_the_option(model, option):
    """A lone surrogate raised pybind11's bare TypeError; a NUL cut the text short without a word
    (prefix 'hello\\0world' decoded as prefix 'hello')."""
    with pytest.raises(ValueError, match=r"%s has '\\ud800' at index 3, a lone surrogate" % option):
        model.transcribe(JFK, **{option: "abc\ud800"})
    with pytest.raises(ValueError, match="%s has a NUL character at index 5" % option):
        model.transcribe(JFK, **{option: "hello\0world"})


def test_bad_strings_in_language_and_paths(model, tmp_path):
    for language in ("\ud800", "en\0"):
        with pytest.raises(ValueError, match="language"):
            model.transcribe(JFK, language=language)
    with pytest.raises(ValueError, match="audio path .* contains a NUL"):
        model.transcribe(JFK + "\0.txt")
    with pytest.raises(ValueError, match="audio path .* cannot be encoded"):
        model.transcribe(str(tmp_path / "a\ud800.wav"))
    with pytest.raises(ValueError, match="decoding"):
        WhisperModel(MODEL, decoding="\ud800")
    # A file name that is not UTF-8 (os.fsdecode gives surrogate escapes) is read.
    odd = os.path.join(os.fsencode(str(tmp_path)), b"\xff.wav")
    with open(odd, "wb") as f:
        f.write(_wav(352000, _jfk_pcm()))
    assert decode_audio(os.fsdecode(odd)).shape == (176000,)


def _tensor_offsets(data):
    """{name: (ggml type, data offset)} of a whisper.cpp ggml model file, laid out by hand from the
    format (whisper/model_file.h): magic, 11 int32 hparams, mel filters, vocabulary, records."""
    at = 4 + 11 * 4
    n_mel, n_fft = struct.unpack_from("<ii", data, at)
    at += 8 + 4 * n_mel * n_fft
    (n_tokens,) = struct.unpack_from("<i", data, at)
    at += 4
    for _ in range(n_tokens):
        (n,) = struct.unpack_from("<I", data, at)
        at += 4 + n
    records = {}
    while at < len(data):
        n_dims, name_len, ttype = struct.unpack_from("<iii", data, at)
        at += 12
        ne = struct.unpack_from("<%di" % n_dims, data, at)
        at += 4 * n_dims
        name = data[at:at + name_len].decode()
        at += name_len
        assert ttype in (0, 1), name  # tiny.en: F32 and F16 only
        records[name] = (ttype, at)
        at += int(np.prod(ne)) * (4 if ttype == 0 else 2)
    return records


def test_nan_weight_raises_naming_the_file_and_tensor(tmp_path):
    """decoder.ln.weight element 17 set to NaN in a copy of tiny.en: transcribing raises (it
    transcribed to empty text before), the message naming the file, the tensor and the element."""
    with open(MODEL, "rb") as f:
        data = bytearray(f.read())
    ttype, at = _tensor_offsets(data)["decoder.ln.weight"]
    assert ttype == 0
    struct.pack_into("<f", data, at + 4 * 17, float("nan"))
    path = tmp_path / "nan.bin"
    path.write_bytes(bytes(data))
    corrupt = WhisperModel(str(path), cpu_threads=2)
    with pytest.raises(RuntimeError) as e:
        segments, _ = corrupt.transcribe(JFK)
        list(segments)
    assert ("model '%s': tensor 'decoder.ln.weight' holds NaN at element 17 (expected finite weights): the file is "
            "corrupt" % path) in str(e.value)


@pytest.mark.parametrize("option,value,want", [
    ("no_speech_threshold", "x", "no_speech_threshold='x': expected a number or None, got str"),
    ("log_prob_threshold", [1], "log_prob_threshold=[1]: expected a number or None, got list"),
    ("suppress_blank", "x", "suppress_blank='x': expected True or False, got str"),
    ("without_timestamps", [1], "without_timestamps=[1]: expected True or False, got list"),
])
def test_option_of_the_wrong_type_is_a_type_error_naming_it(model, option, value, want):
    """faster-whisper 1.2.1 raises TypeError for these (its first window compares the threshold
    with a float; CTranslate2's generate() refuses the flag); pybind11's setter here raised a bare
    "incompatible function arguments" naming neither. Raised at the call, for both pipelines."""
    from ggml_whisper import BatchedInferencePipeline
    with pytest.raises(TypeError) as e:
        model.transcribe(JFK, **{option: value})
    assert str(e.value) == want
    with pytest.raises(TypeError) as e:
        BatchedInferencePipeline(model).transcribe(JFK, **{option: value})
    assert str(e.value) == want
    segments, _ = model.transcribe(JFK, beam_size=1, no_speech_threshold=None, log_prob_threshold=-1,
                                   suppress_blank=np.bool_(True), without_timestamps=None)
    assert "ask not what your country" in " ".join(s.text for s in segments).lower()


def test_hallucination_threshold_without_word_timestamps_warns_as_the_cli(model, caplog):
    """faster-whisper applies hallucination_silence_threshold only with word_timestamps=True; the
    CLI warns (the library's message) when it has no effect, and so does the package now."""
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"):
        segments, _ = model.transcribe(JFK, beam_size=1, hallucination_silence_threshold=2.0)
        list(segments)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["hallucination_silence_threshold=2 is ignored: it needs DTW word timestamps "
                        "(word_timestamps=True) and OpenAI's decoding rules (decoding='openai'); decoding is 'openai'"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"):
        segments, _ = model.transcribe(JFK, beam_size=1, hallucination_silence_threshold=2.0, word_timestamps=True)
        list(segments)
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []
    cli = os.environ.get("WHISPER_CLI")
    if cli:
        run = subprocess.run([cli, "-m", MODEL, "-f", JFK, "-t", "2", "-bs", "1",  # no -np: it silences the log
                              "--hallucination-silence-threshold", "2"], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert "= 2 is ignored: it needs DTW word timestamps" in run.stderr
