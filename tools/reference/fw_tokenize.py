#!/usr/bin/env python3
"""faster-whisper 1.2.1's tokenization of prompt text (issue #37): hf_tokenizer.encode(text,
add_special_tokens=False).ids, the call behind its initial_prompt, prefix and hotwords
(transcribe.py: tokenizer.encode(" " + text.strip())), with the tokenizer.json of
models/faster-whisper-tiny.en and -base, for texts in several scripts: GPT-2's pre-tokenizer
pattern over Unicode letters, numbers and spaces, then byte-pair merges. whisper.cpp's
whisper_tokenize differs (ASCII classes, greedy longest match): on the AISHELL prompt below, 标
is 162 + 3921 here and 8987 + 229 there.

Usage (from the repo root; `pip install faster-whisper==1.2.1`, tools/get_model.sh and
tools/get_model.sh base):
  python3 tools/reference/fw_tokenize.py [--out testdata/fw_tokenize.json]
"""

import argparse
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TEXTS = [
    " 以下是普通话的句子，使用标点符号。",  # tools/reference/fw_punctuations.py's prompt, as transcribe() encodes it
    "以下是普通话的句子，使用标点符号。",
    " And so my fellow Americans, ask not what your country can do for you.",
    " I'm sure they'll say we've done it; don't they'd? IT'S NOT 'quoted' O'Neil",
    " Numbers: 3.14159, 1,000,000 and 2026-12-07 at 06:00; ٣٤٥ and ४२ and Ⅻ and ½.",
    "  two spaces,\tand a tab\n\nnew lines \n end   ",
    " Die Rettung der Software – Größe, Übung, Straße; naïve café.",
    " Привет, как дела? Ελληνικά! שלום עולם، مرحبا بالعالم",
    " 日本語のテキスト、カタカナとひらがな。한국어 문장입니다!",
    " emoji 😀👍🏽 and symbols ♩♪♫ ★ →",
    " ideographic\u3000space, no-break\u00a0space and\u2003em space",
    "hello" * 40,
    " " + "甚至出现交易几乎停滞的情况" * 3,
    " mixed中文and English混合text123数字",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "testdata", "fw_tokenize.json"))
    args = ap.parse_args()
    try:
        import faster_whisper
        import tokenizers
    except ImportError as e:
        sys.exit(f"fw_tokenize: {e}: run `pip install faster-whisper==1.2.1` (PyPI)")
    out = {"source": "tools/reference/fw_tokenize.py", "faster_whisper_version": faster_whisper.__version__,
           "tokenizers_version": tokenizers.__version__, "models": {}}
    for name in ("tiny.en", "base"):
        path = os.path.join(REPO_ROOT, "models", "faster-whisper-" + name, "tokenizer.json")
        if not os.path.isfile(path):
            sys.exit(f"fw_tokenize: no {path}: run tools/get_model.sh {name}")
        tok = tokenizers.Tokenizer.from_file(path)  # faster-whisper's hf_tokenizer
        out["models"][name] = [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids} for t in TEXTS]
        print(name, [len(c["ids"]) for c in out["models"][name]])
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
