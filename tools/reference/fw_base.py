"""What the faster-whisper references on Whisper base share (faster_whisper_base.py,
fw_multilingual.py): their command line, the CTranslate2 model they load and its file's hash.

The model is models/faster-whisper-base, the CTranslate2 directory that `tools/get_model.sh base`
converts to models/ggml-base.bin, run by faster-whisper 1.2.1 (PyPI) in float32 on the CPU.
"""
import argparse
import hashlib
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args(description, default_out):
    """--model_dir (default models/faster-whisper-base) and --out (default `default_out`, a path
    under the repository)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model_dir", default=os.path.join(REPO_ROOT, "models", "faster-whisper-base"))
    parser.add_argument("--out", default=os.path.join(REPO_ROOT, default_out))
    return parser.parse_args()


def load_model(script, model_dir):
    """(faster_whisper.WhisperModel on `model_dir` (float32, 2 CPU threads), its model.bin path).
    Exits, naming `script` and the command that fixes it, without faster-whisper or the model."""
    try:
        from faster_whisper import WhisperModel
    except ImportError as e:
        sys.exit(f"{script}: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    model_bin = os.path.join(model_dir, "model.bin")
    if not os.path.isfile(model_bin):
        sys.exit(f"{script}: no {model_bin}: run tools/get_model.sh base")
    return WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=2), model_bin


def sha256(path):
    """The file's SHA-256, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
