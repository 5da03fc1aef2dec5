#!/usr/bin/env bash
# --compute-type end to end on the real tiny.en F16 model: whisper-cli --compute-type int8 gives
# the transcript (every output line) of the q8_0 file the quantize binary writes from the same
# model (greedy, -bs 1); the loader reports its 65 converted tensors; an unknown name (int16,
# which has no ggml type) is refused by whisper-cli and whisper-server with the accepted names;
# whisper-server --compute-type int8 starts and answers /inference with the same text.
# Fails, saying to run tools/setup.sh, when models/ggml-tiny.en.bin is absent.
# Usage (from Bazel): compute_type_cli_test.sh QUANTIZE CLI SERVER MODEL
set -uo pipefail

QUANTIZE="$1"
CLI="$2"
SERVER="$3"
MODEL="${4:-}"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
ROOT="$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)"
JFK="${GGML_WHISPER_SHARED:-$ROOT/../shared}/data/jfk.wav"

if [[ -z "$MODEL" || ! -f "$MODEL" ]]; then
  echo "FAIL: models/ggml-tiny.en.bin is missing: run tools/setup.sh" >&2
  exit 1
fi
[[ -f "$JFK" ]] || { echo "FAIL: $JFK is missing (set GGML_WHISPER_SHARED)" >&2; exit 1; }

fail() { echo "FAIL: $*" >&2; exit 1; }

"$QUANTIZE" "$MODEL" "$TMP/q8_0.bin" q8_0 >"$TMP/quantize.log" 2>&1 || fail "quantize: $(tail -1 "$TMP/quantize.log")"
"$CLI" -m "$TMP/q8_0.bin" -f "$JFK" -bs 1 -t 2 -np >"$TMP/offline.txt" 2>"$TMP/offline.err" ||
  fail "whisper-cli on the q8_0 file: $(cat "$TMP/offline.err")"
"$CLI" -m "$MODEL" --compute-type int8 -f "$JFK" -bs 1 -t 2 >"$TMP/at_load.txt" 2>"$TMP/at_load.err" ||
  fail "whisper-cli --compute-type int8: $(cat "$TMP/at_load.err")"
echo "offline q8_0:"; cat "$TMP/offline.txt"
echo "--compute-type int8:"; cat "$TMP/at_load.txt"
[[ -s "$TMP/offline.txt" ]] || fail "empty transcript"
cmp -s "$TMP/offline.txt" "$TMP/at_load.txt" || fail "the transcripts differ"
grep -q "65 of 167 tensors converted to q8_0 at load" "$TMP/at_load.err" ||
  fail "no conversion line in whisper-cli's log: $(grep whisper_model_load "$TMP/at_load.err")"

want="--compute-type compute_type 'int16' is not supported (16-bit integer weights have no ggml type this runtime multiplies): expected one of default, auto, int8, int8_float32, int8_float16, int8_bfloat16, float16, bfloat16, float32"
for prog in "$CLI" "$SERVER"; do
  "$prog" -m "$MODEL" --compute-type int16 -f "$JFK" >"$TMP/bad.out" 2>"$TMP/bad.err" && fail "$prog accepted int16"
  grep -qF -- "$want" "$TMP/bad.err" || fail "$prog: unexpected error: $(cat "$TMP/bad.err")"
done

# The server: started on a free port (--port 0 prints the one it got), one /inference request.
"$SERVER" -m "$MODEL" --compute-type int8 --host 127.0.0.1 --port 0 -t 2 >"$TMP/server.out" 2>"$TMP/server.err" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
port=""
for _ in $(seq 1 600); do
  port="$(sed -n 's|.*listening at http://[^:]*:\([0-9]*\).*|\1|p' "$TMP/server.out")"
  [[ -n "$port" ]] && break
  kill -0 $pid 2>/dev/null || fail "whisper-server exited: $(cat "$TMP/server.err")"
  sleep 0.1
done
[[ -n "$port" ]] || fail "whisper-server did not start"
grep -q "65 of 167 tensors converted to q8_0 at load" "$TMP/server.err" || fail "no conversion line in the server's log"
python3 - "$port" "$JFK" "$TMP/offline.txt" <<'PY' || fail "the server's text differs"
import json, sys, urllib.request, uuid
port, jfk, want = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
b = uuid.uuid4().hex
body = (b"--" + b.encode() + b'\r\nContent-Disposition: form-data; name="file"; filename="jfk.wav"\r\n\r\n'
        + open(jfk, "rb").read() + b"\r\n--" + b.encode() + b'\r\nContent-Disposition: form-data; '
        b'name="response_format"\r\n\r\ntext\r\n--' + b.encode() + b"--\r\n")
req = urllib.request.Request("http://127.0.0.1:%s/inference" % port, body,
                             {"Content-Type": "multipart/form-data; boundary=" + b})
got = urllib.request.urlopen(req, timeout=120).read().decode()
print("server --compute-type int8:", got, end="")
# The CLI prints "[t0 --> t1]  text" lines; the server's text format is the segments' text lines.
texts = "".join(line.split("]  ", 1)[1] + "\n" for line in want.splitlines() if "]  " in line)
sys.exit(0 if got == texts else 1)
PY
echo "PASS"
