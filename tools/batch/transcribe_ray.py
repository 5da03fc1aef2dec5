#!/usr/bin/env python3
"""Batch transcription on Ray Data with the ggml_whisper Python package.

    python3 tools/batch/transcribe_ray.py --input AUDIO_DIR_OR_MANIFEST --output OUT_DIR \
        --model models/ggml-tiny.en.bin [--address auto] [--workers 2] [--threads 1] \
        [--pipeline batched|sequential] [--decode-batch-size 8]

Input: a directory (every audio file under it, recursively) or a manifest: .csv, .jsonl or .parquet
with a column of audio paths (--path-column, default "path"; relative paths are relative to the
manifest's folder).

Output: OUT_DIR/part-*.jsonl (or .parquet with --format parquet), one row per input file:
  path, duration (s), language, segments [{start, end, text}], text, error (null, or the message
  when the file could not be transcribed: such files are written, never dropped).

How: one WhisperModel per actor (an actor pool of --workers, each reserving --threads CPUs, the
threads it decodes with), transcribing each file with the batched pipeline by default
(--pipeline batched: ggml_whisper.BatchedInferencePipeline, faster-whisper 1.2.1's API; a file
longer than 30 s is cut at the pauses Silero VAD finds into chunks of at most 30 s, of which
--decode-batch-size share every decoder step, none conditioned on another's text; shorter files are
one chunk; the VAD model ggml-silero-v6.bin must lie beside --model on every node) or with
WhisperModel.transcribe (--pipeline sequential: 30 s windows in turn, each conditioned on the
previous text); the ggml_whisper package is shipped to the nodes as a runtime_env
py_module, and they need the Debian libraries tools/setup.sh installs), files streamed through
Dataset.map_batches, rows written by a datasink
that writes each part to a temporary name and renames it, so a part is either complete or absent.
A worker that dies is restarted by Ray and its files retried. Resumable: files already in OUT_DIR
are skipped, and at the end every input appears exactly once (a duplicate left by a retried write
is removed). The same command runs on a laptop or a cluster (--address).
"""
import argparse
import csv
import glob
import json
import os
import sys
import time
import uuid

AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".aiff", ".aif", ".au")
COLUMNS = ("path", "duration", "language", "segments", "text", "error")


def list_inputs(source, path_column):
    """Absolute audio paths from a directory or a manifest, sorted for directories."""
    if os.path.isdir(source):
        out = []
        for root, _, files in os.walk(source):
            out += [os.path.join(root, f) for f in files if f.lower().endswith(AUDIO_EXTENSIONS)]
        return sorted(os.path.abspath(p) for p in out)
    base = os.path.dirname(os.path.abspath(source))
    lower = source.lower()
    if lower.endswith(".csv"):
        with open(source, newline="") as f:
            rows = list(csv.DictReader(f))
        paths = [r.get(path_column) for r in rows]
    elif lower.endswith((".jsonl", ".json")):
        with open(source) as f:
            paths = [json.loads(line).get(path_column) for line in f if line.strip()]
    elif lower.endswith(".parquet"):
        import pyarrow.parquet as pq
        table = pq.read_table(source)
        if path_column not in table.column_names:
            sys.exit("transcribe_ray: %s has no column %r (columns: %s)" % (source, path_column,
                                                                          ", ".join(table.column_names)))
        paths = table.column(path_column).to_pylist()
    else:
        sys.exit("transcribe_ray: --input %s is neither a directory nor a .csv/.jsonl/.parquet manifest" % source)
    missing = [i for i, p in enumerate(paths) if not p]
    if missing:
        sys.exit("transcribe_ray: %s: row %d has no %r value" % (source, missing[0] + 1, path_column))
    return [p if os.path.isabs(p) else os.path.normpath(os.path.join(base, p)) for p in paths]


def read_parts(out_dir):
    """{part file: [rows]} of the complete parts in out_dir (temporary files are ignored)."""
    parts = {}
    for part in sorted(glob.glob(os.path.join(out_dir, "part-*.jsonl"))):
        with open(part) as f:
            parts[part] = [json.loads(line) for line in f if line.strip()]
    for part in sorted(glob.glob(os.path.join(out_dir, "part-*.parquet"))):
        import pyarrow.parquet as pq
        parts[part] = pq.read_table(part).to_pylist()
    return parts


def deduplicate(out_dir):
    """Removes rows whose path an earlier part already holds (a write retried after it had
    succeeded); returns the number removed."""
    seen, removed = set(), 0
    for part, rows in read_parts(out_dir).items():
        keep = [r for r in rows if r["path"] not in seen]
        seen.update(r["path"] for r in keep)
        if len(keep) != len(rows):
            removed += len(rows) - len(keep)
            if keep:
                _write_part(part, keep)
            else:
                os.remove(part)
    return removed


def _write_part(path, rows):
    tmp = "%s.%s.tmp" % (path, uuid.uuid4().hex)
    if path.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.Table.from_pylist(rows), tmp)
    else:
        with open(tmp, "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, path)  # atomic: a reader sees the whole part or none of it


class Transcriber:
    """Ray Data actor: one model, reused for every batch this worker gets."""

    def __init__(self, model_path, threads, options, pipeline="batched", decode_batch_size=8):
        from ggml_whisper import BatchedInferencePipeline, WhisperModel
        self.model = WhisperModel(model_path, cpu_threads=threads)
        self.options = dict(options)
        if pipeline == "batched":
            self.transcribe = BatchedInferencePipeline(self.model).transcribe
            self.options["batch_size"] = decode_batch_size
        else:
            self.transcribe = self.model.transcribe

    def __call__(self, batch):
        out = {c: [] for c in COLUMNS}
        for path in batch["path"]:
            t = time.time()
            row = {"path": path, "duration": None, "language": None, "segments": [], "text": "", "error": None}
            try:
                segments, info = self.transcribe(path, **self.options)
                segs = [{"start": s.start, "end": s.end, "text": s.text} for s in segments]
                row.update(duration=info.duration, language=info.language, segments=segs,
                           text="".join(s["text"] for s in segs))
            except Exception as e:  # a bad file is a row with its error, never a lost row
                row["error"] = "%s: %s" % (type(e).__name__, e)
            print("transcribe_ray: %s: %s in %.2f s" % (path, "error" if row["error"] else "ok", time.time() - t),
                  flush=True)
            for c in COLUMNS:
                out[c].append(row[c])
        # Segments travel as JSON text so every row has the same Arrow type (empty lists included).
        out["segments"] = [json.dumps(s, ensure_ascii=False) for s in out["segments"]]
        return out


def make_sink(out_dir, fmt):
    from ray.data import Datasink

    class AtomicPartsDatasink(Datasink):
        def write(self, blocks, ctx):
            import pyarrow as pa
            rows = []
            for block in blocks:
                table = block if isinstance(block, pa.Table) else pa.Table.from_pandas(block)
                for r in table.to_pylist():
                    r["segments"] = json.loads(r["segments"])
                    rows.append(r)
            if rows:
                _write_part(os.path.join(out_dir, "part-%s.%s" % (uuid.uuid4().hex, fmt)), rows)
            return len(rows)

    return AtomicPartsDatasink()


def require_modules():
    """Exits with what to run when this Python lacks Ray or the ggml_whisper package: the job needs
    both in the same interpreter (tools/setup.sh installs Ray into python3; `pip install ./python`
    installs ggml_whisper)."""
    missing = []
    for module, how in (("ray", "python3 -m pip install 'ray[data]==2.60.0'   (tools/setup.sh does this)"),
                        ("ggml_whisper", "python3 -m pip install ./python   (from the repository's root)")):
        try:
            __import__(module)
        except ImportError as e:
            missing.append("  %s: %s\n    install it into this Python (%s):\n      %s" % (module, e, sys.executable, how))
    if missing:
        sys.exit("transcribe_ray: this Python cannot import what the job needs:\n" + "\n".join(missing) +
                 "\n  (a virtual environment needs both: create it with --system-site-packages to see setup's Ray)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", required=True, help="a directory of audio files, or a .csv/.jsonl/.parquet manifest")
    ap.add_argument("--path-column", default="path", help="the manifest's column of audio paths")
    ap.add_argument("--output", required=True, help="output directory (created; resumed when it exists)")
    ap.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    ap.add_argument("--model", required=True, help="whisper.cpp ggml model file, readable on every node")
    ap.add_argument("--address", default=None, help="Ray cluster address (default: start a local one)")
    ap.add_argument("--workers", type=int, default=0, help="actors (default: cluster CPUs / --threads)")
    ap.add_argument("--threads", type=int, default=1, help="threads (and Ray CPUs) per actor")
    ap.add_argument("--batch-size", type=int, default=1, help="files per map_batches call")
    ap.add_argument("--beam-size", type=int, default=5)
    ap.add_argument("--pipeline", choices=("batched", "sequential"), default="batched",
                    help="batched: BatchedInferencePipeline (VAD-cut chunks of <= 30 s decoded together); "
                         "sequential: WhisperModel.transcribe")
    ap.add_argument("--decode-batch-size", type=int, default=8,
                    help="with --pipeline batched: chunks of one file decoded at a time (1..64)")
    ap.add_argument("--language", default=None)
    args = ap.parse_args(argv)
    require_modules()

    import ray

    inputs = list_inputs(args.input, args.path_column)
    if len(set(inputs)) != len(inputs):
        sys.exit("transcribe_ray: the input lists a file more than once")
    os.makedirs(args.output, exist_ok=True)
    for tmp in glob.glob(os.path.join(args.output, "*.tmp")):
        os.remove(tmp)  # parts an interrupted run did not finish
    done = {r["path"] for rows in read_parts(args.output).values() for r in rows}
    todo = [p for p in inputs if p not in done]
    print("transcribe_ray: %d files, %d already in %s, %d to do" % (len(inputs), len(inputs) - len(todo),
                                                                     args.output, len(todo)), flush=True)
    start = time.time()
    if todo:
        # The package travels with the job (runtime_env py_modules), so nodes need only Ray and
        # the Debian libraries tools/setup.sh installs, not a pip install of their own.
        import ggml_whisper
        ray.init(address=args.address, log_to_driver=True,
                 runtime_env={"py_modules": [os.path.dirname(os.path.abspath(ggml_whisper.__file__))]})
        workers = args.workers or max(1, int(ray.cluster_resources().get("CPU", 1)) // args.threads)
        ds = ray.data.from_items([{"path": p} for p in todo], override_num_blocks=max(1, min(len(todo), 4 * workers)))
        options = {"beam_size": args.beam_size, "language": args.language}
        ds = ds.map_batches(
            Transcriber,
            fn_constructor_kwargs={"model_path": os.path.abspath(args.model), "threads": args.threads,
                                   "options": options, "pipeline": args.pipeline,
                                   "decode_batch_size": args.decode_batch_size},
            batch_size=args.batch_size,
            concurrency=workers,
            num_cpus=args.threads,
            batch_format="numpy",
            # A dead worker is restarted and its batches retried; an actor that keeps dying (a
            # node that cannot load the model) ends the run instead of restarting forever.
            max_restarts=3,
            max_task_retries=3,
        )
        # Writes take no CPU: with every CPU held by an actor, they would otherwise wait for the
        # end of the run, and an interrupted run would leave nothing written.
        ds.write_datasink(make_sink(os.path.abspath(args.output), args.format), ray_remote_args={"num_cpus": 0})
    removed = deduplicate(args.output)

    rows = [r for rows in read_parts(args.output).values() for r in rows]
    by_path = {r["path"]: r for r in rows}
    missing = [p for p in inputs if p not in by_path]
    failures = [r for r in rows if r["error"]]
    hours = sum(r["duration"] or 0.0 for r in rows) / 3600.0
    wall = time.time() - start
    print("transcribe_ray: summary: %d files in the output (%d failed, %d duplicate rows removed, %d missing), "
          "%.3f h of audio, wall %.1f s, real-time factor %.4f" %
          (len(by_path), len(failures), removed, len(missing), hours, wall, wall / (hours * 3600) if hours else 0.0),
          flush=True)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
