#include "apps/stream/wer.h"

#include <algorithm>
#include <cctype>

namespace whisper::stream {

std::vector<std::string> NormalizedWords(const std::string& text) {
  std::vector<std::string> words;
  std::string w;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '\'' || u >= 0x80) {
      w.push_back(static_cast<char>(std::tolower(u)));
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(w);
  return words;
}

double WordErrorRate(const std::string& reference, const std::string& hypothesis) {
  const std::vector<std::string> r = NormalizedWords(reference), h = NormalizedWords(hypothesis);
  if (r.empty()) return h.empty() ? 0.0 : static_cast<double>(h.size());
  std::vector<size_t> prev(h.size() + 1), cur(h.size() + 1);
  for (size_t j = 0; j <= h.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= r.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= h.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return static_cast<double>(prev[h.size()]) / static_cast<double>(r.size());
}

}  // namespace whisper::stream
