#!/usr/bin/env python3
"""Speed, memory and transcript of our whisper-cli against faster-whisper and whisper.cpp.

Every system transcribes the same audio with the same thread count on this machine, one process
per run, and the runs are interleaved: round r runs every configuration once (A B C ... then,
next round, rotated), so slow drifts in machine load hit all systems alike. Per configuration it
reports medians over the rounds and, against our CLI in the same decoding mode, the median of
the per-round ratios (pairwise, so a noisy round cancels out).

Systems and configurations (the same weights for all: Whisper tiny.en, or base with --model base):
  ours            bazel-bin apps/cli/cli (-c opt) on models/ggml-tiny.en.bin: greedy (-bs 1) and
                  default (beam search 5, best-of 5); "ours-avx2" is greedy capped at AVX2
                  (GGML_CPU_TARGET=AVX2).
  faster-whisper  pip `faster-whisper` (CTranslate2) on models/faster-whisper-tiny.en (the
                  directory tools/get_model.sh converts from), compute types int8 and float32,
                  greedy (beam_size=1) and beam 5; no VAD, condition_on_previous_text=True,
                  temperature fallback on (its defaults), as whisper-cli.
  whisper.cpp     whisper-cli 1.8.5 built from source for this CPU (GGML_NATIVE=ON, OpenMP,
                  tools/whisper_cpp/build_whisper_cpp.sh, cached) on OUR converted
                  models/ggml-tiny.en.bin: greedy (-bs 1) and its defaults (beam 5, best-of 5,
                  flash attention on), as ours. Not the pywhispercpp wheel: an AVX2 build.
  ours q8_0 / whisper.cpp q8_0: the same CLIs on models/ggml-tiny.en.bin quantized to Q8_0 by
                  //tools/quantize (skip with --no-q8); the fw int8 rows are also compared with
                  ours q8_0 (column x_work vs ours q8_0): 8-bit weights against 8-bit weights.
  batched (--batched N, issue 38 part 6; these rows replace the ones above): our CLI with
                  --batch-size N (-vm models/ggml-silero-v6.bin: chunks of <= 30 s cut at VAD
                  pauses, N decoded at a time, none conditioned on another's text) against our
                  sequential CLI in the same mode, and faster-whisper's BatchedInferencePipeline
                  (int8, batch_size=N, its defaults otherwise: vad_filter=True,
                  without_timestamps=True, temperature 0 only) against ours batched; greedy and
                  beam 5 (best-of 5) each.
Audio: jfk.wav (11 s); "60s", a 60 s clip made here: (jfk.wav + 4 s of silence) x 4; "long",
../shared/data/long_speech.flac (3.5 min of real speech, 7+ windows) as 16-bit WAV
(sndfile-convert, from tools/setup.sh).

Columns: wall = process start to exit (includes interpreter start-up and imports for the Python
peers); work = model load + transcription, timed inside the process (our CLI's "total time");
RSS = peak resident set of the process (getrusage of the child, ru_maxrss); same = the
transcript (segment texts joined, whitespace collapsed) is identical to ours in the same mode;
x_wall / x_work = median over rounds of (this / ours in the same mode: the row named in "vs"); words =
the transcript's word count (median); WER % = word error rate of this transcript against that row's
(lower-cased, punctuation removed; Levenshtein over words). With several thread
counts a second table gives each system's own thread scaling (time on the fewest threads / time
on more, per round; every round runs all thread counts).

Usage (from the repo root):
  python3 tools/compare/compare_peers.py --threads 1,2 --rounds 5 --audio jfk,long [--json out.json]
                                 [--only ours,fw,wcpp] [--model base] [--language zh --audio zh]
  python3 tools/compare/compare_peers.py --batched 8 --threads 2 --rounds 3 --audio long --model base
Every system is told the language (--language, default en), as whisper-cli's default -l en.
Needs: pip install faster-whisper; tools/setup.sh (model files, sndfile-convert); bazel; cmake
(build_whisper_cpp.sh installs it when run as root).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- Child side: one transcription, printed as JSON ---------------------------------------------

def load_wav_f32(path):
    import numpy as np
    with wave.open(path) as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2 or w.getframerate() != 16000:
            raise SystemExit(f"{path}: expected 16 kHz mono 16-bit PCM")
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    return pcm.astype(np.float32) / 32768.0


def child_faster_whisper(args):
    t0 = time.perf_counter()
    from faster_whisper import WhisperModel
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = WhisperModel(args.model, device="cpu", compute_type=args.compute_type,
                         cpu_threads=args.threads, num_workers=1)
    audio = load_wav_f32(args.audio)
    if args.batched > 0:  # BatchedInferencePipeline with its defaults (vad_filter=True, ...)
        from faster_whisper import BatchedInferencePipeline
        segments, _ = BatchedInferencePipeline(model).transcribe(
            audio, language=args.language, beam_size=args.beam, best_of=5, batch_size=args.batched)
    else:
        segments, _ = model.transcribe(audio, language=args.language, beam_size=args.beam, best_of=5,
                                       vad_filter=False, condition_on_previous_text=True)
    text = [s.text for s in segments]  # the generator does the work
    return {"text": text, "work_s": time.perf_counter() - t0, "import_s": t_import}


def child_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", required=True, choices=["faster-whisper"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--audio", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--compute-type", default="float32")
    ap.add_argument("--language", default="en")
    ap.add_argument("--batched", type=int, default=0, help="BatchedInferencePipeline batch_size (0: sequential)")
    args = ap.parse_args(argv)
    print("RESULT " + json.dumps(child_faster_whisper(args)), flush=True)


# ---- Parent side ------------------------------------------------------------------------------

def normalize(texts):
    return re.sub(r"\s+", " ", " ".join(t.strip() for t in texts)).strip()


def word_error_rate(hyp, ref):
    """Word error rate (%) of hyp against ref: (substitutions + deletions + insertions) / words of
    ref, over lower-cased words without punctuation (Levenshtein distance over words)."""
    def words(text):
        return re.sub(r"[^\w\s']", " ", text.lower()).split()
    h, r = words(hyp), words(ref)
    row = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, row[0] = row[0], i
        for j, hw in enumerate(h, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (rw != hw))
    return 100.0 * row[len(h)] / max(1, len(r))


def make_60s_clip(src, dst):
    """(src + 4 s of silence) x 4, 16 kHz mono 16-bit: 60.0 s for jfk.wav."""
    with wave.open(src) as w:
        params = w.getparams()
        frames = w.readframes(w.getnframes())
    silence = b"\x00\x00" * (4 * params.framerate)
    with wave.open(dst, "wb") as w:
        w.setparams(params)
        w.writeframes((frames + silence) * 4)
    with wave.open(dst) as w:
        return w.getnframes() / w.getframerate()


def run_measured(cmd, env):
    """Runs cmd; returns (wall_s, max_rss_kib, returncode, stdout, stderr) of that child alone."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return wall, usage.ru_maxrss, p.returncode, out.read(), err.read()


class Config:
    def __init__(self, system, mode, label, cmd_fn, env_extra=None, ours_key=None, q8_key=None):
        self.system, self.mode, self.label = system, mode, label
        self.cmd_fn, self.env_extra = cmd_fn, env_extra or {}
        self.ours_key = ours_key  # label of our config in the same decoding mode
        self.q8_key = q8_key  # label of our Q8_0 config in that mode (8-bit peers), if any

    def run(self, audio, threads):
        env = dict(os.environ, **self.env_extra)
        wall, rss, rc, out, err = run_measured(self.cmd_fn(audio, threads), env)
        if rc != 0:
            raise RuntimeError(f"{self.label} on {audio} exited {rc}:\n{err[-3000:]}")
        if self.system in ("ours", "whisper.cpp"):  # whisper-cli's stdout and timings
            texts = [m.group(1) for m in re.finditer(r"^\[[^\]]*\]\s+(.*)$", out, re.M)]
            m = re.search(r"total time =\s*([\d.]+) ms", err)
            work = float(m.group(1)) / 1000.0 if m else float("nan")
            info = re.search(r"SIMD = (\S+)", err)
            extra = {"simd": info.group(1) if info else "?"}
        else:
            line = [l for l in out.splitlines() if l.startswith("RESULT ")]
            if not line:
                raise RuntimeError(f"{self.label}: no RESULT line:\n{out[-2000:]}\n{err[-2000:]}")
            res = json.loads(line[-1][len("RESULT "):])
            texts, work = res["text"], res["work_s"]
            extra = {k: v for k, v in res.items() if k not in ("text", "work_s")}
        return {"wall": wall, "work": work, "rss_mib": rss / 1024.0, "text": normalize(texts),
                **extra}


def model_paths(name):
    """(ggml file, CTranslate2 directory) of a model tools/get_model.sh fetches."""
    model = os.path.join(REPO, "models", f"ggml-{name}.bin")
    ct2 = os.path.join(REPO, "models", f"faster-whisper-{name}")
    for path in (model, ct2):
        if not os.path.exists(path):
            sys.exit(f"compare_peers: {path} is missing: run tools/get_model.sh {name}")
    return model, ct2


def build_configs(cli, wcpp_cli, args, q8_model=None):
    model, ct2 = model_paths(args.model)
    me = os.path.abspath(__file__)
    py = sys.executable
    lang = args.language

    def ours(extra, m=model):
        return lambda audio, t: [cli, "-m", m, "-f", audio, "-t", str(t), "-l", lang, *extra]

    def fw(ct, beam, batched=0):
        return lambda audio, t: [py, me, "--child", "faster-whisper", "--model", ct2, "--audio",
                                 audio, "--threads", str(t), "--beam", str(beam),
                                 "--compute-type", ct, "--language", lang, "--batched", str(batched)]

    def wcpp(extra, m=model):
        return lambda audio, t: [wcpp_cli, "-m", m, "-f", audio, "-t", str(t), "-l", lang, *extra]

    configs = [
        Config("ours", "greedy", "ours greedy", ours(["-bs", "1"])),
        Config("ours", "beam5", "ours default (bs 5)", ours([])),
        Config("ours", "greedy", "ours greedy AVX2", ours(["-bs", "1"]),
               {"GGML_CPU_TARGET": "AVX2"}, "ours greedy"),
        Config("faster-whisper", "greedy", "fw int8 greedy", fw("int8", 1), None, "ours greedy"),
        Config("faster-whisper", "beam5", "fw int8 bs 5", fw("int8", 5), None,
               "ours default (bs 5)"),
        Config("faster-whisper", "greedy", "fw float32 greedy", fw("float32", 1), None,
               "ours greedy"),
        Config("faster-whisper", "beam5", "fw float32 bs 5", fw("float32", 5), None,
               "ours default (bs 5)"),
        Config("whisper.cpp", "greedy", "whisper.cpp greedy", wcpp(["-bs", "1"]), None,
               "ours greedy"),
        Config("whisper.cpp", "beam5", "whisper.cpp default (bs 5)", wcpp([]), None,
               "ours default (bs 5)"),
    ]
    for c in configs[:2]:
        c.ours_key = c.label
    if q8_model:
        q8g, q8b = "ours q8_0 greedy", "ours q8_0 (bs 5)"
        for c in configs:  # fw int8 is also compared with our 8-bit weights
            c.q8_key = {"fw int8 greedy": q8g, "fw int8 bs 5": q8b}.get(c.label)
        configs += [
            Config("ours", "greedy", q8g, ours(["-bs", "1"], q8_model), None, q8g),
            Config("ours", "beam5", q8b, ours([], q8_model), None, q8b),
            Config("whisper.cpp", "greedy", "whisper.cpp q8_0 greedy", wcpp(["-bs", "1"], q8_model),
                   None, q8g),
            Config("whisper.cpp", "beam5", "whisper.cpp q8_0 (bs 5)", wcpp([], q8_model), None, q8b),
        ]
    if args.batched:
        configs = batched_configs(ours, fw, args.batched)
    wanted = set(args.only.split(",")) if args.only else None
    short = {"ours": "ours", "faster-whisper": "fw", "whisper.cpp": "wcpp"}
    return [c for c in configs if wanted is None or short[c.system] in wanted]


def batched_configs(ours, fw, n):
    """The batched-mode rows (issue 38 part 6): ours with --batch-size n against our sequential
    CLI, faster-whisper's BatchedInferencePipeline int8 (batch_size=n) against ours batched."""
    vad = os.path.join(REPO, "models", "ggml-silero-v6.bin")
    if not os.path.exists(vad):
        sys.exit(f"compare_peers: {vad} is missing (tools/get_vad_model.sh): --batch-size cuts at VAD pauses")
    seq_g, seq_b = "ours greedy", "ours default (bs 5)"
    bat_g, bat_b = f"ours batched {n} greedy", f"ours batched {n} (bs 5)"
    batch = ["--batch-size", str(n), "-vm", vad]
    return [
        Config("ours", "greedy", seq_g, ours(["-bs", "1"]), None, seq_g),
        Config("ours", "beam5", seq_b, ours([]), None, seq_b),
        Config("ours", "greedy", bat_g, ours(["-bs", "1"] + batch), None, seq_g),
        Config("ours", "beam5", bat_b, ours(batch), None, seq_b),
        Config("faster-whisper", "greedy", f"fw int8 batched {n} greedy", fw("int8", 1, n), None, bat_g),
        Config("faster-whisper", "beam5", f"fw int8 batched {n} (bs 5)", fw("int8", 5, n), None, bat_b),
    ]


def build_cli(bazel):
    subprocess.run([bazel, "build", "-c", "opt", "//whisper:cli"], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bin_dir = subprocess.run([bazel, "info", "-c", "opt", "bazel-bin"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()[-1]
    # A private copy: someone else's build must not replace the binary while we measure.
    dst = os.path.join(tempfile.mkdtemp(prefix="compare_peers_"), "whisper-cli")
    shutil.copy2(os.path.join(bin_dir, "apps", "cli", "cli"), dst)
    return dst


def quantize_q8_0(bazel, name):
    """models/ggml-NAME.bin quantized to Q8_0 by //tools/quantize (a temporary file)."""
    subprocess.run([bazel, "build", "-c", "opt", "//tools/quantize"], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bin_dir = subprocess.run([bazel, "info", "-c", "opt", "bazel-bin"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()[-1]
    dst = os.path.join(tempfile.mkdtemp(prefix="compare_peers_q8_"), f"ggml-{name}-q8_0.bin")
    subprocess.run([os.path.join(bin_dir, "tools", "quantize", "quantize"),
                    os.path.join(REPO, "models", f"ggml-{name}.bin"), dst, "q8_0"], check=True,
                   stdout=subprocess.DEVNULL)
    return dst


def build_whisper_cpp():
    """whisper-cli 1.8.5 built for this CPU (build_whisper_cpp.sh, cached); a private copy."""
    script = os.path.join(REPO, "tools", "whisper_cpp", "build_whisper_cpp.sh")
    p = subprocess.run([script], cwd=REPO, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_peers: {script} failed:\n{p.stderr[-3000:]}")
    prefix = p.stdout.strip().splitlines()[-1]
    dst = os.path.join(tempfile.mkdtemp(prefix="compare_peers_wcpp_"), "whisper-cli")
    shutil.copy2(os.path.join(prefix, "bin", "whisper-cli"), dst)
    return dst


def flac_to_wav(src, dst):
    """16-bit PCM WAV of `src` (16 kHz mono already); returns its duration in seconds."""
    if shutil.which("sndfile-convert") is None:
        sys.exit("compare_peers: sndfile-convert not found (Debian sndfile-programs: tools/setup.sh)")
    subprocess.run(["sndfile-convert", "-pcm16", src, dst], check=True, stdout=subprocess.DEVNULL)
    with wave.open(dst) as w:
        if w.getnchannels() != 1 or w.getframerate() != 16000:
            sys.exit(f"compare_peers: {src}: expected 16 kHz mono")
        return w.getnframes() / w.getframerate()


def print_table(results, configs, audios, threads_list):
    q8 = any(c.q8_key for c in configs)
    hdr = (f"| audio | th | system / mode | vs | wall s | work s | peak RSS MiB | words | WER % vs |"
           f" same text as vs | x_wall vs | x_work vs |" + (" x_work vs ours q8_0 |" if q8 else ""))
    print(hdr)
    print("|" + "---|" * (13 if q8 else 12))
    for audio_name in audios:
        for t in threads_list:
            for c in configs:
                runs = results.get((audio_name, t, c.label))
                if not runs:
                    continue
                ours = results.get((audio_name, t, c.ours_key)) or []
                med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "work", "rss_mib")}
                texts = {r["text"] for r in runs}
                n_words = statistics.median(len(r["text"].split()) for r in runs)
                wer = "-"
                if c.ours_key == c.label:
                    same = "(ref)"
                    xw = xk = "1.00"
                else:
                    wer = f"{statistics.median(word_error_rate(a['text'], b['text']) for a, b in zip(runs, ours)):.2f}" \
                        if ours else "-"
                    ref = {r["text"] for r in ours}
                    same = "yes" if texts == ref and len(ref) == 1 else "no"
                    pairs = list(zip(runs, ours))
                    xw = f"{statistics.median(a['wall'] / b['wall'] for a, b in pairs):.2f}" if pairs else "-"
                    xk = f"{statistics.median(a['work'] / b['work'] for a, b in pairs):.2f}" if pairs else "-"
                xq = ""
                if q8:
                    q8runs = (results.get((audio_name, t, c.q8_key)) or []) if c.q8_key else []
                    pairs = list(zip(runs, q8runs))
                    xq = (f" {statistics.median(a['work'] / b['work'] for a, b in pairs):.2f} |"
                          if pairs else " - |")
                print(f"| {audio_name} | {t} | {c.label} | {c.ours_key or '-'} | {med['wall']:.2f} |"
                      f" {med['work']:.2f} | {med['rss_mib']:.0f} | {n_words:.0f} | {wer} | {same} | {xw} | {xk} |{xq}")


def print_scaling(results, configs, audios, threads_list):
    """Thread scaling of every system: its own time on the fewest threads / on each larger count,
    median over rounds of the per-round ratio (the counts run in the same round, so a slow
    period hits both). work = in-process time, wall = the whole process."""
    t0 = min(threads_list)
    more = [t for t in threads_list if t > t0]
    if not more:
        return
    print(f"\nthread scaling (time on {t0} thread(s) / time on t threads, same system and mode; "
          f"ideal = t / {t0}):\n")
    print("| audio | system / mode | " + " | ".join(f"work x{t} | wall x{t}" for t in more) + " |")
    print("|" + "---|" * (2 + 2 * len(more)))
    for audio_name in audios:
        for c in configs:
            base = results.get((audio_name, t0, c.label))
            if not base:
                continue
            cells = []
            for t in more:
                pairs = list(zip(base, results.get((audio_name, t, c.label)) or []))
                for key in ("work", "wall"):
                    cells.append(f"{statistics.median(a[key] / b[key] for a, b in pairs):.2f}" if pairs else "-")
            print(f"| {audio_name} | {c.label} | " + " | ".join(cells) + " |")


def make_audios(names, shared, tmp, ap):
    """{label: path} of the --audio names (jfk, 60s, long, zh); made in tmp where converted."""
    jfk = os.path.join(shared, "data", "jfk.wav")
    audios = {}
    for name in names:
        if name == "jfk":
            audios["jfk 11 s"] = jfk
        elif name == "60s":
            clip = os.path.join(tmp, "jfk_x4_60s.wav")
            secs = make_60s_clip(jfk, clip)
            audios[f"jfk x4 {secs:.0f} s"] = clip
        elif name == "long":
            wav = os.path.join(tmp, "long_speech.wav")
            secs = flac_to_wav(os.path.join(shared, "data", "long_speech.flac"), wav)
            audios[f"long_speech {secs:.0f} s"] = wav
        elif name == "zh":
            audios["zh_aishell 4 s"] = os.path.join(shared, "data", "zh_aishell_BAC009S0764W0121.wav")
        else:
            ap.error(f"unknown audio '{name}' (jfk, 60s, long, zh)")
    return audios


def main():
    if "--child" in sys.argv:
        return child_main(sys.argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (repetitions)")
    ap.add_argument("--audio", default="jfk,long", help="comma-separated: jfk, 60s, long, zh")
    ap.add_argument("--model", default="tiny.en", choices=["tiny.en", "base"],
                    help="models/ggml-NAME.bin and models/faster-whisper-NAME (tools/get_model.sh NAME)")
    ap.add_argument("--language", default="en",
                    help="spoken language given to every system (-l / language=): en, zh (--audio zh), ...")
    ap.add_argument("--only", default=None, help="systems: ours,fw,wcpp")
    ap.add_argument("--cli", default=None, help="our whisper-cli binary (default: build it)")
    ap.add_argument("--whisper-cpp-cli", default=None,
                    help="whisper.cpp's whisper-cli (default: build_whisper_cpp.sh's)")
    ap.add_argument("--bazel", default=os.environ.get("BAZEL", "bazel"))
    ap.add_argument("--json", default=None, help="write every run here")
    ap.add_argument("--show-texts", action="store_true", help="print each distinct transcript")
    ap.add_argument("--batched", type=int, default=0,
                    help="N > 0: only the batched-mode rows (ours --batch-size N, our sequential CLI, "
                         "faster-whisper's BatchedInferencePipeline int8 batch_size=N), greedy and beam 5")
    ap.add_argument("--no-q8", action="store_true",
                    help="skip the Q8_0 rows (ours and whisper.cpp on tiny.en quantized to Q8_0)")
    args = ap.parse_args()

    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO, "..", "shared"))
    if not os.path.isdir(os.path.join(shared, "data")):
        sys.exit(f"compare_peers: no {shared}/data (the shared audio): set GGML_WHISPER_SHARED")
    tmp = tempfile.mkdtemp(prefix="compare_peers_audio_")
    audios = make_audios(args.audio.split(","), shared, tmp, ap)
    threads_list = [int(t) for t in args.threads.split(",")]
    cli = args.cli or build_cli(args.bazel)
    wanted = set(args.only.split(",")) if args.only else {"wcpp"}
    wcpp_cli = args.whisper_cpp_cli or (build_whisper_cpp() if "wcpp" in wanted and not args.batched else None)
    q8_model = None
    if not args.no_q8 and not args.batched and (args.only is None or "ours" in wanted):
        q8_model = quantize_q8_0(args.bazel, args.model)
    configs = build_configs(cli, wcpp_cli, args, q8_model)
    print(f"compare_peers: {len(configs)} configurations x {len(audios)} inputs x "
          f"{len(threads_list)} thread counts x {args.rounds} rounds", flush=True)

    results = {}
    for audio_name, path in audios.items():
        for r in range(args.rounds):
            k = r % len(configs)
            for t in threads_list:  # every thread count in each round: the scaling is same-period
                for c in configs[k:] + configs[:k]:  # rotated each round
                    res = c.run(path, t)
                    results.setdefault((audio_name, t, c.label), []).append(res)
            print(f"compare_peers: done {audio_name}, round {r + 1}", file=sys.stderr, flush=True)

    print_table(results, configs, list(audios), threads_list)
    print_scaling(results, configs, list(audios), threads_list)
    if args.show_texts:
        seen = {}
        for (a, t, label), runs in results.items():
            for r in runs:
                seen.setdefault((a, r["text"]), set()).add(f"{label} t{t}")
        for (a, text), who in seen.items():
            print(f"\n[{a}] {', '.join(sorted(who))}:\n  {text}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"audio": a, "threads": t, "config": l, "runs": runs}
                       for (a, t, l), runs in results.items()], f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
