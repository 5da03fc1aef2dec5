#!/usr/bin/env bash
# Cross-builds the runtime for aarch64 (bazel build --config=aarch64 of the libraries, their tests
# and the CLI; the toolchain in //toolchain) and runs the Arm binaries under qemu-aarch64
# (Debian's qemu-user 7.2, user mode;
# the arm64 shared libraries come from the multiarch -dev packages tools/setup.sh installs):
#
#   1. every kernel test (kernels/*_test, ggml:fp16_test) per qemu CPU model, each against the
#      scalar reference as on x86. A parameterized test runs once per Highway target the CPU
#      model supports, so the models below cover every Arm target Highway 1.0.3 compiles with
#      GCC 12: NEON, SVE, SVE2, SVE_256, SVE2_128 (and SCALAR). The log shows, per model and
#      test, the targets that ran; dispatch_test checks the dispatched target of each model;
#   2. end to end: the aarch64 CLI transcribes jfk.wav with tiny.en, greedy, on the NEON model,
#      with models/ggml-tiny.en.bin (F16; E2E_TYPES adds quantizations, e.g. "f16 q8_0 q5_0":
#      each costs ~190-260 s under qemu, so CI runs F16 only; the quantized dot products are
#      checked on every Arm target by quant_ops_test and quant_matmul_test). For F16 the token
#      ids (from -ojf) must equal the x86-64 CLI's for the same file and faster-whisper's
#      (testdata/jfk_faster_whisper_tokens.json). For a quantized type the text tokens must be
#      equal and each timestamp token within 0.5 s of x86-64's: the quantized dot products are
#      bit-identical to ggml's scalar reference on every target (kernels/quant_ops.h), but the
#      float parts (attention, norms, softmax) round differently per vector width, and q8_0's
#      re-quantized activations turn that into near ties between timestamps 0.2 s apart (jfk.wav
#      q8_0 on x86-64 alone: 7.54/10.58 s with SSE4 or SCALAR and -nfa, 7.74/10.74 s otherwise).
#
# SVE under qemu is emulated per instruction, about 3x (128-bit) to 25x (256-bit) slower than
# NEON here, so on the SVE models the tests run only the cases of the targets that model adds
# (--gtest_filter on the target suffix); the NEON and SCALAR cases run on cortex-a53, and the
# executor tests (graph_compute*) on cortex-a53 and the 128-bit SVE2 model.
#
# Usage: tools/test_aarch64.sh            (after tools/setup.sh; the model from tools/get_model.sh)
# Env: BAZEL (default "bazel"); QEMU (default "qemu-aarch64"); SKIP_E2E=1 skips step 2;
#      E2E_TYPES (default "f16"): the model types step 2 transcribes with; QEMU_JOBS (default
#      nproc): qemu processes at a time (the kernel tests per CPU model and the e2e runs are tasks).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel="${BAZEL:-bazel}"
qemu="${QEMU:-qemu-aarch64}"
failed=()
t_start=$(date +%s)

log() { echo "test_aarch64: $*"; }

# What runs under qemu: the kernel, executor and tensor libraries with their tests, and the CLI
# (so the whole runtime and its C API). Not the x86-only programs' tests, the server or the
# benchmarks: cross-building all of //... took 489 s of this step's 841 s on a 2-core EPYC.
aarch64_targets=(//kernels/... //cpu/... //ggml/... //alloc/... //whisper:cli)
log "bazel build --config=aarch64 ${aarch64_targets[*]}"
"$bazel" build --config=aarch64 -- "${aarch64_targets[@]}"
bin="$("$bazel" info --config=aarch64 bazel-bin)"

# qemu -cpu model | the target Highway 1.0.3 dispatches to first | gtest filter of the cases to run
# (the targets it adds; tests that are not parameterized by target run whole on every model).
models=(
  "cortex-a53|NEON|*"
  "max,sve-max-vq=1|SVE2_128|*/SVE2_128:*/SVE2:*/SVE"
  "max,sve-max-vq=2|SVE_256|*/SVE_256"
  "max,sve-max-vq=4|SVE2|*/SVE2:*/SVE"
  "a64fx|SVE|*/SVE"
)
# Parameterized by target (a case per target the CPU supports):
kernel_tests=(activations_test conv_test norm_test softmax_test vec_test matmul_test quant_ops_test quant_gemm_test
              flash_attn_test flash_attn_int8_test)
executor_tests=(graph_compute_test graph_compute_block_test graph_compute_matmul_test)
# Not parameterized: they run on the dispatched target of each model (quant_matmul_test: the
# quantized mul_mat over quant_ops, so SVE's sdot path on the SVE models).
unparameterized_tests=(kernels/quant_matmul_test kernels/quant_ref_test kernels/quant_traits_test
                       cpu/ref_ops_test cpu/threadpool_test ggml/fp16_test)

# run_test <cpu> <binary> <filter> [env...]: runs one test binary, prints a summary line with the
# targets whose cases ran (the suffix of each parameterized case name).
run_test() {
  local cpu="$1" path="$2" filter="$3"
  shift 3
  local name out rc t0 t1 targets passed
  name="${path#"$bin"/}"
  t0=$(date +%s.%N)
  set +e
  out="$(env "$@" "$qemu" -cpu "$cpu" "$path" --gtest_filter="$filter" 2>&1)"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  targets="$(grep -oE '^\[       OK \] [^ ]+/[A-Z0-9_]+ ' <<<"$out" | sed -E 's|.*/([A-Z0-9_]+) $|\1|' |
             sort | uniq -c | awk '{printf "%s%s:%s", sep, $2, $1; sep=" "}' || true)"
  passed="$(grep -cE '^\[       OK \]' <<<"$out" || true)"
  printf 'test_aarch64: [%s] %-36s %s passed in %5.1f s; cases per target: %s\n' \
    "$cpu" "$name" "$passed" "$(echo "$t1 - $t0" | bc)" "${targets:-(not parameterized)}"
  if ((rc != 0)) || ! grep -q '^\[  PASSED  \]' <<<"$out"; then
    echo "$out" | grep -E 'Failure|FAILED|Which is|Expected|error' | head -40 >&2
    failed+=("[$cpu] $name")
  fi
}

# run_model <entry>: every kernel test on one qemu CPU model (an entry of `models`).
run_model() {
  local cpu want filter t
  IFS='|' read -r cpu want filter <<<"$1"
  log "== qemu -cpu $cpu: expecting dispatch to $want; cases: $filter"
  # The dispatched target of this model: DispatchTest.DispatchesToTheExpectedTarget.
  run_test "$cpu" "$bin/kernels/dispatch_test" "*" GGML_EXPECT_TARGET="$want"
  for t in "${kernel_tests[@]}"; do
    # At 512 bits qemu emulates matmul_test's SVE cases in over 5 minutes; the SVE and SVE2
    # matmul code is vector-length agnostic and runs whole at 128 bits (max,sve-max-vq=1) and,
    # as SVE_256, at 256.
    [[ "$t" == matmul_test && ( "$cpu" == max,sve-max-vq=4 || "$cpu" == a64fx ) ]] && continue
    run_test "$cpu" "$bin/kernels/$t" "$filter"
  done
  for t in "${unparameterized_tests[@]}"; do run_test "$cpu" "$bin/$t" "*"; done
  if [[ "$cpu" == cortex-a53 || "$cpu" == max,sve-max-vq=1 ]]; then
    for t in "${executor_tests[@]}"; do run_test "$cpu" "$bin/cpu/$t" "$filter"; done
    run_test "$cpu" "$bin/kernels/dispatch_env_test" "*"
  fi
}

# run_e2e <type>: the aarch64 CLI on jfk.wav with tiny.en of that type (f16, q8_0, ...) against
# the x86-64 CLI's token ids (and for f16 faster-whisper's).
run_e2e() {
  local type="$1" file="$model" t0 x86_ids arm_ids fw_ids
  if [[ "$type" != f16 ]]; then
    file="$work/ggml-tiny.en-$type.bin"
    "$x86_bin/tools/quantize/quantize" "$model" "$file" "$type" >/dev/null
  fi
  # --int8-attention off: Arm has no int8 attention (x86-64 AVX512-VNNI runs it by default for
  # quantized weights, which tips jfk.wav's "country" / "country." near-tie; whisper/encoder.h).
  "$x86_bin/apps/cli/cli" -m "$file" -f ../shared/data/jfk.wav -bs 1 -t 2 -np -ojf --int8-attention off \
    -of "$work/x86_$type" >/dev/null
  t0=$(date +%s)
  if ! "$qemu" -cpu cortex-a53 "$bin/apps/cli/cli" -m "$file" -f ../shared/data/jfk.wav -bs 1 \
    -t 2 -ojf -of "$work/arm_$type" >"$work/arm_$type.out" 2>&1; then
    cat "$work/arm_$type.out" >&2
    failed+=("e2e $type: the aarch64 CLI failed")
    return
  fi
  x86_ids="$(token_ids "$work/x86_$type.json")"
  arm_ids="$(token_ids "$work/arm_$type.json")"
  log "e2e [cortex-a53] jfk.wav $type greedy in $(($(date +%s) - t0)) s: $(grep -- '-->' "$work/arm_$type.out" | tr -s ' ' | tr '\n' ' ')"
  log "e2e [cortex-a53] $type token ids: $arm_ids"
  if [[ "$type" == f16 && "$arm_ids" != "$x86_ids" ]]; then
    log "e2e $type: x86-64 token ids differ: $x86_ids" >&2
    failed+=("e2e $type: token ids differ from x86-64")
  elif [[ "$type" != f16 ]] && ! same_up_to_timestamps "$arm_ids" "$x86_ids"; then
    log "e2e $type: x86-64 token ids differ in text or by more than 0.5 s: $x86_ids" >&2
    failed+=("e2e $type: token ids differ from x86-64")
  fi
  if [[ "$type" == f16 ]]; then
    # faster-whisper lists the timestamp that ends one segment and starts the next twice; the
    # CLI's segments list it once, so consecutive equal timestamp ids are collapsed.
    fw_ids="$(python3 -c 'import json; t=json.load(open("testdata/jfk_faster_whisper_tokens.json"))["windows"][0]["tokens"]; print(" ".join(str(x) for i, x in enumerate(t) if not (i and x >= 50363 and x == t[i-1])))')"
    if [[ "$arm_ids" != "$fw_ids" ]]; then
      log "e2e f16: faster-whisper's token ids differ: $fw_ids" >&2
      failed+=("e2e f16: token ids differ from faster-whisper")
    else
      log "e2e f16: equal to faster-whisper 1.2.1's greedy tokens (testdata/jfk_faster_whisper_tokens.json)"
    fi
  fi
}

# token_ids <json>: the ids of every segment's tokens (whisper-cli's -ojf layout).
token_ids() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join(str(t["id"]) for s in j["transcription"] for t in s["tokens"]))' "$1"
}

# same_up_to_timestamps <ids> <ids>: true if the text tokens are equal and the timestamp tokens
# (>= 50363, tiny.en's <|0.00|>; 20 ms each) stand at the same places, each within 25 (0.5 s).
same_up_to_timestamps() {
  python3 -c '
import sys
a, b = ([int(x) for x in s.split()] for s in sys.argv[1:3])
ts = 50363
ok = len(a) == len(b) and all((x >= ts) == (y >= ts) and (x == y if x < ts else abs(x - y) <= 25)
                              for x, y in zip(a, b))
sys.exit(0 if ok else 1)' "$1" "$2"
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tasks=()  # "function|argument" (an argument may hold '|' and '*'), the longest first
if [[ "${SKIP_E2E:-0}" != 1 ]]; then
  model=models/ggml-tiny.en.bin
  [[ -f "$model" ]] || { echo "test_aarch64: $model is missing: run tools/get_model.sh" >&2; exit 1; }
  "$bazel" build //whisper:cli //tools/quantize
  x86_bin="$("$bazel" info bazel-bin)"
  read -r -a e2e_types <<<"${E2E_TYPES:-f16}"
  for type in "${e2e_types[@]}"; do tasks+=("run_e2e|$type"); done
fi
for entry in "${models[@]}"; do tasks+=("run_model|$entry"); done

# Each qemu process emulates one thread, so the tasks run QEMU_JOBS at a time (default: nproc),
# each in a subshell with its own log; the logs are printed in task order.
jobs_max="${QEMU_JOBS:-$(nproc)}"
for i in "${!tasks[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  (
    failed=()
    "${tasks[$i]%%|*}" "${tasks[$i]#*|}"
    ((${#failed[@]} == 0)) || printf '%s\n' "${failed[@]}" >"$work/task_$i.failed"
  ) >"$work/task_$i.log" 2>&1 &
done
wait
for i in "${!tasks[@]}"; do
  cat "$work/task_$i.log"
  if [[ -f "$work/task_$i.failed" ]]; then mapfile -t -O "${#failed[@]}" failed <"$work/task_$i.failed"; fi
done

log "wall time $(($(date +%s) - t_start)) s"
if ((${#failed[@]})); then
  log "${#failed[@]} failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
log "all passed"
