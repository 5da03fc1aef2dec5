#!/usr/bin/env bash
# Builds every libFuzzer fuzz target with --config=fuzz (clang-14, ASan + UBSan; see .bazelrc) and
# runs each for SECONDS on a copy of its seed corpus testdata/fuzz/<target>/ (after replaying the
# saved crashers of testdata/fuzz/<target>/regressions/, which must all pass).
#
# Usage: tools/fuzz/run_fuzzers.sh [SECONDS] [TARGET...]
#   SECONDS  fuzzing time per target (default 60); 0 replays the corpus and regressions only
#   TARGET   target names (model_file_fuzzer, ...) to run; default all
# Environment:
#   FUZZ_OUTPUT_BASE  Bazel output base of the fuzz build (default: a per-checkout folder under
#                     ${TMPDIR:-/tmp}). It must not be the default output base: --config=fuzz
#                     switches the auto-configured C++ toolchain to clang-14 (--repo_env=CC), so
#                     sharing it with gcc builds would re-configure and rebuild both each time.
#   FUZZ_WORK_DIR     where corpora, logs and crashing inputs go (default: a new temporary folder;
#                     kept, and printed, when something failed)
#   FUZZ_FLAGS        extra libFuzzer flags for every target (e.g. "-jobs=2 -workers=2")
#   FUZZ_JOBS         targets fuzzed at the same time, one process each (default: nproc)
#   GGML_WHISPER_SHARED  the shared data folder (tokenizer_fuzzer reads the tiny.en vocabulary
#                     from its data/header-only-ggml-tiny.en.bin); default ../shared beside the repo
# Prints per target: executions, final coverage (cov: edges, ft: features), corpus size, result.
# Exits 1 if any target crashed, leaked, timed out, ran out of memory or failed a regression input;
# the input is saved in FUZZ_WORK_DIR/<target>/ and its path printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$(pwd)"

seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
shift || true

# Every fuzz target: name -> Bazel label (the name is also its folder under testdata/fuzz/).
declare -A LABELS=(
  [model_file_fuzzer]=//whisper:model_file_fuzzer
  [whisper_init_fuzzer]=//whisper:whisper_init_fuzzer
  [audio_fuzzer]=//apps/common:audio_fuzzer
  [cli_params_fuzzer]=//apps/common:cli_params_fuzzer
  [gbnf_parser_fuzzer]=//apps/common:gbnf_parser_fuzzer
  [tokenizer_fuzzer]=//whisper:tokenizer_fuzzer
  [output_fuzzer]=//apps/common:output_fuzzer
  [quantize_fuzzer]=//tools/quantize:quantize_fuzzer
  [server_fuzzer]=//apps/server:server_fuzzer
)
ORDER=(model_file_fuzzer whisper_init_fuzzer audio_fuzzer cli_params_fuzzer gbnf_parser_fuzzer tokenizer_fuzzer
       output_fuzzer quantize_fuzzer server_fuzzer)
targets=("$@")
((${#targets[@]})) || targets=("${ORDER[@]}")
labels=()
for t in "${targets[@]}"; do
  [[ -n "${LABELS[$t]:-}" ]] || { echo "run_fuzzers: unknown target '$t' (known: ${ORDER[*]})" >&2; exit 2; }
  labels+=("${LABELS[$t]}")
done

command -v clang-14 >/dev/null || { echo "run_fuzzers: clang-14 not found: run tools/setup.sh" >&2; exit 1; }
output_base="${FUZZ_OUTPUT_BASE:-${TMPDIR:-/tmp}/ggml_whisper_fuzz_ob_$(printf '%s' "$repo" | md5sum | cut -c1-12)}"
export GGML_WHISPER_SHARED="${GGML_WHISPER_SHARED:-$repo/../shared}"
work="${FUZZ_WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/ggml_whisper_fuzz.XXXXXX")}"
mkdir -p "$work"

echo "run_fuzzers: building ${#labels[@]} targets (output base $output_base)"
build_start=$SECONDS
# --symlink_prefix=/: no bazel-* links, which would repoint the workspace's to this output base
# (a later `bazel test //...` in the default output base then walks into them and fails to load).
bazel --output_base="$output_base" build --config=fuzz --symlink_prefix=/ "${labels[@]}" >"$work/build.log" 2>&1 || {
  tail -50 "$work/build.log" >&2
  echo "run_fuzzers: build FAILED (log: $work/build.log)" >&2
  exit 1
}
bin_dir="$(bazel --output_base="$output_base" info --config=fuzz bazel-bin 2>/dev/null)"
echo "run_fuzzers: build took $((SECONDS - build_start)) s"

# Common libFuzzer flags: 2 GiB RSS (a single malloc above it is a crash too), 10 s per input.
flags=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=1)
# shellcheck disable=SC2206
extra=(${FUZZ_FLAGS:-})
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$repo/tools/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || true)}"

# One target: regressions, then fuzzing; writes its summary line to $work/<target>/summary and
# returns non-zero on failure.
run_target() {
  local t="$1" bin seeds dir ok rc start elapsed execs last cov ft corp artifacts result a
  bin="$bin_dir/${LABELS[$t]#//}"
  bin="${bin/://}"
  seeds="$repo/testdata/fuzz/$t"
  dir="$work/$t"
  mkdir -p "$dir/corpus"
  ok=1

  # 1. The saved crashers: each must now run cleanly.
  if compgen -G "$seeds/regressions/*" >/dev/null; then
    if ! "$bin" "${flags[@]}" "${extra[@]}" -runs=1 "$seeds"/regressions/* >"$dir/regressions.log" 2>&1; then
      echo "run_fuzzers: $t: a regression input FAILS (log: $dir/regressions.log)"
      grep -E 'ERROR|runtime error|Running:' "$dir/regressions.log" | tail -5 || true
      ok=0
    fi
  fi

  # 2. Fuzz a copy of the seed corpus (libFuzzer adds to the corpus folder it is given).
  [[ -d "$seeds" ]] && find "$seeds" -maxdepth 1 -type f -exec cp {} "$dir/corpus/" \;
  rc=0
  start=$SECONDS
  # -max_total_time=0 is no limit in libFuzzer: 0 s runs the corpus once instead (-runs=0).
  limit=(-max_total_time="$seconds")
  ((seconds > 0)) || limit=(-runs=0)
  "$bin" "${flags[@]}" "${extra[@]}" "${limit[@]}" -artifact_prefix="$dir/" "$dir/corpus" \
    >"$dir/fuzz.log" 2>&1 || rc=$?
  elapsed=$((SECONDS - start))
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log" | tail -1)"
  last="$(grep -E '^#[0-9]+' "$dir/fuzz.log" | grep 'cov:' | tail -1 || true)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
  corp="$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")"
  artifacts="$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
               -o -name 'oom-*' -o -name 'slow-unit-*' \) | grep -v slow-unit || true)"
  if ((rc != 0)) || [[ -n "$artifacts" ]]; then
    ok=0
    echo "run_fuzzers: $t: FAILED (exit $rc, log: $dir/fuzz.log)"
    grep -E '^==[0-9]+==ERROR|runtime error|^SUMMARY|ALARM|out-of-memory|deadly signal' "$dir/fuzz.log" | head -5 || true
    for a in $artifacts; do echo "run_fuzzers: $t: input saved as $a"; done
  fi
  result=$([[ $ok == 1 ]] && echo ok || echo FAILED)
  printf '%-20s %-7s execs %-10s cov %-6s ft %-7s corpus %-12s ran %ss\n' "$t" "$result" \
    "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$elapsed" | tee "$dir/summary"
  ((ok))
}

# FUZZ_JOBS targets at a time (default: one per core), each on one core for SECONDS.
jobs_max="${FUZZ_JOBS:-$(nproc)}"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  run_target "$t" &
done
wait || true
failed=()
summary=()
for t in "${targets[@]}"; do
  if [[ -f "$work/$t/summary" ]]; then
    summary+=("$(cat "$work/$t/summary")")
    grep -q " ok " "$work/$t/summary" || failed+=("$t")
  else
    summary+=("$t: no result")
    failed+=("$t")
  fi
done

echo "run_fuzzers: summary"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "run_fuzzers: FAILED: ${failed[*]} (inputs and logs in $work)"
  exit 1
fi
[[ -n "${FUZZ_WORK_DIR:-}" ]] || rm -rf "$work"
echo "run_fuzzers: all ${#targets[@]} targets passed"
