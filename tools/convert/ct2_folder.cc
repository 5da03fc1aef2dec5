#include "tools/convert/ct2_folder.h"

#include <math.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/convert/ct2_model.h"
#include "tools/convert/file_util.h"
#include "tools/convert/gpt2_vocab.h"
#include "tools/convert/status_macros.h"
#include "tools/convert/whisper_ct2.h"

namespace ggml_whisper::convert {
namespace {

using json = nlohmann::json;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The JSON document in `path`, or NotFound / InvalidArgument naming the file (and nlohmann's
// byte position for a syntax error).
absl::StatusOr<json> ReadJson(const std::string& path) {
  CONVERT_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ReadFileBytes(path));
  json doc = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid JSON (", bytes.size(), " bytes), expected a JSON object"));
  }
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the document is a JSON ", doc.type_name(), ", expected an object"));
  }
  return doc;
}

// `value` (field `field` of `path`) as a list of token ids in [0, n_vocab).
absl::Status CheckIdList(const std::string& path, const std::string& field, const json& value,
                         int32_t n_vocab) {
  if (!value.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", field, " is a JSON ",
                                                   value.type_name(), ", expected a list of token ids"));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const json& id = value[i];
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n_vocab) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", field, "[", i, "] is ", id.dump(),
                                                     ", expected a token id in 0..", n_vocab - 1,
                                                     " (model.bin has ", n_vocab, " tokens)"));
    }
  }
  return absl::OkStatus();
}

// config.json's rules (see Ct2FolderToGgmlImage).
absl::Status CheckConfig(const std::string& path, const WhisperHparams& h) {
  CONVERT_ASSIGN_OR_RETURN(const json doc, ReadJson(path));
  for (const char* field : {"suppress_ids", "suppress_ids_begin", "lang_ids"}) {
    if (doc.contains(field)) CONVERT_RETURN_IF_ERROR(CheckIdList(path, field, doc[field], h.n_vocab));
  }
  if (!doc.contains("alignment_heads")) return absl::OkStatus();
  const json& heads = doc["alignment_heads"];
  if (!heads.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": alignment_heads is a JSON ", heads.type_name(),
                                                   ", expected a list of [layer, head] pairs"));
  }
  for (size_t i = 0; i < heads.size(); ++i) {
    const json& p = heads[i];
    const bool ok = p.is_array() && p.size() == 2 && p[0].is_number_integer() && p[1].is_number_integer() &&
                    p[0].get<int64_t>() >= 0 && p[0].get<int64_t>() < h.n_text_layer &&
                    p[1].get<int64_t>() >= 0 && p[1].get<int64_t>() < h.n_text_head;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": alignment_heads[", i, "] is ", p.dump(), ", expected [layer, head] with layer in 0..",
          h.n_text_layer - 1, " and head in 0..", h.n_text_head - 1, " (model.bin's decoder)"));
    }
  }
  return absl::OkStatus();
}

// preprocessor_config.json's rules: the front end this runtime computes.
absl::Status CheckPreprocessorConfig(const std::string& path, const WhisperHparams& h) {
  CONVERT_ASSIGN_OR_RETURN(const json doc, ReadJson(path));
  const std::pair<const char*, int64_t> expected[] = {{"feature_size", h.n_mels},
                                                      {"sampling_rate", 16000},
                                                      {"n_fft", 400},
                                                      {"hop_length", 160},
                                                      {"chunk_length", 30}};
  for (const auto& [field, want] : expected) {
    if (!doc.contains(field)) continue;
    const json& v = doc[field];
    if (!v.is_number_integer() || v.get<int64_t>() != want) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", field, " is ", v.dump(), ", expected ", want,
                       std::string(field) == "feature_size" ? " (n_mels of model.bin's encoder/conv1/weight)"
                                                            : " (Whisper's front end)"));
    }
  }
  return absl::OkStatus();
}

// The vocabulary (at least n_vocab tokens) as the image stores it: the first 50257 tokens' bytes.
absl::StatusOr<std::vector<std::string>> FolderVocab(const std::string& dir, int32_t n_vocab) {
  CONVERT_ASSIGN_OR_RETURN(const std::vector<std::string> tokens, ReadCt2Vocabulary(dir));
  const std::string file = dir + (Exists(dir + "/vocabulary.json") ? "/vocabulary.json" : "/vocabulary.txt");
  if (tokens.size() != static_cast<size_t>(n_vocab)) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": ", tokens.size(), " tokens, expected ", n_vocab,
                     " (the rows of decoder/embeddings/weight in model.bin)"));
  }
  absl::StatusOr<std::vector<std::string>> vocab = GgmlVocabFromTokens(tokens, kWhisperFileVocabSize);
  if (!vocab.ok()) return absl::InvalidArgumentError(absl::StrCat(file, ": ", vocab.status().message()));
  return vocab;
}

void Append(std::vector<uint8_t>* image, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  image->insert(image->end(), p, p + n);
}

}  // namespace

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

MelFilters FasterWhisperMelFilters(int32_t n_mels, int32_t sampling_rate, int32_t n_fft) {
  // The float64 steps of get_mel_filters, in its order (numpy's linspace: i * step + start;
  // rfftfreq: i * (1 / (n * d)) with d = 1 / sr).
  const int n_bins = n_fft / 2 + 1;
  const double max_mel = 45.245640471924965, f_sp = 200.0 / 3, min_log_hz = 1000.0;
  const double min_log_mel = min_log_hz / f_sp, logstep = log(6.4) / 27.0;
  const double mel_step = max_mel / (n_mels + 1);
  std::vector<double> freqs(n_mels + 2);
  for (int i = 0; i < n_mels + 2; ++i) {
    const double mel = i == n_mels + 1 ? max_mel : i * mel_step;
    freqs[i] = mel >= min_log_mel ? min_log_hz * exp(logstep * (mel - min_log_mel)) : f_sp * mel;
  }
  const double bin_hz = 1.0 / (n_fft * (1.0 / sampling_rate));
  MelFilters m;
  m.n_mel = n_mels;
  m.n_fft = n_bins;
  m.data.resize(static_cast<size_t>(n_mels) * n_bins);
  for (int i = 0; i < n_mels; ++i) {
    const double enorm = 2.0 / (freqs[i + 2] - freqs[i]);
    for (int j = 0; j < n_bins; ++j) {
      const double f = j * bin_hz;
      const double lower = -(freqs[i] - f) / (freqs[i + 1] - freqs[i]);
      const double upper = (freqs[i + 2] - f) / (freqs[i + 2] - freqs[i + 1]);
      m.data[static_cast<size_t>(i) * n_bins + j] =
          static_cast<float>(std::max(0.0, std::min(lower, upper)) * enorm);
    }
  }
  return m;
}

absl::StatusOr<std::vector<uint8_t>> Ct2FolderToGgmlImage(const std::string& dir) {
  if (!IsDirectory(dir)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no such directory, expected a CTranslate2 model folder"));
  }
  const std::string model_path = dir + "/model.bin";
  if (!Exists(model_path)) {
    return absl::NotFoundError(absl::StrCat(
        model_path, " does not exist: expected a CTranslate2 Whisper model folder (model.bin, config.json, "
        "vocabulary.json or vocabulary.txt) or a whisper.cpp ggml model file"));
  }
  CONVERT_ASSIGN_OR_RETURN(const Ct2Model model, Ct2Model::ReadFile(model_path));
  const Ct2Variable* embedding = model.Find("decoder/embeddings/weight");
  const bool f32 = embedding != nullptr && (embedding->dtype == Ct2DType::kFloat32 ||
                                            embedding->dtype == Ct2DType::kBFloat16);
  const GgmlFileType weight_type = f32 ? GgmlFileType::kF32 : GgmlFileType::kF16;
  CONVERT_ASSIGN_OR_RETURN(const WhisperHparams hparams, WhisperHparamsFromCt2(model, f32 ? 0 : 1));
  if (Exists(dir + "/config.json")) CONVERT_RETURN_IF_ERROR(CheckConfig(dir + "/config.json", hparams));
  if (Exists(dir + "/preprocessor_config.json")) {
    CONVERT_RETURN_IF_ERROR(CheckPreprocessorConfig(dir + "/preprocessor_config.json", hparams));
  }
  CONVERT_ASSIGN_OR_RETURN(const std::vector<std::string> vocab, FolderVocab(dir, hparams.n_vocab));
  CONVERT_ASSIGN_OR_RETURN(const std::vector<GgmlTensorPlan> plans,
                           PlanWhisperTensors(model, hparams, weight_type));
  CONVERT_ASSIGN_OR_RETURN(const std::string header,
                           SerializeGgmlHeader(hparams, FasterWhisperMelFilters(hparams.n_mels), vocab));
  size_t total = header.size();
  for (const GgmlTensorPlan& plan : plans) {
    size_t n = GgmlFileTypeSize(plan.type);
    for (int64_t d : plan.ne) n *= static_cast<size_t>(d);
    total += n + 12 + 4 * plan.ne.size() + plan.name.size();
  }
  std::vector<uint8_t> image;
  image.reserve(total);
  Append(&image, header.data(), header.size());
  for (const GgmlTensorPlan& plan : plans) {
    CONVERT_ASSIGN_OR_RETURN(const std::string record, SerializeTensorRecordHeader(plan.name, plan.type, plan.ne));
    absl::StatusOr<std::vector<uint8_t>> data = MaterializeTensor(plan);
    if (!data.ok()) {
      return absl::Status(data.status().code(), absl::StrCat(model_path, ": ", data.status().message()));
    }
    Append(&image, record.data(), record.size());
    Append(&image, data->data(), data->size());
  }
  return image;
}

}  // namespace ggml_whisper::convert
