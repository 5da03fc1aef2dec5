"""Starts //whisper:server on a free loopback port and talks to it with the standard library only.

Used by server_test.py and tools/bench/bench_server.py. The server is started with --port 0 and
the port is read from its "whisper server listening at http://HOST:PORT" line.
"""
import http.client
import os
import re
import signal
import subprocess
import threading
import time
import uuid


class Server:
    """A running server process; stop() sends SIGTERM and waits for the exit code."""

    def __init__(self, binary, args, timeout_s=60):
        self.proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0"] + list(args),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr_lines = []
        self.port = None
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"listening at http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.kill()
            _, err = self.proc.communicate()
            raise RuntimeError("server did not start: %s" % err[-2000:])
        # Drain stderr so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def rss_kib(self):
        """Resident set size of the server process (VmRSS of /proc/PID/status), KiB."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def stop(self, timeout_s=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("server did not stop within %d s of SIGTERM" % timeout_s)
        finally:
            self._drain.join(timeout=5)
            self.proc.stdout.close()
            self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def multipart(fields, files):
    """multipart/form-data body (RFC 7578) for fields [(name, value)] and files [(name, filename, bytes)]."""
    boundary = "----ggmlwhisper" + uuid.uuid4().hex
    parts = []
    for name, value in fields:  # value: str (sent as UTF-8) or bytes (sent as they are)
        data = value if isinstance(value, bytes) else str(value).encode()
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n"
                      % (boundary, name)).encode() + data + b"\r\n")
    for name, filename, data in files:
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                      "Content-Type: application/octet-stream\r\n\r\n" % (boundary, name, filename)).encode()
                     + data + b"\r\n")
    parts.append(("--%s--\r\n" % boundary).encode())
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


def post(port, path, fields=(), files=(), timeout_s=300, body=None, content_type=None):
    """POST a form; returns (status, content_type, body bytes). Raises on a transport error."""
    if body is None:
        body, content_type = multipart(fields, files)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": content_type})
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type"), r.read()
    finally:
        conn.close()


def get(port, path, timeout_s=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type"), r.read()
    finally:
        conn.close()


def repo_paths(here):
    """(repo root, shared dir, models dir) as the tests find them (testdata/paths.h's rules)."""
    link = os.path.join(here, "..", "..", "testdata", "README.md")
    if os.path.exists(link):
        root = os.path.dirname(os.path.dirname(os.path.realpath(link)))
    else:
        root = os.path.dirname(os.path.dirname(here))
    shared = os.environ.get("GGML_WHISPER_SHARED") or os.path.join(root, "..", "shared")
    models = os.environ.get("GGML_WHISPER_MODELS") or os.path.join(root, "models")
    return root, shared, models
