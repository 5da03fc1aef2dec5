#!/usr/bin/env python3
"""Word error rate of transcripts against a reference text.

Usage: python3 tools/compare/wer.py REFERENCE.txt HYPOTHESIS.txt [HYPOTHESIS.txt ...]
Prints, per hypothesis, the word error rate (substitutions + deletions + insertions over the
reference's words, by word-level Levenshtein distance) and both word counts.

Normalization (both sides): bracketed tags such as [BLANK_AUDIO] dropped, lower case, hyphens as
spaces, every character other than a-z, 0-9 and the apostrophe dropped, apostrophes at word ends
stripped, and "one", "two", "three" written as digits (the sonnets' numbers as the reader says
them). testdata/long_speech_text.txt is the reference for ../shared/data/long_speech.flac (see
testdata/README.md); tools/bench/README.md gives the figures measured with it.
"""
import re
import sys

NUMBERS = {"one": "1", "two": "2", "three": "3"}


def normalize(text):
    text = re.sub(r"\[[A-Z_ ]+\]", " ", text)
    text = text.lower().replace("-", " ")
    text = re.sub(r"[^a-z0-9' ]", " ", text)
    words = (w.strip("'") for w in text.split())
    return [NUMBERS.get(w, w) for w in words if w]


def word_errors(ref, hyp):
    """Levenshtein distance between two word lists (one row of the table at a time)."""
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        diag, row[0] = row[0], i
        for j in range(1, len(hyp) + 1):
            cur = min(row[j] + 1, row[j - 1] + 1, diag + (ref[i - 1] != hyp[j - 1]))
            diag, row[j] = row[j], cur
    return row[len(hyp)]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    with open(argv[1], encoding="utf-8") as f:
        ref = normalize(f.read())
    if not ref:
        sys.exit("wer.py: %s has no words" % argv[1])
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            hyp = normalize(f.read())
        errors = word_errors(ref, hyp)
        rate = 100.0 * errors / len(ref)
        print("%6.2f%%  %d errors  ref %d words  hyp %d words  %s" % (rate, errors, len(ref), len(hyp), path))


if __name__ == "__main__":
    main(sys.argv)
