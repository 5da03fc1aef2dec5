#!/usr/bin/env bash
# Builds and runs testdata/consumer, a separate Bazel workspace that depends on this repository
# through local_repository(path = "../..") + ggml_whisper_deps(), and checks the line it prints.
# This is how another Bazel project uses @ggml_whisper//ggml; a failure here means deps.bzl,
# visibility or the include paths broke for external users.
#
# Nested Bazel cannot run inside a Bazel test sandbox, so this is a plain script (called by
# tools/test.sh and .ci/run). The consumer workspace gets its own output base (Bazel derives it
# from the workspace path); its server exits after 60 idle seconds.
# Usage: tools/test_consumer.sh    (env BAZEL: the bazel binary, default "bazel")
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bazel="${BAZEL:-bazel}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# Expected values, computed here: a is F32 [4, 3] with element (i0, i1) = i0 + 10 * i1.
sum=0
for i1 in 0 1 2; do for i0 in 0 1 2 3; do sum=$((sum + i0 + 10 * i1)); done; done
nbytes=$((4 * 3 * 4))           # 12 floats
view=$(( (1 + 20) + (2 + 20) )) # the 2 elements from (1, 2)
nodes=2                         # add, scale
overhead=368                    # ggml_tensor_overhead() on LP64, as in ggml
want="consumer: sum=${sum} nbytes=${nbytes} view=${view} nodes=${nodes} overhead=${overhead}"

cd "$root/testdata/consumer"
if ! got="$("$bazel" --max_idle_secs=60 run --symlink_prefix=/ //:consumer 2>"$log")"; then
  cat "$log" >&2
  echo "test_consumer: FAILED to build or run testdata/consumer (log above)" >&2
  exit 1
fi
if [[ "$got" != "$want" ]]; then
  echo "test_consumer: FAILED: testdata/consumer printed" >&2
  echo "  got:  $got" >&2
  echo "  want: $want" >&2
  exit 1
fi
echo "test_consumer: PASSED ($got)"

# The C API from another workspace: compat.c (C99, only @ggml_whisper//whisper) transcribes
# jfk.wav with tiny.en; what it prints must be what it prints against whisper.cpp 1.8.5
# (testdata/whisper_cpp_compat/jfk_whisper_cpp_1.8.5.txt; tools/whisper_cpp/compare_compat.py).
model="$root/models/ggml-tiny.en.bin"
wav="${GGML_WHISPER_SHARED:-$root/../shared}/data/jfk.wav"
if [[ ! -f "$model" || ! -f "$wav" ]]; then
  echo "test_consumer: FAILED: need $model (tools/setup.sh) and $wav" >&2
  exit 1
fi
out="$(mktemp)"
trap 'rm -f "$log" "$out"' EXIT
if ! "$bazel" --max_idle_secs=60 run -c opt --symlink_prefix=/ //:whisper_c -- "$model" "$wav" >"$out" 2>"$log"; then
  cat "$log" >&2
  echo "test_consumer: FAILED to build or run //:whisper_c in testdata/consumer (log above)" >&2
  exit 1
fi
if ! python3 "$root/tools/whisper_cpp/compare_compat.py" --skip-beam \
    "$root/testdata/whisper_cpp_compat/jfk_whisper_cpp_1.8.5.txt" "$out"; then
  echo "test_consumer: FAILED: //:whisper_c (C99, @ggml_whisper//whisper) does not print whisper.cpp's segments" >&2
  exit 1
fi
echo "test_consumer: PASSED (C99 program on @ggml_whisper//whisper prints whisper.cpp 1.8.5's jfk.wav segments)"

# Audio from a file in another workspace: //:transcribe_file loads jfk.wav with
# @ggml_whisper//apps/common:audio and transcribes it greedy; its segment lines must be whisper.cpp
# 1.8.5's greedy segments on the same file (the "== greedy" section of the reference). Built with
# the consumer's .bazelrc only (no -c opt on the command line: the suggested .bazelrc sets it).
want_segments="$(awk '/^== /{s=($2=="greedy")} s && /^segment /' \
  "$root/testdata/whisper_cpp_compat/jfk_whisper_cpp_1.8.5.txt")"
if [[ -z "$want_segments" ]]; then
  echo "test_consumer: FAILED: no greedy segments in jfk_whisper_cpp_1.8.5.txt" >&2
  exit 1
fi
if ! got_segments="$("$bazel" --max_idle_secs=60 run --symlink_prefix=/ //:transcribe_file -- "$model" "$wav" 2>"$log")"; then
  cat "$log" >&2
  echo "test_consumer: FAILED to build or run //:transcribe_file in testdata/consumer (log above)" >&2
  exit 1
fi
if [[ "$got_segments" != "$want_segments" ]]; then
  echo "test_consumer: FAILED: //:transcribe_file printed" >&2
  echo "$got_segments" >&2
  echo "  want (whisper.cpp 1.8.5, greedy):" >&2
  echo "$want_segments" >&2
  exit 1
fi
echo "test_consumer: PASSED (C++ program on @ggml_whisper//apps/common:audio + //whisper prints whisper.cpp 1.8.5's greedy jfk.wav segments)"
