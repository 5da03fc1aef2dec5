"""ggml_whisper.BatchedInferencePipeline (issue 38 part 2) against faster-whisper 1.2.1's
BatchedInferencePipeline run here on the same weights (models/faster-whisper-tiny.en and
models/faster-whisper-base, compute_type float32; tests needing it are skipped, naming what is
missing, when faster-whisper 1.2.1 or those directories are absent) and against our own sequential
mode.

Where the outputs differ by design (python/ggml_whisper/batched.py's docstring): ours decodes with
timestamps by default (segments cut at timestamp tokens, each inside its 30 s window; faster-whisper:
one segment per chunk, without_timestamps=True), keeps the temperature fallback and the
thresholds of sequential mode, and transcribes all of the audio (faster-whisper drops what VAD does
not call speech). So the texts are compared as words (lower case, no punctuation), and the
structure is checked on its own: what must agree is asserted exactly (jfk.wav: our sequential mode's
segments; without_timestamps=True: faster-whisper's text; the same words as faster-whisper's on
jfk.wav, its clips and the Mandarin clip; signatures and errors).
"""
import inspect
import os
import re

import numpy as np
import pytest

import ggml_whisper
from ggml_whisper import BatchedInferencePipeline, WhisperModel, decode_audio

HERE = os.path.dirname(os.path.abspath(__file__))


def _repo_root():
    link = os.path.join(HERE, "..", "..", "testdata", "README.md")  # a symlink into the checkout
    if os.path.exists(link):
        return os.path.dirname(os.path.dirname(os.path.realpath(link)))
    return os.path.dirname(os.path.dirname(HERE))


ROOT = _repo_root()
SHARED = os.environ.get("GGML_WHISPER_SHARED") or os.path.join(ROOT, "..", "shared")
MODELS = os.environ.get("GGML_WHISPER_MODELS") or os.path.join(ROOT, "models")
JFK = os.path.join(SHARED, "data", "jfk.wav")
LONG = os.path.join(SHARED, "data", "long_speech.flac")
ZH = os.path.join(SHARED, "data", "zh_aishell_BAC009S0764W0121.wav")
LONG_SECONDS = 53.5  # long_speech.flac's first reading, Shakespeare's sonnet 1: two chunks
# Its text (public domain), the reference for the word error rates below.
SONNET_1 = ("From fairest creatures we desire increase, That thereby beauty's rose might never die, But as the riper "
            "should by time decease, His tender heir might bear his memory: But thou contracted to thine own bright "
            "eyes, Feed'st thy light's flame with self-substantial fuel, Making a famine where abundance lies, Thy "
            "self thy foe, to thy sweet self too cruel: Thou that art now the world's fresh ornament, And only "
            "herald to the gaudy spring, Within thine own bud buriest thy content, And, tender churl, mak'st waste "
            "in niggarding: Pity the world, or else this glutton be, To eat the world's due, by the grave and thee.")


def _words(text):
    return re.sub(r"[^\w\s']", " ", text.lower()).split()


def _text(segments):
    return "".join(s.text for s in segments)


def _wer(hyp, ref):
    """Word error rate (%) of hyp against ref (Levenshtein over _words)."""
    h, r = _words(hyp), _words(ref)
    row = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, row[0] = row[0], i
        for j, hw in enumerate(h, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (rw != hw))
    return 100.0 * row[len(h)] / max(1, len(r))


def _faster_whisper(name):
    fw = pytest.importorskip("faster_whisper")
    ct2 = os.path.join(MODELS, "faster-whisper-" + name)
    if fw.__version__ != "1.2.1" or not os.path.exists(os.path.join(ct2, "model.bin")):
        pytest.skip("needs faster-whisper 1.2.1 and %s (tools/get_model.sh %s)" % (ct2, name))
    model = fw.WhisperModel(ct2, device="cpu", compute_type="float32", cpu_threads=2)
    return fw.BatchedInferencePipeline(model)


@pytest.fixture(scope="module")
def tiny():
    path = os.path.join(MODELS, "ggml-tiny.en.bin")
    assert os.path.exists(path), "missing %s: run tools/setup.sh" % path
    return WhisperModel(path, cpu_threads=2)


@pytest.fixture(scope="module")
def base():
    path = os.path.join(MODELS, "ggml-base.bin")
    if not os.path.exists(path):
        pytest.skip("%s is absent: run `tools/get_model.sh base` (tools/test.sh does)" % path)
    return WhisperModel(path, cpu_threads=2)


@pytest.fixture(scope="module")
def fw_tiny():
    return _faster_whisper("tiny.en")


@pytest.fixture(scope="module")
def long_audio():
    return decode_audio(LONG)[:int(LONG_SECONDS * 16000)]


@pytest.fixture(scope="module")
def long_batched(tiny, long_audio):
    """Our batched segments of sonnet 1, greedy, with word timestamps."""
    segments, info = BatchedInferencePipeline(tiny).transcribe(long_audio, beam_size=1, word_timestamps=True)
    return list(segments), info


def test_import_and_signature_are_faster_whispers():
    """The same parameters in the same order with the same defaults, but without_timestamps (False:
    timestamps cut the segments, by design)."""
    fw = pytest.importorskip("faster_whisper")
    assert ggml_whisper.BatchedInferencePipeline is BatchedInferencePipeline
    assert "BatchedInferencePipeline" in ggml_whisper.__all__
    ours = inspect.signature(BatchedInferencePipeline.transcribe).parameters
    theirs = inspect.signature(fw.BatchedInferencePipeline.transcribe).parameters
    assert list(ours) == list(theirs)
    differ = [n for n in ours if ours[n].default != theirs[n].default]
    assert differ == ["without_timestamps"]
    assert theirs["without_timestamps"].default is True and ours["without_timestamps"].default is False


def test_jfk_is_our_sequential_mode_and_faster_whispers_words(tiny, fw_tiny):
    """jfk.wav is one chunk: our batched segments are our sequential ones (without the previous
    text, which one window never has), beam 5 and greedy; its words are faster-whisper's batched
    pipeline's (which differs only in punctuation: ', ask' against our 'you ask')."""
    audio = decode_audio(JFK)
    for options in ({}, {"beam_size": 1}):
        segments, info = BatchedInferencePipeline(tiny).transcribe(audio, **options)
        got = [(s.start, s.end, s.text) for s in segments]
        want, _ = tiny.transcribe(audio, condition_on_previous_text=False, **options)
        assert got == [(s.start, s.end, s.text) for s in want]
        assert len(got) >= 2 and got[0][0] == 0.0 and got[-1][1] <= 11.0
        assert info.language == "en" and info.duration == 11.0
        assert info.transcription_options.condition_on_previous_text is False
    reference, _ = fw_tiny.transcribe(audio)
    assert _words("".join(text for _, _, text in got)) == _words(_text(reference))


def test_batch_size_64_runs_the_windows_that_fit(long_batched, long_audio, tiny):
    """64 windows of 5 decoders each (greedy with best_of 5 for the fallback) would need 320, the
    state holds 128: 25 windows run at a time, more than sonnet 1 has chunks; the segments of
    batch_size 8 (long_batched), as no chunk's decoding depends on the chunks beside it."""
    segments, _ = BatchedInferencePipeline(tiny).transcribe(long_audio, beam_size=1, word_timestamps=True,
                                                            batch_size=64)
    want, _ = long_batched
    assert len(want) > 1
    assert [(s.start, s.end, s.text) for s in segments] == [(s.start, s.end, s.text) for s in want]


def test_without_timestamps_is_faster_whispers_segment(tiny, fw_tiny):
    """without_timestamps=True: one segment per chunk, as faster-whisper's; jfk.wav whole (its
    vad_filter=False), beam 5: the same text and bounds."""
    audio = decode_audio(JFK)
    segments, _ = BatchedInferencePipeline(tiny).transcribe(audio, without_timestamps=True)
    reference, _ = fw_tiny.transcribe(audio, vad_filter=False)
    assert [(s.start, s.end, s.text) for s in segments] == [(s.start, s.end, s.text) for s in reference]


def _fw_clips(name):
    """A case of testdata/fw_batched_clips.json (tools/reference/fw_batched_clips.py: faster-whisper
    1.2.1's BatchedInferencePipeline, clip_timestamps, tiny.en float32, greedy, batch_size 8)."""
    import json
    with open(os.path.join(ROOT, "testdata", "fw_batched_clips.json"), encoding="utf-8") as f:
        return next(c for c in json.load(f)["runs"] if c["name"] == name)


TIMESTAMP_BEGIN = 50363  # tiny.en's <|0.00|>: ids from here on are timestamps (0.02 s each)


def _clip_run(tiny, case, batch_size=8):
    audio = decode_audio(os.path.join(SHARED, "data", case["audio"]))
    segments, info = BatchedInferencePipeline(tiny).transcribe(
        audio, language="en", beam_size=1, temperature=0.0, batch_size=batch_size, clip_timestamps=case["clips"],
        without_timestamps=case["without_timestamps"])
    return list(segments), info


@pytest.mark.parametrize("name", ["jfk_no_timestamps", "jfk_timestamps", "long_no_timestamps", "long_timestamps"])
def test_clip_timestamps_are_faster_whispers_chunks(tiny, name):
    """clip_timestamps: each clip is one chunk, in the order given (long_speech's last clip lies
    before the one ahead of it), decoded with the others in one batch. faster-whisper's segments
    come out of each clip in order with its tokens, its seek (the clip's start frame) and its times
    (without_timestamps: [start, end] of the clip), but for a timestamp token one step (0.02 s)
    away (measured: one, <|11.48|> for <|11.46|> on long_speech, a mel computed from the whole
    audio against faster-whisper's from the clip alone). After them, with timestamps, our clip may
    have more segments inside it: the text after its last timestamp pair, which faster-whisper drops
    (measured: " gile the world, unblest some mother." ending sonnet 3's clip). On jfk.wav without
    timestamps batch_size=1 (each clip alone with the sequential loop) gives the same segments."""
    case = _fw_clips(name)
    segments, info = _clip_run(tiny, case)
    assert info.duration_after_vad == case["duration_after_vad"]  # the clips' total, as faster-whisper's
    by_clip = {}
    for s in segments:
        by_clip.setdefault(s.seek, []).append(s)
    assert list(by_clip) == [round(c["start"] * 100) for c in case["clips"]]  # in order, none empty
    extra = []
    for clip in case["clips"]:
        seek = round(clip["start"] * 100)
        want = [f for f in case["segments"] if f["seek"] == seek]
        got = by_clip[seek]
        assert len(got) >= len(want) and (len(got) == len(want) or not case["without_timestamps"]), (got, want)
        for g, w in zip(got, want):
            assert [t for t in g.tokens if t < TIMESTAMP_BEGIN] == [t for t in w["tokens"] if t < TIMESTAMP_BEGIN]
            assert len(g.tokens) == len(w["tokens"])
            assert all(abs(a - b) <= 1 for a, b in zip(g.tokens, w["tokens"])), (g.tokens, w["tokens"])
            assert abs(g.start - w["start"]) <= 0.021 and abs(g.end - w["end"]) <= 0.021, (g, w)
            assert g.text == w["text"]
        for g in got[len(want):]:
            assert clip["start"] <= g.start < g.end <= clip["end"] and g.text.strip(), g
            extra.append(g.text)
    if name == "long_timestamps":
        assert extra == [" gile the world, unblest some mother."]
    else:
        assert extra == []
    if case["without_timestamps"] and name.startswith("jfk"):  # long_speech: batched_test ClipsAreTheChunks
        sequential, _ = _clip_run(tiny, case, batch_size=1)
        assert [(s.start, s.end, s.text) for s in sequential] == [(s.start, s.end, s.text) for s in segments]


def test_clip_over_30_s_is_transcribed_whole(tiny):
    """A clip of 33.2 s: faster-whisper transcribes its first 30 s (a warning) as one segment to the
    clip's end; ours transcribes it whole, window after window as the sequential loop: its first
    window's text is faster-whisper's, and the last 3.2 s (" beauty's use. If thou could answer.",
    sonnet 2's "How much more praise deserv'd thy beauty's use, If thou couldst answer") come next."""
    case = _fw_clips("over_30s_no_timestamps")
    assert case["warnings"] == ["Segment 0 is longer than 30 seconds, only the first 30 seconds will be transcribed"]
    segments, _ = _clip_run(tiny, case)
    (want,) = case["segments"]
    assert segments[0].text == want["text"] and segments[0].tokens == want["tokens"]
    assert (segments[0].start, segments[0].end) == (56.0, 86.0)
    assert len(segments) == 2 and (segments[1].start, segments[1].end) == (86.0, 89.2)
    assert _words(segments[1].text)[:2] == ["beauty's", "use"]


def test_clip_timestamps_edge_clips(tiny):
    """Clips past the audio's end or of no length are skipped, a clip's end past the audio is the
    audio's end, and a bad clip list is a ValueError naming clip_timestamps."""
    audio = decode_audio(JFK)
    clips = [{"start": 20.0, "end": 25.0}, {"start": 8.0, "end": 30.0}, {"start": 3.0, "end": 3.0}]
    segments = list(BatchedInferencePipeline(tiny).transcribe(audio, clip_timestamps=clips, beam_size=1)[0])
    assert len(segments) >= 1 and all(8.0 <= s.start < s.end <= 11.0 for s in segments)
    assert _words(_text(segments)) == ["ask", "what", "you", "can", "do", "for", "your", "country"]
    for bad in ([{"start": 1.0}], [{"start": 2.0, "end": 1.0}], [{"start": -1.0, "end": 1.0}]):
        with pytest.raises(ValueError, match="clip_timestamps"):
            BatchedInferencePipeline(tiny).transcribe(audio, clip_timestamps=bad)


def test_cli_batch_size_takes_the_clips(tmp_path):
    """The CLI's --batch-size with --clip-timestamps: the clips are the chunks, so no VAD model is
    read (-vm names a missing file); jfk.wav's three clips print faster-whisper's segments (times
    and text of run jfk_timestamps). Without clips the missing VAD model is an error naming it."""
    import subprocess
    cli = os.environ.get("WHISPER_CLI")
    if not cli:
        pytest.skip("WHISPER_CLI is not set (python/BUILD.bazel sets it)")
    missing = str(tmp_path / "no-vad.bin")
    args = [os.path.abspath(cli), "-m", os.path.join(MODELS, "ggml-tiny.en.bin"), "-f", JFK, "-t", "2", "-np",
            "-bs", "1", "-bo", "1", "-tpi", "0", "-mc", "0", "--batch-size", "8", "-vm", missing]
    run = subprocess.run(args + ["--clip-timestamps", "0,2.8,2.8,8,8,11"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    got = re.findall(r"^\[(\d+):(\d+):([\d.]+) --> (\d+):(\d+):([\d.]+)\]  (.*)$", run.stdout, re.M)
    seconds = lambda h, m, s: int(h) * 3600 + int(m) * 60 + float(s)  # noqa: E731
    want = _fw_clips("jfk_timestamps")["segments"]
    assert [(seconds(*g[0:3]), seconds(*g[3:6]), g[6]) for g in got] == [(w["start"], w["end"], w["text"])
                                                                         for w in want]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "no-vad.bin" in run.stderr


def test_long_segments_lie_in_their_windows(long_batched):
    """Cut at timestamp tokens: each segment lies in its window (seek .. seek + 30 s), at most 30 s,
    in order without overlap, inside the audio; ids count from 1."""
    segments, info = long_batched
    assert info.duration == LONG_SECONDS and info.duration_after_vad == LONG_SECONDS
    assert len(segments) >= 6  # 14 lines, a few at a time
    assert [s.id for s in segments] == list(range(1, len(segments) + 1))
    previous_end = 0.0
    for s in segments:
        window = s.seek / 100.0
        assert window <= s.start < s.end <= min(window + 30.0, LONG_SECONDS) + 1e-6, s
        assert s.end - s.start <= 30.0
        assert s.start >= previous_end - 1e-6, s
        previous_end = s.end
        assert s.text.strip()


def test_long_word_timestamps_work(long_batched):
    """word_timestamps=True: every segment has its words, which spell its text and lie in order
    inside it."""
    segments, info = long_batched
    assert info.transcription_options.word_timestamps
    for s in segments:
        assert s.words, s
        assert "".join(w.word for w in s.words) == s.text
        assert s.words[0].start >= s.start - 1e-6 and s.words[-1].end <= s.end + 1e-6
        for a, b in zip(s.words, s.words[1:]):
            assert a.start <= a.end <= b.start + 1e-6, (a, b)
        assert all(0.0 <= w.probability <= 1.0 for w in s.words)


def test_long_keeps_sequential_quality(tiny, fw_tiny, long_audio, long_batched):
    """Sonnet 1, greedy: the word error rate of our batched text within 1 point of our sequential
    mode's without the previous text (no chunk hears another's; measured: both 14.95%, the same
    words: each loses "making" at a window's start and hears "to" for "too"), and near faster-
    whisper's batched pipeline's (10.28% here: its VAD chunks keep "making"; our sequential mode
    with the previous text: 11.21%)."""
    segments, _ = long_batched
    sequential = _text(tiny.transcribe(long_audio, beam_size=1, condition_on_previous_text=False)[0])
    reference = _text(fw_tiny.transcribe(long_audio, beam_size=1)[0])
    text = _text(segments)
    ours, seq, theirs = _wer(text, SONNET_1), _wer(sequential, SONNET_1), _wer(reference, SONNET_1)
    assert ours <= seq + 1.0, (ours, seq, text, sequential)
    assert ours <= theirs + 6.0 and ours <= 20.0, (ours, theirs, text, reference)
    assert abs(len(_words(text)) - len(_words(reference))) <= 5, (text, reference)


def test_mandarin_on_base_keeps_each_utterance(base):
    """The AISHELL clip and 1.5 s of silence, 8 times (45.6 s: two chunks), base, language detected:
    zh, and one segment per utterance, inside its repetition, each faster-whisper's text for the
    clip alone (testdata/reference/base_zh_text.json, greedy: 甚至出现交易几乎停制的情况) but
    for at most one character (base hears 停治 for 停制 in some, a homophone, when a window holds
    several utterances), with every character whole (几 and 乎 are two tokens each). A segment's
    middle lies in its utterance's repetition (timestamps from base are coarse: whole seconds);
    word_timestamps=True puts its words inside that utterance."""
    import json
    with open(os.path.join(ROOT, "testdata", "reference", "base_zh_text.json"), encoding="utf-8") as f:
        want = json.load(f)["decodes"]["greedy"]["text"]
    clip = decode_audio(ZH)
    audio = np.concatenate([clip, np.zeros(24000, np.float32)] * 8)
    segments, info = BatchedInferencePipeline(base).transcribe(audio, beam_size=1, word_timestamps=True)
    segments = list(segments)
    assert info.language == "zh"
    period = (clip.shape[0] + 24000) / 16000.0
    assert [int((s.start + s.end) / 2 / period) for s in segments] == list(range(8))
    for k, s in enumerate(segments):
        assert len(s.text) == len(want) and sum(a != b for a, b in zip(s.text, want)) <= 1, s.text
        assert "\ufffd" not in s.text and "几乎" in s.text
        # Words: a character (情况: one token) each, inside the utterance's 4.2 s (DTW: 20 ms steps).
        assert "".join(w.word for w in s.words) == s.text and len(s.words) == len(want) - 1
        assert k * period - 0.2 <= s.words[0].start and s.words[-1].end <= k * period + clip.shape[0] / 16000 + 0.2


def test_mandarin_clips_on_base(base):
    """The AISHELL clip and 1.5 s of silence, 4 times, base, language detected, one clip per
    utterance: zh, and each clip's one segment is faster-whisper's text for the clip alone
    (testdata/reference/base_zh_text.json, greedy), inside its clip, with its words (characters)
    inside it too; batched as each clip alone with the sequential loop (batch_size=1)."""
    import json
    with open(os.path.join(ROOT, "testdata", "reference", "base_zh_text.json"), encoding="utf-8") as f:
        want = json.load(f)["decodes"]["greedy"]["text"]
    clip = decode_audio(ZH)
    audio = np.concatenate([clip, np.zeros(24000, np.float32)] * 4)
    period = (clip.shape[0] + 24000) / 16000.0
    clips = [{"start": round(k * period, 2), "end": round(k * period + clip.shape[0] / 16000 + 0.3, 2)}
             for k in range(4)]
    runs = []
    for batch_size in (8, 1):
        segments, info = BatchedInferencePipeline(base).transcribe(audio, beam_size=1, batch_size=batch_size,
                                                                   clip_timestamps=clips, word_timestamps=True)
        runs.append([(s.start, s.end, s.text, [(w.start, w.end, w.word) for w in s.words]) for s in segments])
        assert info.language == "zh"
    assert runs[0] == runs[1]
    assert [text for _, _, text, _ in runs[0]] == [want] * 4
    for (start, end, text, words), c in zip(runs[0], clips):
        assert c["start"] <= start < end <= c["end"]
        assert "".join(w for _, _, w in words) == text and c["start"] <= words[0][0] and words[-1][1] <= c["end"]


@pytest.mark.parametrize("batch_size", [0, -1, 65, 1.5, True])
def test_batch_size_out_of_range_is_a_value_error(tiny, batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        BatchedInferencePipeline(tiny).transcribe(decode_audio(JFK), batch_size=batch_size)


def test_errors_are_faster_whispers(tiny, fw_tiny):
    """vad_filter=False on audio of 30 s or more: faster-whisper's RuntimeError and message; an
    unknown argument and an unknown VAD option are TypeErrors; an empty array has no segments."""
    long = np.zeros(31 * 16000, np.float32)
    with pytest.raises(RuntimeError) as theirs:
        fw_tiny.transcribe(long, vad_filter=False)
    with pytest.raises(RuntimeError) as ours:
        BatchedInferencePipeline(tiny).transcribe(long, vad_filter=False)
    assert str(ours.value) == str(theirs.value)
    pipeline = BatchedInferencePipeline(tiny)
    with pytest.raises(TypeError):
        pipeline.transcribe(decode_audio(JFK), foo=1)
    with pytest.raises(TypeError):
        fw_tiny.transcribe(decode_audio(JFK), vad_parameters={"foo": 1})
    with pytest.raises(TypeError, match="foo"):
        pipeline.transcribe(np.zeros(40 * 16000, np.float32), vad_parameters={"foo": 1})
    empty = np.zeros(0, np.float32)
    assert list(pipeline.transcribe(empty)[0]) == list(fw_tiny.transcribe(empty)[0]) == []
    with pytest.raises(TypeError, match="WhisperModel"):
        BatchedInferencePipeline("models/ggml-tiny.en.bin")
    with pytest.raises(TypeError, match="prepend_punctuations"):
        pipeline.transcribe(decode_audio(JFK), prepend_punctuations=None)
