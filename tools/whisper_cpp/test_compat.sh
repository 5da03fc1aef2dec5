#!/usr/bin/env bash
# The compatibility-program check: testdata/whisper_cpp_compat/compat.c, a C program written
# against whisper.cpp's whisper.h, is built once against whisper.cpp 1.8.5 (build_whisper_cpp.sh,
# cached) and once against ours (//testdata/whisper_cpp_compat:compat, bazel run -c opt); both
# run on models/ggml-tiny.en.bin and <shared>/data/jfk.wav and must print the same (greedy
# byte for byte; beam search too but for timestamps within 40 ms: see compare_compat.py).
# Usage: tools/whisper_cpp/test_compat.sh
# Env: GGML_WHISPER_SHARED (default <repo>/../shared), BAZEL (default "bazel"), and
#      build_whisper_cpp.sh's WHISPER_CPP_CACHE.
# Then whisper-cli 1.8.5 and our CLI (--decoding whisper.cpp -mc 0 -bs 1) write -otxt -osrt -ovtt
# -olrc -ocsv for jfk.wav: each file must be byte-identical.
# Exit status: 0 PASSED, 1 FAILED (outputs differ), 2 setup error (build or run failed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
shared="${GGML_WHISPER_SHARED:-$root/../shared}"
bazel="${BAZEL:-bazel}"
model="$root/models/ggml-tiny.en.bin"
wav="$shared/data/jfk.wav"
src="$root/testdata/whisper_cpp_compat/compat.c"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

die() { echo "test_compat: ERROR: $*" >&2; exit 2; }
[[ -f "$model" ]] || die "no model $model (run tools/setup.sh)"
[[ -f "$wav" ]] || die "no audio $wav (set GGML_WHISPER_SHARED)"

# 1. whisper.cpp: build (or reuse) it, then compile compat.c against it.
flags="$("$here/build_whisper_cpp.sh" --print-flags | tail -n 1)" || die "build_whisper_cpp.sh failed"
# $flags is unquoted on purpose: it is a list of compiler arguments.
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Werror -O2 "$src" $flags -o "$tmp/compat_whisper_cpp" \
  || die "compiling compat.c against whisper.cpp failed"
"$tmp/compat_whisper_cpp" "$model" "$wav" >"$tmp/whisper_cpp.txt" \
  || die "compat (whisper.cpp) exited $? on $wav"

# 2. Ours, through Bazel (its log in $tmp/bazel.log, shown on failure).
if ! (cd "$root" && "$bazel" run -c opt //testdata/whisper_cpp_compat:compat -- "$model" "$wav") \
    >"$tmp/ours.txt" 2>"$tmp/bazel.log"; then
  tail -n 30 "$tmp/bazel.log" >&2
  die "bazel run -c opt //testdata/whisper_cpp_compat:compat failed (log above)"
fi

# 3. Compare: identical, or identical but for beam-search timestamps within 40 ms
# (compare_compat.py says why).
status=0
if diff -u --label whisper.cpp --label ours "$tmp/whisper_cpp.txt" "$tmp/ours.txt" >"$tmp/diff"; then
  echo "test_compat: compat.c: $(wc -l <"$tmp/whisper_cpp.txt") lines identical, greedy and beam search 5"
else
  cat "$tmp/diff"
  if python3 "$here/compare_compat.py" "$tmp/whisper_cpp.txt" "$tmp/ours.txt"; then
    echo "test_compat: compat.c: greedy identical; beam search identical but for timestamps within 40 ms (above)"
  else
    echo "test_compat: FAILED: compat.c prints differently against whisper.cpp (-) and ours (+)"
    status=1
  fi
fi

# 4. The CLIs: whisper-cli 1.8.5 and ours with --decoding whisper.cpp, greedy, no previous-text
# prompt (-mc 0: whisper-cli's library default no_context), write every text format; each file must
# be byte-identical.
prefix="$("$here/build_whisper_cpp.sh" | tail -n 1)" || die "build_whisper_cpp.sh failed"
formats=(txt srt vtt lrc csv)
out_flags=(-otxt -osrt -ovtt -olrc -ocsv)
"$prefix/bin/whisper-cli" -m "$model" -f "$wav" -t 2 -bs 1 -np "${out_flags[@]}" -of "$tmp/wcpp" \
  >"$tmp/wcpp.stdout" 2>"$tmp/wcpp.stderr" || die "whisper-cli exited $? (log: $(tail -n 3 "$tmp/wcpp.stderr"))"
if ! (cd "$root" && "$bazel" run -c opt //whisper:cli -- --decoding whisper.cpp -mc 0 -m "$model" -f "$wav" \
    -t 2 -bs 1 -np "${out_flags[@]}" -of "$tmp/ours") >"$tmp/ours.stdout" 2>"$tmp/bazel.log"; then
  tail -n 30 "$tmp/bazel.log" >&2
  die "bazel run -c opt //whisper:cli failed (log above)"
fi
for ext in "${formats[@]}"; do
  if diff -u --label "whisper-cli .$ext" --label "ours .$ext" "$tmp/wcpp.$ext" "$tmp/ours.$ext"; then
    echo "test_compat: .$ext identical ($(wc -c <"$tmp/ours.$ext") bytes)"
  else
    echo "test_compat: FAILED: .$ext differs from whisper-cli's"
    status=1
  fi
done
((status == 0)) && echo "test_compat: PASSED"
exit "$status"
