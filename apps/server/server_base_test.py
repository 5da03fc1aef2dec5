"""The server's replies carry Chinese whole, on Whisper base (models/ggml-base.bin, from
`tools/get_model.sh base`; every test is skipped, naming that command, when it is absent).

Reference: faster-whisper 1.2.1 on the same weights (models/faster-whisper-base), not our output:
  - testdata/reference/base_zh_text.json (tools/reference/fw_text_zh.py): the AISHELL clip's text
    with greedy decoding (beam_size=1, best_of=2: the server's defaults), and its text tokens
    grouped into whole characters as whisper-cli 1.8.5's -ojf groups them;
  - testdata/reference/base_zh_words.json (tools/reference/fw_words_zh.py): its
    word_timestamps=True words (each character, or a whole-character token, is a word).
Checked: whisper-server's /inference (json, verbose_json, text, srt, vtt) and OpenAI's
/v1/audio/transcriptions (json, verbose_json with word and segment granularities, without a
language field (detected, as OpenAI's API does), and through the `openai` SDK): every body is strict UTF-8 (and JSON where it says so) and holds faster-whisper's
text; verbose_json's per-token "words" are whole characters (whisper-server 1.8.5 writes a token
that ends inside a character as U+FFFD: 几 and 乎 here).
"""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

ROOT, SHARED, MODELS = harness.repo_paths(HERE)
BASE = os.path.join(MODELS, "ggml-base.bin")
CLIP = os.path.join(SHARED, "data", "zh_aishell_BAC009S0764W0121.wav")
SERVER = os.path.join(HERE, "server")


def reference(name):
    with open(os.path.join(ROOT, "testdata", "reference", name), encoding="utf-8") as f:
        return json.load(f)


def strict_json(body):
    """The body as JSON, refusing anything that is not UTF-8 (json.loads alone accepts str only)."""
    return json.loads(body.decode("utf-8", errors="strict"))


class ServerBaseChineseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(BASE):
            raise unittest.SkipTest("%s is absent: run `tools/get_model.sh base` (tools/test.sh does)" % BASE)
        greedy = reference("base_zh_text.json")["decodes"]["greedy"]
        cls.want = greedy["text"].strip()
        cls.want_pieces = [p["text"] for s in greedy["segments"] for p in s["ojf_pieces"]]
        cls.want_words = reference("base_zh_words.json")["words"]
        with open(CLIP, "rb") as f:
            cls.audio = f.read()
        cls.server = harness.Server(SERVER, ["-m", BASE, "-t", "2", "-np"])

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "server exit code %d after SIGTERM" % code

    def post(self, path, fields):
        status, _, body = harness.post(self.server.port, path, fields, [("file", "zh.wav", self.audio)])
        self.assertEqual(status, 200, body)
        return body

    def test_inference_every_format(self):
        for fmt in ("json", "verbose_json", "text", "srt", "vtt"):
            with self.subTest(fmt=fmt):
                body = self.post("/inference", [("response_format", fmt), ("language", "auto")])
                if fmt in ("json", "verbose_json"):
                    j = strict_json(body)
                    self.assertEqual(j["text"].strip(), self.want)
                else:
                    text = body.decode("utf-8", errors="strict")
                    lines = [l for l in text.split("\n") if l and "-->" not in l and l != "WEBVTT" and not l.isdigit()]
                    self.assertEqual("".join(l.strip() for l in lines), self.want, text)
                if fmt == "verbose_json":
                    self.assertEqual(j["language"], "chinese")
                    self.assertEqual("".join(s["text"].strip() for s in j["segments"]), self.want)
                    words = [w["word"] for s in j["segments"] for w in s["words"]]
                    self.assertEqual(words, self.want_pieces)  # 几 and 乎 whole, not U+FFFD twice each

    def test_openai_route_without_language_detects_it(self):
        # OpenAI's `language` is optional and the API detects it; faster-whisper (language=None)
        # detects zh on this clip and transcribes the same text.
        j = strict_json(self.post("/v1/audio/transcriptions", [("model", "whisper-1"),
                                                                ("response_format", "verbose_json")]))
        self.assertEqual(j["language"], "chinese")
        self.assertEqual(j["text"], self.want)

    def test_openai_route_json_and_words(self):
        j = strict_json(self.post("/v1/audio/transcriptions", [("model", "whisper-1"), ("language", "zh"),
                                                                ("response_format", "json")]))
        self.assertEqual(j["text"], self.want)
        j = strict_json(self.post("/v1/audio/transcriptions", [
            ("model", "whisper-1"), ("language", "zh"), ("response_format", "verbose_json"),
            ("timestamp_granularities[]", "word"), ("timestamp_granularities[]", "segment")]))
        self.assertEqual(j["text"], self.want)
        self.assertEqual(j["language"], "chinese")
        self.assertEqual("".join(s["text"] for s in j["segments"]).strip(), self.want)
        self.assertEqual([w["word"] for w in j["words"]], [w["word"] for w in self.want_words])
        for got, want in zip(j["words"], self.want_words):
            # faster-whisper rounds to 10 ms; one 20 ms DTW step apart at most.
            self.assertLessEqual(abs(got["start"] - want["start"]), 0.021, got)
            self.assertLessEqual(abs(got["end"] - want["end"]), 0.021, got)

    def test_openai_sdk(self):
        import openai
        client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % self.server.port, api_key="unused")
        with open(CLIP, "rb") as f:
            r = client.audio.transcriptions.create(model="whisper-1", file=f, language="zh",
                                                   response_format="verbose_json")
        self.assertEqual(r.text, self.want)
        self.assertEqual(r.segments[0].text.strip(), self.want)


if __name__ == "__main__":
    unittest.main()
