#!/usr/bin/env python3
"""Converts the Silero VAD v6 ONNX model (faster-whisper's faster_whisper/assets/silero_vad_v6.onnx,
PyPI) into a ggml file in whisper.cpp's Silero layout (models/convert-silero-vad-to-ggml.py in
whisper.cpp 1.8.5), read by whisper/vad_model.h.

File layout (little-endian int32 unless noted):
  magic 0x67676d6c ("ggml"); model type: length, bytes ("silero-16k"); version major, minor, patch
  (6, 0, 0); window 512; context 64; n_encoder_layers 4; per layer: in channels, out channels,
  kernel (129/128/3, 128/64/3, 64/64/3, 64/128/3); LSTM input 128, hidden 128; final conv in 128,
  out 1; then each tensor: n_dims, name length, ftype (0 F32, 1 F16), ne[0 .. n_dims), name bytes,
  data (row-major, ne[0] fastest). Tensors (all F32 here; whisper.cpp's own files hold the
  convolution weights as F16):
    _model.stft.forward_basis_buffer    ne [256, 1, 258]  the STFT basis (conv kernel, 258 outputs:
                                                           129 real then 129 imaginary)
    _model.encoder.{i}.reparam_conv.weight / .bias       ne [3, in, out] / [out]
    _model.decoder.rnn.weight_ih / weight_hh             ne [128, 512]  (gates i, f, g, o: PyTorch's
    _model.decoder.rnn.bias_ih / bias_hh                 ne [512]        order; ONNX's is i, o, f, c)
    _model.decoder.decoder.2.weight / .bias              ne [128] / [1]

Usage: python3 tools/convert/convert_vad.py [--onnx PATH] [--out models/ggml-silero-v6.bin]
(needs `pip install onnx`; --onnx defaults to the file in the installed faster_whisper package).
"""
import argparse
import os
import struct

import numpy as np


def onnx_weights(path):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def iofc_to_ifgo(a):
    """ONNX LSTM gate blocks (i, o, f, c) along axis 0 -> PyTorch's (i, f, g=c, o)."""
    i, o, f, c = np.split(a, 4, axis=0)
    return np.concatenate([i, f, c, o], axis=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnx", default=None)
    repo_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--out", default=os.path.join(repo_root, "models", "ggml-silero-v6.bin"))
    args = ap.parse_args()
    path = args.onnx
    if path is None:
        import faster_whisper
        path = os.path.join(os.path.dirname(faster_whisper.__file__), "assets", "silero_vad_v6.onnx")
    w = onnx_weights(path)

    lstm_w = w["onnx::LSTM_209"][0]  # [512, 128]
    lstm_r = w["onnx::LSTM_210"][0]
    lstm_b = w["onnx::LSTM_211"][0]  # [1024]: input biases then recurrent ones
    tensors = [("_model.stft.forward_basis_buffer", w["encoder.feature_extractor.forward_basis_buffer"])]
    for i in range(4):
        tensors.append(("_model.encoder.%d.reparam_conv.weight" % i, w["encoder.conv_layers.%d.weight" % i]))
        tensors.append(("_model.encoder.%d.reparam_conv.bias" % i, w["encoder.conv_layers.%d.bias" % i]))
    tensors += [("_model.decoder.rnn.weight_ih", iofc_to_ifgo(lstm_w)),
                ("_model.decoder.rnn.weight_hh", iofc_to_ifgo(lstm_r)),
                ("_model.decoder.rnn.bias_ih", iofc_to_ifgo(lstm_b[:512])),
                ("_model.decoder.rnn.bias_hh", iofc_to_ifgo(lstm_b[512:])),
                ("_model.decoder.decoder.2.weight", w["decoder.conv1d.weight"].reshape(128)),
                ("_model.decoder.decoder.2.bias", w["decoder.conv1d.bias"].reshape(1))]

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        i32 = lambda *v: f.write(struct.pack("<%di" % len(v), *v))
        i32(0x67676D6C)
        name = b"silero-16k"
        i32(len(name))
        f.write(name)
        i32(6, 0, 0)       # version
        i32(512, 64, 4)    # window, context, encoder layers
        for cin, cout in ((129, 128), (128, 64), (64, 64), (64, 128)):
            i32(cin, cout, 3)
        i32(128, 128, 128, 1)  # LSTM input, hidden; final conv in, out
        for name, a in tensors:
            a = np.ascontiguousarray(a, dtype="<f4")
            ne = list(reversed(a.shape))  # ggml order: fastest dimension first
            key = name.encode()
            i32(len(ne), len(key), 0)
            i32(*ne)
            f.write(key)
            f.write(a.tobytes())
    os.replace(tmp, args.out)
    print("convert_vad: wrote %s (%d bytes) from %s" % (args.out, os.path.getsize(args.out), path))


if __name__ == "__main__":
    main()
