#!/usr/bin/env bash
# The quantize binary's command line: usage, and one-line errors with exit status 1 for an unknown
# TYPE (listing the valid ones), a missing or header-only input, IN == OUT and an unwritable
# output; relative paths resolved against BUILD_WORKING_DIRECTORY (set by `bazel run`).
# Usage (from Bazel): quantize_main_test.sh path/to/quantize
set -uo pipefail

QUANTIZE="$1"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# The shared inputs: $GGML_WHISPER_SHARED, else ../shared beside the repository root (found
# through this script's symlink back to the source tree, as testdata/paths.h does).
ROOT="$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)"
SHARED="${GGML_WHISPER_SHARED:-$ROOT/../shared}"
HEADER_ONLY="$SHARED/data/header-only-ggml-tiny.en.bin"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect_error NAME EXPECTED_SUBSTRING ARGS...: exit 1, nothing on stdout except the loading line,
# exactly one stderr line starting "quantize: error: " and containing EXPECTED_SUBSTRING.
expect_error() {
  local name="$1" want="$2"
  shift 2
  "$QUANTIZE" "$@" >"$TMP/stdout" 2>"$TMP/stderr"
  local rc=$?
  [[ $rc == 1 ]] || fail "$name: exit status $rc, expected 1"
  local n_lines
  n_lines=$(wc -l <"$TMP/stderr")
  [[ $n_lines == 1 ]] || fail "$name: $n_lines stderr lines, expected 1: $(cat "$TMP/stderr")"
  grep -q '^quantize: error: ' "$TMP/stderr" || fail "$name: no 'quantize: error:' prefix"
  grep -qF -- "$want" "$TMP/stderr" || fail "$name: stderr lacks '$want': $(cat "$TMP/stderr")"
  if grep -qv '^quantize: loading model from' "$TMP/stdout"; then
    fail "$name: unexpected stdout: $(cat "$TMP/stdout")"
  fi
}

# -h / --help: usage on stdout, status 0.
for flag in -h --help; do
  "$QUANTIZE" "$flag" >"$TMP/stdout" 2>"$TMP/stderr"
  rc=$?
  [[ $rc == 0 ]] || fail "$flag: exit status $rc, expected 0"
  grep -q '^usage: ' "$TMP/stdout" || fail "$flag: no usage on stdout: $(cat "$TMP/stdout")"
done

# No arguments: usage on stderr, status 1.
"$QUANTIZE" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
[[ $rc == 1 ]] || fail "no arguments: exit status $rc, expected 1"
grep -q 'usage: .* model-f32-or-f16.bin model-quant.bin TYPE' "$TMP/stderr" \
  || fail "no arguments: no usage line: $(cat "$TMP/stderr")"

[[ -f "$HEADER_ONLY" ]] || fail "missing test input $HEADER_ONLY (set GGML_WHISPER_SHARED)"
cp "$HEADER_ONLY" "$TMP/in.bin"

expect_error "unknown type" \
  "unknown quantization type 'q3_k': valid types (ggml_ftype) are q4_0 (2), q4_1 (3), q5_0 (8), q5_1 (9), q8_0 (7)" \
  "$TMP/in.bin" "$TMP/out.bin" q3_k
expect_error "float type" "unknown quantization type 'f16'" "$TMP/in.bin" "$TMP/out.bin" f16
expect_error "missing input" "cannot open input '$TMP/absent.bin': No such file or directory" \
  "$TMP/absent.bin" "$TMP/out.bin" q8_0
expect_error "in == out" "are the same file" "$TMP/in.bin" "$TMP/in.bin" q8_0
cmp -s "$HEADER_ONLY" "$TMP/in.bin" || fail "in == out: the input was modified"
expect_error "header-only input" \
  "no tensors: file has header, mel filters and vocabulary only (586836 bytes" \
  "$TMP/in.bin" "$TMP/out.bin" 7
expect_error "unwritable output" "cannot create output '$TMP/no/dir/out.bin.tmp'" \
  "$TMP/in.bin" "$TMP/no/dir/out.bin" q4_0
[[ ! -e "$TMP/out.bin" && ! -e "$TMP/out.bin.tmp" ]] || fail "an output file was left behind"

# Relative paths are taken from BUILD_WORKING_DIRECTORY.
BUILD_WORKING_DIRECTORY="$TMP" expect_error "relative input" "$TMP/in.bin: no tensors" \
  in.bin out.bin q5_1

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
