// Fuzz target: the transcript writers (apps/common/output.h FormatTxt/Vtt/Srt/Lrc/Csv/Json) on
// segments built from arbitrary bytes: texts, times, token ids and probabilities. The output is
// not checked for valid UTF-8 (the writers pass the text's bytes through).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/output.h"
#include "apps/common/transcript.h"

namespace {
// The writers print centiseconds as milliseconds (10 * t, as whisper-cli's to_timestamp and
// its CSV/JSON offsets do), which overflows int64 past |t| > INT64_MAX / 10 (2.9e10 years): no
// decoded time comes near that, so the times stay within it.
constexpr int64_t kMaxTime = INT64_MAX / 10;

int64_t Time(FuzzedDataProvider& fdp) {
  // Mostly plausible centiseconds (-1 = unset, up to 1000 h), sometimes anything in range.
  return fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(-1, 360000000)
                           : fdp.ConsumeIntegralInRange<int64_t>(-kMaxTime, kMaxTime);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  // Token texts for -ojf: a small table indexed by id, filled from the input.
  std::vector<std::string> table(fdp.ConsumeIntegralInRange<int>(1, 8));
  for (std::string& s : table) s = fdp.ConsumeRandomLengthString(16);
  const std::string empty;
  auto token_text = [&](whisper_token id) -> const std::string& {
    if (id < 0) return empty;
    return table[static_cast<size_t>(id) % table.size()];
  };

  std::vector<whisper::TranscriptSegment> segments(fdp.ConsumeIntegralInRange<int>(0, 6));
  for (whisper::TranscriptSegment& seg : segments) {
    seg.t0 = Time(fdp);
    seg.t1 = Time(fdp);
    seg.text = fdp.ConsumeRandomLengthString(64);
    seg.no_speech_prob = fdp.ConsumeFloatingPoint<float>();
    seg.speaker_turn_next = fdp.ConsumeBool();
    seg.tokens.resize(fdp.ConsumeIntegralInRange<int>(0, 8));
    for (whisper_token_data& t : seg.tokens) {
      t.id = fdp.ConsumeIntegral<whisper_token>();
      t.tid = fdp.ConsumeIntegral<whisper_token>();
      t.p = fdp.ConsumeFloatingPoint<float>();
      t.plog = fdp.ConsumeFloatingPoint<float>();
      t.pt = fdp.ConsumeProbability<float>();
      t.ptsum = fdp.ConsumeProbability<float>();
      t.t0 = Time(fdp);
      t.t1 = Time(fdp);
      t.t_dtw = Time(fdp);
      t.vlen = fdp.ConsumeFloatingPoint<float>();
    }
  }
  whisper::JsonInfo info;
  info.model_path = fdp.ConsumeRandomLengthString(32);
  info.language = fdp.ConsumeRandomLengthString(8);
  info.model_type = fdp.ConsumeRandomLengthString(8);
  info.multilingual = fdp.ConsumeBool();
  info.translate = fdp.ConsumeBool();
  info.n_vocab = fdp.ConsumeIntegral<int>();
  const int offset_n = fdp.ConsumeIntegral<int>();

  (void)whisper::FormatTimestamp(Time(fdp), fdp.ConsumeBool());
  (void)whisper::FormatTxt(segments);
  (void)whisper::FormatVtt(segments);
  (void)whisper::FormatSrt(segments, offset_n);
  (void)whisper::FormatLrc(segments);
  (void)whisper::FormatCsv(segments);
  (void)whisper::FormatJson(segments, info);
  (void)whisper::FormatJson(segments, info, token_text);
  return 0;
}
