#!/usr/bin/env bash
# Runs every layer's Google Benchmark binary (-c opt) and writes one JSON file per binary:
#   tools/bench/run_all.sh [--out DIR] [--only NAME[,NAME...]] [-- BENCHMARK_FLAGS...]
#
#   --out DIR    where the JSON files go (default /tmp/ggml_whisper_bench/<UTC time>-<short commit>)
#   --only LIST  run only these binaries, by the names below (e.g. --only matmul,transcribe)
#   after --      flags for every binary, e.g. -- --benchmark_min_time=0.1 --benchmark_filter=F16
#
# Before the binaries run it makes the quantized models the model-level benchmark also measures,
# models/ggml-tiny.en-q5_0.bin and -q8_0.bin, from models/ggml-tiny.en.bin with
# `bazel run -c opt //tools:quantize` (skipped if present, or if the F16 model or the quantizer
# is missing). Each binary's console table goes to the terminal and DIR/NAME.txt; its JSON (with
# the benchmark context: CPU, load average, and simd_target where the binary records it) to
# DIR/NAME.json. A binary whose target does not exist yet is reported and skipped; a binary that
# fails is reported and the others still run. Every other cc_binary named *_benchmark in the
# workspace runs too (after the list), so a new benchmark is never silently left out. The
# binaries run one after another (never in parallel: they share 2 cores).
# Exit status: 0 if every available binary ran, 1 otherwise.
# Env: BAZEL (default bazel).
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel="${BAZEL:-bazel}"

# name -> target, in layer order (bottom up).
BENCHMARKS=(
  "context://ggml:context_benchmark"
  "gallocr://alloc:gallocr_benchmark"
  "matmul://kernels:matmul_benchmark"
  "elementwise://kernels:elementwise_benchmark"
  "quant://kernels:quant_benchmark"
  "mul_mat_types://cpu:mul_mat_types_benchmark"
  "graph_compute://cpu:graph_compute_benchmark"
  "mel://whisper:mel_benchmark"
  "model://whisper:model_benchmark"
  "transcribe://tools/bench:transcribe_benchmark"
  "gate://tools/gate:gate_benchmark"
)

out=""
only=""
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "run_all: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
extra=("$@")
if [[ -z "$out" ]]; then
  out="${TMPDIR:-/tmp}/ggml_whisper_bench/$(date -u +%Y%m%dT%H%M%SZ)-$(git rev-parse --short HEAD 2>/dev/null || echo nogit)"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# Inputs the binaries look up outside Bazel's view (testdata/paths.h).
export GGML_WHISPER_MODELS="${GGML_WHISPER_MODELS:-$PWD/models}"
if [[ -z "${GGML_WHISPER_SHARED:-}" ]]; then
  if [[ -d ../shared/data ]]; then
    export GGML_WHISPER_SHARED="$(cd ../shared && pwd)"
  else
    echo "run_all: no ../shared/data beside the checkout (set GGML_WHISPER_SHARED): benchmarks that read it fail or use synthetic inputs" >&2
  fi
fi

# 1. Quantized models.
f16="$GGML_WHISPER_MODELS/ggml-tiny.en.bin"
for q in q5_0 q8_0; do
  dst="$GGML_WHISPER_MODELS/ggml-tiny.en-$q.bin"
  if [[ -s "$dst" ]]; then
    echo "run_all: $dst present"
  elif [[ ! -s "$f16" ]]; then
    echo "run_all: $f16 missing (run tools/setup.sh): no $q model"
  elif ! "$bazel" query //tools:quantize >/dev/null 2>&1; then
    echo "run_all: //tools:quantize does not exist yet: no $q model"
  elif "$bazel" run -c opt //tools:quantize -- "$f16" "$dst.partial" "$q" >"$out/quantize_$q.log" 2>&1; then
    mv "$dst.partial" "$dst"
    echo "run_all: made $dst ($(stat -c %s "$dst") bytes)"
  else
    rm -f "$dst.partial"
    echo "run_all: //tools:quantize $q FAILED (see $out/quantize_$q.log): no $q model"
  fi
done

# 2. Build the binaries that exist.
names=() targets=()
for entry in "${BENCHMARKS[@]}"; do
  name="${entry%%:*}" target="${entry#*:}"
  [[ -n "$only" && "$only" != *",$name,"* ]] && continue
  if "$bazel" query "$target" >/dev/null 2>&1; then
    names+=("$name") targets+=("$target")
  else
    echo "run_all: $target does not exist (yet): skipped"
  fi
done
# Any other *_benchmark binary (added after this list was written) runs too, after the listed ones.
if [[ -z "$only" ]]; then
  while read -r target; do
    [[ " ${targets[*]-} " == *" $target "* || -z "$target" ]] && continue
    name="${target#//}" name="${name//[\/:]/_}"
    echo "run_all: $target is not in BENCHMARKS: running it as $name"
    names+=("$name") targets+=("$target")
  done < <("$bazel" query 'filter("_benchmark$", kind(cc_binary, //...))' 2>/dev/null | sort)
fi
((${#targets[@]})) || { echo "run_all: nothing to run" >&2; exit 1; }
echo "run_all: building ${targets[*]}"
"$bazel" build -c opt --keep_going "${targets[@]}" || echo "run_all: some targets did not build"
bin_dir="$("$bazel" info -c opt bazel-bin 2>/dev/null)"

# 3. Run them, one at a time.
failed=()
for i in "${!targets[@]}"; do
  name="${names[$i]}" target="${targets[$i]}"
  path="$bin_dir/${target#//}"
  path="${path/://}"
  if [[ ! -x "$path" ]]; then
    echo "run_all: $target was not built" >&2
    failed+=("$name")
    continue
  fi
  echo "run_all: === $name ($target) ==="
  # Runfiles env so that binaries using testdata/paths.h resolve the repository as under bazel.
  if (cd "$path.runfiles/ggml_whisper" 2>/dev/null || cd "$PWD";
      TEST_SRCDIR="$path.runfiles" TEST_WORKSPACE=ggml_whisper \
        "$path" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
        ${extra[@]+"${extra[@]}"}) 2>&1 | tee "$out/$name.txt"; then
    :
  else
    echo "run_all: $name FAILED" >&2
    failed+=("$name")
  fi
done

echo "run_all: results in $out"
if ((${#failed[@]})); then
  echo "run_all: failed: ${failed[*]}" >&2
  exit 1
fi
