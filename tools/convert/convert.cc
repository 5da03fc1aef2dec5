#include "tools/convert/convert.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/convert/ct2_model.h"
#include "tools/convert/status_macros.h"
#include "tools/convert/whisper_ct2.h"

namespace ggml_whisper::convert {

absl::StatusOr<ConvertSummary> ConvertCt2WhisperToGgml(const ConvertOptions& options) {
  CONVERT_ASSIGN_OR_RETURN(const Ct2Model model,
                           Ct2Model::ReadFile(options.model_dir + "/model.bin"));
  const int32_t ftype = options.weight_type == GgmlFileType::kF16 ? 1 : 0;
  CONVERT_ASSIGN_OR_RETURN(const WhisperHparams hparams, WhisperHparamsFromCt2(model, ftype));

  CONVERT_ASSIGN_OR_RETURN(const std::vector<std::string> tokens,
                           ReadCt2Vocabulary(options.model_dir));
  absl::StatusOr<std::vector<std::string>> vocab =
      GgmlVocabFromTokens(tokens, options.n_vocab_stored);
  if (!vocab.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.model_dir, " vocabulary: ", vocab.status().message()));
  }
  CONVERT_ASSIGN_OR_RETURN(const MelFilters mel,
                           MelFiltersFromNpz(options.mel_filters, hparams.n_mels));
  CONVERT_ASSIGN_OR_RETURN(const std::vector<GgmlTensorPlan> plans,
                           PlanWhisperTensors(model, hparams, options.weight_type));

  CONVERT_ASSIGN_OR_RETURN(GgmlModelWriter writer,
                           GgmlModelWriter::Create(options.out, hparams, mel, *vocab));
  for (const GgmlTensorPlan& plan : plans) {
    CONVERT_ASSIGN_OR_RETURN(const std::vector<uint8_t> data, MaterializeTensor(plan));
    CONVERT_RETURN_IF_ERROR(
        writer.AddTensor(plan.name, plan.type, plan.ne, data.data(), data.size()));
  }
  ConvertSummary summary;
  summary.hparams = hparams;
  summary.n_tensors = writer.n_tensors();
  summary.header_bytes = writer.header_bytes();
  summary.tensor_data_bytes = writer.tensor_data_bytes();
  summary.file_bytes = writer.bytes_written();
  CONVERT_RETURN_IF_ERROR(writer.Finish());
  return summary;
}

}  // namespace ggml_whisper::convert
