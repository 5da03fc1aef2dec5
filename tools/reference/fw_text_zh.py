#!/usr/bin/env python3
"""Reference for Chinese text in every output path: faster-whisper 1.2.1's transcribe() of the
AISHELL clip with Whisper base (models/faster-whisper-base, float32), language detected, with
  - "beam5": its defaults (beam 5, best_of 5, temperature fallback), as the CLI's and the Python
    module's defaults;
  - "greedy": beam_size=1, best_of=2 (the server's defaults, whisper-server's -bs 1 -bo 2).
Each decode keeps its segments (start, end, text, token ids) and, for every segment, its text
tokens (ids below <|endoftext|>) grouped as whisper.cpp 1.8.5's `whisper-cli -ojf` groups them:
a token whose bytes end inside a UTF-8 character is merged with the following ones until the
character is whole (examples/cli/cli.cpp, utf8_trailing_bytes_needed; whisper.cpp issue #1798).
The token bytes are the tokenizer's (tokenizer.json's byte-level BPE strings mapped back through
GPT-2's bytes_to_unicode table), not ours.
Writes testdata/reference/base_zh_text.json (read by whisper/e2e/base_model_test,
apps/server/server_base_test.py and python/tests/test_multilingual.py).
Usage: python3 tools/reference/fw_text_zh.py   (needs pip faster-whisper==1.2.1; tools/get_model.sh base)
"""
import json
import os

from faster_whisper import WhisperModel

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(os.environ.get("GGML_WHISPER_SHARED", os.path.join(REPO, "..", "shared")), "data")
CLIP = "zh_aishell_BAC009S0764W0121.wav"
DECODES = {"beam5": {}, "greedy": {"beam_size": 1, "best_of": 2}}


def byte_decoder():
    """GPT-2's bytes_to_unicode table, inverted: BPE string character -> byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def trailing_bytes_needed(s):
    """Continuation bytes still missing from the last UTF-8 character of bytes `s` (0 if whole or
    malformed), as whisper.cpp 1.8.5's utf8_trailing_bytes_needed."""
    i = len(s) - 1
    while i >= 0 and s[i] & 0xC0 == 0x80:
        i -= 1
    if i < 0:
        return 0
    c = s[i]
    expected = 1 if c < 0x80 else 2 if c & 0xE0 == 0xC0 else 3 if c & 0xF0 == 0xE0 else 4 if c & 0xF8 == 0xF0 else 0
    if expected == 0:
        return 0
    return max(0, expected - (len(s) - i))


def main():
    model = WhisperModel(os.path.join(REPO, "models", "faster-whisper-base"), device="cpu",
                         compute_type="float32", cpu_threads=2)
    hf = model.hf_tokenizer
    eot = hf.token_to_id("<|endoftext|>")
    to_byte = byte_decoder()

    def token_bytes(i):
        return bytes(to_byte[ch] for ch in hf.id_to_token(i))

    out = {"source": "tools/reference/fw_text_zh.py: faster-whisper 1.2.1 on models/faster-whisper-base, float32, "
                     "language detected", "clip": CLIP, "decodes": {}}
    for name, options in DECODES.items():
        segments, info = model.transcribe(os.path.join(DATA, CLIP), **options)
        segs = []
        for s in segments:
            text_ids = [t for t in s.tokens if t < eot]
            pieces = []
            k = 0
            while k < len(text_ids):
                ids, b = [text_ids[k]], token_bytes(text_ids[k])
                k += 1
                while k < len(text_ids) and trailing_bytes_needed(b) > 0:
                    ids.append(text_ids[k])
                    b += token_bytes(text_ids[k])
                    k += 1
                pieces.append({"text": b.decode("utf-8"), "ids": ids})
            segs.append({"start": s.start, "end": s.end, "text": s.text, "tokens": [int(t) for t in s.tokens],
                         "ojf_pieces": pieces})
        out["decodes"][name] = {"options": options, "language": info.language,
                                "text": "".join(s["text"] for s in segs), "segments": segs}
        print(name, info.language, repr(out["decodes"][name]["text"]),
              sum(len(p["ids"]) > 1 for s in segs for p in s["ojf_pieces"]), "merged pieces")
    dst = os.path.join(REPO, "testdata", "reference", "base_zh_text.json")
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", dst)


if __name__ == "__main__":
    main()
