#include "whisper/e2e/reference.h"

#include <cmath>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "whisper/e2e/cli_runner.h"

namespace whisper_e2e {

namespace {

std::vector<ReferenceSegment> Segments(const nlohmann::json& list) {
  std::vector<ReferenceSegment> out;
  constexpr int kEot = 50256;  // English-only vocabulary: every id above eot is special
  for (const auto& s : list) {
    ReferenceSegment r;
    r.t0_ms = std::llround(s.value("start", -1.0) * 1000);
    r.t1_ms = std::llround(s.value("end", -1.0) * 1000);
    r.text = s.value("text", "");
    for (const auto& t : s["tokens"]) {
      if (t.get<int>() < kEot) r.text_tokens.push_back(t.get<int>());
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<ReferenceSegment> LoadReference(const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(ReadFileOrFail(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("segments") || !j["segments"].is_array()) {
    ADD_FAILURE() << path << ": not a reference file (no \"segments\" array)";
    return {};
  }
  return Segments(j["segments"]);
}

std::vector<ReferenceSegment> LoadReferenceRun(const std::string& path, const std::string& run,
                                               const std::string& list) {
  const nlohmann::json j = nlohmann::json::parse(ReadFileOrFail(path), nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.contains("runs") && j["runs"].is_array()) {
    for (const auto& r : j["runs"]) {
      if (r.value("name", "") == run && r.contains(list) && r[list].is_array()) return Segments(r[list]);
    }
  }
  ADD_FAILURE() << path << ": no run \"" << run << "\" with a \"" << list << "\" array";
  return {};
}

std::vector<std::vector<int>> LoadReferenceWindows(const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(ReadFileOrFail(path), nullptr, /*allow_exceptions=*/false);
  std::vector<std::vector<int>> out;
  if (j.is_discarded() || !j.contains("windows") || !j["windows"].is_array()) {
    ADD_FAILURE() << path << ": not a reference file (no \"windows\" array)";
    return out;
  }
  for (const auto& w : j["windows"]) out.push_back(w["tokens"].get<std::vector<int>>());
  return out;
}

}  // namespace whisper_e2e
