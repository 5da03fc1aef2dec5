#include "whisper/model_file.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/model_kind.h"

namespace whisper {
namespace {

constexpr int kNFftBins = 201;  // 1 + 400 / 2 power-spectrum bins (whisper.cpp L1576-1586)
// Longest token or tensor name accepted. Whisper's longest vocabulary entry is 128 bytes and its
// longest tensor name 36; the bounds only stop a corrupt length from driving a huge read.
constexpr uint32_t kMaxTokenBytes = 1 << 16;
constexpr int32_t kMaxNameBytes = 256;
// Most layers per stack accepted: 4x Whisper large's 32, so that hostile counts never size the
// table of expected tensors (n_audio_layer = 2^31 - 1 would ask for 32 billion entries).
constexpr int32_t kMaxLayers = 128;

// Bounds-checked little-endian reads from a file image; every failure names the file, the field
// and the offset.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, size_t offset, absl::string_view file)
      : data_(data), size_(size), offset_(offset), file_(file) {}

  size_t offset() const { return offset_; }
  bool at_end() const { return offset_ >= size_; }

  absl::Status Bytes(size_t n, absl::string_view field, const uint8_t** out) {
    if (n > size_ - offset_) {
      return absl::DataLossError(absl::StrFormat(
          "%s: truncated at offset %zu reading %s: %zu bytes needed, %zu left (file has %zu bytes)",
          file_, offset_, field, n, size_ - offset_, size_));
    }
    *out = data_ + offset_;
    offset_ += n;
    return absl::OkStatus();
  }

  template <typename T>
  absl::Status Read(absl::string_view field, T* out) {
    const uint8_t* p = nullptr;
    absl::Status s = Bytes(sizeof(T), field, &p);
    if (s.ok()) memcpy(out, p, sizeof(T));  // little-endian hosts only (x86-64, AArch64)
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_;
  absl::string_view file_;
};

#define WHISPER_RETURN_IF_ERROR(expr)    \
  do {                                   \
    absl::Status _st = (expr);           \
    if (!_st.ok()) return _st;           \
  } while (0)

std::string ShapeString(const int64_t* ne, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) absl::StrAppend(&s, i ? ", " : "", ne[i]);
  return s + "]";
}

int SpecDims(const TensorSpec& spec) {
  int n = 4;
  while (n > 1 && spec.ne[n - 1] == 1) --n;
  return n;
}

const char* RoleTypes(TensorRole role, int32_t ftype) {
  switch (role) {
    case TensorRole::kF32:
      return "f32";
    case TensorRole::kConv:
      return ftype == 0 ? "f32" : "f16";
    case TensorRole::kMatrix:
      return "one of f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0";
  }
  return "?";
}

// ggml_ftype values this runtime reads (ggml.h L449-478). The k-quant ftypes (10..14) and the
// mixed 4 ("MOSTLY_Q4_1_SOME_F16") are rejected as unknown.
bool IsKnownFtype(int32_t ftype) {
  switch (ftype) {
    case 0: case 1: case 2: case 3: case 7: case 8: case 9:
      return true;
    default:
      return false;
  }
}

}  // namespace

const char* FtypeName(int32_t ftype) {
  switch (ftype) {
    case 0: return "f32";
    case 1: return "f16";
    case 2: return "q4_0";
    case 3: return "q4_1";
    case 7: return "q8_0";
    case 8: return "q5_0";
    case 9: return "q5_1";
    default: return "unknown";
  }
}

ggml_type FtypeConvType(int32_t ftype) { return ftype == 0 ? GGML_TYPE_F32 : GGML_TYPE_F16; }

namespace {

// Checks each hparam: all > 0; n_vocab one of 51864 (.en), 51865 (multilingual), 51866
// (large-v3), the layouts whose special tokens are defined; layer counts at most 128; n_mels 80 or
// 128; state divisible by heads; n_audio_state == n_text_state (the cross-attention projections are square); ftype known.
// InvalidArgument naming `file`, the field, the value and what is expected.
absl::Status ValidateHparams(const WhisperHparams& h, absl::string_view file) {
  const struct {
    const char* name;
    int32_t value;
  } fields[] = {
      {"n_vocab", h.n_vocab},           {"n_audio_ctx", h.n_audio_ctx},
      {"n_audio_state", h.n_audio_state}, {"n_audio_head", h.n_audio_head},
      {"n_audio_layer", h.n_audio_layer}, {"n_text_ctx", h.n_text_ctx},
      {"n_text_state", h.n_text_state},   {"n_text_head", h.n_text_head},
      {"n_text_layer", h.n_text_layer},   {"n_mels", h.n_mels},
  };
  for (const auto& f : fields) {
    if (f.value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: hparams.%s is %d, expected a positive value", file, f.name, f.value));
    }
  }
  if (h.n_audio_layer > kMaxLayers || h.n_text_layer > kMaxLayers) {
    const bool audio = h.n_audio_layer > kMaxLayers;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.%s is %d, expected at most %d (Whisper large has 32)", file,
        audio ? "n_audio_layer" : "n_text_layer", audio ? h.n_audio_layer : h.n_text_layer, kMaxLayers));
  }
  if (h.n_vocab < 51864 || h.n_vocab > 51866) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.n_vocab is %d, expected 51864 (.en), 51865 (multilingual) or 51866 "
        "(large-v3): the special-token layout is defined only for these",
        file, h.n_vocab));
  }
  if (h.n_mels != 80 && h.n_mels != 128) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: hparams.n_mels is %d, expected 80 or 128", file, h.n_mels));
  }
  if (h.n_audio_state % h.n_audio_head != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.n_audio_state %d is not a multiple of n_audio_head %d", file,
        h.n_audio_state, h.n_audio_head));
  }
  if (h.n_text_state % h.n_text_head != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.n_text_state %d is not a multiple of n_text_head %d", file, h.n_text_state,
        h.n_text_head));
  }
  if (h.n_audio_state != h.n_text_state) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.n_text_state is %d, expected n_audio_state %d (Whisper's cross-attention "
        "projections are square)",
        file, h.n_text_state, h.n_audio_state));
  }
  if (h.qntvr < 0 || !IsKnownFtype(h.ftype)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.ftype is %d (qntvr %d, ggml_ftype %d), expected ggml_ftype 0 (f32), 1 (f16), "
        "2 (q4_0), 3 (q4_1), 7 (q8_0), 8 (q5_0) or 9 (q5_1)",
        file, h.qntvr * kQntVersionFactor + h.ftype, h.qntvr, h.ftype));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelFileHeader> ParseModelFileHeader(const uint8_t* data, size_t size,
                                                     absl::string_view file) {
  // The wrong kind of file (empty, a Silero VAD model, GGUF, CTranslate2, other) is named as such.
  WHISPER_RETURN_IF_ERROR(
      CheckModelFileKind(file, data, size, ModelFileKind::kWhisperGgml, ModelFileDetail::kKindOnly));
  Reader r(data, size, 0, file);
  uint32_t magic = 0;
  WHISPER_RETURN_IF_ERROR(r.Read("magic", &magic));  // 1..3 bytes: truncated
  ModelFileHeader header;
  WhisperHparams& h = header.hparams;
  int32_t* const hp[] = {&h.n_vocab,      &h.n_audio_ctx, &h.n_audio_state, &h.n_audio_head,
                         &h.n_audio_layer, &h.n_text_ctx,  &h.n_text_state,  &h.n_text_head,
                         &h.n_text_layer,  &h.n_mels,      &h.ftype};
  const char* const hp_names[] = {"hparams.n_vocab",      "hparams.n_audio_ctx",
                                  "hparams.n_audio_state", "hparams.n_audio_head",
                                  "hparams.n_audio_layer", "hparams.n_text_ctx",
                                  "hparams.n_text_state",  "hparams.n_text_head",
                                  "hparams.n_text_layer",  "hparams.n_mels",
                                  "hparams.ftype"};
  for (int i = 0; i < 11; ++i) WHISPER_RETURN_IF_ERROR(r.Read(hp_names[i], hp[i]));
  // whisper.cpp L1549-1551; a negative stored value gives a negative remainder, rejected below.
  h.qntvr = h.ftype / kQntVersionFactor;
  h.ftype %= kQntVersionFactor;
  WHISPER_RETURN_IF_ERROR(ValidateHparams(h, file));

  WHISPER_RETURN_IF_ERROR(r.Read("mel_filters.n_mel", &header.n_mel));
  WHISPER_RETURN_IF_ERROR(r.Read("mel_filters.n_fft", &header.n_fft));
  if (header.n_mel != h.n_mels) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: mel_filters.n_mel is %d, expected hparams.n_mels %d", file, header.n_mel, h.n_mels));
  }
  if (header.n_fft != kNFftBins) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: mel_filters.n_fft is %d, expected %d (bins of a 400-point FFT)", file, header.n_fft,
        kNFftBins));
  }
  const size_t n_filter = static_cast<size_t>(header.n_mel) * header.n_fft;
  const uint8_t* p = nullptr;
  const size_t filters_offset = r.offset();
  WHISPER_RETURN_IF_ERROR(r.Bytes(n_filter * sizeof(float), "mel_filters.data", &p));
  header.mel_filters.resize(n_filter);
  memcpy(header.mel_filters.data(), p, n_filter * sizeof(float));
  for (size_t i = 0; i < n_filter; ++i) {
    if (!std::isfinite(header.mel_filters[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: mel_filters.data[%zu] (mel %zu, bin %zu, offset %zu) is %g, expected a finite "
          "value",
          file, i, i / header.n_fft, i % header.n_fft, filters_offset + 4 * i,
          header.mel_filters[i]));
    }
  }

  int32_t n_tokens = 0;
  WHISPER_RETURN_IF_ERROR(r.Read("vocab.n_tokens", &n_tokens));
  if (n_tokens < 0 || n_tokens > h.n_vocab) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: vocab.n_tokens is %d, expected 0..hparams.n_vocab (%d)", file, n_tokens, h.n_vocab));
  }
  header.tokens.resize(n_tokens);
  for (int32_t i = 0; i < n_tokens; ++i) {
    uint32_t len = 0;
    const std::string len_field = absl::StrCat("vocab token ", i, " length");
    WHISPER_RETURN_IF_ERROR(r.Read(len_field, &len));
    if (len > kMaxTokenBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: vocab token %d length is %u at offset %zu, expected at most %u bytes", file, i,
          len, r.offset() - 4, kMaxTokenBytes));
    }
    WHISPER_RETURN_IF_ERROR(r.Bytes(len, absl::StrCat("vocab token ", i, " bytes"), &p));
    header.tokens[i].assign(reinterpret_cast<const char*>(p), len);
  }
  header.tensors_offset = r.offset();
  return header;
}

namespace {

// ExpectedTensors(hparams).size(), computed without building the table: 11 + 15 n_audio_layer +
// 24 n_text_layer (tiny: 167).
int64_t ExpectedTensorCount(const WhisperHparams& h) {
  // Encoder: positional embedding, conv1/conv2 weight and bias, ln_post weight and bias (7), then
  // 15 per block (MLP 6, self-attention 9). Decoder: positional and token embeddings, ln weight
  // and bias (4), then 24 per block (MLP 6, self-attention 9, cross-attention 9). See
  // ExpectedTensors.
  return 7 + 15 * int64_t{h.n_audio_layer} + 4 + 24 * int64_t{h.n_text_layer};
}

}  // namespace

std::vector<TensorSpec> ExpectedTensors(const WhisperHparams& h) {
  std::vector<TensorSpec> specs;
  auto add = [&specs](std::string name, TensorRole role, int64_t ne0, int64_t ne1 = 1,
                      int64_t ne2 = 1) {
    TensorSpec s;
    s.name = std::move(name);
    s.role = role;
    s.ne[0] = ne0;
    s.ne[1] = ne1;
    s.ne[2] = ne2;
    specs.push_back(std::move(s));
  };
  const TensorRole F = TensorRole::kF32, M = TensorRole::kMatrix;
  // Attention, LayerNorm and MLP tensors of one block; `attn` is "attn" or "cross_attn".
  auto add_attn = [&](const std::string& p, const char* attn, int64_t s) {
    add(absl::StrCat(p, attn, "_ln.weight"), F, s);
    add(absl::StrCat(p, attn, "_ln.bias"), F, s);
    add(absl::StrCat(p, attn, ".query.weight"), M, s, s);
    add(absl::StrCat(p, attn, ".query.bias"), F, s);
    add(absl::StrCat(p, attn, ".key.weight"), M, s, s);  // the key projection has no bias
    add(absl::StrCat(p, attn, ".value.weight"), M, s, s);
    add(absl::StrCat(p, attn, ".value.bias"), F, s);
    add(absl::StrCat(p, attn, ".out.weight"), M, s, s);
    add(absl::StrCat(p, attn, ".out.bias"), F, s);
  };
  auto add_mlp = [&](const std::string& p, int64_t s) {
    add(p + "mlp_ln.weight", F, s);
    add(p + "mlp_ln.bias", F, s);
    add(p + "mlp.0.weight", M, s, 4 * s);
    add(p + "mlp.0.bias", F, 4 * s);
    add(p + "mlp.2.weight", M, 4 * s, s);
    add(p + "mlp.2.bias", F, s);
  };

  const int64_t sa = h.n_audio_state;
  add("encoder.positional_embedding", F, sa, h.n_audio_ctx);
  add("encoder.conv1.weight", TensorRole::kConv, 3, h.n_mels, sa);
  add("encoder.conv1.bias", F, 1, sa);
  add("encoder.conv2.weight", TensorRole::kConv, 3, sa, sa);
  add("encoder.conv2.bias", F, 1, sa);
  add("encoder.ln_post.weight", F, sa);
  add("encoder.ln_post.bias", F, sa);
  for (int i = 0; i < h.n_audio_layer; ++i) {
    const std::string p = absl::StrCat("encoder.blocks.", i, ".");
    add_mlp(p, sa);
    add_attn(p, "attn", sa);
  }

  const int64_t st = h.n_text_state;
  add("decoder.positional_embedding", F, st, h.n_text_ctx);
  add("decoder.token_embedding.weight", M, st, h.n_vocab);
  add("decoder.ln.weight", F, st);
  add("decoder.ln.bias", F, st);
  for (int i = 0; i < h.n_text_layer; ++i) {
    const std::string p = absl::StrCat("decoder.blocks.", i, ".");
    add_mlp(p, st);
    add_attn(p, "attn", st);
    add_attn(p, "cross_attn", st);
  }
  return specs;
}

namespace {

// True when `type` is allowed for a tensor of `role` in a file of `ftype` (see TensorRole).
bool TensorTypeAllowed(TensorRole role, int32_t ftype, ggml_type type) {
  switch (role) {
    case TensorRole::kF32:
      return type == GGML_TYPE_F32;
    case TensorRole::kConv:
      return type == FtypeConvType(ftype);
    case TensorRole::kMatrix:
      return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_Q4_0 ||
             type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_0 || type == GGML_TYPE_Q5_1 ||
             type == GGML_TYPE_Q8_0;
  }
  return false;
}

// The head of one tensor record (n_dims, name_len, ttype, ne[n_dims], name) into rec's n_dims,
// ne and name and *ttype. `where` names the record in errors.
absl::Status ReadRecordHead(Reader& r, absl::string_view file, const std::string& where, TensorRecord* rec,
                            int32_t* ttype) {
  int32_t n_dims = 0, name_len = 0;
  WHISPER_RETURN_IF_ERROR(r.Read(absl::StrCat(where, ": n_dims"), &n_dims));
  WHISPER_RETURN_IF_ERROR(r.Read(absl::StrCat(where, ": name_len"), &name_len));
  WHISPER_RETURN_IF_ERROR(r.Read(absl::StrCat(where, ": ttype"), ttype));
  if (n_dims < 1 || n_dims > 4) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s: n_dims is %d, expected 1..4", file, where, n_dims));
  }
  if (name_len < 1 || name_len > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s: name_len is %d, expected 1..%d", file, where, name_len, kMaxNameBytes));
  }
  rec->n_dims = n_dims;
  for (int i = 0; i < n_dims; ++i) {
    int32_t ne = 0;
    WHISPER_RETURN_IF_ERROR(r.Read(absl::StrCat(where, ": ne[", i, "]"), &ne));
    if (ne < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s: ne[%d] is %d, expected >= 1", file, where, i, ne));
    }
    rec->ne[i] = ne;
  }
  const uint8_t* p = nullptr;
  WHISPER_RETURN_IF_ERROR(r.Bytes(name_len, absl::StrCat(where, ": name"), &p));
  rec->name.assign(reinterpret_cast<const char*>(p), name_len);
  return absl::OkStatus();
}

// Checks record `rec` (named `tname` in errors) of type `ttype` against its spec for a file of
// `ftype`: the type allowed for the role, the shape, whole blocks per row, a byte size that fits
// size_t. Sets rec->type and rec->nbytes.
absl::Status CheckRecordAgainstSpec(const TensorSpec& spec, int32_t ftype, int32_t ttype, absl::string_view file,
                                    const std::string& tname, TensorRecord* rec) {
  // Range-check before converting: an int outside the enum's values is not a ggml_type.
  const bool known_type = ttype >= 0 && ttype < GGML_TYPE_COUNT &&
                          ggml_type_traits_of(static_cast<ggml_type>(ttype)) != nullptr;
  if (!known_type || !TensorTypeAllowed(spec.role, ftype, static_cast<ggml_type>(ttype))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s has type %d (%s), expected %s (file ftype %s)", file, tname, ttype,
        known_type ? ggml_type_name(static_cast<ggml_type>(ttype)) : "unknown",
        RoleTypes(spec.role, ftype), FtypeName(ftype)));
  }
  rec->type = static_cast<ggml_type>(ttype);
  bool shape_ok = true;
  for (int i = 0; i < 4; ++i) shape_ok = shape_ok && rec->ne[i] == spec.ne[i];
  if (!shape_ok) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s has shape ne = %s, expected %s", file, tname, ShapeString(rec->ne, rec->n_dims),
        ShapeString(spec.ne, SpecDims(spec))));
  }
  if (!ggml_row_size_ok(rec->type, rec->ne[0])) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s: ne0 = %lld is not a multiple of the %s block size %lld", file, tname,
        static_cast<long long>(rec->ne[0]), ggml_type_name(rec->type),
        static_cast<long long>(ggml_blck_size(rec->type))));
  }
  // ne come from the file (each < 2^31, equal to the hparams' shape): the product can pass
  // 2^63, so it is computed with overflow checks.
  uint64_t nbytes = static_cast<uint64_t>(ggml_row_size(rec->type, rec->ne[0]));
  bool overflow = false;
  for (int i = 1; i < 4; ++i) {
    overflow = overflow || __builtin_mul_overflow(nbytes, static_cast<uint64_t>(rec->ne[i]), &nbytes);
  }
  if (overflow || nbytes > std::numeric_limits<size_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s: shape ne = %s of %s needs more than 2^64 bytes", file, tname,
        ShapeString(rec->ne, rec->n_dims), ggml_type_name(rec->type)));
  }
  rec->nbytes = static_cast<size_t>(nbytes);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<TensorRecord>> ParseTensorRecords(const uint8_t* data, size_t size,
                                                             const ModelFileHeader& header,
                                                             absl::string_view file) {
  const WhisperHparams& h = header.hparams;
  if (header.tensors_offset >= size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: no tensors: file has header, mel filters and vocabulary only (%zu bytes; %d "
        "tensors expected, the first \"encoder.positional_embedding\")",
        file, size, ExpectedTensorCount(h)));
  }
  const std::vector<TensorSpec> specs = ExpectedTensors(h);
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < specs.size(); ++i) index.emplace(specs[i].name, i);

  std::vector<TensorRecord> records(specs.size());
  std::vector<bool> seen(specs.size(), false);
  Reader r(data, size, header.tensors_offset, file);
  int n_records = 0;
  while (!r.at_end()) {
    const size_t record_offset = r.offset();
    const std::string where = absl::StrCat("tensor record ", n_records, " at offset ", record_offset);
    TensorRecord rec;
    int32_t ttype = 0;
    WHISPER_RETURN_IF_ERROR(ReadRecordHead(r, file, where, &rec, &ttype));
    const std::string tname = absl::StrCat("tensor '", rec.name, "' (record ", n_records,
                                           " at offset ", record_offset, ")");
    auto it = index.find(rec.name);
    if (it == index.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unknown %s: not a tensor of a Whisper model with these hparams", file, tname));
    }
    const size_t si = it->second;
    if (seen[si]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: duplicate %s: it was already read at offset %zu", file, tname,
          records[si].data_offset));
    }
    WHISPER_RETURN_IF_ERROR(CheckRecordAgainstSpec(specs[si], h.ftype, ttype, file, tname, &rec));
    rec.data_offset = r.offset();
    const uint8_t* p = nullptr;
    WHISPER_RETURN_IF_ERROR(r.Bytes(rec.nbytes, absl::StrCat(tname, " data"), &p));
    records[si] = std::move(rec);
    seen[si] = true;
    ++n_records;
  }

  if (static_cast<size_t>(n_records) != specs.size()) {
    size_t first_missing = 0;
    while (seen[first_missing]) ++first_missing;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: missing tensor '%s': the file has %d of the %zu tensors this model needs", file,
        specs[first_missing].name, n_records, specs.size()));
  }
  return records;
}

}  // namespace whisper
