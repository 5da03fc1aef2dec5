#!/usr/bin/env bash
# Installs exactly what the build, the tests and the CLI need on a fresh Debian bookworm machine.
# Idempotent: packages already present and a model already converted are skipped.
# Usage: tools/setup.sh [--no-model]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  bazel-bootstrap bazel-rules-java bazel-platforms  # Bazel 4.2.3 and the rules it resolves locally
  g++                                               # the C++ toolchain
  libabsl-dev                                       # status, strings, flags
  libgtest-dev libgmock-dev                         # tests
  libbenchmark-dev libbenchmark-tools               # benchmarks, compare.py for the regression gate
  libhwy-dev                                        # Highway SIMD kernels
  libsndfile1-dev libsamplerate0-dev                # audio decoding and resampling
  libkissfft-dev                                    # FFT for log-mel
  libopenblas-dev                                   # reference sgemm in the mul_mat benchmark
  valgrind                                          # the regression gate's instruction counts
  zlib1g-dev                                        # model converter: inflate mel_filters.npz
  nlohmann-json3-dev                                # model converter: CTranslate2 vocabulary.json
  cmake                                             # builds whisper.cpp 1.8.5 for tools/whisper_cpp/test_compat.sh
  pybind11-dev                                      # the Python bindings (//python)
  clang-14 libclang-rt-14-dev                       # --config=fuzz: libFuzzer, ASan, UBSan (tools/fuzz/run_fuzzers.sh)
  llvm-14                                           # llvm-symbolizer-14 for the fuzzers' stack traces
  libcpp-httplib-dev                                # HTTP for //whisper:server
  curl                                              # the server's end-to-end test
  sndfile-programs                                  # sndfile-convert: the 90 s WAV of tools/whisper_cpp/test_compat.sh
  sox                                               # the README's stream example: any audio file to raw 16 kHz s16le on a pipe
  g++-aarch64-linux-gnu                             # --config=aarch64: the cross compiler (//toolchain)
  qemu-user                                         # qemu-aarch64: runs the aarch64 tests (tools/test_aarch64.sh)
  espeak-ng                                         # spoken chess/color/assistant clips: the --grammar section of tools/whisper_cpp/test_compat.sh
)

# The arm64 builds of the libraries above, for --config=aarch64 (Debian multiarch: their
# libraries go to /usr/lib/aarch64-linux-gnu beside the amd64 ones; the headers are the same
# files). Needs `dpkg --add-architecture arm64`, done below before apt-get update.
ARM64_PACKAGES=(
  libabsl-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libbenchmark-dev:arm64 libhwy-dev:arm64
  libsndfile1-dev:arm64 libsamplerate0-dev:arm64 libkissfft-dev:arm64 libopenblas-dev:arm64
  zlib1g-dev:arm64 libcpp-httplib-dev:arm64
)

# PyPI packages, pinned for repeatable runs: the Python bindings' test runner and NumPy (arrays
# as audio input); Ray Data for the batch job (tools/batch/transcribe_ray.py, with pyarrow and
# pandas for its manifests and blocks); the openai SDK, which the server's test points at
# //whisper:server's OpenAI-compatible routes; onnx to read the Silero VAD model
# (tools/convert/convert_vad.py).
PIP_PACKAGES=(pytest==9.2.0 numpy==2.4.6 "ray[data]==2.60.0" openai==3.57.0 onnx==1.23.2)

missing=()
for p in "${APT_PACKAGES[@]}" "${ARM64_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64 || { echo "setup: dpkg --add-architecture arm64 failed" >&2; exit 1; }
  fi
  apt-get update -qq || { echo "setup: apt-get update failed" >&2; exit 1; }
  for p in "${missing[@]}"; do
    apt-get install -y -qq "$p" >/dev/null || { echo "setup: FAILED to install apt package '$p'" >&2; exit 1; }
  done
else
  echo "setup: apt packages already installed (${#APT_PACKAGES[@]} + ${#ARM64_PACKAGES[@]} arm64)"
fi

PYTHON="${PYTHON:-python3}"
# pip skips what is already installed at these versions (no download then).
echo "setup: PyPI packages: ${PIP_PACKAGES[*]}"
"$PYTHON" -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}" \
  || { echo "setup: FAILED to install PyPI packages: ${PIP_PACKAGES[*]}" >&2; exit 1; }

if [[ "${1:-}" != "--no-model" && -x tools/get_model.sh ]]; then
  tools/get_model.sh  # and tools/get_vad_model.sh
fi
echo "setup: done"
