#!/usr/bin/env python3
"""Performance regression gate: the working tree against a baseline commit.

Two signals, both on the same machine in one run:
  1. Timing. //tools/gate:gate_benchmark (mul_mat F16 and Q8_0, softmax, one encoder layer; one
     thread) is built for the baseline and for the tree, then the two binaries run interleaved
     (rounds alternate the order: base, tree / tree, base / ...), each process doing a few
     repetitions. The measure is the CPU time per iteration: the benchmarks run on one thread,
     and on a shared machine the wall time mostly measures how often other work preempted the
     process (a 2-core machine with a build running gave 100% spread in real time and 2-14% in
     CPU time between identical binaries). Per benchmark and side, each process contributes the
     median of its repetitions; the samples are compared with a one-sided Mann-Whitney U test (H1: the tree is
     slower). A benchmark regresses when the tree's median is more than --threshold (5%) above
     the baseline's AND p < --alpha (0.01). A regression is confirmed by a second, independent
     set of rounds before the gate fails (noise rarely passes both).
  2. Instructions. //tools/gate:gate_workload runs a fixed small workload under
     `valgrind --tool=callgrind` with the dispatch target pinned (GGML_CPU_TARGET, default AVX2:
     valgrind does not emulate AVX-512). Only the function gate_workload_run is counted. The
     count is deterministic; the gate fails when the tree's count exceeds the baseline's by more
     than --ir-threshold (2%).

The baseline is checked out with `git worktree add` under --cache-dir and built there with its
own Bazel output base (so the tree's build is never clobbered); both builds share a Bazel disk
cache, so unchanged files compile once. tools/gate/ of the tree is copied into the baseline
checkout: both sides run the same measurement code against their own library.

Exit status: 0 pass (or skipped: no baseline commit, or the baseline cannot build the gate's
sources), 1 regression, 2 error (bad arguments, the tree does not build, a benchmark fails).
A commit whose message contains "[gate: allow-regression]" (the tree's HEAD) still prints the
table but exits 0.

Test-only knobs (they change nothing in the library):
  --simulate-regression=TARGET runs the tree's binaries with GGML_CPU_TARGET=TARGET (e.g.
    SCALAR, SSE4, AVX2) while the baseline keeps the best target: a real kernel slowdown of the
    tree. The gate must fail with it.
  --simulate-slowdown=F makes each timed iteration of the tree do 1 + F computes on average
    (GGML_GATE_TEST_EXTRA_WORK, read by gate_benchmark only): a known slowdown for checking the
    threshold (F = 0.10 must fail, F = 0.02 must pass).

Usage (from anywhere in the repository):
  tools/gate/gate.py                      # baseline HEAD~1
  tools/gate/gate.py --baseline main~3    # any commit-ish
  tools/gate/gate.py --simulate-regression SCALAR   # must exit 1
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mannwhitney  # noqa: E402

ALLOW_MARKER = "[gate: allow-regression]"


def log(msg):
    print(f"gate: {msg}", flush=True)


def run(cmd, cwd=None, env=None, check=True, capture=True):
    """Runs cmd; returns CompletedProcess (text). Raises RuntimeError with the output on failure."""
    p = subprocess.run(cmd, cwd=cwd, env=env, text=True,
                       stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.STDOUT if capture else None)
    if check and p.returncode != 0:
        out = (p.stdout or "")[-4000:]
        raise RuntimeError(f"command failed ({p.returncode}): {' '.join(cmd)}\n{out}")
    return p


def git(repo, *args, check=True):
    return run(["git", "-C", repo, *args], check=check).stdout.strip()


# ---- Building ---------------------------------------------------------------------------------

def label_path(label):
    """//a/b:c -> a/b/c (the binary's path under bazel-bin)."""
    m = re.fullmatch(r"//([^:]*):([^:]+)", label)
    if not m:
        raise ValueError(f"expected a target label //package:name, got {label!r}")
    return os.path.join(m.group(1), m.group(2))


def bazel_build(workspace, bazel, output_base, disk_cache, targets, dest):
    """Builds `targets` with -c opt in `workspace` and copies the binaries to `dest` (named by
    the target name). Copies, because other people's builds in the same workspace may replace
    bazel-bin's files while the gate is measuring. Returns the build's wall time in seconds.
    """
    startup = [bazel]
    if output_base:
        startup += [f"--output_base={output_base}", "--max_idle_secs=600"]
    t0 = time.time()
    run(startup + ["build", "-c", "opt", f"--disk_cache={disk_cache}", "--color=no",
                   "--curses=no", "--noshow_progress", *targets], cwd=workspace)
    bin_dir = run(startup + ["info", "-c", "opt", "bazel-bin"], cwd=workspace).stdout.strip()
    bin_dir = bin_dir.splitlines()[-1]
    os.makedirs(dest, exist_ok=True)
    for t in targets:
        shutil.copy2(os.path.join(bin_dir, label_path(t)), os.path.join(dest, t.split(":")[1]))
    return time.time() - t0


def prepare_baseline(tree, sha, worktree, overlays):
    """Checks out `sha` at `worktree` (replacing an old one) and copies the tree's `overlays`
    (directories relative to the workspace root) over it."""
    def common_dir(d):
        r = run(["git", "-C", d, "rev-parse", "--git-common-dir"], check=False)
        return os.path.realpath(os.path.join(d, r.stdout.strip())) if r.returncode == 0 else None

    if os.path.isdir(worktree) and common_dir(worktree) == common_dir(tree):
        # Reuse the checkout: same path, so the baseline's Bazel server and its analysis cache
        # stay valid between runs.
        git(worktree, "checkout", "--quiet", "--detach", "--force", sha)
        git(worktree, "clean", "-fdq")
    else:
        if os.path.exists(worktree):
            git(tree, "worktree", "remove", "--force", worktree, check=False)
            shutil.rmtree(worktree, ignore_errors=True)
        git(tree, "worktree", "prune")
        git(tree, "worktree", "add", "--detach", "--force", worktree, sha)
    for rel in overlays:
        dst = os.path.join(worktree, rel)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(tree, rel), dst,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


# ---- Timing ----------------------------------------------------------------------------------

def run_benchmark(binary, env, repetitions, min_time, bench_filter, field):
    """One process: {benchmark name: [`field` per repetition]}, the simd_target context, and the
    time unit."""
    cmd = [binary, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           f"--benchmark_min_time={min_time}", "--benchmark_report_aggregates_only=false"]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    p = subprocess.run(cmd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError(f"{binary} exited {p.returncode}: {p.stderr[-2000:]}")
    data = json.loads(p.stdout)
    times, unit = {}, "ns"
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            raise RuntimeError(f"{binary}: {b['name']}: {b.get('error_message')}")
        name = b.get("run_name", b["name"])
        times.setdefault(name, []).append(float(b[field]))
        unit = b.get("time_unit", "ns")
    return times, data["context"].get("simd_target", "?"), unit


def timing_rounds(base_bin, tree_bin, base_env, tree_env, args, bench_filter=None):
    """Interleaved rounds. Returns (samples, targets, unit): samples[name] = {"base": [...],
    "tree": [...]} with one per-process median per round."""
    samples, targets, unit = {}, {}, "us"
    for r in range(args.rounds):
        order = [("base", base_bin, base_env), ("tree", tree_bin, tree_env)]
        if r % 2:
            order.reverse()
        for side, binary, env in order:
            times, target, unit = run_benchmark(binary, env, args.repetitions, args.min_time,
                                                bench_filter, args.time_field)
            targets[side] = target
            for name, ts in times.items():
                samples.setdefault(name, {"base": [], "tree": []})[side].append(
                    statistics.median(ts))
    return samples, targets, unit


def judge_timing(samples, threshold, alpha):
    """Rows of (name, base_median, tree_median, change, p, verdict)."""
    rows = []
    for name, s in samples.items():
        b, t = s["base"], s["tree"]
        mb, mt = statistics.median(b), statistics.median(t)
        change = mt / mb - 1.0
        _, p = mannwhitney.mannwhitneyu(t, b, alternative="greater")
        if change > threshold and p < alpha:
            verdict = "SLOWER"
        elif change < -threshold and mannwhitney.mannwhitneyu(t, b, alternative="less")[1] < alpha:
            verdict = "faster"
        else:
            verdict = "ok"
        rows.append({"name": name, "base": mb, "tree": mt, "change": change, "p": p,
                     "verdict": verdict, "n": (len(b), len(t))})
    return rows


# ---- Instruction counts ----------------------------------------------------------------------

def ensure_valgrind():
    if shutil.which("valgrind"):
        return True
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log("valgrind not found: installing the Debian package")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        ok = run(["apt-get", "install", "-y", "-qq", "valgrind"], env=env, check=False)
        if ok.returncode != 0:
            run(["apt-get", "update", "-qq"], env=env, check=False)
            run(["apt-get", "install", "-y", "-qq", "valgrind"], env=env, check=False)
    return shutil.which("valgrind") is not None


def start_callgrind(binary, env, out_file, function):
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
           f"--toggle-collect={function}", binary]
    return subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def finish_callgrind(proc, binary):
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"callgrind on {binary} exited {proc.returncode}: {err[-2000:]}")
    m = re.search(r"Collected\s*:\s*(\d+)", err)
    if not m:
        raise RuntimeError(f"callgrind on {binary}: no 'Collected' line in:\n{err[-2000:]}")
    target = re.search(r"simd_target (\S+)", out)
    return int(m.group(1)), target.group(1) if target else "?", out


# ---- Report ----------------------------------------------------------------------------------

def print_tables(rows, unit, targets, ir, args):
    log(f"timing: {args.time_field} per iteration, {args.rounds} interleaved rounds x "
        f"{args.repetitions} repetitions (one sample = a process's median), 1 thread; "
        f"target base {targets.get('base')}, tree {targets.get('tree')}")
    w = max([len(r["name"]) for r in rows] + [9])
    print(f"  {'benchmark':<{w}}  {'base ' + unit:>10}  {'tree ' + unit:>10}  {'change':>8}"
          f"  {'p(MWU)':>8}  verdict")
    for r in rows:
        print(f"  {r['name']:<{w}}  {r['base']:>10.1f}  {r['tree']:>10.1f}  {r['change']:>+8.1%}"
              f"  {r['p']:>8.2g}  {r['verdict']}")
    if ir:
        print(f"  instructions (callgrind, {args.count_function}, GGML_CPU_TARGET base "
              f"{ir['base_target']} / tree {ir['tree_target']}):")
        print(f"  {'base Ir':>14}  {'tree Ir':>14}  {'change':>8}  verdict")
        print(f"  {ir['base']:>14,}  {ir['tree']:>14,}  {ir['change']:>+8.2%}  {ir['verdict']}")


def parse_args():
    """The command line; exits 2 (argparse) on a bad one. Sets args.overlays and args.targets."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default="HEAD~1", help="commit-ish to compare against")
    ap.add_argument("--tree", default=None, help="workspace to test (default: this repository)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per repetition")
    ap.add_argument("--time-field", default="cpu_time", choices=["cpu_time", "real_time"],
                    help="what is compared (default cpu_time: see the module doc)")
    ap.add_argument("--threshold", type=float, default=0.05, help="slowdown that fails (0.05=5%%)")
    ap.add_argument("--alpha", type=float, default=0.01, help="Mann-Whitney p that fails")
    ap.add_argument("--ir-threshold", type=float, default=0.02,
                    help="instruction-count increase that fails (0.02 = 2%%)")
    ap.add_argument("--ir-target", default="AVX2", help="GGML_CPU_TARGET pinned for callgrind")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--bench-target", default="//tools/gate:gate_benchmark",
                    help="Google Benchmark binary compared by time")
    ap.add_argument("--workload-target", default="//tools/gate:gate_workload",
                    help="binary counted under callgrind ('none': no instruction signal)")
    ap.add_argument("--count-function", default="gate_workload_run",
                    help="function whose instructions callgrind counts (--toggle-collect)")
    ap.add_argument("--overlay", action="append", default=None,
                    help="directory copied from the tree into the baseline checkout (repeatable;"
                         " default tools/gate; 'none': use the baseline's own files)")
    ap.add_argument("--simulate-regression", metavar="TARGET", default=None,
                    help="test only: run the tree side with GGML_CPU_TARGET=TARGET")
    ap.add_argument("--simulate-slowdown", metavar="FRACTION", type=float, default=None,
                    help="test only: the tree's timed benchmarks do FRACTION more work "
                         "(GGML_GATE_TEST_EXTRA_WORK; no effect on the instruction count)")
    ap.add_argument("--cache-dir", default=os.environ.get("GGML_GATE_CACHE",
                                                          "/tmp/ggml_whisper_gate"))
    ap.add_argument("--bazel", default=os.environ.get("BAZEL", "bazel"))
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    args.overlays = [] if args.overlay == ["none"] else (args.overlay or ["tools/gate"])
    if args.workload_target == "none":
        args.no_callgrind = True
    args.targets = [args.bench_target] + ([] if args.no_callgrind else [args.workload_target])
    try:
        for t in args.targets:
            label_path(t)
    except ValueError as e:
        ap.error(str(e))
    return args


def resolve_sides(args):
    """(tree, baseline sha, tree HEAD, dirty) or an exit status: 2 when the tree is no workspace,
    0 (skip) when the baseline is not a commit."""
    tree = args.tree or git(os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                            "--show-toplevel")
    tree = os.path.abspath(tree)
    if not os.path.isfile(os.path.join(tree, "WORKSPACE")):
        log(f"error: {tree} has no WORKSPACE")
        return 2
    rev = run(["git", "-C", tree, "rev-parse", "--verify", "--quiet", args.baseline + "^{commit}"],
              check=False).stdout.strip()
    if not rev:
        log(f"SKIP: baseline '{args.baseline}' is not a commit here (a one-commit clone?)")
        return 0
    head = git(tree, "rev-parse", "HEAD")
    dirty = bool(git(tree, "status", "--porcelain", "--untracked-files=no"))
    log(f"baseline {rev[:10]} ({args.baseline}) vs tree {tree} at {head[:10]}"
        f"{' + uncommitted changes' if dirty else ''}")
    return tree, rev, head, dirty


def build_sides(args, tree, rev, cache):
    """Builds the tree and the baseline checkout; {side: bin dir} or an exit status: 2 when the
    tree does not build, 0 (skip) when the baseline does not."""
    disk_cache = os.path.join(cache, "disk_cache")
    bins = {side: os.path.join(cache, "bin", side) for side in ("base", "tree")}
    try:
        secs = bazel_build(tree, args.bazel, None, disk_cache, args.targets, bins["tree"])
        log(f"built the tree in {secs:.0f} s")
    except RuntimeError as e:
        log(f"error: the tree does not build:\n{e}")
        return 2
    worktree = os.path.join(cache, "baseline")
    try:
        prepare_baseline(tree, rev, worktree, args.overlays)
        secs = bazel_build(worktree, args.bazel, os.path.join(cache, "output_base"), disk_cache,
                           args.targets, bins["base"])
        log(f"built the baseline in {secs:.0f} s")
    except RuntimeError as e:
        log(f"SKIP: the baseline {rev[:10]} does not build the gate's sources (nothing to "
            f"compare against):\n{e}")
        return 0
    return bins


def side_envs(args):
    """(baseline env, tree env): the tree's carries the test-only knobs."""
    base_env = dict(os.environ)
    tree_env = dict(os.environ)
    if args.simulate_regression:
        tree_env["GGML_CPU_TARGET"] = args.simulate_regression
        log(f"TEST ONLY: tree side runs with GGML_CPU_TARGET={args.simulate_regression}")
    if args.simulate_slowdown:
        tree_env["GGML_GATE_TEST_EXTRA_WORK"] = str(args.simulate_slowdown)
        log(f"TEST ONLY: tree's benchmarks do {args.simulate_slowdown:.0%} extra work")
    return base_env, tree_env


def count_instructions(args, workload, base_env, tree_env, cache):
    """Both sides' workload under callgrind at once: the instruction-count row, or None when
    callgrind is off or valgrind unavailable. Raises RuntimeError when a run fails."""
    if args.no_callgrind:
        return None
    if not ensure_valgrind():
        log("valgrind unavailable: instruction-count signal skipped")
        return None
    envs = {"base": dict(base_env, GGML_CPU_TARGET=args.ir_target),
            "tree": dict(tree_env, GGML_CPU_TARGET=args.simulate_regression or args.ir_target)}
    procs = {s: start_callgrind(workload[s], envs[s], os.path.join(cache, f"cg.{s}"),
                                args.count_function)
             for s in ("base", "tree")}
    res = {s: finish_callgrind(procs[s], workload[s]) for s in procs}
    change = res["tree"][0] / res["base"][0] - 1.0
    return {"base": res["base"][0], "tree": res["tree"][0], "change": change,
            "base_target": res["base"][1], "tree_target": res["tree"][1],
            "verdict": "MORE" if change > args.ir_threshold else "ok",
            "same_output": res["base"][2] == res["tree"][2]}


def time_and_confirm(args, bench, base_env, tree_env):
    """Interleaved timing rounds, then fresh rounds for the benchmarks found slower: a verdict
    stays SLOWER only when confirmed. (rows, confirm rows, targets, unit); raises RuntimeError."""
    samples, targets, unit = timing_rounds(bench["base"], bench["tree"], base_env, tree_env, args)
    rows = judge_timing(samples, args.threshold, args.alpha)
    failing = [r["name"] for r in rows if r["verdict"] == "SLOWER"]
    confirm_rows = []
    if failing:
        log(f"slower: {', '.join(failing)}; confirming with {args.rounds} fresh rounds")
        pattern = "^(" + "|".join(re.escape(n) for n in failing) + ")$"
        samples2, _, _ = timing_rounds(bench["base"], bench["tree"], base_env, tree_env, args,
                                       pattern)
        confirm_rows = judge_timing(samples2, args.threshold, args.alpha)
        confirmed = {r["name"]: r for r in confirm_rows}
        for r in rows:
            if r["verdict"] != "SLOWER":
                continue
            c = confirmed.get(r["name"])
            if c is not None and c["verdict"] == "SLOWER":
                r["verdict"] = f"SLOWER (confirmed: {c['change']:+.1%}, p {c['p']:.2g})"
            else:
                r["verdict"] = "ok (not confirmed" + (
                    f": {c['change']:+.1%}, p {c['p']:.2g})" if c else ")")
    return rows, confirm_rows, targets, unit


def verdict(args, tree, result, t_start):
    """Prints the tables and the verdict, writes --json; the exit status (0 pass, 1 regression
    unless HEAD's message allows it)."""
    rows, ir = result["timing"], result["instructions"]
    print_tables(rows, result["unit"], result["targets"], ir, args)
    if ir and not ir["same_output"]:
        log("note: the workload's output differs between baseline and tree (numerics changed?)")
    slower = [r["name"] for r in rows if r["verdict"].startswith("SLOWER")]
    more_ir = ir is not None and ir["verdict"] == "MORE"
    failed = bool(slower) or more_ir
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(result, failed=failed, seconds=time.time() - t_start), f, indent=1)
    reasons = [f"{n} slower by >{args.threshold:.0%} (p < {args.alpha})" for n in slower]
    if more_ir:
        reasons.append(f"instructions +{ir['change']:.2%} > +{args.ir_threshold:.0%}")
    log(f"{time.time() - t_start:.0f} s")
    if not failed:
        log("PASS")
        return 0
    log("FAIL: " + "; ".join(reasons))
    if ALLOW_MARKER in git(tree, "log", "-1", "--format=%B"):
        log(f"HEAD's message contains '{ALLOW_MARKER}': not failing")
        return 0
    return 1


def main():
    args = parse_args()
    t_start = time.time()
    sides = resolve_sides(args)
    if isinstance(sides, int):
        return sides
    tree, rev, head, dirty = sides

    cache = os.path.abspath(args.cache_dir)
    os.makedirs(cache, exist_ok=True)
    lock = open(os.path.join(cache, "lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one gate per cache dir at a time
    bins = build_sides(args, tree, rev, cache)
    if isinstance(bins, int):
        return bins

    base_env, tree_env = side_envs(args)
    bench = {s: os.path.join(bins[s], args.bench_target.split(":")[1]) for s in bins}
    workload = {s: os.path.join(bins[s], args.workload_target.split(":")[-1]) for s in bins}
    try:
        ir = count_instructions(args, workload, base_env, tree_env, cache)
        rows, confirm_rows, targets, unit = time_and_confirm(args, bench, base_env, tree_env)
    except RuntimeError as e:
        log(f"error: {e}")
        return 2
    result = {"baseline": rev, "tree_head": head, "dirty": dirty,
              "simulate_regression": args.simulate_regression, "timing": rows,
              "confirm": confirm_rows, "instructions": ir, "targets": targets, "unit": unit}
    return verdict(args, tree, result, t_start)


if __name__ == "__main__":
    sys.exit(main())
