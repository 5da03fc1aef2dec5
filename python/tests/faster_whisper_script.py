"""A transcription script as faster-whisper's README writes it; only the import line differs.

    python faster_whisper_script.py MODEL AUDIO
prints the language line, then "[start -> end] text" per segment.
"""
import sys

# from faster_whisper import WhisperModel
from ggml_whisper import WhisperModel

model_size = sys.argv[1]

# Run on CPU with INT8
model = WhisperModel(model_size, device="cpu", compute_type="int8")

segments, info = model.transcribe(sys.argv[2], beam_size=5)

print("Detected language '%s' with probability %f" % (info.language, info.language_probability))

for segment in segments:
    print("[%.2fs -> %.2fs] %s" % (segment.start, segment.end, segment.text))
