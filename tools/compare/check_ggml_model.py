#!/usr/bin/env python3
"""Checks a converted ggml model against its CTranslate2 source, independently of the C++ code.

Parses both files with the Python standard library only (no numpy, no torch) and verifies:
  - the vocabulary: each of the first 50,257 tokens is the raw bytes its CTranslate2 token string
    spells in GPT-2's byte-level alphabet (as whisper.cpp's convert-pt-to-ggml.py writes them);
  - against whisper.cpp's header-only file of the same vocabulary: magic, hparams (when --header
    is the same model) and mel filters byte for byte; tokens identical except those whose raw
    bytes are not valid UTF-8 alone, which the old converter that wrote the shared files replaced
    (bytes.decode("utf-8", "replace")), counted;
  - every tensor record: name, ggml type, ne, and data equal to the CTranslate2 variable's rows
    (fused Q/K/V and K/V split by rows, key bias dropped, float16 -> float32 widening for the
    F32 tensors, float16 copied bit for bit for the F16 ones);
  - no bytes after the last record.
Prints one line per check and exits non-zero on the first mismatch.

Usage (from the repo root, after tools/get_model.sh):
  python3 tools/compare/check_ggml_model.py [--ggml models/ggml-tiny.en.bin]
      [--ct2_dir models/faster-whisper-tiny.en] [--header $SHARED/data/header-only-ggml-tiny.en.bin]
  python3 tools/compare/check_ggml_model.py --ggml models/ggml-base.bin --ct2_dir models/faster-whisper-base \
      --header $SHARED/data/header-only-ggml-tiny.bin   (tiny's vocabulary and filters are base's)
"""

import json

import argparse
import os
import struct
import sys


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shared_dir():
    """$GGML_WHISPER_SHARED, else ../shared beside the repository root (as testdata/paths.h)."""
    return os.environ.get("GGML_WHISPER_SHARED") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))


def read_ct2(path):
    """model.bin -> {name: (shape, dtype_id, bytes)}, aliases resolved."""
    b = open(path, "rb").read()
    o = 0

    def take(fmt):
        nonlocal o
        v = struct.unpack_from("<" + fmt, b, o)
        o += struct.calcsize("<" + fmt)
        return v

    def string():
        nonlocal o
        (n,) = take("H")
        s = b[o : o + n - 1].decode()
        o += n
        return s

    (version,) = take("I")
    assert version == 6, f"binary version {version}"
    spec = string()
    assert spec == "WhisperSpec", spec
    take("I")
    (n_vars,) = take("I")
    out = {}
    for _ in range(n_vars):
        name = string()
        (rank,) = take("B")
        shape = take(f"{rank}I") if rank else ()
        dtype, nbytes = take("BI")
        out[name] = (tuple(shape), dtype, b[o : o + nbytes])
        o += nbytes
    (n_alias,) = take("I")
    for _ in range(n_alias):
        alias, target = string(), string()
        out[alias] = out[target]
    assert o == len(b)
    return out


def read_header(b):
    """ggml file image -> (offset of the vocabulary count, [token bytes], offset after them)."""
    n_mel, n_fft = struct.unpack_from("<ii", b, 48)
    vocab_at = 56 + 4 * n_mel * n_fft
    (n,) = struct.unpack_from("<i", b, vocab_at)
    o, tokens = vocab_at + 4, []
    for _ in range(n):
        (length,) = struct.unpack_from("<i", b, o)
        tokens.append(b[o + 4 : o + 4 + length])
        o += 4 + length
    return vocab_at + 4, tokens, o


def gpt2_byte_decoder():
    """GPT-2's bytes_to_unicode (openai/gpt-2 src/encoder.py), inverted: code point -> byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def ct2_vocab_bytes(ct2_dir, n):
    """The raw bytes of the first n tokens of vocabulary.json (or vocabulary.txt)."""
    path = os.path.join(ct2_dir, "vocabulary.json")
    if os.path.exists(path):
        tokens = json.load(open(path, encoding="utf-8"))
    else:
        tokens = open(os.path.join(ct2_dir, "vocabulary.txt"), encoding="utf-8").read().split("\n")
    dec = gpt2_byte_decoder()
    return [bytes(dec[c] for c in t) for t in tokens[:n]]


def expected_tensors(ct2, n_enc, n_dec):
    """[(ggml name, ct2 name, part, parts)] in PyTorch state-dict order."""
    t = []

    def lin(name, src):
        t.extend([(name + ".weight", src + "/weight", 0, 1), (name + ".bias", src + "/bias", 0, 1)])

    def ln(name, src):
        t.extend([(name + ".weight", src + "/gamma", 0, 1), (name + ".bias", src + "/beta", 0, 1)])

    def self_attn(name, src):
        t.append((name + ".query.weight", src + "/linear_0/weight", 0, 3))
        t.append((name + ".query.bias", src + "/linear_0/bias", 0, 3))
        t.append((name + ".key.weight", src + "/linear_0/weight", 1, 3))
        t.append((name + ".value.weight", src + "/linear_0/weight", 2, 3))
        t.append((name + ".value.bias", src + "/linear_0/bias", 2, 3))
        lin(name + ".out", src + "/linear_1")

    def cross_attn(name, src):
        lin(name + ".query", src + "/linear_0")
        t.append((name + ".key.weight", src + "/linear_1/weight", 0, 2))
        t.append((name + ".value.weight", src + "/linear_1/weight", 1, 2))
        t.append((name + ".value.bias", src + "/linear_1/bias", 1, 2))
        lin(name + ".out", src + "/linear_2")

    def mlp(block, src):
        lin(block + ".mlp.0", src + "/ffn/linear_0")
        lin(block + ".mlp.2", src + "/ffn/linear_1")
        ln(block + ".mlp_ln", src + "/ffn/layer_norm")

    t.append(("encoder.positional_embedding", "encoder/position_encodings/encodings", 0, 1))
    for c in ("conv1", "conv2"):
        lin(f"encoder.{c}", f"encoder/{c}")
    for i in range(n_enc):
        self_attn(f"encoder.blocks.{i}.attn", f"encoder/layer_{i}/self_attention")
        ln(f"encoder.blocks.{i}.attn_ln", f"encoder/layer_{i}/self_attention/layer_norm")
        mlp(f"encoder.blocks.{i}", f"encoder/layer_{i}")
    ln("encoder.ln_post", "encoder/layer_norm")
    t.append(("decoder.positional_embedding", "decoder/position_encodings/encodings", 0, 1))
    t.append(("decoder.token_embedding.weight", "decoder/embeddings/weight", 0, 1))
    for i in range(n_dec):
        self_attn(f"decoder.blocks.{i}.attn", f"decoder/layer_{i}/self_attention")
        ln(f"decoder.blocks.{i}.attn_ln", f"decoder/layer_{i}/self_attention/layer_norm")
        cross_attn(f"decoder.blocks.{i}.cross_attn", f"decoder/layer_{i}/attention")
        ln(f"decoder.blocks.{i}.cross_attn_ln", f"decoder/layer_{i}/attention/layer_norm")
        mlp(f"decoder.blocks.{i}", f"decoder/layer_{i}")
    ln("decoder.ln", "decoder/layer_norm")
    return t


def check_header(g, h, header_path):
    """The ggml file's header against whisper.cpp's header-only file; (g vocabulary, h vocabulary,
    offset of g's first tensor record). Exits on a mismatch."""
    g_hdr, g_vocab, g_end = read_header(g)
    h_hdr, h_vocab, h_end = read_header(h)
    if h_end != len(h):
        sys.exit(f"FAIL {header_path}: {len(h) - h_end} bytes after the vocabulary")
    same_model = g[4:48] == h[4:48]
    if g[48:g_hdr] != h[48:h_hdr] or (same_model and g[:48] != h[:48]):
        sys.exit(f"FAIL header: hparams or mel filters differ from {header_path}")
    what = "magic, hparams" if same_model else "magic (hparams differ: another model size)"
    print(f"ok   header: {what}, mel filters and token count equal {os.path.basename(header_path)}")
    return g_vocab, h_vocab, g_end


def check_vocabulary(g_vocab, h_vocab, ct2_dir, header_path):
    """Each token the raw bytes of the CTranslate2 token; equal to the header-only file's except
    the tokens it stored replaced (not valid UTF-8 alone). Exits on a mismatch."""
    raw = ct2_vocab_bytes(ct2_dir, len(g_vocab))
    for i, (got, want) in enumerate(zip(g_vocab, raw)):
        if got != want:
            sys.exit(f"FAIL token {i}: {got!r}, expected the raw bytes {want!r}")
    print(f"ok   vocabulary: {len(g_vocab)} tokens are the raw bytes of {ct2_dir}'s tokens")
    replaced = 0
    for i, (got, old) in enumerate(zip(g_vocab, h_vocab)):
        if got == old:
            continue
        if old != got.decode("utf-8", "replace").encode("utf-8"):
            sys.exit(f"FAIL token {i}: {got!r}; the header-only file has {old!r}")
        replaced += 1
    print(f"ok   vocabulary: equal to {os.path.basename(header_path)} except {replaced} tokens that "
          "are not valid UTF-8 alone, which it stores replaced by U+FFFD")


def check_tensor(g, o, idx, entry, ct2):
    """The tensor record at offset o against plan entry `entry` (name, source, part, parts);
    (offset after it, F16 bytes, F32 bytes). Exits on a mismatch."""
    name, src, part, parts = entry
    n_dims, name_len, ttype = struct.unpack_from("<iii", g, o)
    o += 12
    ne = struct.unpack_from(f"<{n_dims}i", g, o)
    o += 4 * n_dims
    got_name = g[o : o + name_len].decode()
    o += name_len
    if got_name != name:
        sys.exit(f"FAIL tensor #{idx}: name {got_name!r}, expected {name!r}")
    shape, dtype, data = ct2[src]
    assert dtype == 4, f"{src}: dtype {dtype} (this check expects a float16 source)"
    rows = shape[0] // parts
    row_bytes = len(data) // shape[0]
    part_data = data[part * rows * row_bytes : (part + 1) * rows * row_bytes]
    torch_shape = (rows,) + tuple(shape[1:])
    if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
        torch_shape = (rows, 1)
    # convert-pt-to-ggml.py f16 mode: F32 (0) for < 2 dims, conv biases, positional
    # embeddings; F16 (1) otherwise.
    f32 = len(torch_shape) < 2 or "positional_embedding" in name or name.endswith("conv1.bias")
    f32 = f32 or name.endswith("conv2.bias")
    want_type = 0 if f32 else 1
    if ttype != want_type or tuple(reversed(ne)) != torch_shape:
        want_ne = tuple(reversed(torch_shape))
        sys.exit(f"FAIL {name}: type {ttype} ne {ne}, expected type {want_type} ne {want_ne}")
    n = len(part_data) // 2
    if ttype == 1:
        if g[o : o + 2 * n] != part_data:
            sys.exit(f"FAIL {name}: F16 data differs from {src}")
        return o + 2 * n, 2 * n, 0
    halves = struct.unpack(f"<{n}e", part_data)
    floats = struct.unpack_from(f"<{n}f", g, o)
    if halves != floats:
        sys.exit(f"FAIL {name}: F32 data differs from widened {src}")
    return o + 4 * n, 0, 4 * n


def check_tensors(g, g_end, ct2_dir):
    """Every tensor record from g_end on against the CTranslate2 variables, and no bytes after
    the last. Exits on a mismatch."""
    ct2 = read_ct2(os.path.join(ct2_dir, "model.bin"))
    def n_layers(prefix):
        suffix = "self_attention/linear_0/weight"
        return sum(1 for k in ct2 if k.startswith(prefix) and k.endswith(suffix))

    plan = expected_tensors(ct2, n_layers("encoder/layer_"), n_layers("decoder/layer_"))
    o = g_end
    f16_bytes = f32_bytes = 0
    for idx, entry in enumerate(plan):
        o, f16, f32 = check_tensor(g, o, idx, entry, ct2)
        f16_bytes += f16
        f32_bytes += f32
    if o != len(g):
        sys.exit(f"FAIL {len(g) - o} bytes after the last tensor record")
    print(f"ok   {len(plan)} tensors: names, types, ne and data match {ct2_dir}/model.bin")
    total = f16_bytes + f32_bytes
    print(f"ok   tensor data: {f16_bytes} B F16 + {f32_bytes} B F32 = {total} B; file {len(g)} B")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ggml", default="models/ggml-tiny.en.bin")
    ap.add_argument("--ct2_dir", default="models/faster-whisper-tiny.en")
    ap.add_argument(
        "--header", default=os.path.join(shared_dir(), "data", "header-only-ggml-tiny.en.bin")
    )
    args = ap.parse_args()

    g = open(args.ggml, "rb").read()
    h = open(args.header, "rb").read()
    g_vocab, h_vocab, g_end = check_header(g, h, args.header)
    check_vocabulary(g_vocab, h_vocab, args.ct2_dir, args.header)
    check_tensors(g, g_end, args.ct2_dir)


if __name__ == "__main__":
    main()
