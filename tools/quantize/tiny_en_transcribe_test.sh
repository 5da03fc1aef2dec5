#!/usr/bin/env bash
# End to end: quantize the real tiny.en model to q8_0 and q5_0 with the quantize binary, then
# transcribe jfk.wav with whisper-cli (greedy, -bs 1); the transcript must contain "ask not what
# your country can do for you" (compared case-insensitively: the model capitalizes freely).
# Fails, saying to run tools/setup.sh, when models/ggml-tiny.en.bin is absent.
# Usage (from Bazel): tiny_en_transcribe_test.sh QUANTIZE CLI [MODEL]
set -uo pipefail

QUANTIZE="$1"
CLI="$2"
MODEL="${3:-}"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# jfk.wav: $GGML_WHISPER_SHARED/data, else ../shared/data beside the repository root (found
# through this script's symlink back to the source tree, as testdata/paths.h does).
ROOT="$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)"
JFK="${GGML_WHISPER_SHARED:-$ROOT/../shared}/data/jfk.wav"
PHRASE="ask not what your country can do for you"

if [[ -z "$MODEL" || ! -f "$MODEL" ]]; then
  echo "FAIL: models/ggml-tiny.en.bin is missing: run tools/setup.sh" >&2
  exit 1
fi
[[ -f "$JFK" ]] || { echo "FAIL: $JFK is missing (set GGML_WHISPER_SHARED)" >&2; exit 1; }

failures=0
for type in q8_0 q5_0; do
  out="$TMP/ggml-tiny.en-$type.bin"
  if ! "$QUANTIZE" "$MODEL" "$out" "$type" >"$TMP/quantize-$type.log" 2>&1; then
    echo "FAIL: quantize $type: $(tail -1 "$TMP/quantize-$type.log")" >&2
    failures=$((failures + 1))
    continue
  fi
  "$CLI" -m "$out" -f "$JFK" -bs 1 -t 2 -np >"$TMP/cli-$type.txt" 2>"$TMP/cli-$type.err"
  rc=$?
  echo "$type transcript:"
  cat "$TMP/cli-$type.txt"
  if [[ $rc != 0 ]]; then
    echo "FAIL: whisper-cli on the $type model exited $rc: $(cat "$TMP/cli-$type.err")" >&2
    failures=$((failures + 1))
  elif ! grep -qiF "$PHRASE" "$TMP/cli-$type.txt"; then
    echo "FAIL: the $type transcript lacks '$PHRASE'" >&2
    failures=$((failures + 1))
  fi
done
((failures == 0)) || exit 1
echo "PASS"
