"""Writes a quantized CTranslate2 Whisper folder from a float16 one with CTranslate2's own code:
a WhisperSpec filled from model.bin's variables (and aliases), config.json's fields and the
vocabulary, then ModelSpec.optimize(quantization) and save, as ct2-transformers-converter
--quantization does. For test_ct2_folder.py (an int8 folder, whose weights
WhisperModel dequantizes).

    python3 python/tests/ct2_quantized_folder.py SRC_DIR DST_DIR int8
"""
import json, os, re, shutil, struct, sys
import numpy as np
import ctranslate2
from ctranslate2.specs import whisper_spec, model_spec

src, dst, quant = sys.argv[1], sys.argv[2], sys.argv[3]
b = open(os.path.join(src, "model.bin"), "rb").read()
o = 0
def u32():
    global o; v = struct.unpack_from("<I", b, o)[0]; o += 4; return v
def s():
    global o; n = struct.unpack_from("<H", b, o)[0]; o += 2; v = b[o:o + n - 1].decode(); o += n; return v
ver = u32(); spec_name = s(); rev = u32(); n = u32()
DT = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
vars_ = {}
for _ in range(n):
    name = s(); r = b[o]; o += 1; dims = struct.unpack_from("<%dI" % r, b, o); o += 4 * r; dt = b[o]; o += 1; nb = u32()
    vars_[name] = np.frombuffer(b[o:o + nb], dtype=DT[dt]).reshape(dims).copy(); o += nb
na = u32(); aliases = {}
for _ in range(na):
    a = s(); t = s(); aliases[a] = t
enc_layers = len({k.split("/")[1] for k in vars_ if re.match(r"encoder/layer_\d+/", k)})
dec_layers = len({k.split("/")[1] for k in vars_ if re.match(r"decoder/layer_\d+/", k)})
spec = whisper_spec.WhisperSpec(enc_layers, int(vars_["encoder/num_heads"]), dec_layers, int(vars_["decoder/num_heads"]))
def setvar(name, value):
    obj = spec
    parts = name.split("/")
    for p in parts[:-1]:
        m = re.fullmatch(r"(.*)_(\d+)", p)
        if m and hasattr(obj, m.group(1)) and isinstance(getattr(obj, m.group(1)), list):
            obj = getattr(obj, m.group(1))[int(m.group(2))]
        else:
            obj = getattr(obj, p)
    setattr(obj, parts[-1], value)
for k, v in vars_.items():
    setvar(k, v)
for a, t in aliases.items():
    setvar(a, vars_[t])
cfg = json.load(open(os.path.join(src, "config.json")))
spec.config.suppress_ids = cfg["suppress_ids"]; spec.config.suppress_ids_begin = cfg["suppress_ids_begin"]
spec.config.lang_ids = cfg["lang_ids"]; spec.config.alignment_heads = cfg["alignment_heads"]
voc = os.path.join(src, "vocabulary.json") if os.path.exists(os.path.join(src, "vocabulary.json")) else os.path.join(src, "vocabulary.txt")
if voc.endswith(".json"):
    tokens = json.load(open(voc))
else:
    tokens = [l.rstrip("\n") for l in open(voc, encoding="utf-8")]
spec.register_vocabulary(tokens)
spec.validate()
spec.optimize(quantization=quant)
os.makedirs(dst, exist_ok=True)
spec.save(dst)
for f in ("tokenizer.json",):
    if os.path.exists(os.path.join(src, f)): shutil.copy(os.path.join(src, f), dst)
print(sorted(os.listdir(dst)))
