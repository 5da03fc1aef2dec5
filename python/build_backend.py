"""PEP 517 build backend for `pip install ./python`: builds //python:ggml_whisper/_core.so with
Bazel, for the Python running pip (its headers, through $PYTHON_BIN_PATH and deps.bzl's
python_headers), and packs it with ggml_whisper/__init__.py, batched.py, _options.py and _checks.py into a wheel (PEP 427).

Env: BAZEL (default "bazel"). The wheel links the Debian shared libraries the runtime uses
(libsndfile, libsamplerate, Abseil, Highway, ...), so it is for machines set up by tools/setup.sh.
"""
import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import zipfile

NAME = "ggml_whisper"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = "//python:ggml_whisper/_core.so"


def _tag():
    py = "cp%d%d" % sys.version_info[:2]
    abi = py + (getattr(sys, "abiflags", "") or "")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (py, abi, plat)


def _bazel_build():
    bazel = os.environ.get("BAZEL", "bazel")
    env = dict(os.environ, PYTHON_BIN_PATH=sys.executable)
    subprocess.run([bazel, "build", TARGET], cwd=ROOT, env=env, check=True, stdout=sys.stderr)
    bin_dir = subprocess.run([bazel, "info", "bazel-bin"], cwd=ROOT, env=env, check=True, capture_output=True,
                             text=True).stdout.strip()
    return os.path.join(bin_dir, "python", "ggml_whisper", "_core.so")


def _metadata():
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: " + NAME,
        "Version: " + VERSION,
        "Summary: Whisper speech recognition on the ggml_whisper runtime, with faster-whisper's API",
        "Requires-Python: >=3.9",
        "Requires-Dist: numpy",
        "",
    ])


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = "%s-%s.dist-info" % (NAME, VERSION)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w") as f:
        f.write(_metadata())
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    core = _bazel_build()
    tag = _tag()
    dist_info = "%s-%s.dist-info" % (NAME, VERSION)
    files = {
        NAME + "/__init__.py": open(os.path.join(HERE, NAME, "__init__.py"), "rb").read(),
        NAME + "/batched.py": open(os.path.join(HERE, NAME, "batched.py"), "rb").read(),
        NAME + "/_options.py": open(os.path.join(HERE, NAME, "_options.py"), "rb").read(),
        NAME + "/_checks.py": open(os.path.join(HERE, NAME, "_checks.py"), "rb").read(),
        NAME + "/_core.so": open(core, "rb").read(),
        dist_info + "/METADATA": _metadata().encode(),
        dist_info + "/WHEEL": ("Wheel-Version: 1.0\nGenerator: ggml_whisper build_backend\n"
                               "Root-Is-Purelib: false\nTag: %s\n" % tag).encode(),
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append(dist_info + "/RECORD,,")
    files[dist_info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return wheel
