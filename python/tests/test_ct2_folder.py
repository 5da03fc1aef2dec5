"""WhisperModel given a CTranslate2 folder, as faster-whisper users write it
(WhisperModel("models/faster-whisper-tiny.en")): converted in memory at load
(tools/convert/ct2_folder.h), compute_type honoured as for a ggml file.

Reference: faster-whisper 1.2.1 run here on the same folder (models/faster-whisper-tiny.en and
models/faster-whisper-base from tools/get_model.sh; float32, and int8 for compute_type="int8"):
the text tokens, texts and words must be its own. Bad folders raise naming the file and field.
Tests needing a folder or faster-whisper are skipped, naming what is missing.
"""
import functools
import os
import re
import shutil
import subprocess
import sys

import pytest

from ggml_whisper import BatchedInferencePipeline, WhisperModel

from test_ggml_whisper import JFK, MODEL, SHARED

MODELS = os.path.dirname(MODEL)
ZH = os.path.join(SHARED, "data", "zh_aishell_BAC009S0764W0121.wav")
EOT = {"tiny.en": 50256, "base": 50257}  # text tokens are below <|endoftext|>


def _folder(name):
    path = os.path.join(MODELS, "faster-whisper-" + name)
    if not os.path.exists(os.path.join(path, "model.bin")):
        pytest.skip("%s is absent: run tools/get_model.sh %s" % (path, "" if name == "tiny.en" else name))
    return path


@functools.lru_cache(maxsize=None)  # one faster-whisper model per folder and type for the module
def _faster_whisper(name, compute_type="float32"):
    fw = pytest.importorskip("faster_whisper")
    if fw.__version__ != "1.2.1":
        pytest.skip("needs faster-whisper 1.2.1, found %s" % fw.__version__)
    return fw.WhisperModel(_folder(name), device="cpu", compute_type=compute_type, cpu_threads=2)


@pytest.fixture(scope="module")
def tiny():
    return WhisperModel(_folder("tiny.en"), cpu_threads=2)


@pytest.fixture(scope="module")
def base():
    return WhisperModel(_folder("base"), cpu_threads=2)


def _run(model, audio, eot, **kw):
    """(text, text tokens, start, end, [(word, start, end)]) per segment, and the info."""
    segments, info = model.transcribe(audio, **kw)
    return [(s.text, [t for t in s.tokens if t < eot], s.start, s.end,
             [(w.word, w.start, w.end) for w in s.words or []]) for s in segments], info


def _assert_same(got, ref):
    assert [(g[0], g[1]) for g in got] == [(r[0], r[1]) for r in ref]
    for g, r in zip(got, ref):
        # Times: within one timestamp token (0.02 s) plus rounding, as the ggml-file tests allow.
        assert (g[2], g[3]) == pytest.approx((r[2], r[3]), abs=0.021)
        assert [w[0] for w in g[4]] == [w[0] for w in r[4]]
        for w, rw in zip(g[4], r[4]):
            assert (w[1], w[2]) == pytest.approx((rw[1], rw[2]), abs=0.021), (w, rw)


@pytest.mark.parametrize("beam_size", [1, 5])
def test_tiny_en_folder_jfk_equals_faster_whisper(tiny, beam_size):
    fw = _faster_whisper("tiny.en")
    kw = dict(beam_size=beam_size, word_timestamps=True)
    got, info = _run(tiny, JFK, EOT["tiny.en"], **kw)
    ref, fw_info = _run(fw, JFK, EOT["tiny.en"], **kw)
    _assert_same(got, ref)
    assert "my fellow Americans" in got[0][0]
    assert (info.language, info.duration) == (fw_info.language, fw_info.duration)
    assert not tiny.is_multilingual


@pytest.mark.parametrize("beam_size", [1, 5])
def test_base_folder_mandarin_equals_faster_whisper(base, beam_size):
    fw = _faster_whisper("base")
    kw = dict(beam_size=beam_size, word_timestamps=True)
    got, info = _run(base, ZH, EOT["base"], **kw)
    ref, fw_info = _run(fw, ZH, EOT["base"], **kw)
    _assert_same(got, ref)
    assert info.language == fw_info.language == "zh"
    assert info.language_probability == pytest.approx(fw_info.language_probability, abs=1e-3)
    assert base.is_multilingual and "\ufffd" not in "".join(g[0] for g in got)


def test_compute_type_int8_on_a_folder_equals_faster_whisper_int8(monkeypatch):
    # Greedy jfk.wav: the weights converted to q8_0 at load as for a ggml file; the text tokens
    # are faster-whisper's with compute_type="int8" on the same folder (times within 0.2 s: the
    # two int8 arithmetics differ, see test_ggml_whisper's int8 test). Float attention, as
    # CTranslate2's int8 (WHISPER_INT8_ATTENTION=0; see test_ggml_whisper for the default).
    monkeypatch.setenv("WHISPER_INT8_ATTENTION", "0")
    fw = _faster_whisper("tiny.en", "int8")
    got, _ = _run(WhisperModel(_folder("tiny.en"), compute_type="int8", cpu_threads=2), JFK, EOT["tiny.en"],
                  beam_size=1)
    ref, _ = _run(fw, JFK, EOT["tiny.en"], beam_size=1)
    assert [(g[0], g[1]) for g in got] == [(r[0], r[1]) for r in ref]
    for g, r in zip(got, ref):
        assert abs(g[2] - r[2]) <= 0.201 and abs(g[3] - r[3]) <= 0.201


def test_int8_ctranslate2_folder_equals_faster_whisper_on_it(tmp_path_factory):
    # A folder of int8 weights (CTranslate2's own quantizer, ct2_quantized_folder.py):
    # dequantized at load (q / scale per row), the tokens and times of faster-whisper on the same
    # folder with compute_type="float32" (CTranslate2 dequantizes them too), greedy and beam 5.
    pytest.importorskip("ctranslate2")
    fw = pytest.importorskip("faster_whisper")
    d = str(tmp_path_factory.mktemp("int8") / "tiny.en-int8")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ct2_quantized_folder.py")
    subprocess.run([sys.executable, script, _folder("tiny.en"), d, "int8"], check=True, capture_output=True)
    ours = WhisperModel(d, cpu_threads=2)
    ref_model = fw.WhisperModel(d, device="cpu", compute_type="float32", cpu_threads=2)
    for beam_size in (1, 5):
        got, _ = _run(ours, JFK, EOT["tiny.en"], beam_size=beam_size)
        ref, _ = _run(ref_model, JFK, EOT["tiny.en"], beam_size=beam_size)
        assert [g[:4] for g in got] == [r[:4] for r in ref]


def test_batched_pipeline_on_a_folder_equals_faster_whisper(tiny):
    # without_timestamps=True, faster-whisper's vad_filter=False: one segment for the whole of
    # jfk.wav in both (test_batched.py tells where the two pipelines differ otherwise).
    fw = pytest.importorskip("faster_whisper")
    ref_model = _faster_whisper("tiny.en")
    got = BatchedInferencePipeline(tiny).transcribe(JFK, without_timestamps=True)[0]
    ref = fw.BatchedInferencePipeline(ref_model).transcribe(JFK, without_timestamps=True, vad_filter=False)[0]
    assert [(s.start, s.end, s.text, s.tokens) for s in got] == [(s.start, s.end, s.text, s.tokens) for s in ref]


def test_cli_m_takes_a_folder_as_faster_whisper(tiny):
    # whisper-cli's -m with the folder (the same in-memory conversion), faster-whisper's options
    # spelled as flags: beam 5, no fallback, no previous text; the segments are faster-whisper's.
    cli = os.environ.get("WHISPER_CLI")
    if not cli:
        pytest.skip("WHISPER_CLI is not set (python/BUILD.bazel sets it)")
    out = subprocess.run([os.path.abspath(cli), "-m", _folder("tiny.en"), "-f", JFK, "-np", "-t", "2", "-bs", "5",
                          "-mc", "0", "-tp", "0", "-tpi", "0", "-sns"], capture_output=True, text=True, check=True).stdout
    got = [(int(m.group(1)) * 60 + float(m.group(2)), int(m.group(3)) * 60 + float(m.group(4)), m.group(5))
           for m in re.finditer(r"\[00:(\d+):([\d.]+) --> 00:(\d+):([\d.]+)\]  (.*)", out)]
    ref = _faster_whisper("tiny.en").transcribe(JFK, beam_size=5, temperature=0.0, condition_on_previous_text=False)[0]
    assert got == [(s.start, s.end, s.text) for s in ref]


def _bad_folder(tmp_path, model_bin=None, config=None):
    """A folder beside tmp_path holding tiny.en's vocabulary and, as given, model.bin bytes and
    config.json text (the real ones when None, linked, not copied)."""
    src = _folder("tiny.en")
    d = tmp_path / "ct2"
    d.mkdir()
    os.symlink(os.path.join(src, "vocabulary.txt"), d / "vocabulary.txt")
    if model_bin is None:
        os.symlink(os.path.join(src, "model.bin"), d / "model.bin")
    elif model_bin != "absent":
        (d / "model.bin").write_bytes(model_bin)
    if config is None:
        os.symlink(os.path.join(src, "config.json"), d / "config.json")
    else:
        (d / "config.json").write_text(config)
    return str(d)


def test_bad_folders_raise_naming_the_file_and_the_field(tmp_path):
    real = open(os.path.join(_folder("tiny.en"), "model.bin"), "rb").read(100000)

    d = _bad_folder(tmp_path, model_bin="absent")
    with pytest.raises(FileNotFoundError, match=re.escape(d + "/model.bin") + " does not exist: expected a "
                       "CTranslate2 Whisper model folder"):
        WhisperModel(d)
    shutil.rmtree(d)

    # Truncated (the first 100,000 bytes of the real one): the reader names the field and offset.
    d = _bad_folder(tmp_path, model_bin=real)
    with pytest.raises(ValueError, match=re.escape(d + "/model.bin") + r".*(offset|ends)"):
        WhisperModel(d)
    shutil.rmtree(d)

    # A whisper.cpp ggml file named model.bin: not CTranslate2's binary version 6.
    d = _bad_folder(tmp_path, model_bin=open(MODEL, "rb").read(4096))
    with pytest.raises(ValueError, match=re.escape(d + "/model.bin") + r".*version 1734831468.*6"):
        WhisperModel(d)
    shutil.rmtree(d)

    # config.json of another model: alignment heads past tiny.en's 4 decoder layers.
    d = _bad_folder(tmp_path, config='{"alignment_heads": [[3, 1], [4, 2]]}')
    with pytest.raises(ValueError, match=re.escape(d + "/config.json") + r": alignment_heads\[1\] is \[4,2\], "
                       r"expected \[layer, head\] with layer in 0\.\.3 and head in 0\.\.5"):
        WhisperModel(d)
    shutil.rmtree(d)
    d = _bad_folder(tmp_path, config='{"suppress_ids": [1, 2')
    with pytest.raises(ValueError, match=re.escape(d + "/config.json") + ": not valid JSON"):
        WhisperModel(d)
    shutil.rmtree(d)

    # A folder of something else (the shared audio): no model.bin; and the folder still loads
    # after all of that (no state left behind).
    with pytest.raises(FileNotFoundError, match=r"data/model\.bin does not exist"):
        WhisperModel(os.path.join(SHARED, "data"))
