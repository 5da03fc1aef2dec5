#!/usr/bin/env bash
# Obtains the Silero VAD v6 model and converts it to models/ggml-silero-v6.bin (tools/convert/convert_vad.py):
# the ONNX file ships in faster-whisper's PyPI wheel (faster_whisper/assets/silero_vad_v6.onnx, MIT,
# as snakers4/silero-vad publishes it), fetched with `pip download --no-deps` (the wheel is only
# unpacked, not installed). Needs python3 with the onnx package (tools/setup.sh installs it).
# Idempotent: a converted file of the expected size is kept. Usage: tools/get_vad_model.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=models/ggml-silero-v6.bin
OUT_SIZE=1239406
PKG=faster-whisper==1.2.1
log() { echo "get_vad_model: $*"; }
die() { echo "get_vad_model: ERROR: $*" >&2; exit 1; }
size() { if [[ -f "$1" ]]; then stat -c %s "$1"; else echo 0; fi; }

if [[ "${1:-}" != "--force" && "$(size "$OUT")" == "$OUT_SIZE" ]]; then
  log "$OUT present ($OUT_SIZE bytes): nothing to do (--force to redo)"
  exit 0
fi
PYTHON="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
log "pip download --no-deps $PKG"
"$PYTHON" -m pip download --no-deps --disable-pip-version-check -q -d "$tmp" "$PKG" \
  || die "pip download of '$PKG' failed (network or package index unavailable?)"
"$PYTHON" - "$tmp" <<'PY' || die "could not take silero_vad_v6.onnx out of the $PKG wheel"
import glob, os, sys, zipfile
d = sys.argv[1]
wheels = glob.glob(os.path.join(d, "*.whl"))
if len(wheels) != 1:
    sys.exit("expected one wheel in %s, found %s" % (d, os.listdir(d)))
with zipfile.ZipFile(wheels[0]) as z:
    with z.open("faster_whisper/assets/silero_vad_v6.onnx") as f, open(os.path.join(d, "silero_vad_v6.onnx"), "wb") as o:
        o.write(f.read())
PY
mkdir -p models
"$PYTHON" tools/convert/convert_vad.py --onnx "$tmp/silero_vad_v6.onnx" --out "$OUT" || die "tools/convert/convert_vad.py failed"
[[ "$(size "$OUT")" == "$OUT_SIZE" ]] || die "$OUT has $(size "$OUT") bytes, expected $OUT_SIZE"
log "done: $OUT"
