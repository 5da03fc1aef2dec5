#include "tools/quantize/quantize_lib.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/model_file.h"

namespace ggml_whisper::quantize {
namespace {

constexpr QuantTarget kTargets[] = {
    {2, GGML_TYPE_Q4_0, "q4_0"}, {3, GGML_TYPE_Q4_1, "q4_1"}, {8, GGML_TYPE_Q5_0, "q5_0"},
    {9, GGML_TYPE_Q5_1, "q5_1"}, {7, GGML_TYPE_Q8_0, "q8_0"},
};

// Appends the little-endian bytes of `v` to `out`.
template <typename T>
void Append(std::vector<uint8_t>* out, T v) {
  uint8_t b[sizeof(T)];
  memcpy(b, &v, sizeof(T));
  out->insert(out->end(), b, b + sizeof(T));
}

// Writes the tensor record header: n_dims, name_len, ttype, ne[n_dims], name.
absl::Status WriteRecordHeader(const whisper::TensorRecord& r, ggml_type type, const ByteSink& sink,
                               size_t* written) {
  std::vector<uint8_t> h;
  Append<int32_t>(&h, r.n_dims);
  Append<int32_t>(&h, static_cast<int32_t>(r.name.size()));
  Append<int32_t>(&h, static_cast<int32_t>(type));
  for (int i = 0; i < r.n_dims; ++i) Append<int32_t>(&h, static_cast<int32_t>(r.ne[i]));
  h.insert(h.end(), r.name.begin(), r.name.end());
  *written += h.size();
  return sink(h.data(), h.size());
}

// Writes tensor `r` of the image converted to `type_out` (a quantized type, or F16 from F32),
// row by row.
absl::Status WriteConverted(const uint8_t* data, const whisper::TensorRecord& r, ggml_type type_out,
                            const ByteSink& sink, size_t* written) {
  const int64_t ne0 = r.ne[0];
  const int64_t nrows = r.ne[1] * r.ne[2] * r.ne[3];
  const size_t row_in = ggml_row_size(r.type, ne0);
  const size_t row_out = ggml_row_size(type_out, ne0);
  std::vector<float> f32(static_cast<size_t>(ne0));
  std::vector<uint8_t> out(row_out);
  for (int64_t row = 0; row < nrows; ++row) {
    absl::Status st =
        whisper::ConvertRow(r.type, data + r.data_offset + row * row_in, type_out, out.data(), ne0, f32.data());
    if (st.ok()) st = sink(out.data(), row_out);
    if (!st.ok()) return st;
  }
  *written += row_out * nrows;
  return absl::OkStatus();
}

std::string ValidTargets() {
  std::string s;
  for (const QuantTarget& t : kTargets) {
    absl::StrAppend(&s, s.empty() ? "" : ", ", t.name, " (", t.ftype, ")");
  }
  return s;
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

absl::StatusOr<QuantTarget> ParseQuantTarget(absl::string_view arg) {
  const std::string lower = absl::AsciiStrToLower(arg);
  for (const QuantTarget& t : kTargets) {
    if (lower == t.name || lower == absl::StrCat(t.ftype)) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown quantization type '", arg, "': valid types (ggml_ftype) are ", ValidTargets()));
}

namespace {

using RoleRecords = std::vector<std::pair<whisper::TensorRecord, whisper::TensorRole>>;

// The model's tensor records, each with its role, in the input file's order. Errors: as
// ParseTensorRecords.
absl::StatusOr<RoleRecords> RecordsInFileOrder(const uint8_t* data, size_t size,
                                               const whisper::ModelFileHeader& header,
                                               absl::string_view file) {
  absl::StatusOr<std::vector<whisper::TensorRecord>> parsed =
      whisper::ParseTensorRecords(data, size, header, file);
  if (!parsed.ok()) return parsed.status();
  // ParseTensorRecords returns spec order; pair each record with its role, then restore the
  // input's record order.
  const std::vector<whisper::TensorSpec> specs = whisper::ExpectedTensors(header.hparams);
  RoleRecords records;
  for (size_t i = 0; i < parsed->size(); ++i) {
    records.emplace_back(std::move((*parsed)[i]), specs[i].role);
  }
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.first.data_offset < b.first.data_offset; });
  return records;
}

// Every tensor to quantize is f32 or f16 and its rows are whole blocks of `target`.
absl::Status CheckQuantizable(const RoleRecords& records, const QuantTarget& target,
                              absl::string_view file) {
  for (const auto& [r, role] : records) {
    if (!ShouldQuantize(r.name, r.n_dims)) continue;
    if (r.type != GGML_TYPE_F32 && r.type != GGML_TYPE_F16) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: tensor '%s' is %s: only f32 and f16 tensors can be quantized", file,
                          r.name, ggml_type_name(r.type)));
    }
    if (!ggml_row_size_ok(target.type, r.ne[0])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: tensor '%s': ne0 = %lld is not a multiple of the %s block size 32",
                          file, r.name, static_cast<long long>(r.ne[0]), target.name));
    }
  }
  return absl::OkStatus();
}

// Writes record r (its header, then its data copied or converted) and adds its bytes to s.
absl::StatusOr<TensorReport> WriteTensor(const uint8_t* data, const whisper::TensorRecord& r,
                                         whisper::TensorRole role, const QuantTarget& target,
                                         const ByteSink& sink, QuantizeSummary* s) {
  TensorReport t;
  t.name = r.name;
  t.n_dims = r.n_dims;
  std::copy(r.ne, r.ne + 4, t.ne);
  t.type_in = r.type;
  t.bytes_in = r.nbytes;
  t.quantized = ShouldQuantize(r.name, r.n_dims);
  t.type_out = r.type;
  if (t.quantized) t.type_out = target.type;
  // Conv kernels: F16 in every quantized file (whisper.cpp's loader, L1678).
  if (role == whisper::TensorRole::kConv) t.type_out = whisper::FtypeConvType(target.ftype);

  absl::Status st = WriteRecordHeader(r, t.type_out, sink, &s->file_bytes_out);
  if (!st.ok()) return st;
  size_t data_bytes = 0;
  if (t.type_out == t.type_in) {
    st = sink(data + r.data_offset, r.nbytes);
    data_bytes = r.nbytes;
  } else {
    st = WriteConverted(data, r, t.type_out, sink, &data_bytes);
  }
  if (!st.ok()) return st;
  t.bytes_out = data_bytes;
  s->file_bytes_out += data_bytes;
  s->tensor_bytes_in += t.bytes_in;
  s->tensor_bytes_out += t.bytes_out;
  s->n_quantized += t.quantized ? 1 : 0;
  return t;
}

}  // namespace

absl::StatusOr<QuantizeSummary> QuantizeModelImage(const uint8_t* data, size_t size,
                                                   absl::string_view file,
                                                   const QuantTarget& target, const ByteSink& sink,
                                                   const TensorCallback& on_tensor) {
  absl::StatusOr<whisper::ModelFileHeader> header = whisper::ParseModelFileHeader(data, size, file);
  if (!header.ok()) return header.status();
  const whisper::WhisperHparams& hp = header->hparams;
  if (hp.qntvr != 0 || (hp.ftype != 0 && hp.ftype != 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: hparams.ftype is %d (%s, qntvr %d): the input must be an f32 (0) or f16 (1) model, "
        "not an already quantized one",
        file, hp.qntvr * whisper::kQntVersionFactor + hp.ftype, whisper::FtypeName(hp.ftype),
        hp.qntvr));
  }
  absl::StatusOr<RoleRecords> records = RecordsInFileOrder(data, size, *header, file);
  if (!records.ok()) return records.status();
  // Check every selected tensor before writing anything.
  absl::Status st = CheckQuantizable(*records, target, file);
  if (!st.ok()) return st;

  QuantizeSummary s;
  s.ftype_in = hp.ftype;
  s.ftype_out = kQntVersion * whisper::kQntVersionFactor + target.ftype;
  s.header_bytes = header->tensors_offset;
  s.file_bytes_in = size;

  // Header: bytes [0, tensors_offset) with the ftype field replaced.
  st = sink(data, kFtypeOffset);
  if (st.ok()) st = sink(&s.ftype_out, sizeof(int32_t));
  if (st.ok()) {
    st = sink(data + kFtypeOffset + sizeof(int32_t),
              header->tensors_offset - kFtypeOffset - sizeof(int32_t));
  }
  if (!st.ok()) return st;
  s.file_bytes_out = header->tensors_offset;

  for (const auto& [r, role] : *records) {
    absl::StatusOr<TensorReport> t = WriteTensor(data, r, role, target, sink, &s);
    if (!t.ok()) return t.status();
    if (on_tensor) on_tensor(*t);
    s.tensors.push_back(std::move(*t));
  }
  return s;
}

std::string FormatTensorReport(const TensorReport& t) {
  return absl::StrFormat("%48s - [%5d, %5d, %5d], type = %6s -> %6s, size = %8.3f MB -> %8.3f MB",
                         t.name, t.ne[0], t.ne[1], t.ne[2], ggml_type_name(t.type_in),
                         ggml_type_name(t.type_out), MiB(t.bytes_in), MiB(t.bytes_out));
}

std::string FormatSummary(const QuantizeSummary& s, const QuantTarget& target) {
  return absl::StrFormat(
      "model size  = %8.2f MB (%zu bytes of tensor data, ftype %d %s)\n"
      "quant size  = %8.2f MB (%zu bytes; %d of %zu tensors quantized) | ftype = %d (%s)\n"
      "file size   = %zu -> %zu bytes (%.1f%%)",
      MiB(s.tensor_bytes_in), s.tensor_bytes_in, s.ftype_in, whisper::FtypeName(s.ftype_in),
      MiB(s.tensor_bytes_out), s.tensor_bytes_out, s.n_quantized, s.tensors.size(), s.ftype_out,
      target.name, s.file_bytes_in, s.file_bytes_out,
      s.file_bytes_in == 0 ? 0.0 : 100.0 * s.file_bytes_out / s.file_bytes_in);
}

}  // namespace ggml_whisper::quantize
