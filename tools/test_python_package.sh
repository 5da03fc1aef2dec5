#!/usr/bin/env bash
# Installs the Python package as a user would (`pip install ./python` into a fresh virtual
# environment that sees the system's NumPy), then runs python/tests/faster_whisper_script.py, a
# faster-whisper README script with only its import changed, on jfk.wav; checks what it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check ./python
cd "$venv"  # not the checkout: the installed package must be the one imported
out=$("$venv/bin/python" "$root/python/tests/faster_whisper_script.py" "$root/models/ggml-tiny.en.bin" \
  "${GGML_WHISPER_SHARED:-$root/../shared}/data/jfk.wav")
echo "$out"
expected="Detected language 'en' with probability 1.000000
[0.00s -> 8.00s]  And so, my fellow Americans ask not what your country can do for you
[8.00s -> 11.00s]  ask what you can do for your country."
if [[ "$out" != "$expected" ]]; then
  echo "test_python_package: FAILED: expected (faster-whisper's segments):" >&2
  echo "$expected" >&2
  exit 1
fi
"$venv/bin/python" -c "import ggml_whisper, sys; assert ggml_whisper.__file__.startswith('$venv'), ggml_whisper.__file__"
echo "test_python_package: OK (pip install ./python, faster-whisper script)"
