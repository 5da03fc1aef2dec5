// memory_table: file size and resident weight memory of tiny.en per weight type, as % of F32.
//
//   bazel run -c opt //tools/quantize:memory_table
//
// In a temporary directory it converts the CTranslate2 tiny.en (models/faster-whisper-tiny.en,
// models/mel_filters.npz; made by tools/setup.sh) to F32 and F16 ggml files with the converter
// (tools/convert), quantizes the --source file to q8_0, q5_1, q5_0, q4_1 and q4_0
// (quantize_file.h), loads every file with WhisperModel::Load and prints a Markdown table:
// type, file bytes, weight buffer bytes (WhisperModel::weights_buffer_size(): tensor data, each
// tensor padded to 64 bytes) and both as % of F32. The files are removed afterwards (--keep).
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "tools/convert/convert.h"
#include "tools/quantize/quantize_file.h"
#include "tools/quantize/quantize_lib.h"
#include "whisper/model.h"

namespace {

// `bazel run` starts the binary in its runfiles tree: defaults point into the workspace.
std::string WorkspacePath(const std::string& rel) {
  const char* ws = getenv("BUILD_WORKSPACE_DIRECTORY");
  return ws != nullptr && ws[0] != '\0' ? std::string(ws) + "/" + rel : rel;
}

}  // namespace

ABSL_FLAG(std::string, model_dir, WorkspacePath("models/faster-whisper-tiny.en"),
          "CTranslate2 Whisper model directory");
ABSL_FLAG(std::string, mel_filters, WorkspacePath("models/mel_filters.npz"),
          "OpenAI Whisper's mel_filters.npz");
ABSL_FLAG(std::string, source, "f16",
          "the file the quantized types are made from: f16 (as whisper.cpp's published quantized "
          "models are) or f32");
ABSL_FLAG(std::string, work_dir, "", "directory for the model files (default: a new temp dir)");
ABSL_FLAG(bool, keep, false, "keep the model files");

namespace {

namespace cv = ggml_whisper::convert;
namespace qz = ggml_whisper::quantize;

struct Row {
  std::string type;
  std::string path;
  size_t file_bytes = 0;
  size_t buffer_bytes = 0;
};

int Fail(const absl::Status& status) {
  fprintf(stderr, "memory_table: error: %s\n", std::string(status.message()).c_str());
  return 1;
}

absl::Status Convert(const std::string& out, cv::GgmlFileType type) {
  cv::ConvertOptions o;
  o.model_dir = absl::GetFlag(FLAGS_model_dir);
  o.mel_filters = absl::GetFlag(FLAGS_mel_filters);
  o.out = out;
  o.weight_type = type;
  return cv::ConvertCt2WhisperToGgml(o).status();
}

absl::Status Measure(Row* row) {
  absl::StatusOr<std::unique_ptr<whisper::WhisperModel>> m = whisper::WhisperModel::Load(row->path);
  if (!m.ok()) return m.status();
  FILE* f = fopen(row->path.c_str(), "rb");
  if (f == nullptr || fseek(f, 0, SEEK_END) != 0) {
    if (f != nullptr) fclose(f);
    return absl::InternalError("cannot size " + row->path);
  }
  row->file_bytes = static_cast<size_t>(ftell(f));
  fclose(f);
  row->buffer_bytes = (*m)->weights_buffer_size();
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Prints file size and weight buffer size of tiny.en per weight type (% of F32).");
  absl::ParseCommandLine(argc, argv);
  const std::string source = absl::GetFlag(FLAGS_source);
  if (source != "f16" && source != "f32") {
    return Fail(absl::InvalidArgumentError("--source must be f16 or f32, got '" + source + "'"));
  }
  std::string dir = absl::GetFlag(FLAGS_work_dir);
  if (dir.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && tmp[0] ? tmp : "/tmp") + "/memtable.XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      return Fail(absl::InternalError("mkdtemp " + templ + " failed"));
    }
    dir = templ;
  }

  std::vector<Row> rows = {{"f32", dir + "/ggml-tiny.en-f32.bin"},
                           {"f16", dir + "/ggml-tiny.en-f16.bin"}};
  for (const char* type : {"q8_0", "q5_1", "q5_0", "q4_1", "q4_0"}) {
    rows.push_back({type, dir + "/ggml-tiny.en-" + type + ".bin"});
  }
  // Removes the files (also on error) unless --keep.
  struct Cleanup {
    const std::vector<Row>& rows;
    const std::string& dir;
    ~Cleanup() {
      if (absl::GetFlag(FLAGS_keep)) {
        fprintf(stderr, "memory_table: kept the files in %s\n", dir.c_str());
        return;
      }
      for (const Row& r : rows) unlink(r.path.c_str());
      if (absl::GetFlag(FLAGS_work_dir).empty()) rmdir(dir.c_str());
    }
  } cleanup{rows, dir};
  fprintf(stderr, "memory_table: converting %s to f32 and f16 in %s\n",
          absl::GetFlag(FLAGS_model_dir).c_str(), dir.c_str());
  absl::Status st = Convert(rows[0].path, cv::GgmlFileType::kF32);
  if (st.ok()) st = Convert(rows[1].path, cv::GgmlFileType::kF16);
  if (!st.ok()) return Fail(st);
  const std::string& src = source == "f16" ? rows[1].path : rows[0].path;
  for (size_t i = 2; i < rows.size(); ++i) {
    const qz::QuantTarget target = *qz::ParseQuantTarget(rows[i].type);
    fprintf(stderr, "memory_table: quantizing %s to %s\n", src.c_str(), target.name);
    absl::StatusOr<qz::QuantizeSummary> s = qz::QuantizeModelFile(src, rows[i].path, target);
    if (!s.ok()) return Fail(s.status());
  }
  for (Row& row : rows) {
    st = Measure(&row);
    if (!st.ok()) return Fail(st);
  }

  const Row& f32 = rows[0];
  printf("tiny.en, quantized types made from the %s file\n\n", source.c_str());
  printf("| type | file bytes | file %% of F32 | weight buffer bytes | buffer %% of F32 |\n");
  printf("|---|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    printf("| %s | %zu | %.1f%% | %zu | %.1f%% |\n", r.type.c_str(), r.file_bytes,
           100.0 * r.file_bytes / f32.file_bytes, r.buffer_bytes,
           100.0 * r.buffer_bytes / f32.buffer_bytes);
  }
  return 0;
}
