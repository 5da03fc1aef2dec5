#include "whisper/model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/weight_convert.h"

namespace whisper {
namespace {

// A read-only private mapping of a whole file, unmapped on destruction; the descriptor stays open
// so that the tensors' bytes can be read with pread (RunAllJobs) instead of through the mapping.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) close(fd_);
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  int fd() const { return size_ > 0 ? fd_ : -1; }

  absl::Status Open(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int e = errno;
      const std::string msg = absl::StrCat(path, ": cannot open model file: ", strerror(e));
      if (e == ENOENT) return absl::NotFoundError(msg);
      if (e == EACCES) return absl::PermissionDeniedError(msg);
      return absl::InternalError(msg);
    }
    struct stat st;
    if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) {
      static const uint8_t kEmpty = 0;
      data_ = &kEmpty;  // parsed as an empty image: "empty file (0 bytes)"
      return absl::OkStatus();
    }
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    const int e = errno;
    if (p == MAP_FAILED) {
      size_ = 0;
      return absl::InternalError(absl::StrCat(path, ": cannot mmap ", st.st_size, " bytes: ",
                                              strerror(e)));
    }
    data_ = static_cast<const uint8_t*>(p);
    return absl::OkStatus();
  }

  // Drops the whole pages inside [offset, offset + n) from this process's resident set
  // (MADV_DONTNEED on a private read-only file mapping: the bytes stay valid and are read from
  // the page cache again if touched). Called once the header is parsed: the tensors' bytes are
  // then read with pread, so the file image and the weights are never resident at once
  // (tiny.en: 77 MB of each).
  static void Release(void* self, size_t offset, size_t n) {
    auto* f = static_cast<MappedFile*>(self);
    if (f->size_ == 0 || offset >= f->size_) return;
    n = std::min(n, f->size_ - offset);
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(f->data_) + offset + page - 1) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(f->data_) + offset + n) & ~(page - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
};

// One piece of a tensor's bytes: n bytes at file offset `offset` go to dst, as they are when
// type_in == type_out, else converted row by row (ConvertRow: n / ggml_row_size(type_in, ne0)
// whole rows of ne0 elements; dst receives ggml_row_size(type_out, ne0) bytes per row).
struct CopyJob {
  uint8_t* dst;
  size_t offset;
  size_t n;
  const std::string* name;  // the tensor's, for messages
  ggml_type type_in;
  ggml_type type_out;
  int64_t ne0;
};

// pread of n bytes at `offset` into dst, retrying short reads and EINTR. A read that ends early
// (the file shrank while loading) or fails is an error naming the file, the tensor and the offset.
absl::Status ReadFully(int fd, const std::string& path, const std::string& name, uint8_t* dst, size_t offset,
                       size_t n) {
  for (size_t done = 0; done < n;) {
    const ssize_t r = pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const std::string why = r == 0 ? std::string("end of file (the file shrank while loading)") : strerror(errno);
      return absl::DataLossError(absl::StrFormat("%s: tensor '%s': cannot read %zu bytes at offset %zu: %s", path,
                                                 name, n - done, offset + done, why));
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

// Runs whole jobs: the source bytes come from `fd` (pread; fd >= 0) or from the file image
// `image`. Converted jobs read into a scratch buffer of this call (at most one job's bytes,
// 4 MiB) and convert from there: the file's copy of a tensor is never resident whole.
absl::Status RunJobs(int fd, const uint8_t* image, const std::string& path, const CopyJob* jobs, size_t n_jobs) {
  std::vector<uint8_t> raw;
  std::vector<float> row;
  for (size_t j = 0; j < n_jobs; ++j) {
    const CopyJob& job = jobs[j];
    if (job.type_in == job.type_out) {
      if (fd < 0) {
        memcpy(job.dst, image + job.offset, job.n);
        continue;
      }
      absl::Status st = ReadFully(fd, path, *job.name, job.dst, job.offset, job.n);
      if (!st.ok()) return st;
      continue;
    }
    const uint8_t* src = image + job.offset;
    if (fd >= 0) {
      raw.resize(job.n);
      absl::Status st = ReadFully(fd, path, *job.name, raw.data(), job.offset, job.n);
      if (!st.ok()) return st;
      src = raw.data();
    }
    row.resize(static_cast<size_t>(job.ne0));
    const size_t row_in = ggml_row_size(job.type_in, job.ne0);
    const size_t row_out = ggml_row_size(job.type_out, job.ne0);
    for (size_t r = 0; r < job.n / row_in; ++r) {
      absl::Status st =
          ConvertRow(job.type_in, src + r * row_in, job.type_out, job.dst + r * row_out, job.ne0, row.data());
      if (!st.ok()) return absl::InternalError(absl::StrCat(path, ": tensor '", *job.name, "': ", st.message()));
    }
  }
  return absl::OkStatus();
}

// Runs every job, the second half of the bytes on a helper thread: a plain copy is bound by
// page faults on the fresh weight buffer, a conversion by the quantizer, and two threads do
// either in parallel (tiny.en F16, 77 MB read as is: 30 ms on one thread, 21 ms on two, AMD Zen
// 5 VM). If the thread cannot start, one thread runs everything.
absl::Status RunAllJobs(int fd, const uint8_t* image, const std::string& path, const std::vector<CopyJob>& jobs) {
  size_t total = 0;
  for (const CopyJob& j : jobs) total += j.n;
  size_t split = 0, first_half = 0;
  while (split < jobs.size() && first_half + jobs[split].n <= total / 2) first_half += jobs[split++].n;
  absl::Status helper_status;
  std::thread helper;
  if (split < jobs.size() && std::thread::hardware_concurrency() > 1) {
    try {
      helper = std::thread(
          [&] { helper_status = RunJobs(fd, image, path, jobs.data() + split, jobs.size() - split); });
    } catch (const std::system_error&) {
      split = jobs.size();  // no second thread: run everything here
    }
  } else {
    split = jobs.size();
  }
  absl::Status status = RunJobs(fd, image, path, jobs.data(), split);
  if (helper.joinable()) helper.join();
  return status.ok() ? helper_status : status;
}

void BindAttention(ggml_context* ctx, const std::string& p, AttentionWeights* a) {
  auto t = [&](const char* suffix) { return ggml_get_tensor(ctx, (p + suffix).c_str()); };
  a->ln_w = t("_ln.weight");
  a->ln_b = t("_ln.bias");
  a->q_w = t(".query.weight");
  a->q_b = t(".query.bias");
  a->k_w = t(".key.weight");
  a->v_w = t(".value.weight");
  a->v_b = t(".value.bias");
  a->o_w = t(".out.weight");
  a->o_b = t(".out.bias");
}

void BindMlp(ggml_context* ctx, const std::string& p, MlpWeights* m) {
  auto t = [&](const char* suffix) { return ggml_get_tensor(ctx, (p + suffix).c_str()); };
  m->ln_w = t("mlp_ln.weight");
  m->ln_b = t("mlp_ln.bias");
  m->fc1_w = t("mlp.0.weight");
  m->fc1_b = t("mlp.0.bias");
  m->fc2_w = t("mlp.2.weight");
  m->fc2_b = t("mlp.2.bias");
}

// The type record r gets in memory: `weight_type` for the tensors //tools/quantize converts
// (ShouldQuantize: the 2-D matrices and the token embedding) whose rows are whole blocks of it;
// the stored type for every other tensor, and for all of them without a weight type.
ggml_type MemoryType(const TensorRecord& r, std::optional<ggml_type> weight_type) {
  if (!weight_type.has_value() || !ShouldQuantize(r.name, r.n_dims)) return r.type;
  if (!ggml_row_size_ok(*weight_type, r.ne[0]) || !CanConvertRow(r.type, *weight_type)) return r.type;
  return *weight_type;
}

// One tensor per record in `ctx` (metadata only) of its memory type, named and marked as a
// parameter.
absl::StatusOr<std::vector<ggml_tensor*>> NewWeightTensors(ggml_context* ctx, const std::vector<TensorRecord>& records,
                                                           std::optional<ggml_type> weight_type,
                                                           const std::string& path) {
  std::vector<ggml_tensor*> tensors;
  tensors.reserve(records.size());
  for (const TensorRecord& r : records) {
    ggml_tensor* t = ggml_new_tensor(ctx, MemoryType(r, weight_type), 4, r.ne);
    if (t == nullptr) {
      return absl::InternalError(
          absl::StrCat(path, ": tensor '", r.name, "': ", ggml_last_error()));
    }
    ggml_set_name(t, r.name.c_str());
    ggml_set_param(t);
    tensors.push_back(t);
  }
  return tensors;
}

// The copies of the records' bytes into their tensors, in pieces of at most 4 MiB of file bytes
// (whole rows for a converted tensor); adds the file's bytes to *file_bytes and counts the
// converted tensors in *n_converted. Internal error when a tensor's size differs from its
// record's converted size.
absl::StatusOr<std::vector<CopyJob>> PlanCopies(const std::vector<TensorRecord>& records,
                                                const std::vector<ggml_tensor*>& tensors, const std::string& path,
                                                size_t* file_bytes, int* n_converted) {
  constexpr size_t kChunk = size_t{4} << 20;
  std::vector<CopyJob> jobs;
  for (size_t i = 0; i < records.size(); ++i) {
    const TensorRecord& r = records[i];
    const ggml_type type_out = tensors[i]->type;
    const int64_t ne0 = r.ne[0];
    const size_t row_in = ggml_row_size(r.type, ne0), row_out = ggml_row_size(type_out, ne0);
    const size_t n_rows = row_in == 0 ? 0 : r.nbytes / row_in;
    if (ggml_nbytes(tensors[i]) != n_rows * row_out || n_rows * row_in != r.nbytes) {
      return absl::InternalError(absl::StrFormat("%s: tensor '%s': %zu bytes in the file (%s), %zu in memory (%s)",
                                                 path, r.name, r.nbytes, ggml_type_name(r.type),
                                                 ggml_nbytes(tensors[i]), ggml_type_name(type_out)));
    }
    // A plain copy is cut anywhere; a conversion at row boundaries.
    const size_t step = type_out == r.type ? kChunk : std::max<size_t>(1, kChunk / row_in) * row_in;
    for (size_t done = 0; done < r.nbytes; done += step) {
      const size_t out_at = type_out == r.type ? done : done / row_in * row_out;
      jobs.push_back(CopyJob{static_cast<uint8_t*>(tensors[i]->data) + out_at, r.data_offset + done,
                             std::min(step, r.nbytes - done), &r.name, r.type, type_out, ne0});
    }
    *file_bytes += r.nbytes;
    *n_converted += type_out != r.type ? 1 : 0;
  }
  return jobs;
}

// w's pointers to the tensors of `ctx` by their whisper.cpp names.
void BindWeights(ggml_context* ctx, const WhisperHparams& h, WhisperWeights* w) {
  w->e_pe = ggml_get_tensor(ctx, "encoder.positional_embedding");
  w->conv1_w = ggml_get_tensor(ctx, "encoder.conv1.weight");
  w->conv1_b = ggml_get_tensor(ctx, "encoder.conv1.bias");
  w->conv2_w = ggml_get_tensor(ctx, "encoder.conv2.weight");
  w->conv2_b = ggml_get_tensor(ctx, "encoder.conv2.bias");
  w->e_ln_w = ggml_get_tensor(ctx, "encoder.ln_post.weight");
  w->e_ln_b = ggml_get_tensor(ctx, "encoder.ln_post.bias");
  w->encoder.resize(h.n_audio_layer);
  for (int i = 0; i < h.n_audio_layer; ++i) {
    const std::string p = absl::StrCat("encoder.blocks.", i, ".");
    BindAttention(ctx, p + "attn", &w->encoder[i].attn);
    BindMlp(ctx, p, &w->encoder[i].mlp);
  }
  w->d_pe = ggml_get_tensor(ctx, "decoder.positional_embedding");
  w->d_te = ggml_get_tensor(ctx, "decoder.token_embedding.weight");
  w->d_ln_w = ggml_get_tensor(ctx, "decoder.ln.weight");
  w->d_ln_b = ggml_get_tensor(ctx, "decoder.ln.bias");
  w->decoder.resize(h.n_text_layer);
  for (int i = 0; i < h.n_text_layer; ++i) {
    const std::string p = absl::StrCat("decoder.blocks.", i, ".");
    BindAttention(ctx, p + "attn", &w->decoder[i].attn);
    BindAttention(ctx, p + "cross_attn", &w->decoder[i].cross);
    BindMlp(ctx, p, &w->decoder[i].mlp);
  }
}

}  // namespace

WhisperModel::~WhisperModel() {
  ggml_backend_buffer_free(buffer_);
  ggml_free(ctx_);
}

size_t WhisperModel::weights_buffer_size() const {
  return buffer_ == nullptr ? 0 : ggml_backend_buffer_get_size(buffer_);
}

const ggml_tensor* WhisperModel::tensor(const std::string& name) const {
  return ctx_ == nullptr ? nullptr : ggml_get_tensor(ctx_, name.c_str());
}

absl::Status WhisperModel::CheckWeightsFinite() const {
  if (ctx_ == nullptr) return absl::OkStatus();
  std::vector<float> row;
  for (ggml_tensor* t = ggml_get_first_tensor(ctx_); t != nullptr; t = ggml_get_next_tensor(ctx_, t)) {
    const int64_t ne0 = t->ne[0];
    const int64_t n_rows = ggml_nelements(t) / std::max<int64_t>(1, ne0);
    const size_t row_bytes = ggml_row_size(t->type, ne0);
    row.resize(static_cast<size_t>(ne0));
    for (int64_t r = 0; r < n_rows; ++r) {
      const absl::Status st = RowToF32(t->type, static_cast<const char*>(t->data) + r * row_bytes, ne0, row.data());
      if (!st.ok()) break;  // not a weight type: nothing this scan can read
      for (int64_t i = 0; i < ne0; ++i) {
        const float v = row[static_cast<size_t>(i)];
        if (std::isfinite(v)) continue;
        return absl::DataLossError(absl::StrFormat(
            "model '%s': tensor '%s' holds %s at element %d (expected finite weights): the file is corrupt",
            path_, ggml_get_name(t), std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"), r * ne0 + i));
      }
    }
  }
  return absl::OkStatus();
}

const char* WhisperModel::type_name() const {
  switch (hparams_.n_audio_layer) {
    case 4: return "tiny";
    case 6: return "base";
    case 12: return "small";
    case 24: return "medium";
    case 32: return "large";
    default: return "unknown";
  }
}

absl::Status CheckWeightType(std::optional<ggml_type> weight_type) {
  if (!weight_type.has_value() || IsWeightType(*weight_type)) return absl::OkStatus();
  const int t = static_cast<int>(*weight_type);
  return absl::InvalidArgumentError(absl::StrCat(
      "weight type ", t, " (", t >= 0 && t < GGML_TYPE_COUNT ? ggml_type_name(*weight_type) : "not a ggml_type",
      ") is not a type the matrix kernels multiply: expected f32 (0), f16 (1), q4_0 (2), q4_1 (3), q5_0 (6), "
      "q5_1 (7) or q8_0 (8)"));
}

absl::StatusOr<std::unique_ptr<WhisperModel>> WhisperModel::Load(const std::string& path,
                                                                 std::optional<ggml_type> weight_type) {
  absl::Status status = CheckWeightType(weight_type);
  if (!status.ok()) return status;
  MappedFile file;
  status = file.Open(path);
  if (!status.ok()) return status;
  return LoadImage(file.data(), file.size(), path, &MappedFile::Release, &file, file.fd(), weight_type);
}

absl::StatusOr<std::unique_ptr<WhisperModel>> WhisperModel::LoadFromBuffer(const void* data, size_t size,
                                                                           const std::string& path,
                                                                           std::optional<ggml_type> weight_type) {
  absl::Status status = CheckWeightType(weight_type);
  if (!status.ok()) return status;
  return LoadImage(data, size, path, nullptr, nullptr, -1, weight_type);
}

absl::StatusOr<std::unique_ptr<WhisperModel>> WhisperModel::LoadImage(const void* data, size_t size,
                                                                      const std::string& path,
                                                                      ReleaseFn release, void* release_arg,
                                                                      int fd, std::optional<ggml_type> weight_type) {
  if (data == nullptr && size > 0) return absl::InvalidArgumentError(absl::StrCat(path, ": NULL buffer"));
  static const uint8_t kEmpty = 0;
  struct Image {
    const uint8_t* p;
    size_t n;
    const uint8_t* data() const { return p; }
    size_t size() const { return n; }
  } file{size == 0 ? &kEmpty : static_cast<const uint8_t*>(data), size};
  absl::StatusOr<ModelFileHeader> header = ParseModelFileHeader(file.data(), file.size(), path);
  if (!header.ok()) return header.status();
  absl::StatusOr<std::vector<TensorRecord>> records =
      ParseTensorRecords(file.data(), file.size(), *header, path);
  if (!records.ok()) return records.status();
  // The header's parts (hparams, mel filters, vocabulary) are copied out and the tensor records
  // hold offsets: nothing below reads the file image but the tensors' bytes.
  if (release != nullptr) release(release_arg, 0, file.size());

  std::unique_ptr<WhisperModel> model(new WhisperModel());
  model->path_ = path;
  model->hparams_ = header->hparams;
  model->mel_filters_ = std::move(header->mel_filters);
  model->n_fft_ = header->n_fft;
  model->vocab_ = WhisperVocab(std::move(header->tokens), header->hparams.n_vocab);
  model->n_tensors_ = static_cast<int>(records->size());

  // Metadata only: the tensors' bytes go to one buffer below.
  const ggml_init_params params = {records->size() * ggml_tensor_overhead(), nullptr, true};
  model->ctx_ = ggml_init(params);
  if (model->ctx_ == nullptr) {
    return absl::InternalError(absl::StrCat(path, ": ggml_init: ", ggml_last_error()));
  }
  absl::StatusOr<std::vector<ggml_tensor*>> tensors = NewWeightTensors(model->ctx_, *records, weight_type, path);
  if (!tensors.ok()) return tensors.status();
  // The arena: ggml_backend_alloc_ctx_tensors sizes the one buffer from the tensors as created
  // above, i.e. in their memory types: sum over tensors of ggml_nbytes(t) (ne0 / block size *
  // ggml_type_size(type) bytes per row of the converted type: Q8_0 34 bytes per 32 elements,
  // F16 2 per element, F32 4), each rounded up to the buffer alignment. Nothing is sized from
  // the file's types, so a converted model's buffer holds only the converted bytes (tiny.en
  // F16 -> Q8_0: see weights_buffer_size()).
  model->buffer_ = ggml_backend_alloc_ctx_tensors(model->ctx_);
  if (model->buffer_ == nullptr) {
    return absl::InternalError(absl::StrCat(path, ": cannot allocate the weight buffer: ",
                                            ggml_last_error()));
  }
  // The tensors' bytes: from a file (fd >= 0) read with pread, from an image in memory copied;
  // converted tensors a piece at a time through a per-thread scratch buffer. Two threads.
  absl::StatusOr<std::vector<CopyJob>> jobs =
      PlanCopies(*records, *tensors, path, &model->weights_file_bytes_, &model->n_converted_);
  if (!jobs.ok()) return jobs.status();
  absl::Status read = RunAllJobs(fd, file.data(), path, *jobs);
  if (!read.ok()) return read;

  BindWeights(model->ctx_, model->hparams_, &model->weights_);
  return model;
}

}  // namespace whisper
