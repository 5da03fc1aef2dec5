"""Tests of the ggml_whisper Python package on the real tiny.en model (models/ggml-tiny.en.bin).

References: faster-whisper 1.x's segments for jfk.wav (testdata/jfk_faster_whisper_beam5.json,
written by tools/reference/faster_whisper_tiny_en.py) and the CLI's output for the same file and options.
"""
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ggml_whisper
from ggml_whisper import WhisperModel, decode_audio

HERE = os.path.dirname(os.path.abspath(__file__))


def _repo_root():
    # Under `bazel test`, testdata/README.md in the runfiles is a symlink into the checkout.
    link = os.path.join(HERE, "..", "..", "testdata", "README.md")
    if os.path.exists(link):
        return os.path.dirname(os.path.dirname(os.path.realpath(link)))
    return os.path.dirname(os.path.dirname(HERE))


ROOT = _repo_root()
SHARED = os.environ.get("GGML_WHISPER_SHARED") or os.path.join(ROOT, "..", "shared")
MODEL = os.path.join(os.environ.get("GGML_WHISPER_MODELS") or os.path.join(ROOT, "models"), "ggml-tiny.en.bin")
JFK = os.path.join(SHARED, "data", "jfk.wav")
LONG = os.path.join(SHARED, "data", "long_speech.flac")


@pytest.fixture(scope="module")
def model():
    assert os.path.exists(MODEL), "missing %s: run tools/setup.sh" % MODEL
    return WhisperModel(MODEL, cpu_threads=2)


def _reference_segments():
    with open(os.path.join(ROOT, "testdata", "jfk_faster_whisper_beam5.json")) as f:
        return [(s["start"], s["end"], s["text"]) for s in json.load(f)["segments"]]


def _cli_segments(*extra):
    cli = os.environ.get("WHISPER_CLI")
    assert cli, "WHISPER_CLI is not set (the BUILD file sets it)"
    out = subprocess.run([os.path.abspath(cli), "-m", MODEL, "-f", JFK, "-np", "-t", "2"] + list(extra),
                         capture_output=True, text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        m = re.match(r"\[(\d+):(\d+):(\d+)\.(\d+) --> (\d+):(\d+):(\d+)\.(\d+)\]  (.*)$", line)
        if m:
            g = [int(x) for x in m.groups()[:8]]
            segs.append((g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000, g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000,
                         m.group(9)))
    return segs


def _segments(model, audio, **kw):
    segments, info = model.transcribe(audio, **kw)
    return [(s.start, s.end, s.text) for s in segments], info


def test_jfk_beam5_equals_faster_whisper_and_the_cli(model):
    # faster-whisper's reference was made with these options (see the JSON's "options").
    got, info = _segments(model, JFK, beam_size=5, best_of=1, temperature=0.0, condition_on_previous_text=False)
    assert got == _reference_segments()
    assert got == _cli_segments("-bs", "5", "-mc", "0", "-tp", "0", "-tpi", "0", "-sns")
    assert info.language == "en" and info.language_probability == 1.0
    assert info.duration == pytest.approx(11.0)


def test_word_timestamps_equal_faster_whisper(model):
    # faster-whisper 1.2.1 word_timestamps=True, greedy, temperature 0 (the reference's options).
    with open(os.path.join(ROOT, "testdata", "word_timestamps_faster_whisper.json")) as f:
        ref = next(r for r in json.load(f)["runs"] if r["audio"] == "jfk.wav" and r["beam_size"] == 1)
    segments, _ = model.transcribe(JFK, beam_size=1, temperature=0.0, word_timestamps=True)
    segs = list(segments)
    assert [s.text for s in segs] == [s["text"] for s in ref["segments"]]
    for s, r in zip(segs, ref["segments"]):
        assert (s.start, s.end) == pytest.approx((r["start"], r["end"]), abs=0.021)
        assert [w.word for w in s.words] == [w["word"] for w in r["words"]]
        for w, rw in zip(s.words, r["words"]):
            assert (w.start, w.end) == pytest.approx((rw["start"], rw["end"]), abs=0.021), w
            assert s.start <= w.start <= w.end <= s.end and 0.0 < w.probability <= 1.0
    # Without it, no words.
    segments, _ = model.transcribe(JFK, beam_size=1, temperature=0.0)
    assert all(s.words is None for s in segments)


def test_segment_fields(model):
    segments, _ = model.transcribe(JFK)
    segs = list(segments)
    assert [s.id for s in segs] == list(range(1, len(segs) + 1))
    for s in segs:
        assert 0.0 <= s.start <= s.end <= 11.0
        # Text tokens between the opening and closing timestamps (tiny.en: eot 50256, <|0.00|> 50363).
        assert s.tokens[0] >= 50363 and s.tokens[-1] >= 50363, s.tokens
        assert all(0 <= t < 50256 for t in s.tokens[1:-1]), s.tokens
        assert s.seek == 0 and s.temperature == 0.0
        assert -5.0 < s.avg_logprob <= 0.0
        assert 0.0 <= s.no_speech_prob <= 1.0
        assert 0.5 < s.compression_ratio < 2.4
        assert s.words is None
    assert "".join(model._model.token_text(t) for t in segs[0].tokens[1:-1]) == segs[0].text


def test_path_file_object_and_array_agree(model):
    by_path, _ = _segments(model, JFK, beam_size=1)
    with open(JFK, "rb") as f:
        by_file, _ = _segments(model, f, beam_size=1)
    samples = decode_audio(JFK)
    assert samples.dtype == np.float32 and samples.shape == (176000,)
    by_array, _ = _segments(model, samples, beam_size=1)
    by_f64, _ = _segments(model, samples.astype(np.float64), beam_size=1)
    assert by_path == by_file == by_array == by_f64
    assert by_path and by_path[0][2].startswith(" And so my fellow Americans")


def test_empty_array_is_no_segments_as_faster_whisper(model):
    """faster-whisper 1.2.1 (tiny.en, float32) transcribes an empty array to no segments, with
    language "en" at probability 1 and durations 0, with and without vad_filter."""
    empty = np.zeros(0, dtype=np.float32)
    assert decode_audio(empty).shape == (0,)
    for kwargs in ({}, {"language": "en"}, {"vad_filter": True}, {"word_timestamps": True}):
        segments, info = model.transcribe(empty, **kwargs)
        assert list(segments) == []
        assert (info.language, info.language_probability, info.duration, info.duration_after_vad) == ("en", 1, 0, 0)


def test_empty_file_and_wrong_model_kinds_raise(model, tmp_path):
    """Each error names the argument or file, what it is and what was expected (issue 36)."""
    empty_file = tmp_path / "empty.wav"
    empty_file.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.wav: empty file \(0 bytes\), expected audio"):
        model.transcribe(str(empty_file))
    with open(empty_file, "rb") as f:
        with pytest.raises(ValueError, match=r"empty\.wav: empty file \(0 bytes\), expected audio"):
            model.transcribe(f)
    models = os.path.dirname(MODEL)
    vad = os.path.join(models, "ggml-silero-v6.bin")
    with pytest.raises(ValueError, match=re.escape(vad) + r": a Silero VAD model.*pass it as -vm"):
        WhisperModel(vad)
    ct2 = os.path.join(models, "faster-whisper-tiny.en", "model.bin")
    with pytest.raises(ValueError, match=re.escape(ct2) + r": a CTranslate2 model.*//tools:convert"):
        WhisperModel(ct2)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + bytes(16))  # version 3, no tensors, no metadata
    with pytest.raises(ValueError, match=r"model\.gguf: a GGUF file.*expected a whisper\.cpp ggml Whisper model"):
        WhisperModel(str(gguf))
    # The library never shows a file's bytes (a server may answer with its messages): "root" is not echoed.
    passwd = tmp_path / "passwd"
    passwd.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(ValueError, match=r"passwd: bad magic at offset 0, expected 0x67676d6c") as e:
        WhisperModel(str(passwd))
    assert "root" not in str(e.value).replace(str(tmp_path), "")


def _words(text):
    return re.sub(r"[^a-z' ]", "", text.lower()).split()


def _fw_int8_runs():
    # faster-whisper 1.2.1 compute_type="int8" (tools/reference/faster_whisper_int8.py).
    with open(os.path.join(ROOT, "testdata", "jfk_faster_whisper_int8.json")) as f:
        return {r["beam_size"]: r["segments"] for r in json.load(f)["runs"]}


def test_script_written_for_faster_whisper_runs_with_only_the_import_changed():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, os.path.join(HERE, "faster_whisper_script.py"), MODEL, JFK],
                         capture_output=True, text=True, env=env, check=True).stdout.splitlines()
    assert out[0] == "Detected language 'en' with probability 1.000000"
    # The script asks for compute_type="int8" (weights converted to Q8_0 at load) and beam 5: its
    # lines are that model's segments...
    segments, _ = WhisperModel(MODEL, compute_type="int8", cpu_threads=2).transcribe(JFK, beam_size=5)
    assert out[1:] == ["[%.2fs -> %.2fs] %s" % (s.start, s.end, s.text) for s in segments]
    # ...whose words are faster-whisper's with compute_type="int8" (CTranslate2's int8 is other
    # arithmetic: at beam 5 its punctuation and segment bounds differ from ours, see README).
    ref = _fw_int8_runs()[5]
    assert _words(" ".join(line.split("] ", 1)[1] for line in out[1:])) == _words("".join(s["text"] for s in ref))


def test_compute_type_int8_greedy_equals_faster_whisper_int8(monkeypatch):
    # Greedy (beam_size=1) on jfk.wav, faster-whisper's other defaults: the same text tokens, texts
    # and segment times as faster-whisper 1.2.1 with compute_type="int8" on the same weights.
    # CTranslate2's int8 keeps the attention in float: so does this run (WHISPER_INT8_ATTENTION=0;
    # our default for quantized weights, int8 attention, is the next test).
    monkeypatch.setenv("WHISPER_INT8_ATTENTION", "0")
    segments, _ = WhisperModel(MODEL, compute_type="int8", cpu_threads=2).transcribe(JFK, beam_size=1)
    # The reference keeps the text tokens (< eot 50256) only.
    got = [(s.text, [t for t in s.tokens if t < 50256]) for s in segments]
    ref = _fw_int8_runs()[1]
    assert got == [(s["text"], s["tokens"]) for s in ref]
    # Segment times: within 0.2 s (10 timestamp tokens). Both engines quantize the activations
    # of the int8 products, each its own way (CTranslate2 per row, ggml and our int8 GEMM per
    # block of 32, kernels/quant_gemm.h), and the ends 7.54/10.58 s are near-ties with
    # 7.74/10.74 s: with the int8 encoder GEMM on AVX512-VNNI we give the latter, with the
    # dequantizing encoder (other targets) faster-whisper's (tools/test_aarch64.sh).
    for s, r in zip(segments, ref):
        assert abs(s.start - r["start"]) <= 0.2 and abs(s.end - r["end"]) <= 0.2


def test_compute_type_int8_default_int8_attention_has_faster_whisper_int8_words(monkeypatch):
    # The default for quantized weights: the encoder's attention in int8 too (whisper/encoder.h),
    # which CTranslate2 does not do. Greedy on jfk.wav it tips a near-tie of punctuation (the first
    # segment ends "country." with p = 0.46; faster-whisper "country"): the words are faster-whisper
    # int8's, the segment times within 0.2 s (+ float rounding) of its.
    monkeypatch.delenv("WHISPER_INT8_ATTENTION", raising=False)
    segments, _ = WhisperModel(MODEL, compute_type="int8", cpu_threads=2).transcribe(JFK, beam_size=1)
    segments = list(segments)
    ref = _fw_int8_runs()[1]
    assert _words(" ".join(s.text for s in segments)) == _words("".join(s["text"] for s in ref))
    assert len(segments) == len(ref)
    for s, r in zip(segments, ref):  # 7.74 / 10.74 s against 7.54 / 10.58 s: see the test above
        assert abs(s.start - r["start"]) <= 0.201 and abs(s.end - r["end"]) <= 0.201


def test_bad_inputs_raise(model, tmp_path):
    with pytest.raises(FileNotFoundError):
        WhisperModel(str(tmp_path / "missing.bin"))
    not_a_model = tmp_path / "model.bin"
    not_a_model.write_bytes(b"RIFF" + b"\0" * 100)
    with pytest.raises(ValueError, match="model.bin"):
        WhisperModel(str(not_a_model))
    with pytest.raises(ValueError, match="device"):
        WhisperModel(MODEL, device="cuda")
    with pytest.raises(FileNotFoundError, match="missing.wav"):
        model.transcribe(str(tmp_path / "missing.wav"))
    text = tmp_path / "notes.wav"
    text.write_text("not audio at all\n")
    with pytest.raises(ValueError, match="notes.wav"):
        model.transcribe(str(text))
    with pytest.raises(ValueError, match="dimension"):
        model.transcribe(np.zeros((2, 16000), dtype=np.float32))
    with pytest.raises(ValueError, match="dtype"):
        model.transcribe(np.zeros(16000, dtype=np.int16))
    bad = np.zeros(16000, dtype=np.float32)
    bad[123] = np.nan
    with pytest.raises(ValueError, match="sample 123"):
        model.transcribe(bad)
    # Codes only, as faster-whisper's Tokenizer: not a name, not a number.
    for language in ("xx", "english", "EN", "", 123):
        with pytest.raises(ValueError, match="language"):
            model.transcribe(JFK, language=language)
    with pytest.raises(ValueError, match="task"):
        model.transcribe(JFK, task="summarize")
    with pytest.raises(ValueError, match="beam_size"):
        model.transcribe(JFK, beam_size=0)
    with pytest.raises(ValueError, match="prefix"):  # a string or None
        model.transcribe(JFK, prefix=3)
    with pytest.raises(ValueError, match="beam_size"):
        model.transcribe(JFK, beam_size=33)  # WHISPER_GGML_MAX_DECODERS
    for temperature in ([], [0.0, float("nan")], float("inf")):
        with pytest.raises(ValueError, match="temperature"):
            model.transcribe(JFK, temperature=temperature)
    with pytest.raises(TypeError, match="temperature"):
        model.transcribe(JFK, temperature=[0.0, "0.5"])
    with pytest.raises(ValueError, match="suppress_tokens"):  # faster-whisper 1.2.1 crashes (SIGSEGV)
        model.transcribe(JFK, suppress_tokens=[99999999])
    with pytest.raises(TypeError, match="vad_parameters: unknown option"):
        model.transcribe(JFK, vad_filter=True, vad_parameters={"window_size_samples": 512})
    with pytest.raises(ValueError, match="neg_threshold"):
        model.transcribe(JFK, vad_filter=True, vad_parameters={"neg_threshold": 1.5})
    with pytest.raises(ValueError, match="threshold=1.5"):
        model.transcribe(JFK, vad_filter=True, vad_parameters={"threshold": 1.5})
    with pytest.raises(TypeError, match="not_an_option"):  # faster-whisper has no such argument either
        model.transcribe(JFK, not_an_option="x")
    with pytest.raises(TypeError):
        model.transcribe(12345)
    # Under 100 ms: whisper.cpp's rule, no segments and no error.
    segments, info = model.transcribe(np.zeros(800, dtype=np.float32))
    assert list(segments) == [] and info.duration == pytest.approx(0.05)


def test_threads_share_one_model_and_the_gil_is_released(model):
    expected, _ = _segments(model, JFK, beam_size=1)
    results = [None] * 3
    ticks = [0]
    stop = threading.Event()

    def work(i):
        results[i] = _segments(model, JFK, beam_size=1)[0]

    def tick():  # runs only while the transcriptions do not hold the GIL
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    ticker.join()
    assert results == [expected] * 3
    assert ticks[0] > 50  # three jfk.wav transcriptions take well over 0.05 s


def test_stopping_early_closes_the_run(model):
    segments, info = model.transcribe(LONG, beam_size=1)
    assert info.duration > 200
    first = next(segments)
    assert first.start == 0.0 and first.text
    segments.close()  # aborts the worker at its next graph compute
    assert list(segments) == []


def _plain_words(text):
    return "".join(c for c in text.lower() if c.isalpha() or c == " ").split()


def test_vad_filter(model, monkeypatch):
    """vad_filter=True on 5 s of zeros then jfk.wav: faster-whisper's words, no segment in the
    silence, duration_after_vad the speech's length (faster-whisper's VadOptions defaults)."""
    jfk = decode_audio(JFK)
    audio = np.concatenate([np.zeros(5 * 16000, dtype=np.float32), jfk])
    segments, info = model.transcribe(audio, beam_size=1, vad_filter=True)
    segments = list(segments)
    assert segments, "no segments"
    assert segments[0].start >= 5.0 - 0.4 - 0.01  # speech_pad_ms 400 before jfk's first word
    assert _plain_words(" ".join(s.text for s in segments)) == _plain_words(
        "And so my fellow Americans ask not what your country can do for you "
        "ask what you can do for your country")
    assert info.duration == pytest.approx(16.0)
    assert 9.0 < info.duration_after_vad < 11.5
    assert info.vad_options["min_silence_duration_ms"] == 2000 and info.vad_options["speech_pad_ms"] == 400
    _, info = model.transcribe(audio, beam_size=1)
    assert info.duration_after_vad == info.duration and info.vad_options is None
    segments, info = model.transcribe(np.zeros(3 * 16000, np.float32), vad_filter=True)
    assert list(segments) == [] and info.duration_after_vad == 0.0  # as faster-whisper
    monkeypatch.setenv("GGML_WHISPER_VAD_MODEL", "/nonexistent/silero.bin")
    with pytest.raises(FileNotFoundError, match="/nonexistent/silero.bin"):
        model.transcribe(audio, vad_filter=True)


# faster-whisper 1.2.1, faster_whisper/transcribe.py (WhisperModel.transcribe): the warning for a
# language other than English on an English-only model. The translate warning is in the same words
# (faster-whisper's Tokenizer drops the task of an English-only model silently).
def _language_warning(language):
    return ("The current model is English-only but the language parameter is set to '%s'; using 'en' instead."
            % language)


TRANSLATE_WARNING = ("The current model is English-only but the task parameter is set to 'translate'; "
                     "using 'transcribe' instead.")


def _warnings(caplog, logger):
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING]


def test_english_only_model_warns_and_transcribes_in_english(model, caplog):
    reference = [s.text for s in model.transcribe(JFK, language="en", beam_size=1)[0]]
    cases = [
        ({"language": "de"}, [_language_warning("de")]),
        ({"language": "zh"}, [_language_warning("zh")]),
        ({"task": "translate"}, [TRANSLATE_WARNING]),
        ({"language": "de", "task": "translate"}, [_language_warning("de"), TRANSLATE_WARNING]),
        ({"language": "en"}, []),
        ({}, []),  # language=None: English without detection, an INFO record only
    ]
    for kwargs, want in cases:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="ggml_whisper"):
            segments, info = model.transcribe(JFK, beam_size=1, **kwargs)
            texts = [s.text for s in segments]
        assert _warnings(caplog, "ggml_whisper") == want, kwargs
        assert info.language == "en"
        assert info.language_probability == 1.0
        assert texts == reference, kwargs
    # The CLI prints the same sentence for the same request.
    cli = subprocess.run([os.path.abspath(os.environ["WHISPER_CLI"]), "-m", MODEL, "-f", JFK, "-np", "-t", "2",
                          "-bs", "1", "-l", "de", "-tr"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert cli.stderr == "warning: %s\nwarning: %s\n" % (_language_warning("de"), TRANSLATE_WARNING)


def test_english_only_warning_is_faster_whispers(model, caplog):
    """The same request to faster-whisper 1.2.1 on the same model (its CTranslate2 conversion,
    models/faster-whisper-tiny.en from tools/get_model.sh) logs the same warning."""
    faster_whisper = pytest.importorskip("faster_whisper")
    ct2 = os.path.join(os.path.dirname(MODEL), "faster-whisper-tiny.en")
    if faster_whisper.__version__ != "1.2.1" or not os.path.exists(os.path.join(ct2, "model.bin")):
        pytest.skip("needs faster-whisper 1.2.1 and %s" % ct2)
    reference = faster_whisper.WhisperModel(ct2, device="cpu", cpu_threads=2)
    audio = decode_audio(JFK)
    for language in ("de", "zh"):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            _, ref_info = reference.transcribe(audio, language=language)
            _, info = model.transcribe(audio, language=language)
        assert _warnings(caplog, "faster_whisper") == _warnings(caplog, "ggml_whisper") == [_language_warning(language)]
        assert info.language == ref_info.language == "en"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _, ref_info = reference.transcribe(audio, task="translate")
    assert _warnings(caplog, "faster_whisper") == []  # faster-whisper transcribes without a word


def test_cpu_threads_has_the_clis_bound():
    for bad in (100000, 513, -1):
        with pytest.raises(ValueError, match=r"cpu_threads is %d, expected 0\.\.512" % bad):
            WhisperModel(MODEL, cpu_threads=bad)
    with pytest.raises(TypeError, match="cpu_threads"):
        WhisperModel(MODEL, cpu_threads=2.5)
    assert WhisperModel(MODEL, cpu_threads=512)._threads == 512
    # The CLI: -t 512 parses, -t 513 is a usage error naming the same bound.
    cli = subprocess.run([os.path.abspath(os.environ["WHISPER_CLI"]), "-m", MODEL, "-f", JFK, "-t", "513"],
                         capture_output=True, text=True)
    assert cli.returncode == 2
    assert "512" in cli.stderr


def test_compute_type_int8_equals_the_offline_q8_0_file(model, tmp_path, caplog):
    # compute_type="int8" converts the weights at load to Q8_0 with //tools/quantize's rule and
    # kernels: its segments equal those of the q8_0 file the quantize binary writes (tokens too).
    quantize = os.environ.get("QUANTIZE")
    assert quantize, "QUANTIZE is not set (the BUILD file sets it)"
    q8 = str(tmp_path / "q8_0.bin")
    subprocess.run([os.path.abspath(quantize), MODEL, q8, "q8_0"], check=True, capture_output=True)
    at_load = WhisperModel(MODEL, compute_type="int8", cpu_threads=2)
    offline = WhisperModel(q8, cpu_threads=2)
    got = [(s.start, s.end, s.text, s.tokens) for s in at_load.transcribe(JFK, beam_size=1)[0]]
    want = [(s.start, s.end, s.text, s.tokens) for s in offline.transcribe(JFK, beam_size=1)[0]]
    assert got == want
    assert "ask not what your country can do for you" in "".join(s[2] for s in got)
    with caplog.at_level(logging.WARNING, logger="ggml_whisper"):
        WhisperModel(MODEL, compute_type="bfloat16")
    assert "no bfloat16 kernels" in caplog.text


def test_compute_type_names(model):
    for bad in ("int16", "q8_0", "INT8", None):
        with pytest.raises(ValueError, match=r"int8, int8_float32, int8_float16, int8_bfloat16, float16, bfloat16"):
            WhisperModel(MODEL, compute_type=bad)
    for name in ("default", "auto", "float32", "int8_float16"):
        WhisperModel(MODEL, compute_type=name)


def test_compression_ratio_threshold_is_faster_whispers(model):
    """compression_ratio_threshold=4 on jfk.wav three times over, beam 5: window 1's attempt at
    T = 0 (ratio 3.01) is kept, and the segments equal faster-whisper 1.2.1's with the same option
    (testdata/jfk_x3_faster_whisper_beam5_cr4.json, tools/reference/fw_fallback_repeat.py)."""
    with open(os.path.join(ROOT, "testdata", "jfk_x3_faster_whisper_beam5_cr4.json")) as f:
        ref = json.load(f)
    assert ref["options"]["compression_ratio_threshold"] == 4
    audio = np.tile(decode_audio(JFK), 3)
    segments, info = model.transcribe(audio, beam_size=5, language="en", compression_ratio_threshold=4)
    assert info.transcription_options.compression_ratio_threshold == 4.0
    got = [(s.start, s.end, s.text) for s in segments]
    assert got == [(s["start"], s["end"], s["text"]) for s in ref["segments"]]
    for bad in (-1, float("nan"), "2.4", True):
        with pytest.raises(ValueError, match="compression_ratio_threshold"):
            model.transcribe(JFK, compression_ratio_threshold=bad)


@pytest.mark.parametrize("reference, threshold", [("jfk_x3_faster_whisper_beam5.json", 2.4),
                                                   ("jfk_x3_faster_whisper_beam5_cr4.json", 4)])
def test_segment_window_fields_are_faster_whispers(model, reference, threshold):
    """Segment.seek, temperature, avg_logprob and compression_ratio are the window's, as
    faster-whisper 1.2.1 reports them, and tokens are its (timestamps included), on jfk.wav three
    times over at beam 5 (tools/reference/fw_fallback_repeat.py). At 2.4 every temperature of
    window 0 fails: the T = 0 attempt is kept and reported at the final temperature, 1.0."""
    with open(os.path.join(ROOT, "testdata", reference)) as f:
        ref = json.load(f)["segments"]
    audio = np.tile(decode_audio(JFK), 3)
    segments, _ = model.transcribe(audio, beam_size=5, language="en", compression_ratio_threshold=threshold)
    segs = list(segments)
    assert [(s.start, s.end, s.text, s.tokens) for s in segs] == [
        (r["start"], r["end"], r["text"], r["tokens"]) for r in ref]
    assert [(s.seek, s.temperature) for s in segs] == [(r["seek"], r["temperature"]) for r in ref]
    for s, r in zip(segs, ref):
        assert s.compression_ratio == pytest.approx(r["compression_ratio"], rel=1e-6)
        # Measured: |ours - faster-whisper's| = 1.8e-5 in window 0, 3.3e-5 (2.4) and 2.5e-4 (4, with
        # window 0's text as its prompt) in window 1 over the same tokens. With whisper.cpp's tanh
        # GELU instead of the model's erf one (whisper/encoder.h Gelu) they were 7e-5, 1.7e-3, 3.7e-3.
        assert s.avg_logprob == pytest.approx(r["avg_logprob"], abs=1e-3)


def _vad_clip():
    """tools/reference/fw_vad_filter.py's clip: 5 s zeros, jfk.wav, 3 s zeros, jfk.wav, 1 s zeros."""
    jfk = decode_audio(JFK)
    z = lambda sec: np.zeros(int(sec * 16000), np.float32)  # noqa: E731
    return np.concatenate([z(5), jfk, z(3), jfk, z(1)])


@pytest.mark.parametrize("case", ["defaults", "defaults_words", "options"])
def test_vad_filter_is_faster_whispers(model, case):
    """vad_filter=True as faster-whisper 1.2.1's (testdata/fw_vad_filter.json,
    tools/reference/fw_vad_filter.py): the same speech chunks (so duration_after_vad), segments'
    tokens, texts and restored times; with word_timestamps the words' times too (within DTW's
    20 ms). "options" sets every VadOptions field to a value that is not its default (8 chunks)."""
    with open(os.path.join(ROOT, "testdata", "fw_vad_filter.json")) as f:
        ref = next(c for c in json.load(f)["cases"] if c["name"] == case)
    audio = _vad_clip()
    segments, info = model.transcribe(audio, language="en", beam_size=1, temperature=0.0, vad_filter=True,
                                      vad_parameters=ref["vad_parameters"], word_timestamps=ref["word_timestamps"])
    segs = list(segments)
    assert info.duration_after_vad == pytest.approx(ref["duration_after_vad"], abs=1e-9)
    assert [(s.text, s.tokens) for s in segs] == [(r["text"], r["tokens"]) for r in ref["segments"]]
    tol = 0.021 if ref["word_timestamps"] else 1e-9
    for s, r in zip(segs, ref["segments"]):
        assert (s.start, s.end) == pytest.approx((r["start"], r["end"]), abs=tol), s.text
        for w, rw in zip(s.words or [], r.get("words", [])):
            assert w.word == rw["word"]
            assert (w.start, w.end) == pytest.approx((rw["start"], rw["end"]), abs=tol), w


def _clip_reference(run, key="segments"):
    """Run `run` of testdata/fw_clip_hallucination.json (tools/reference/fw_clip_hallucination.py)."""
    with open(os.path.join(ROOT, "testdata", "fw_clip_hallucination.json")) as f:
        return next(r for r in json.load(f)["runs"] if r["name"] == run)[key]


def _text_tokens(tokens):
    return [t for t in tokens if t < 50256]


def test_clip_timestamps_are_faster_whispers(model):
    """clip_timestamps "1.5,5,7" on jfk.wav and "5,40,100,150" on long_speech.flac, greedy: the
    segments' text tokens and times equal faster-whisper 1.2.1's with the same option; a list is the
    same as the string; bad values raise ValueError naming the option."""
    for run, audio, clips in (("clip_jfk", JFK, "1.5,5,7"), ("clip_jfk", JFK, [1.5, 5, 7]),
                              ("clip_long", LONG, "5,40,100,150")):
        ref = _clip_reference(run)
        segments, info = model.transcribe(audio, beam_size=1, language="en", clip_timestamps=clips)
        got = [(s.start, s.end, _text_tokens(s.tokens)) for s in segments]
        assert info.transcription_options.clip_timestamps == clips
        assert got == [(round(s["start"], 2), round(s["end"], 2), _text_tokens(s["tokens"])) for s in ref], run
    for bad in ("1,x", "-1,5", [1, "5"], [float("nan")], 5, [True]):
        with pytest.raises(ValueError, match="clip_timestamps"):
            model.transcribe(JFK, clip_timestamps=bad)


def test_hallucination_silence_threshold_is_faster_whispers(model):
    """hallucination_silence_threshold=2 with word_timestamps=True on 80 s of long_speech.flac with
    25 s of zeros (85-100 s, zeros, 100-140 s): faster-whisper 1.2.1 drops the window after the
    zeros and decodes again from its anomalous first segment; ours gives the same text tokens, times
    within 40 ms (DTW puts that segment's first word 20 ms earlier), and without the option
    faster-whisper's other (baseline) texts."""
    samples = decode_audio(LONG)
    r = 16000
    audio = np.concatenate([samples[85 * r:100 * r], np.zeros(25 * r, np.float32), samples[100 * r:140 * r]])
    ref = _clip_reference("hal_silence")
    segments, info = model.transcribe(audio, beam_size=1, language="en", word_timestamps=True,
                                      hallucination_silence_threshold=2)
    got = list(segments)
    assert info.transcription_options.hallucination_silence_threshold == 2.0
    assert [_text_tokens(s.tokens) for s in got] == [_text_tokens(s["tokens"]) for s in ref]
    for s, want in zip(got, ref):
        assert abs(s.start - want["start"]) <= 0.04 and abs(s.end - want["end"]) <= 0.04, (s, want)
    segments, _ = model.transcribe(audio, beam_size=1, language="en", word_timestamps=True)
    assert [s.text for s in segments] == [s["text"] for s in _clip_reference("hal_silence", "baseline")]
    for bad in (-1, float("nan"), float("inf"), "2", True):
        with pytest.raises(ValueError, match="hallucination_silence_threshold"):
            model.transcribe(JFK, hallucination_silence_threshold=bad)


def _beam_option_runs():
    with open(os.path.join(ROOT, "testdata", "faster_whisper_beam_options.json")) as f:
        return json.load(f)["runs"]


@pytest.mark.parametrize("index", range(len(_beam_option_runs())))
def test_beam_and_repetition_options_are_faster_whispers(model, index):
    """patience, length_penalty, repetition_penalty, no_repeat_ngram_size, max_new_tokens and
    prompt_reset_on_temperature at values other than their defaults, also after a prefix (whose
    forced tokens CTranslate2's repetition penalty and n-gram ban count as earlier output, and its
    max_length as steps): the segments' times, texts and tokens (timestamps included) equal
    faster-whisper 1.2.1's with the same options on the same weights
    (testdata/faster_whisper_beam_options.json, tools/reference/fw_beam_options.py)."""
    run = _beam_option_runs()[index]
    audio = decode_audio(JFK) if run["audio"] == "jfk" else np.tile(decode_audio(JFK), 3)
    segments, info = model.transcribe(audio, language="en", **run["options"])
    for name, value in run["options"].items():
        assert getattr(info.transcription_options, name) == value
    got = [(round(s.start, 2), round(s.end, 2), s.text, s.tokens) for s in segments]
    # faster-whisper's times are sums of floats (8.040000000000001): compared to the centisecond.
    assert got == [(round(s["start"], 2), round(s["end"], 2), s["text"], s["tokens"]) for s in run["segments"]]


def test_beam_options_change_the_output_where_faster_whispers_do():
    # The reference runs with an option set differ from their twin without it (the same audio,
    # beam_size and prefix: the option acts), except patience 2 and length_penalty 0 and 2 on
    # jfk.wav at beam 5, where faster-whisper's text is the default's too.
    runs = _beam_option_runs()

    def key(r):
        return r["audio"], r["options"]["beam_size"], r["options"].get("prefix")

    twins = {key(r): r["segments"] for r in runs if set(r["options"]) <= {"beam_size", "prefix"}}
    same = [r["options"] for r in runs if not set(r["options"]) <= {"beam_size", "prefix"} and
            r["segments"] == twins[key(r)]]
    assert same == [{"beam_size": 5, "patience": 2}, {"beam_size": 5, "length_penalty": 0},
                    {"beam_size": 5, "length_penalty": 2}]


def test_beam_and_repetition_options_are_checked(model):
    for kw in ({"patience": 0}, {"patience": 0.05}, {"patience": float("nan")}, {"patience": "1"},
               {"length_penalty": float("inf")}, {"repetition_penalty": 0}, {"repetition_penalty": -1.5},
               {"no_repeat_ngram_size": -1}, {"no_repeat_ngram_size": 1.5}, {"max_new_tokens": 0},
               {"max_new_tokens": True}, {"prompt_reset_on_temperature": float("nan")}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            model.transcribe(JFK, **kw)
    # faster-whisper's ValueError for a prompt plus max_new_tokens beyond 448 comes from the window
    # loop: here too, from the segment iterator.
    segments, _ = model.transcribe(JFK, max_new_tokens=448)
    with pytest.raises(ValueError, match="max_new_tokens"):
        list(segments)
