#!/usr/bin/env python3
"""whisper-server 1.8.5's replies to `diarize` and `tinydiarize`, for //apps/server:inference_test.

whisper-server (examples/server/server.cpp of whisper.cpp 1.8.5, in the PyPI sdist
pywhispercpp==1.5.1) is started on tiny.en with -t 2 on a loopback port and sent POST /inference
requests; this records each reply body (testdata/whisper_server_diarize.json).

Clips (jfk.wav's int16 samples x, 16 kHz, each channel int(x * gain) as Python truncates):
  left   channel 0 = x, channel 1 = int(0.25 x)    -> every segment "0" by the energy rule
  right  the same swapped                           -> "1"
  equal  both x                                     -> "?"
  mono   jfk.wav itself (decoded as two equal channels) -> "?"
Requests: every response_format with diarize=true, and max_len=1000 (whisper-server cuts segments
at 60 characters unless max_len is sent; 1000 cuts nothing, as our server's default), then on
`left` text and verbose_json with max_len=60 (whisper-server's cut: more segments), then on jfk.wav
tinydiarize=true (json, text, verbose_json; tiny.en predicts no speaker turn).

Build whisper-server from the cache tools/whisper_cpp/build_whisper_cpp.sh fills (its CMake build
folder also has the server target):
  cmake --build ~/.cache/ggml_whisper/whisper.cpp-1.8.5-f32-accum/build -j2 --target whisper-server
  (or without -f32-accum on a CPU without AVX512-FP16)
Usage (from the repo root):
  python3 tools/whisper_cpp/whisper_server_diarize.py --server PATH/whisper-server \
      [--out testdata/whisper_server_diarize.json]
"""

import argparse
import array
import io
import json
import os
import socket
import subprocess
import sys
import time
import uuid
import urllib.request
import wave

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMATS = ["json", "text", "srt", "vtt", "verbose_json"]


def stereo_wav(x, gain0, gain1):
    out = array.array("h")
    for v in x:
        out.append(int(v * gain0))
        out.append(int(v * gain1))
    buf = io.BytesIO()
    dst = wave.open(buf, "wb")
    dst.setnchannels(2)
    dst.setsampwidth(2)
    dst.setframerate(16000)
    dst.writeframes(out.tobytes())
    dst.close()
    return buf.getvalue()


def post(port, fields, name, audio):
    boundary = uuid.uuid4().hex
    body = b""
    for k, v in fields:
        body += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, k, v)).encode()
    body += ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
             "Content-Type: audio/wav\r\n\r\n" % (boundary, name)).encode() + audio + b"\r\n"
    body += ("--%s--\r\n" % boundary).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/inference" % port, data=body,
                                 headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    with urllib.request.urlopen(req, timeout=300) as r:
        return r.read().decode("utf-8")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--model", default=os.path.join(REPO_ROOT, "models", "ggml-tiny.en.bin"))
    ap.add_argument("--jfk", default=os.path.join(REPO_ROOT, "..", "shared", "data", "jfk.wav"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "whisper_server_diarize.json"))
    a = ap.parse_args()
    with open(a.jfk, "rb") as f:
        jfk = f.read()
    src = wave.open(a.jfk)
    x = array.array("h", src.readframes(src.getnframes()))
    clips = {"left": stereo_wav(x, 1.0, 0.25), "right": stereo_wav(x, 0.25, 1.0),
             "equal": stereo_wav(x, 1.0, 1.0), "mono": jfk}
    cases = []
    for clip in clips:
        for fmt in FORMATS:
            cases.append((clip, [("diarize", "true"), ("max_len", "1000"), ("response_format", fmt)]))
    for fmt in ("text", "verbose_json"):
        cases.append(("left", [("diarize", "true"), ("max_len", "60"), ("response_format", fmt)]))
    for fmt in ("json", "text", "verbose_json"):
        cases.append(("mono", [("tinydiarize", "true"), ("max_len", "1000"), ("response_format", fmt)]))
    port = free_port()
    proc = subprocess.Popen([a.server, "-m", a.model, "-t", "2", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=1).read()
                break
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.2)
        out = []
        for clip, fields in cases:
            body = post(port, fields, clip + ".wav", clips[clip])
            out.append({"clip": clip, "fields": fields, "body": body})
            print(clip, fields, repr(body[:120]), file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with open(a.out, "w") as f:
        json.dump({"source": "whisper-server 1.8.5 (pywhispercpp==1.5.1 sdist), -m ggml-tiny.en.bin -t 2; "
                             "tools/whisper_cpp/whisper_server_diarize.py",
                   "cases": out}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
