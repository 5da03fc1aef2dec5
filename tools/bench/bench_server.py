#!/usr/bin/env python3
"""Latency and throughput of //whisper:server: p50/p99 request latency and requests/s.

  bazel build //whisper:server && python3 tools/bench/bench_server.py [--requests 40] [--clients 4]

For each configuration (--parallel 1 with -t 2; --parallel 2 with -t 1 each; --parallel 2 with
-t 2 each, oversubscribed on 2 cores), `--clients` threads each send requests back to back (jfk.wav,
whisper-server's defaults: greedy, response_format json) until `--requests` are done; latency is
from sending to the last byte of the reply. One warm-up request per client is not counted. Prints
one line per configuration and, with --json, writes them all. Numbers are for this machine only:
compare configurations measured in one run.

--configs P:T[:FLAG,...] (repeatable) replaces the three configurations: e.g. `--configs 2:1:--no-batching
--configs 8:2` compares two states decoding on their own with 8 requests sharing one decoder batch
(continuous batching, the server's default from --parallel 2 on). --clients takes a list (1,4,8): each
configuration runs at each client count, in the order given.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "apps", "server"))
import harness  # noqa: E402


def percentile(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def run(binary, model, audio, parallel, threads, clients, requests, flags=()):
    with harness.Server(binary, ["-m", model, "--parallel", str(parallel), "-t", str(threads), "-np",
                                 "--queue", str(max(16, clients))] + list(flags)) as server:
        files = [("file", os.path.basename(audio), audio_bytes(audio))]

        def one(_):
            t0 = time.perf_counter()
            status, _, body = harness.post(server.port, "/inference", [("response_format", "json")], files)
            if status != 200:
                raise RuntimeError("status %d: %s" % (status, body[:200]))
            return time.perf_counter() - t0

        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            list(pool.map(one, range(clients)))  # warm-up
            cpu0 = cpu_seconds(server.proc.pid)
            t0 = time.perf_counter()
            lat = list(pool.map(one, range(requests)))
            wall = time.perf_counter() - t0
            cpu = cpu_seconds(server.proc.pid) - cpu0
        rss = server.rss_kib()
    return {"parallel": parallel, "threads": threads, "flags": list(flags), "clients": clients, "requests": requests,
            "p50_s": statistics.median(lat), "p99_s": percentile(lat, 99), "max_s": max(lat),
            "requests_per_s": requests / wall, "cpu_s_per_request": cpu / requests, "rss_mib": rss / 1024.0}


def cpu_seconds(pid):
    """User + system CPU time of process `pid` (all its threads), seconds: /proc/PID/stat utime and
    stime. Less sensitive than wall time to other load on the machine."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_AUDIO = {}


def audio_bytes(path):
    if path not in _AUDIO:
        with open(path, "rb") as f:
            _AUDIO[path] = f.read()
    return _AUDIO[path]


def main():
    _, shared, models = harness.repo_paths(os.path.join(ROOT, "apps", "server"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default=os.path.join(ROOT, "bazel-bin", "apps", "server", "server"))
    ap.add_argument("--model", default=os.path.join(models, "ggml-tiny.en.bin"))
    ap.add_argument("--audio", default=os.path.join(shared, "data", "jfk.wav"))
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--clients", default="4", help="client counts, comma-separated (e.g. 1,4,8)")
    ap.add_argument("--configs", action="append", help="P:T[:FLAG,...] --parallel P, -t T, extra server flags")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    configs = [(1, 2, []), (2, 1, []), (2, 2, [])]
    if args.configs:
        configs = []
        for c in args.configs:
            parts = c.split(":")
            configs.append((int(parts[0]), int(parts[1]), parts[2].split(",") if len(parts) > 2 else []))
    results = []
    for clients in [int(c) for c in args.clients.split(",")]:
        for parallel, threads, flags in configs:
            r = run(args.server, args.model, args.audio, parallel, threads, clients, args.requests, flags)
            results.append(r)
            print("--parallel %d -t %d%s, %d clients: p50 %.3f s, p99 %.3f s, max %.3f s, %.2f requests/s, "
                  "CPU %.3f s/request, RSS %.0f MiB"
                  % (parallel, threads, "".join(" " + f for f in flags), r["clients"], r["p50_s"], r["p99_s"],
                     r["max_s"], r["requests_per_s"], r["cpu_s_per_request"], r["rss_mib"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu_count": os.cpu_count(), "audio": args.audio, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
