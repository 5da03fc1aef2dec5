#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets to testdata/fuzz/<target>/ (a few files each, every
one under 64 KiB). Deterministic: re-running it rewrites the same bytes. The seeds are committed,
so CI does not run this; run it again after changing a target's input layout.

Needs only the Python standard library and the system libsndfile (libsndfile1, installed with
libsndfile1-dev by tools/setup.sh), which it calls through ctypes to write the FLAC, OGG/Vorbis,
OGG/Opus, MP3 and AIFF cuts of jfk.wav. Inputs come from the shared data folder:
$GGML_WHISPER_SHARED/data, else ../shared/data beside the repository.

Usage: tools/fuzz/make_seeds.py [--shared DIR]
"""

import argparse
import ctypes
import ctypes.util
import os
import random
import struct
import sys
import tempfile
import wave

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "testdata", "fuzz")
MAX_SEED = 64 * 1024

# The audio fuzzer's first byte picks the file name (whisper/audio_fuzzer.cc kNames).
AUDIO_NAMES = ["x.wav", "x.flac", "x.ogg", "x.opus", "x.mp3", "x.aiff", "x.au", "x.snd", "x.raw",
               "x.vox", "x.gsm", "x"]


def audio_selector(ext):
    return bytes([AUDIO_NAMES.index("x." + ext)])


# ---- model files (whisper/model_file.h) ---------------------------------------------------------

GGML_MAGIC = 0x67676D6C
TINY_EN = [51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1]
# Small hparams (whisper/synthetic_model.h's defaults): the tensor records stay a few bytes.
SMALL = [51864, 16, 32, 2, 1, 12, 32, 2, 1, 80, 1]


def model_header(hparams, filters, tokens):
    out = struct.pack("<I", GGML_MAGIC) + struct.pack("<11i", *hparams)
    out += struct.pack("<ii", hparams[9], 201) + filters
    out += struct.pack("<i", len(tokens))
    for t in tokens:
        out += struct.pack("<I", len(t)) + t
    return out


def tensor_record(name, ttype, ne, data):
    name = name.encode()
    return struct.pack("<iii", len(ne), len(name), ttype) + struct.pack("<%di" % len(ne), *ne) + name + data


def edit(offset, data):
    """One edit of fuzz_model_image.h's ApplyFuzzEdits (empty data: truncate at offset)."""
    return struct.pack("<I", offset)[:3] + bytes([len(data)]) + data


def model_seeds(shared):
    with open(os.path.join(shared, "header-only-ggml-tiny.en.bin"), "rb") as f:
        real = f.read()
    n_filter_bytes = 80 * 201 * 4
    # Zero filters but a few real values (compress well in git; the parser only checks finiteness).
    filters = real[56:56 + 804] + b"\0" * (n_filter_bytes - 804)  # after magic, hparams, n_mel, n_fft
    tokens = [b"!", b"\"", b" the", b"\xe2\x80"]
    small = model_header(SMALL, filters, tokens)
    sa = SMALL[2]
    f32 = lambda n: struct.pack("<%df" % n, *[(i % 7) * 0.01 for i in range(n)])
    # The first records in file order are the encoder's; conv biases and ln_post are the small ones.
    records = [
        tensor_record("encoder.conv1.bias", 0, [1, sa], f32(sa)),
        tensor_record("encoder.conv2.bias", 0, [1, sa], f32(sa)),
        tensor_record("encoder.ln_post.weight", 0, [sa], f32(sa)),
        tensor_record("encoder.ln_post.bias", 0, [sa], f32(sa)),
    ]
    seeds = {
        # The start of the real tiny.en file: magic, hparams, n_mel, n_fft, a few filters.
        "tiny_en_prefix_1k": real[:1024],
        # Header of small hparams with 4 tokens and no tensors ("no tensors" error).
        "small_header_only": small,
        # The same with four complete tensor records (then "tensors missing").
        "small_four_tensors": small + b"".join(records),
        # A record cut inside its data.
        "small_truncated_tensor": small + records[0][:30],
        # A record of a matrix type (F16) with a bad shape, and an unknown name.
        "small_bad_records": small + tensor_record("encoder.conv1.bias", 1, [2, sa], b"\0" * 4 * sa)
        + tensor_record("decoder.nope", 0, [1], b"\0" * 4),
    }
    # Magic and hparams of the real file, cut inside the vocabulary count.
    seeds["tiny_en_hparams_only"] = real[:4 + 44 + 8]
    return seeds


# ---- audio (apps/common/audio.h) --------------------------------------------------------------------


class SF_INFO(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]


SF_FORMAT = {  # sndfile.h major | subtype
    "wav_pcm16": 0x010000 | 0x0002, "wav_float": 0x010000 | 0x0006, "wav_ulaw": 0x010000 | 0x0010,
    "wav_pcm24": 0x010000 | 0x0003, "wav_ima": 0x010000 | 0x0012, "wav_u8": 0x010000 | 0x0005,
    "aiff_pcm16": 0x020000 | 0x0002, "au_ulaw": 0x030000 | 0x0010,
    "flac": 0x170000 | 0x0002, "ogg_vorbis": 0x200000 | 0x0060, "ogg_opus": 0x200000 | 0x0064,
    "mp3": 0x230000 | 0x0082,
}


def sndfile():
    path = ctypes.util.find_library("sndfile")
    if path is None:
        sys.exit("make_seeds: libsndfile not found (apt-get install libsndfile1)")
    lib = ctypes.CDLL(path)
    lib.sf_open.restype = ctypes.c_void_p
    lib.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(SF_INFO)]
    lib.sf_writef_short.restype = ctypes.c_int64
    lib.sf_writef_short.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_short), ctypes.c_int64]
    lib.sf_close.argtypes = [ctypes.c_void_p]
    lib.sf_strerror.restype = ctypes.c_char_p
    lib.sf_strerror.argtypes = [ctypes.c_void_p]
    return lib


def encode(lib, fmt, rate, channels, frames):
    """Writes interleaved int16 `frames` (a list) with libsndfile, returns the file's bytes."""
    info = SF_INFO(0, rate, channels, SF_FORMAT[fmt], 0, 0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "seed").encode()
        sf = lib.sf_open(path, 0x20, ctypes.byref(info))  # SFM_WRITE
        if not sf:
            sys.exit("make_seeds: libsndfile cannot write %s: %s" % (fmt, lib.sf_strerror(None).decode()))
        # No PEAK chunk in float WAVs: it holds the time of writing (SFC_SET_ADD_PEAK_CHUNK).
        lib.sf_command(ctypes.c_void_p(sf), 0x1050, None, 0)
        buf = (ctypes.c_short * len(frames))(*frames)
        n = len(frames) // channels
        if lib.sf_writef_short(sf, buf, n) != n:
            sys.exit("make_seeds: short write for " + fmt)
        lib.sf_close(sf)
        with open(path, "rb") as f:
            data = f.read()
    return ogg_fixed_serial(data) if fmt.startswith("ogg") else data


def _ogg_crc(data):
    crc = 0
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else crc << 1) & 0xFFFFFFFF
    return crc


def ogg_fixed_serial(data, serial=0x5EED):
    """libsndfile picks a random OGG stream serial: set it to `serial` and redo each page's CRC."""
    out = bytearray(data)
    pos = 0
    while pos + 27 <= len(out) and out[pos:pos + 4] == b"OggS":
        n_segs = out[pos + 26]
        size = 27 + n_segs + sum(out[pos + 27:pos + 27 + n_segs])
        out[pos + 14:pos + 18] = struct.pack("<I", serial)
        out[pos + 22:pos + 26] = b"\0\0\0\0"
        out[pos + 22:pos + 26] = struct.pack("<I", _ogg_crc(out[pos:pos + size]))
        pos += size
    if pos != len(out):
        sys.exit("make_seeds: unexpected OGG page layout")
    return bytes(out)


def wav_bytes(rate, channels, sampwidth, data):
    import io
    b = io.BytesIO()
    with wave.open(b, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(sampwidth)
        w.setframerate(rate)
        w.writeframes(data)
    return b.getvalue()


def audio_seeds(shared):
    with wave.open(os.path.join(shared, "jfk.wav"), "rb") as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        pcm = w.readframes(w.getnframes())
    samples = list(struct.unpack("<%dh" % (len(pcm) // 2), pcm))
    cut = samples[16000:16000 + 4000]  # 0.25 s of speech from 1.0 s
    lib = sndfile()
    stereo = [s for s in cut[:2000] for _ in range(2)]
    seeds = {
        "wav_pcm16_16k_mono": audio_selector("wav") + wav_bytes(16000, 1, 2, struct.pack("<%dh" % len(cut), *cut)),
        "wav_pcm16_8k_stereo": audio_selector("wav") + encode(lib, "wav_pcm16", 8000, 2, stereo),
        "wav_float_44k": audio_selector("wav") + encode(lib, "wav_float", 44100, 1, cut[:2000]),
        "wav_ulaw_16k": audio_selector("wav") + encode(lib, "wav_ulaw", 16000, 1, cut),
        "wav_ima_adpcm_16k": audio_selector("wav") + encode(lib, "wav_ima", 16000, 1, cut),
        "wav_pcm24_22k": audio_selector("wav") + encode(lib, "wav_pcm24", 22050, 1, cut[:2000]),
        "aiff_pcm16_16k": audio_selector("aiff") + encode(lib, "aiff_pcm16", 16000, 1, cut[:2000]),
        "au_ulaw_8k": audio_selector("au") + encode(lib, "au_ulaw", 8000, 1, cut[:2000]),
        "flac_16k": audio_selector("flac") + encode(lib, "flac", 16000, 1, cut),
        "ogg_vorbis_16k": audio_selector("ogg") + encode(lib, "ogg_vorbis", 16000, 1, samples[16000:16000 + 8000]),
        "ogg_opus_16k": audio_selector("opus") + encode(lib, "ogg_opus", 16000, 1, cut),
        "mp3_16k": audio_selector("mp3") + encode(lib, "mp3", 16000, 1, samples[16000:16000 + 8000]),
        # Headerless 8-bit data named .au: libsndfile's raw u-law by extension.
        "raw_by_extension_au": audio_selector("au") + bytes((s >> 8) & 0xFF for s in cut[:1000]),
        # The first 3 KiB of the shared MP3 (ID3 tag and first frames).
    }
    with open(os.path.join(shared, "jfk.mp3"), "rb") as f:
        seeds["jfk_mp3_prefix"] = audio_selector("mp3") + f.read(3072)
    return seeds


# ---- CLI flags (apps/common/cli_params.h) -----------------------------------------------------------


def cli_seeds():
    argvs = {
        "basic": ["-m", "models/ggml-tiny.en.bin", "-f", "jfk.wav", "-otxt", "-osrt", "-ovtt"],
        "decoding": ["-t", "2", "-bs", "1", "-bo", "3", "-tp", "0.4", "-tpi", "0.1", "-et", "2.2", "-lpt", "-0.5",
                     "--decoding", "whisper.cpp", "-l", "auto", "--prompt", "hello there", "-mc", "0"],
        "offsets": ["-ot", "1000", "-d", "5000", "-on", "2", "-ml", "10", "-sow", "-of", "out", "a.wav", "b.wav"],
        "outputs": ["-oj", "-ojf", "-ocsv", "-olrc", "-owts", "-fp", "font.ttf", "-np", "-ps", "-pc", "-pp", "-nt"],
        "gpu_vad": ["-ng", "-fa", "-nfa", "-dev", "1", "-oved", "GPU", "--vad", "-vm", "vad.bin", "-vt", "0.4",
                    "-vspd", "200", "-vsd", "50", "-vmsd", "30", "-vp", "10", "-vo", "0.2", "--", "x.wav"],
        "misc": ["--version", "--list-languages", "-di", "-tdrz", "-sns", "--suppress-regex", "[0-9]",
                 "--grammar", "root ::= x", "--grammar-rule", "root", "--grammar-penalty", "50", "-dtw", "tiny.en",
                 "-ls", "--carry-initial-prompt", "-tr", "-dl", "-debug"],
        "help": ["-h"],
        "bad_values": ["-t", "12abc", "-bs", "-1", "-tp", "nan", "-ml"],
    }
    seeds = {name: b"\0".join(a.encode() for a in argv) for name, argv in argvs.items()}
    # A response file (the fuzzer writes it to a temporary file and passes "@FILE").
    seeds["response_file"] = b"@-m\nmodels/ggml-tiny.en.bin\r\n\n-f\njfk.wav\n-osrt\n"
    return seeds


# ---- GBNF grammars (apps/common/gbnf_parser.h) -------------------------------------------------------


def gbnf_seeds():
    return {k: v.encode() for k, v in {
        "moves": 'root ::= first step step? "."\nfirst ::= " go"\n'
                 'step ::= ", " ((unit | "king") " " "to "?)? [a-h] [1-8]\nunit ::= "rook" | "pawn"\n',
        "lists": '# a comment\nroot ::= item ("," item)* [.!]?\nitem ::= [a-zA-Z0-9-]+ | "\\x41\\u00e9\\t"\n',
        "classes": 'root ::= [^\\n"\\[\\]] ( "\u00e9\u65e5"\r\n | [\\x00-\\x1F] )+ other\r\nother ::= ""\r\n',
        "errors": 'root ::= ( "a" | b\nb = "x"\n',
        "left_recursive": 'root ::= opt root "x"\nopt ::= "y" |\n',
        "undefined": 'root ::= missing "x"\n',
    }.items()}


# ---- tokenizer text -------------------------------------------------------------------------------


def tokenizer_seeds():
    texts = {
        "jfk": "And so my fellow Americans, ask not what your country can do for you, ask what you can do "
               "for your country.",
        "contractions": "It's what they've said: we'll go, I'd say, you're right, I'm sure, don't STOP's 'S 'T",
        "numbers_punct": "In 1961 -- $100, 3.14159; (a) [b] {c} <|endoftext|> x@y.com #tag 50% ...!!!??",
        "whitespace": "  two  spaces\tand\ttabs\n\nnew lines \r\n  trailing   ",
        "unicode": "h\u00e9llo w\u00f6rld \u65e5\u672c\u8a9e \U0001f389 \u0391\u03b2\u03b3 na\u00efve caf\u00e9",
        "invalid_utf8": None,
    }
    seeds = {k: v.encode() for k, v in texts.items() if v is not None}
    seeds["invalid_utf8"] = b"ab\xff\xfe c\xc3 d\xe2\x82 \x80\x80 e\xf0\x9f\x8e"
    return seeds


# ---- writers (whisper/output_fuzzer.cc reads the bytes with FuzzedDataProvider) -------------------


def output_seeds():
    rng = random.Random(1)
    seeds = {}
    for i, n in enumerate([64, 256, 1024, 4096]):
        seeds["random_%d" % n] = bytes(rng.randrange(256) for _ in range(n))
    # Mostly text (segment texts, UTF-8 and quotes for CSV/JSON escaping), a few control bytes.
    seeds["text_heavy"] = (" And so, \"my\" fellow Americans \u00e9\u65e5 \x01\x7f\\n " * 20).encode()
    return seeds


# ---- main ---------------------------------------------------------------------------------------------


def server_seeds():
    """Raw HTTP requests to the server's routes: health, the two transcription APIs with a 0.2 s
    WAV (multipart, OpenAI's and whisper-server's fields), urlencoded, chunked, bad ones."""
    wav = wav_bytes(16000, 1, 2, struct.pack("<3200h", *([0, 800, 0, -800] * 800)))

    def multipart(path, fields, file_bytes=None, boundary="b0undary"):
        parts = []
        for k, v in fields:
            parts.append(b"--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                         % (boundary.encode(), k.encode(), v.encode()))
        if file_bytes is not None:
            parts.append(b"--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
                         b"Content-Type: audio/wav\r\n\r\n" % boundary.encode() + file_bytes + b"\r\n")
        body = b"".join(parts) + b"--%s--\r\n" % boundary.encode()
        head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=%s\r\n"
                "Content-Length: %d\r\n\r\n" % (path, boundary, len(body))).encode()
        return head + body

    form = b"response_format=text&temperature=0.2&language=en&beam_size=2"
    chunked = b"7\r\nmodel=x\r\n0\r\n\r\n"
    return {
        "health": b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        "home": b"GET / HTTP/1.0\r\n\r\n",
        "inference_json": multipart("/inference", [("response_format", "json")], wav),
        "inference_verbose": multipart("/inference", [("response_format", "verbose_json"), ("no_timestamps", "false"),
                                                      ("offset_t", "10"), ("max_len", "5")], wav),
        "openai_srt": multipart("/v1/audio/transcriptions", [("model", "whisper-1"), ("response_format", "srt"),
                                                              ("timestamp_granularities[]", "segment")], wav),
        "openai_translate": multipart("/v1/audio/translations", [("model", "whisper-1"), ("prompt", "Hello.")], wav),
        "no_file": multipart("/inference", [("temperature", "x")]),
        "urlencoded": (b"POST /inference HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                       b"Content-Length: %d\r\n\r\n" % len(form)) + form,
        # server_fuzzer's --models-dir holds m.bin (the synthetic model): a /load that succeeds,
        # and one that the folder rule refuses.
        "load_by_name": multipart("/load", [("model", "m.bin")]),
        "load_path": multipart("/load", [("model", "../m.bin")]),
        "chunked_load": (b"POST /load HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                         b"Content-Type: application/x-www-form-urlencoded\r\n\r\n") + chunked,
        "range_options": b"OPTIONS /inference HTTP/1.1\r\nRange: bytes=0-5,7-\r\n\r\n",
    }


def write(target, seeds):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    # Remove old seeds (not the regressions/ folder of crashers).
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            os.remove(p)
    for name, data in sorted(seeds.items()):
        if len(data) >= MAX_SEED:
            sys.exit("make_seeds: %s/%s is %d bytes (limit %d)" % (target, name, len(data), MAX_SEED))
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    print("make_seeds: %-20s %2d seeds, %6d bytes" % (target, len(seeds), sum(len(v) for v in seeds.values())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", help="the shared data folder (holds data/)")
    args = ap.parse_args()
    shared = args.shared or os.environ.get("GGML_WHISPER_SHARED") or os.path.join(REPO, "..", "shared")
    shared = os.path.join(shared, "data")
    if not os.path.isfile(os.path.join(shared, "jfk.wav")):
        sys.exit("make_seeds: %s/jfk.wav not found: set GGML_WHISPER_SHARED or pass --shared" % shared)

    # model_file_fuzzer and whisper_init_fuzzer: first byte < 0x80 = the rest is the file image;
    # >= 0x80 = the rest edits their valid synthetic base model (whisper/fuzz_model_image.h:
    # uint24 offset, uint8 length, bytes; length 0 truncates), F32 if bit 0 is set.
    models = model_seeds(shared)
    raw = {"raw_" + name: b"\0" + data for name, data in models.items()}
    edits = {
        "edit_none_f16": b"\x80",
        "edit_none_f32": b"\x81",
        "edit_n_audio_layer_2": b"\x80" + edit(20, struct.pack("<i", 2)),
        "edit_n_text_ctx_448": b"\x80" + edit(24, struct.pack("<i", 448)),
        "edit_ftype_q8_0": b"\x80" + edit(44, struct.pack("<i", 7)),
        "edit_truncate_70000": b"\x81" + edit(70000, b""),
        "edit_tensor_area": b"\x80" + edit(64500, b"\xff" * 16) + edit(200000, b"\x7f\x7f\x7f\x7f"),
    }
    write("model_file_fuzzer", dict(raw, **edits))
    write("whisper_init_fuzzer", dict(raw, **edits))
    # quantize_fuzzer: first byte b: target b % 5 (0 q4_0, 4 q8_0), a failing sink if (b / 5) & 1,
    # b >= 0x80 = edits of its 32-wide base model, F32 if (b / 10) & 1.
    q = {"raw_" + name + "_q4_0": b"\0" + data for name, data in models.items()}
    q.update({"raw_" + name + "_q8_0": b"\4" + data for name, data in models.items() if name.startswith("small")})
    q.update({
        "edit_none_f16_q4_0": bytes([140]),
        "edit_none_f16_q8_0": bytes([144]),
        "edit_none_f32_q4_0": bytes([130]),
        "edit_none_f32_q4_0_failing_sink": bytes([135]),
        "edit_n_text_layer_2_f16_q4_0": bytes([140]) + edit(36, struct.pack("<i", 2)),
        "edit_tensor_area_f16_q8_0": bytes([144]) + edit(64500, b"\xff" * 16) + edit(300000, b"\0\0\x80\x7f"),
    })
    write("quantize_fuzzer", q)
    write("audio_fuzzer", audio_seeds(shared))
    write("cli_params_fuzzer", cli_seeds())
    write("gbnf_parser_fuzzer", gbnf_seeds())
    write("tokenizer_fuzzer", tokenizer_seeds())
    write("output_fuzzer", output_seeds())
    write("server_fuzzer", server_seeds())


if __name__ == "__main__":
    main()
