"""End-to-end tests of //whisper:server over HTTP on the real tiny.en model.

The server is started on a free loopback port and stopped after each test class. References: the
CLI's own output files for the same audio and decoding flags (-bs 1 -bo 2, the server's defaults),
which equal faster-whisper's greedy segments (whisper/e2e tests), and the documented reply shapes
of whisper-server and OpenAI's audio API, read through the official `openai` SDK.
"""
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

ROOT, SHARED, MODELS = harness.repo_paths(HERE)
MODEL = os.path.join(MODELS, "ggml-tiny.en.bin")
CT2_MODEL = os.path.join(MODELS, "faster-whisper-tiny.en")  # faster-whisper's CTranslate2 folder
JFK = os.path.join(SHARED, "data", "jfk.wav")
SERVER = os.path.join(HERE, "server")
CLI = os.environ.get("WHISPER_CLI") or os.path.join(HERE, "..", "cli")
FORMATS = ["json", "text", "srt", "vtt", "verbose_json"]


def cli_outputs(audio, model=MODEL):
    """The CLI's .txt, .srt and .vtt for `audio` with the server's default decoding."""
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "out")
        subprocess.run([CLI, "-m", model, "-f", audio, "-bs", "1", "-bo", "2", "-t", "2", "-np",
                        "-otxt", "-osrt", "-ovtt", "-of", base], check=True, stdout=subprocess.DEVNULL)
        out = {}
        for ext in ("txt", "srt", "vtt"):
            with open(base + "." + ext) as f:
                out[ext] = f.read()
        return out


def stripped_subtitles(text):
    """OpenAI's subtitle files strip each cue's text; whisper-cli's keep the leading space."""
    return "\n".join(line[1:] if line.startswith(" ") else line for line in text.split("\n"))


class ServerFormatsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        assert os.path.exists(MODEL), "missing %s: run tools/setup.sh" % MODEL
        with open(JFK, "rb") as f:
            cls.jfk = f.read()
        cls.cli = cli_outputs(JFK)
        cls.server = harness.Server(SERVER, ["-m", MODEL, "-t", "2", "-np"])

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "server exit code %d after SIGTERM" % code

    def post(self, path, fields):
        return harness.post(self.server.port, path, fields, [("file", "jfk.wav", self.jfk)])

    def test_port_in_use_is_an_error(self):
        """A second server on this one's port exits 1 (cpp-httplib 0.11's default SO_REUSEPORT let
        it listen too, and the two took turns answering with their own models)."""
        proc = subprocess.run([SERVER, "-m", MODEL, "-t", "1", "--host", "127.0.0.1", "--port",
                               str(self.server.port)], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("cannot listen on 127.0.0.1:%d" % self.server.port, proc.stderr)
        self.assertNotIn("listening at", proc.stdout)

    def test_health(self):
        status, ctype, body = harness.get(self.server.port, "/health")
        self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}))

    def test_inference_every_format_equals_the_cli(self):
        txt = self.cli["txt"]
        for fmt in FORMATS:
            status, ctype, body = self.post("/inference", [("response_format", fmt)])
            self.assertEqual(status, 200, body)
            if fmt == "json":
                self.assertEqual(json.loads(body)["text"], txt)
            elif fmt == "verbose_json":
                j = json.loads(body)
                self.assertEqual(j["text"], txt)
                self.assertEqual("".join(s["text"] + "\n" for s in j["segments"]), txt)
            elif fmt == "text":
                self.assertEqual(body.decode(), txt)
            else:
                self.assertEqual(body.decode(), self.cli[fmt], fmt)

    def test_curl_openai_route(self):
        want = "".join(self.cli["txt"].split("\n")).strip()
        for fmt in FORMATS:
            out = subprocess.run(["curl", "-sS", "-f", "http://127.0.0.1:%d/v1/audio/transcriptions" % self.server.port,
                                  "-F", "file=@" + JFK, "-F", "model=whisper-1", "-F", "response_format=" + fmt],
                                 check=True, capture_output=True, text=True).stdout
            if fmt in ("json", "verbose_json"):
                self.assertEqual(json.loads(out)["text"], want)
            elif fmt == "text":
                self.assertEqual(out, want + "\n")
            else:
                self.assertEqual(out, stripped_subtitles(self.cli[fmt]), fmt)

    def test_openai_sdk(self):
        import openai
        client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % self.server.port, api_key="unused")
        want = "".join(self.cli["txt"].split("\n")).strip()
        for fmt in FORMATS:
            with open(JFK, "rb") as f:
                r = client.audio.transcriptions.create(model="whisper-1", file=f, response_format=fmt)
            if fmt == "json":
                self.assertEqual(r.text, want)
            elif fmt == "verbose_json":
                self.assertEqual(r.text, want)
                self.assertEqual(r.language, "english")
                self.assertAlmostEqual(r.duration, 11.0)
                self.assertEqual(len(r.segments), self.cli["srt"].count(" --> "))
                self.assertEqual(r.segments[0].start, 0.0)
                self.assertGreater(r.segments[-1].end, 10.0)
            elif fmt == "text":
                self.assertEqual(r, want + "\n")
            else:
                self.assertEqual(r, stripped_subtitles(self.cli[fmt]), fmt)
        with open(JFK, "rb") as f:
            r = client.audio.translations.create(model="whisper-1", file=f)
        self.assertEqual(r.text, want)
        with self.assertRaises(openai.BadRequestError) as e:
            client.audio.transcriptions.create(model="whisper-1", file=("notes.wav", b"not audio"))
        self.assertIn("notes.wav", e.exception.message)
        self.assertEqual(e.exception.body["param"], "file")
        # Word times through the SDK's TranscriptionVerbose.words (the values are checked against
        # faster-whisper's in inference_test): the words are the transcript's, in time order.
        with open(JFK, "rb") as f:
            r = client.audio.transcriptions.create(model="whisper-1", file=f, response_format="verbose_json",
                                                   timestamp_granularities=["word"])
        def plain(text):
            return "".join(c for c in text.lower() if c.isalpha() or c == " ").split()
        self.assertEqual([plain(w.word)[0] for w in r.words], plain(want))
        self.assertEqual(r.words[0].start, 0.0)
        for a, b in zip(r.words, r.words[1:]):
            self.assertLessEqual(a.start, a.end)
            self.assertLessEqual(a.end, b.start + 1e-9)
        with self.assertRaises(openai.BadRequestError) as e:
            with open(JFK, "rb") as f:
                client.audio.transcriptions.create(model="whisper-1", file=f, response_format="json",
                                                   timestamp_granularities=["word"])
        self.assertIn("needs response_format 'verbose_json'", e.exception.message)

    def test_bad_requests_are_json_4xx_and_the_server_keeps_serving(self):
        port = self.server.port
        cases = [
            (harness.post(port, "/inference", [("response_format", "json")]), 400, "no 'file' field"),
            (harness.post(port, "/inference", [], [("file", "x.wav", b"RIFF\xff\xff\xff\xffWAVE")]), 400, "x.wav"),
            (harness.post(port, "/inference", [], [("file", "e.wav", b"")]), 400, "e.wav"),
            (self.post("/inference", [("response_format", "xml")]), 400, "response_format"),
            (self.post("/inference", [("temperature", "warm")]), 400, "field 'temperature' needs a finite number"),
            (self.post("/inference", [("beam_size", "100")]), 400, "field 'beam_size' 100 is out of range"),
            (harness.post(port, "/inference", body=b"--x\r\ngarbage", content_type="multipart/form-data; boundary=x"),
             400, ""),
            (harness.post(port, "/nowhere", [("a", "b")]), 404, "no route POST /nowhere"),
            # Without --models-dir, /load is off (ServerModelsDirTest has the rest).
            (harness.post(port, "/load", [("model", "/nonexistent/model.bin")]), 403, "start it with --models-dir"),
        ]
        for (status, ctype, body), want_status, want_text in cases:
            self.assertEqual(status, want_status, body)
            self.assertTrue(ctype.startswith("application/json"), ctype)
            err = json.loads(body)["error"]
            message = err["message"] if isinstance(err, dict) else err
            self.assertIn(want_text, message)
        status, _, body = self.post("/inference", [("response_format", "text")])
        self.assertEqual((status, body.decode()), (200, self.cli["txt"]))

    def test_prompt_with_nul_or_bytes_that_are_not_utf8_is_a_400_naming_the_field(self):
        """The Python package refuses such a prompt with ValueError (_check_text); the server says
        400 on both routes, naming the field, where the bytes are and what they are."""
        for value, want in ((b"Ask not\0 what", "field 'prompt' has a NUL byte at offset 7"),
                            (b"Ask \xed\xa0\x80 not", "field 'prompt' has '\\xED\\xA0\\x80' at offset 4, "
                                                     "a UTF-16 surrogate (CESU-8)"),
                            (b"caf\xe9", "field 'prompt' has '\\xE9' at offset 3, not UTF-8")):
            for path in ("/inference", "/v1/audio/transcriptions"):
                with self.subTest(value=value, path=path):
                    status, ctype, body = self.post(path, [("prompt", value), ("response_format", "json")])
                    self.assertEqual(status, 400, body)
                    self.assertTrue(ctype.startswith("application/json"), ctype)
                    err = json.loads(body)["error"]
                    self.assertIn(want, err["message"] if isinstance(err, dict) else err)
                    if isinstance(err, dict):
                        self.assertEqual(err["param"], "prompt")


def stereo_jfk(path, gain0, gain1):
    """jfk.wav as 16-bit stereo: channel k = int(x * gain_k) for each sample x."""
    import array
    import wave
    src = wave.open(JFK)
    x = array.array("h", src.readframes(src.getnframes()))
    out = array.array("h")
    for v in x:
        out.append(int(v * gain0))
        out.append(int(v * gain1))
    dst = wave.open(path, "wb")
    dst.setnchannels(2)
    dst.setsampwidth(2)
    dst.setframerate(16000)
    dst.writeframes(out.tobytes())
    dst.close()


class ServerDiarizeTest(unittest.TestCase):
    """The server started with -di against the CLI's -di files (whisper-cli 1.8.5's, test_compat)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.clip = os.path.join(cls.tmp.name, "right.wav")
        stereo_jfk(cls.clip, 0.25, 1.0)  # channel 1 four times louder: every segment "(speaker 1)"
        base = os.path.join(cls.tmp.name, "out")
        subprocess.run([CLI, "-m", MODEL, "-f", cls.clip, "-bs", "1", "-bo", "2", "-t", "2", "-np", "-di",
                        "-otxt", "-osrt", "-ovtt", "-of", base], check=True, stdout=subprocess.DEVNULL)
        cls.cli = {}
        for ext in ("txt", "srt", "vtt"):
            with open(base + "." + ext) as f:
                cls.cli[ext] = f.read()
        cls.server = harness.Server(SERVER, ["-m", MODEL, "-t", "2", "-np", "-di"])

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        cls.tmp.cleanup()
        assert code == 0, "server exit code %d after SIGTERM" % code

    def test_labels_equal_the_cli(self):
        self.assertEqual(self.cli["txt"].count("(speaker 1)"), self.cli["txt"].count("\n"))
        with open(self.clip, "rb") as f:
            audio = f.read()
        for fmt, ext in (("text", "txt"), ("srt", "srt"), ("vtt", "vtt"), ("json", "txt"), ("verbose_json", "txt")):
            status, _, body = harness.post(self.server.port, "/inference", [("response_format", fmt)],
                                           [("file", "right.wav", audio)])
            self.assertEqual(status, 200, body)
            if fmt == "verbose_json":
                j = json.loads(body)
                self.assertEqual(j["text"], self.cli["txt"])
                self.assertEqual([s["speaker"] for s in j["segments"]], ["1"] * len(j["segments"]))
            elif fmt == "json":
                self.assertEqual(json.loads(body)["text"], self.cli["txt"])
            else:
                self.assertEqual(body.decode(), self.cli[ext], fmt)
        # The field overrides the server's -di.
        status, _, body = harness.post(self.server.port, "/inference", [("response_format", "text"),
                                                                        ("diarize", "false")],
                                       [("file", "right.wav", audio)])
        self.assertEqual((status, body.decode()), (200, self.cli["txt"].replace("(speaker 1)", "")))


class ServerModelsDirTest(unittest.TestCase):
    """POST /load only loads a plain file name from --models-dir, and never echoes a file's bytes.

    whisper-server 1.8.5 loads any path a client sends (and exits when it is not a model); the
    attacks below are the paths a client would try to read or probe the server's files with.
    """

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        base = cls.tmp.name
        cls.dir = os.path.join(base, "models")
        os.mkdir(cls.dir)
        os.mkdir(os.path.join(cls.dir, "sub"))
        good = os.path.join(cls.dir, "tiny.en.bin")
        try:
            os.link(os.path.realpath(MODEL), good)  # a symlink would lead outside the folder
        except OSError:
            import shutil
            shutil.copyfile(MODEL, good)
        # Not a model: its first bytes are what /etc/passwd starts with ("root" = 0x746f6f72).
        with open(os.path.join(cls.dir, "notes.bin"), "w") as f:
            f.write("root:x:0:0:root:/root:/bin/bash\n")
        with open(os.path.join(base, "secret.bin"), "w") as f:
            f.write("root:secret\n")
        os.symlink("/etc/passwd", os.path.join(cls.dir, "passwd_link"))
        os.symlink("../secret.bin", os.path.join(cls.dir, "up_link"))
        os.symlink("tiny.en.bin", os.path.join(cls.dir, "in_link"))
        cls.ct2 = os.path.join(cls.dir, "faster-whisper-tiny.en")  # a CTranslate2 folder
        os.mkdir(cls.ct2)
        for name in os.listdir(CT2_MODEL):
            src, dst = os.path.realpath(os.path.join(CT2_MODEL, name)), os.path.join(cls.ct2, name)
            try:
                os.link(src, dst)
            except OSError:
                import shutil
                shutil.copyfile(src, dst)
        os.mkfifo(os.path.join(cls.dir, "fifo"))
        with open(JFK, "rb") as f:
            cls.jfk = f.read()
        cls.txt = cli_outputs(JFK)["txt"]
        cls.server = harness.Server(SERVER, ["-m", MODEL, "-t", "2", "-np", "--models-dir", cls.dir])

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        cls.tmp.cleanup()
        assert code == 0, "server exit code %d after SIGTERM" % code

    def transcribe(self):
        status, _, body = harness.post(self.server.port, "/inference", [("response_format", "text")],
                                       [("file", "jfk.wav", self.jfk)])
        return status, body.decode()

    def check_refused(self, reply, rule, sent=""):
        status, ctype, body = reply
        self.assertEqual(status, 400, body)
        self.assertTrue(ctype.startswith("application/json"), ctype)
        message = json.loads(body)["error"]
        self.assertIn("field 'model'", message)
        self.assertIn(rule, message)
        for leak in ("root:", "0x746f6f72", "secret", self.dir, "bad magic"):
            if leak not in sent:  # the name a client sent may be quoted back to it
                self.assertNotIn(leak, message)
        return message

    def test_attacks_are_refused_and_the_model_stays(self):
        port = self.server.port
        not_a_file = "is not a file in the server's --models-dir"
        multipart = [
            ("/etc/passwd", "contains '/'"),
            ("../../etc/passwd", "contains '/'"),
            ("models/../../etc/passwd", "contains '/'"),
            ("..", "names a folder"),
            (os.path.join(self.dir, "tiny.en.bin"), "contains '/'"),  # absolute, even inside the folder
            ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", not_a_file),  # multipart values are not URL-decoded
            ("passwd_link", "symbolic link that leads outside"),
            ("up_link", "symbolic link that leads outside"),
            ("sub", "cannot be loaded as a Whisper ggml model or CTranslate2 model folder"),  # no model.bin
            ("fifo", "is a FIFO"),
            ("", "field 'model' is empty"),
            ("tiny.en.bin\x00../../etc/passwd", "control byte 0x00 at offset 11"),
            ("a" * 100000, "is 100000 bytes long"),
            ("missing.bin", not_a_file),
        ]
        for name, rule in multipart:
            self.check_refused(harness.post(port, "/load", [("model", name)]), rule, name)
        # URL-encoded bodies and query strings are decoded by cpp-httplib first: '/' is then seen.
        form = "application/x-www-form-urlencoded"
        self.check_refused(harness.post(port, "/load", body=b"model=%2e%2e%2f%2e%2e%2fetc%2fpasswd", content_type=form),
                           "contains '/'")
        self.check_refused(harness.post(port, "/load", body=b"model=%2Fetc%2Fpasswd", content_type=form),
                           "contains '/'")
        self.check_refused(harness.post(port, "/load?model=..%2F..%2Fetc%2Fpasswd", body=b"", content_type=form),
                           "contains '/'")
        # A file of the folder that is not a model: the loader's message (its magic, from the file's
        # bytes) goes to the server's log only.
        message = self.check_refused(harness.post(port, "/load", [("model", "notes.bin")]),
                                     "cannot be loaded as a Whisper ggml model")
        self.assertIn("the previous model is still loaded", message)
        self.assertEqual(self.transcribe(), (200, self.txt))
        log = "".join(self.server.stderr_lines)
        self.assertNotIn("/etc/passwd", log)  # never handed to the loader
        self.assertNotIn("secret.bin", log)

    def test_load_a_file_of_the_folder_then_transcribe(self):
        for name in ("tiny.en.bin", "in_link"):
            status, _, body = harness.post(self.server.port, "/load", [("model", name)])
            self.assertEqual((status, body), (200, b"Load was successful!"))
            self.assertEqual(self.transcribe(), (200, self.txt))

    def test_load_a_ct2_folder_then_transcribe(self):
        # A CTranslate2 folder in --models-dir loads as the CLI's -m does (before: "is a directory");
        # the server started with -m on such a folder too (before: "not a regular file").
        want = cli_outputs(JFK, model=CT2_MODEL)["txt"]
        status, _, body = harness.post(self.server.port, "/load", [("model", "faster-whisper-tiny.en")])
        self.assertEqual((status, body), (200, b"Load was successful!"))
        self.assertEqual(self.transcribe(), (200, want))
        server = harness.Server(SERVER, ["-m", CT2_MODEL, "-t", "2"])  # no -np: the load line is checked
        try:
            status, _, body = harness.post(server.port, "/inference", [("response_format", "text")],
                                           [("file", "jfk.wav", self.jfk)])
            self.assertEqual((status, body.decode()), (200, want))
        finally:
            self.assertEqual(server.stop(), 0)
        # Loaded once (the alignment heads of its shape chosen within that load; it was loaded a
        # second time for them), and named by its folder (it was '<buffer>').
        loads = [line for line in server.stderr_lines if "whisper_model_load: loaded '" in line]
        self.assertEqual(len(loads), 1, "".join(server.stderr_lines))
        self.assertIn("loaded '%s': type tiny" % CT2_MODEL, loads[0])

    def test_models_dir_must_be_a_folder(self):
        for bad in (os.path.join(self.dir, "missing"), os.path.join(self.dir, "tiny.en.bin")):
            r = subprocess.run([SERVER, "-m", MODEL, "--port", "0", "--models-dir", bad], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--models-dir", r.stderr)


class ServerPublicTest(unittest.TestCase):
    """--public serves the folder's files and never a file outside its real path: cpp-httplib's
    mount point refused ".." but followed a symbolic link in the folder to /etc/passwd."""

    def test_links_out_of_the_folder_are_refused(self):
        with tempfile.TemporaryDirectory() as base:
            pub = os.path.join(base, "pub")
            os.mkdir(pub)
            os.mkdir(os.path.join(base, "outside"))
            with open(os.path.join(pub, "index.html"), "w") as f:
                f.write("<p>home</p>")
            with open(os.path.join(base, "outside", "secret.txt"), "w") as f:
                f.write("top secret")
            os.symlink("/etc/passwd", os.path.join(pub, "passwd"))
            os.symlink("../outside", os.path.join(pub, "out"))
            os.symlink("index.html", os.path.join(pub, "home.html"))
            os.mkfifo(os.path.join(pub, "fifo"))
            with harness.Server(SERVER, ["-m", MODEL, "-t", "1", "-np", "--public", pub]) as server:
                for path in ("/", "/home.html"):
                    status, ctype, body = harness.get(server.port, path)
                    self.assertEqual((status, ctype, body), (200, "text/html", b"<p>home</p>"), path)
                for path in ("/passwd", "/out/secret.txt"):
                    status, ctype, body = harness.get(server.port, path)
                    self.assertEqual(status, 403, body[:200])
                    self.assertIn("leads outside the server's --public folder", json.loads(body)["error"])
                    self.assertNotIn(b"root:", body)
                    self.assertNotIn(b"top secret", body)
                for path in ("/fifo", "/../outside/secret.txt", "/missing"):  # on to the routes: 404
                    status, _, body = harness.get(server.port, path, timeout_s=10)
                    self.assertIn(status, (400, 404), path)
                    self.assertNotIn(b"top secret", body)
                self.assertEqual(harness.get(server.port, "/health")[0], 200)
            r = subprocess.run([SERVER, "-m", MODEL, "--port", "0", "--public", os.path.join(base, "missing")],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--public '%s'" % os.path.join(base, "missing"), r.stderr)


class ServerEnglishOnlyTest(unittest.TestCase):
    """faster-whisper's rule for language and translate on tiny.en (apps/common/request_rules.h)."""

    def test_language_and_translate_warn_and_transcribe_in_english(self):
        with open(JFK, "rb") as f:
            jfk = f.read()
        txt = cli_outputs(JFK)["txt"]
        de = "The current model is English-only but the language parameter is set to 'de'; using 'en' instead."
        tr = ("The current model is English-only but the task parameter is set to 'translate'; "
              "using 'transcribe' instead.")
        with harness.Server(SERVER, ["-m", MODEL, "-t", "2"]) as server:
            conn_args = [("response_format", "text"), ("language", "de"), ("translate", "true")]
            body, ctype = harness.multipart(conn_args, [("file", "jfk.wav", jfk)])
            import http.client
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
            conn.request("POST", "/inference", body=body, headers={"Content-Type": ctype})
            r = conn.getresponse()
            self.assertEqual((r.status, r.read().decode()), (200, txt))
            self.assertEqual(r.headers.get_all("Warning"), ['299 ggml_whisper "%s"' % de, '299 ggml_whisper "%s"' % tr])
            conn.close()
            status, _, body = harness.post(server.port, "/inference", [("language", "de")],
                                           [("file", "jfk.wav", jfk)])
            self.assertEqual(status, 200)
            self.assertEqual(json.loads(body), {"text": txt, "warnings": [de]})
        log = "".join(server.stderr_lines)
        self.assertIn("warning: " + de, log)


class ServerLoadTest(unittest.TestCase):
    """8 clients x 25 requests, good and bad mixed, on --parallel 2 with a 1 MiB body limit."""

    def test_load(self):
        with open(JFK, "rb") as f:
            jfk = f.read()
        txt = cli_outputs(JFK)["txt"]
        good = ([("response_format", "text")], [("file", "jfk.wav", jfk)], 200)
        kinds = [
            good,
            ([], [("file", "junk.wav", os.urandom(5000))], 400),
            ([("response_format", "text")], [], 400),
            good,
            ([("response_format", "yaml")], [("file", "jfk.wav", jfk)], 400),
            ([], [("file", "big.wav", jfk * 4)], 413),  # 1.4 MB > --max-body-size 1 MiB
            ([("temperature", "-1")], [("file", "jfk.wav", jfk)], 400),
            good,
            ([("response_format", "text")], [("file", "short.wav", jfk[:44 + 3000])], 400),  # 1500 samples
            ([("language", "zz")], [("file", "jfk.wav", jfk)], 400),
        ]
        n_clients, per_client = 8, 25
        with harness.Server(SERVER, ["-m", MODEL, "--parallel", "2", "-t", "1", "--queue", "16", "-np",
                                     "--max-body-size", str(1 << 20)]) as server:
            def client(c):
                results = []
                for i in range(per_client):
                    fields, files, want = kinds[(c * 3 + i) % len(kinds)]
                    status, _, body = harness.post(server.port, "/inference", fields, files)
                    results.append((want, status, body))
                return results

            # The first 8 requests, one per client at once (they reach both states).
            with concurrent.futures.ThreadPoolExecutor(n_clients) as pool:
                first = list(pool.map(lambda _: harness.post(server.port, "/inference", *good[:2]), range(8)))
            self.assertTrue(all(s == 200 and b.decode() == txt for s, _, b in first))
            rss_warm = server.rss_kib()
            with concurrent.futures.ThreadPoolExecutor(n_clients) as pool:
                all_results = [r for rs in pool.map(client, range(n_clients)) for r in rs]
            rss_end = server.rss_kib()
            self.assertEqual(len(all_results), n_clients * per_client)  # none lost
            n_good = 0
            for want, status, body in all_results:
                self.assertEqual(status, want, body[:300])
                if want == 200:
                    n_good += 1
                    self.assertEqual(body.decode(), txt)
                else:
                    self.assertIn("error", json.loads(body))
            self.assertGreater(n_good, 40)
            print("load: %d requests (%d good), RSS after the first 8: %d KiB, after the run: %d KiB (%+.1f%%)"
                  % (len(all_results), n_good, rss_warm, rss_end, 100.0 * (rss_end - rss_warm) / rss_warm))
            self.assertLessEqual(rss_end, rss_warm * 1.05)

    def test_full_queue_is_503(self):
        with open(JFK, "rb") as f:
            jfk = f.read()
        with harness.Server(SERVER, ["-m", MODEL, "--parallel", "1", "--queue", "0", "-t", "1", "-np"]) as server:
            def one(_):
                return harness.post(server.port, "/v1/audio/transcriptions", [("model", "whisper-1")],
                                    [("file", "jfk.wav", jfk)])[:3:2]
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                results = list(pool.map(one, range(4)))
            statuses = sorted(s for s, _ in results)
            self.assertIn(200, statuses)
            self.assertIn(503, statuses)
            for s, body in results:
                if s == 503:
                    self.assertIn("server busy", json.loads(body)["error"]["message"])
            self.assertEqual(harness.post(server.port, "/v1/audio/transcriptions", [],
                                          [("file", "jfk.wav", jfk)])[0], 200)


class ServerBatchTest(unittest.TestCase):
    """Continuous batching (--parallel 4: one decoder batch of 4 slots): a greedy request gives the
    same bytes alone and among 11 concurrent requests of other kinds (formats, prompt, temperature,
    beam search on its own state, word timestamps, bad requests), equal to the CLI's; a client
    that stalls mid-request times out without holding the batch; --no-batching gives the same."""

    def test_greedy_alone_and_in_a_batch(self):
        with open(JFK, "rb") as f:
            jfk = f.read()
        cli = cli_outputs(JFK)
        files = [("file", "jfk.wav", jfk)]
        greedy = ([("response_format", "text")], files)
        others = [
            ([("response_format", "verbose_json")], files),
            ([("response_format", "srt"), ("prompt", "Ask not")], files),
            ([("response_format", "vtt"), ("temperature", "0.6")], files),
            ([("response_format", "text"), ("beam_size", "5")], files),
            ([("response_format", "json"), ("max_len", "12")], files),
            ([("response_format", "text"), ("temperature", "-1")], files),  # 400
            ([("response_format", "text")], [("file", "junk.wav", b"RIFF" + os.urandom(3000))]),  # 400
        ]
        with harness.Server(SERVER, ["-m", MODEL, "--parallel", "4", "-t", "2", "--queue", "16", "-np",
                                     "--read-timeout", "2"]) as server:
            status, _, alone = harness.post(server.port, "/inference", *greedy)
            self.assertEqual((status, alone.decode()), (200, cli["txt"]))
            stalled = socket.create_connection(("127.0.0.1", server.port))
            stalled.sendall(b"POST /inference HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial")
            jobs = [greedy, greedy, greedy, greedy] + others
            with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
                replies = list(pool.map(lambda j: harness.post(server.port, "/inference", *j), jobs))
            for status, _, body in replies[:4]:
                self.assertEqual((status, body), (200, alone))
            want = [200, 200, 200, 200, 200, 400, 400]
            self.assertEqual([r[0] for r in replies[4:]], want, [r[2][:200] for r in replies[4:]])
            self.assertIn(b"ask not what your country", replies[7][2])  # beam 5
            # The stalled client's connection is closed by --read-timeout (with or without a 4xx).
            stalled.settimeout(30)
            end = stalled.recv(4096)
            self.assertTrue(end == b"" or end.startswith(b"HTTP/1.1 4"), end[:100])
            stalled.close()
            status, _, again = harness.post(server.port, "/inference", *greedy)
            self.assertEqual((status, again), (200, alone))
        with harness.Server(SERVER, ["-m", MODEL, "--parallel", "2", "--no-batching", "-t", "1", "-np"]) as server:
            self.assertEqual(harness.post(server.port, "/inference", *greedy)[2], alone)


if __name__ == "__main__":
    unittest.main(verbosity=2)
