#!/usr/bin/env bash
# Tests the Ray batch job (tools/batch/test_transcribe_ray.py) with ggml_whisper installed by
# `pip install ./python` into a fresh virtual environment that sees the system's Ray (tools/setup.sh
# installs ray[data]): a local two-node cluster on 127.0.0.1, 200 files, a killed worker, a
# killed and resumed run. About 3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bazel="${BAZEL:-bazel}"
venv=$(mktemp -d)
work=$(mktemp -d)
trap 'rc=$?; rm -rf "$venv"; if ((rc)); then echo "test_ray: logs kept in $work" >&2; else rm -rf "$work"; fi' EXIT
"$bazel" build //whisper:cli
cli="$("$bazel" info bazel-bin)/apps/cli/cli"
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check ./python
"$venv/bin/python" tools/batch/test_transcribe_ray.py --cli "$cli" --model "$root/models/ggml-tiny.en.bin" \
  --jfk "${GGML_WHISPER_SHARED:-$root/../shared}/data/jfk.wav" --work "$work"
