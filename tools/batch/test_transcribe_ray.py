#!/usr/bin/env python3
"""End-to-end test of tools/batch/transcribe_ray.py on a local two-node Ray cluster.

Run by tools/batch/test_ray.sh (which installs ggml_whisper into a virtual environment first):
  1. 200 files: 190 short clips cut from jfk.wav (5 distinct cuts, so the CLI is run 5 times for
     the reference texts) and 10 corrupt ones (garbage, empty, truncated, bad headers, NaN).
  2. `ray start --head` on 127.0.0.1 and a second node process, one CPU each.
  3. A run during which one worker process is killed (SIGKILL): every file exactly once, corrupt
     ones with their error, every text equal to the CLI's for the same clip.
  4. A run whose driver is killed partway, then started again: it skips what was written, and
     every file is again in the output exactly once.
Exits non-zero with a message on the first failed check.
"""
import argparse
import glob
import json
import os
import signal
import struct
import subprocess
import sys
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
CLIPS = [(0.0, 2.5), (2.0, 3.0), (4.5, 3.0), (7.0, 2.5), (8.4, 2.6)]  # (offset s, duration s) of jfk.wav


def fail(msg):
    print("test_transcribe_ray: FAILED: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def write_wav(path, frames_bytes, rate=16000):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames_bytes)


def make_inputs(jfk, in_dir):
    with wave.open(jfk) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        pcm = w.readframes(w.getnframes())
    clip_bytes = [pcm[int(o * 16000) * 2:int((o + d) * 16000) * 2] for o, d in CLIPS]
    for k, b in enumerate(clip_bytes):
        write_wav(os.path.join(in_dir, "..", "clip%d.wav" % k), b)
    source = {}
    for i in range(190):
        path = os.path.join(in_dir, "%03d_clip%d.wav" % (i, i % len(CLIPS)))
        write_wav(path, clip_bytes[i % len(CLIPS)])
        source[path] = i % len(CLIPS)
    header = open(os.path.join(in_dir, "000_clip0.wav"), "rb").read()[:44]
    nan = b"".join(struct.pack("<f", float("nan") if i == 7 else 0.0) for i in range(4000))
    fmt_f32 = b"fmt " + struct.pack("<IHHIIHH", 16, 3, 1, 16000, 64000, 4, 32)
    corrupt = {  # ten files, each an error row
        "bad_garbage.wav": os.urandom(5000),
        "bad_empty.wav": b"",
        "bad_text.wav": b"this is not audio\n" * 50,
        "bad_header_only.wav": header,
        "bad_truncated_fmt.wav": header[:30],
        "bad_riff_only.wav": b"RIFF\x04\x00\x00\x00WAVE",
        "bad_rate_1hz.wav": header[:24] + struct.pack("<II", 1, 2) + header[32:] + b"\0" * 32000,
        "bad_nan.wav": b"RIFF" + struct.pack("<I", 36 + len(nan)) + b"WAVE" + fmt_f32 + b"data" +
                       struct.pack("<I", len(nan)) + nan,
        "bad_mp3.mp3": b"\xff\xfb\x90\x00" + os.urandom(300),
    }
    corrupt["bad_no_samples.wav"] = header[:40] + struct.pack("<I", 0)
    for name, data in corrupt.items():
        with open(os.path.join(in_dir, name), "wb") as f:
            f.write(data)
        source[os.path.join(in_dir, name)] = None
    return {os.path.abspath(p): k for p, k in source.items()}


def cli_texts(cli, model, work):
    """The CLI's text for each distinct clip, with the job's options: greedy (-bs 1, for time: the
    job passes --beam-size 1) and the Python API's other defaults (faster-whisper's: non-speech
    tokens suppressed, temperature fallback with best_of 5). The job's default pipeline is the
    batched one (BatchedInferencePipeline): each clip, shorter than 30 s, is one chunk, decoded as
    the sequential loop decodes it (a single window: no previous text either way)."""
    texts = []
    for k in range(len(CLIPS)):
        # Not -nt: whisper-cli's -nt also decodes without timestamp tokens, which changes the text.
        out = subprocess.run([cli, "-m", model, "-f", os.path.join(work, "clip%d.wav" % k), "-bs", "1", "-sns",
                              "-np", "-t", "1"], capture_output=True, text=True, check=True).stdout
        texts.append("".join(line.split("]  ", 1)[1] for line in out.splitlines() if line.startswith("[")))
    return texts


def read_rows(out_dir):
    rows = []
    for part in glob.glob(os.path.join(out_dir, "part-*.jsonl")):
        with open(part) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def check_output(out_dir, source, texts, what):
    rows = read_rows(out_dir)
    paths = [r["path"] for r in rows]
    if len(paths) != len(set(paths)):
        fail("%s: %d rows for %d distinct files (duplicates)" % (what, len(paths), len(set(paths))))
    if set(paths) != set(source):
        fail("%s: missing %s, unexpected %s" % (what, sorted(set(source) - set(paths))[:5],
                                               sorted(set(paths) - set(source))[:5]))
    for r in rows:
        k = source[r["path"]]
        if k is None:
            if not r["error"] or r["segments"]:
                fail("%s: corrupt %s has no error: %s" % (what, r["path"], r))
        else:
            if r["error"]:
                fail("%s: %s failed: %s" % (what, r["path"], r["error"]))
            if r["text"] != texts[k]:
                fail("%s: %s text %r, the CLI's %r" % (what, r["path"], r["text"], texts[k]))
            if abs(r["duration"] - CLIPS[k][1]) > 0.01 or r["language"] != "en":
                fail("%s: %s duration %s language %s" % (what, r["path"], r["duration"], r["language"]))
    print("test_transcribe_ray: %s: %d files exactly once, %d with their error, texts equal to the CLI's" %
          (what, len(rows), sum(1 for r in rows if r["error"])), flush=True)


def start_job(python, args, log):
    return subprocess.Popen([python, os.path.join(HERE, "transcribe_ray.py")] + args, stdout=log,
                            stderr=subprocess.STDOUT)


def wait_parts(out_dir, n, proc, timeout=300):
    t = time.time()
    while len(glob.glob(os.path.join(out_dir, "part-*.jsonl"))) < n:
        if proc.poll() is not None:
            fail("the job ended (rc %s) before %d parts were written" % (proc.returncode, n))
        if time.time() - t > timeout:
            fail("no %d parts after %d s" % (n, timeout))
        time.sleep(0.2)


def worker_pids():
    """Processes of the Transcriber actors (Ray titles them ray::MapWorker(MapBatches(Transcriber)))."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if "MapWorker" in line and "Transcriber" in line]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--jfk", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--port", default="6390")
    a = ap.parse_args()
    python = sys.executable
    in_dir = os.path.join(a.work, "in")
    os.makedirs(in_dir)
    source = make_inputs(a.jfk, in_dir)
    texts = cli_texts(a.cli, a.model, a.work)
    print("test_transcribe_ray: %d inputs; CLI texts: %s" % (len(source), texts), flush=True)
    if any(not t for t in texts):
        fail("the CLI gave an empty text for a clip")

    # Ray 2.60 turns token authentication on once a token exists (~/.ray/auth_token, written by
    # any earlier ray.init); give every process of this test's cluster its own token instead.
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = os.urandom(32).hex()
    ray = [python, "-m", "ray.scripts.scripts"]
    address = "127.0.0.1:" + a.port
    common = ["--num-cpus=1", "--disable-usage-stats"]
    subprocess.run(ray + ["start", "--head", "--node-ip-address=127.0.0.1", "--port=" + a.port,
                          "--include-dashboard=false"] + common, check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(ray + ["start", "--address=" + address, "--node-ip-address=127.0.0.1"] + common, check=True,
                       stdout=subprocess.DEVNULL)
        job = ["--input", in_dir, "--model", a.model, "--address", address, "--threads", "1", "--beam-size", "1"]

        # A worker killed mid-run.
        out1 = os.path.join(a.work, "out_kill_worker")
        with open(os.path.join(a.work, "job1.log"), "w") as log:
            p = start_job(python, job + ["--output", out1], log)
            wait_parts(out1, 1, p)
            pids = worker_pids()
            if not pids:
                fail("no MapWorker process to kill")
            os.kill(pids[0], signal.SIGKILL)
            print("test_transcribe_ray: killed worker %d of %s" % (pids[0], pids), flush=True)
            if p.wait(timeout=900) != 0:
                fail("the job with a killed worker exited %d (see %s)" % (p.returncode, log.name))
        check_output(out1, source, texts, "worker killed")

        # The driver killed partway, then the same command again.
        out2 = os.path.join(a.work, "out_resume")
        with open(os.path.join(a.work, "job2.log"), "w") as log:
            p = start_job(python, job + ["--output", out2], log)
            wait_parts(out2, 2, p)
            p.kill()
            p.wait()
        time.sleep(3)  # let the cluster end the dead driver's job before counting what it wrote
        written = len(read_rows(out2))
        if not 0 < written < len(source):
            fail("the interrupted run wrote %d rows, expected some but not all" % written)
        log2 = os.path.join(a.work, "job3.log")
        with open(log2, "w") as log:
            p = start_job(python, job + ["--output", out2], log)
            if p.wait(timeout=900) != 0:
                fail("the resumed job exited %d (see %s)" % (p.returncode, log2))
        resumed = open(log2).read()
        if "%d already in" % written not in resumed:
            fail("the resumed run did not skip the %d rows written: %s" % (written, resumed[:2000]))
        check_output(out2, source, texts, "interrupted after %d rows and resumed" % written)
        summary = [line for line in resumed.splitlines() if "summary:" in line]
        print(summary[-1] if summary else "", flush=True)
    finally:
        subprocess.run(ray + ["stop", "--force"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("test_transcribe_ray: OK", flush=True)


if __name__ == "__main__":
    main()
