#include "whisper/fuzz_model_image.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

namespace whisper {

const std::vector<uint8_t>& FuzzBaseModel(int n_state, int32_t ftype) {
  static auto* cache = new std::map<std::pair<int, int32_t>, std::vector<uint8_t>>();
  auto it = cache->find({n_state, ftype});
  if (it != cache->end()) return it->second;
  SyntheticModelOptions o;
  o.hparams.n_audio_state = n_state;
  o.hparams.n_text_state = n_state;
  o.hparams.n_audio_head = n_state % 16 == 0 ? n_state / 16 : 1;
  o.hparams.n_text_head = o.hparams.n_audio_head;
  o.hparams.ftype = ftype;
  o.matrix_type = ftype == 0 ? GGML_TYPE_F32 : GGML_TYPE_F16;
  return cache->emplace(std::make_pair(n_state, ftype), MakeSyntheticModel(o).bytes).first->second;
}

std::vector<uint8_t> ApplyFuzzEdits(const std::vector<uint8_t>& base, const uint8_t* edits, size_t size) {
  std::vector<uint8_t> out = base;
  size_t i = 0;
  while (i + 4 <= size && !out.empty()) {
    const size_t offset = (edits[i] | edits[i + 1] << 8 | edits[i + 2] << 16) % out.size();
    const size_t len = edits[i + 3];
    i += 4;
    if (len == 0) {
      out.resize(offset);
      continue;
    }
    const size_t n = std::min({len, size - i, out.size() - offset});
    std::memcpy(out.data() + offset, edits + i, n);
    i += len;
  }
  return out;
}

}  // namespace whisper
