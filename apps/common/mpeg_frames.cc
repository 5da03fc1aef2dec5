#include "apps/common/mpeg_frames.h"

#include <cstring>

namespace whisper {
namespace {

// One parsed frame header.
struct FrameHeader {
  int version = 0;  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  int layer = 0;    // 1, 2 or 3
  int sample_rate = 0;
  int length = 0;  // bytes, header included
  bool mono = false;
};

// kbit/s by [lsf][layer - 1][index] (lsf: MPEG-2 and 2.5), ISO/IEC 11172-3 table and 13818-3 2.4.2.3.
constexpr int kBitrates[2][3][15] = {
    {{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
     {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
     {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}},
    {{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
     {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
     {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}}};
constexpr int kRates[3] = {44100, 48000, 32000};  // MPEG-1; MPEG-2 halves them, MPEG-2.5 quarters

// The header at p (4 bytes available), or false: no sync, a reserved version, layer, rate or
// bitrate index, or a free-format frame (bitrate index 0: no length in the header).
bool ParseHeader(const unsigned char* p, FrameHeader* h) {
  if (p[0] != 0xFF || (p[1] & 0xE0) != 0xE0) return false;
  const int version = (p[1] >> 3) & 3, layer_bits = (p[1] >> 1) & 3;
  const int bitrate_index = p[2] >> 4, rate_index = (p[2] >> 2) & 3, padding = (p[2] >> 1) & 1;
  if (version == 1 || layer_bits == 0 || bitrate_index == 0 || bitrate_index == 15 || rate_index == 3) return false;
  h->version = version;
  h->layer = 4 - layer_bits;
  const int lsf = version == 3 ? 0 : 1;
  h->sample_rate = kRates[rate_index] >> (version == 3 ? 0 : version == 2 ? 1 : 2);
  const int bitrate = kBitrates[lsf][h->layer - 1][bitrate_index] * 1000;
  if (h->layer == 1) {
    h->length = (12 * bitrate / h->sample_rate + padding) * 4;
  } else {
    h->length = (h->layer == 3 && lsf ? 72 : 144) * bitrate / h->sample_rate + padding;
  }
  h->mono = (p[3] >> 6) == 3;
  return h->length >= 4;
}

// Bytes of an ID3v2 tag at p (10-byte header, syncsafe size, optional 10-byte footer), or 0.
size_t Id3v2Size(const unsigned char* p, size_t left) {
  if (left < 10 || std::memcmp(p, "ID3", 3) != 0 || ((p[6] | p[7] | p[8] | p[9]) & 0x80) != 0) return 0;
  const size_t body = (size_t{p[6]} << 21) | (size_t{p[7]} << 14) | (size_t{p[8]} << 7) | p[9];
  return 10 + body + ((p[5] & 0x10) != 0 ? 10 : 0);
}

uint32_t Be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// The Xing/Info header of the layer III frame at p (`h`, within `left` bytes): its tag sits after
// the side information (17 or 32 bytes for MPEG-1 mono or stereo, 9 or 17 for MPEG-2/2.5).
// Records every such frame's tag offset; the first frame's count too (first = true).
void ReadXing(const unsigned char* p, size_t left, const FrameHeader& h, size_t frame_offset, bool first,
              MpegScan* scan) {
  if (h.layer != 3) return;
  const size_t side = h.version == 3 ? (h.mono ? 17 : 32) : (h.mono ? 9 : 17);
  const size_t tag = 4 + side;
  if (tag + 12 > left || tag + 12 > static_cast<size_t>(h.length)) return;
  if (std::memcmp(p + tag, "Xing", 4) != 0 && std::memcmp(p + tag, "Info", 4) != 0) return;
  scan->info_tag_offsets.push_back(frame_offset + tag);
  if (!first || (Be32(p + tag + 4) & 1) == 0) return;  // no frame count
  scan->xing_flags = Be32(p + tag + 4);
  scan->xing_frames = Be32(p + tag + 8);
  scan->xing_tag_offset = frame_offset + tag;
}

}  // namespace

MpegScan ScanMpegFrames(const unsigned char* data, size_t size) {
  MpegScan scan;
  FrameHeader first;
  size_t at = 0;
  while (at + 4 <= size) {
    if (const size_t tag = Id3v2Size(data + at, size - at); tag > 0) {
      at += tag;
      continue;
    }
    if (size - at >= 128 && std::memcmp(data + at, "TAG", 3) == 0 && scan.frames > 0) {
      at += 128;
      continue;
    }
    FrameHeader h;
    const bool same = ParseHeader(data + at, &h) &&
                      (scan.frames == 0 || (h.version == first.version && h.layer == first.layer &&
                                            h.sample_rate == first.sample_rate));
    if (!same || static_cast<size_t>(h.length) > size - at) {
      ++at;
      continue;
    }
    if (scan.frames == 0) {
      first = h;
      scan.first_frame_offset = at;
      scan.sample_rate = h.sample_rate;
      scan.samples_per_frame = h.layer == 1 ? 384 : h.layer == 2 || h.version == 3 ? 1152 : 576;
    }
    ReadXing(data + at, size - at, h, at, scan.frames == 0, &scan);
    ++scan.frames;
    at += static_cast<size_t>(h.length);
  }
  return scan;
}

std::vector<unsigned char> WithXingCountOfTheWholeStream(const unsigned char* data, size_t size,
                                                         const MpegScan& scan) {
  std::vector<unsigned char> out(data, data + size);
  if (scan.xing_frames < 0 || scan.frames < 1) return out;
  auto put_be32 = [&out](size_t at, uint64_t v) {
    const uint32_t x = v > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) out[at + i] = static_cast<unsigned char>(x >> (24 - 8 * i));
  };
  put_be32(scan.xing_tag_offset + 8, static_cast<uint64_t>(scan.frames - 1));  // the header's own frame not counted
  if ((scan.xing_flags & 2) != 0 && scan.xing_tag_offset + 16 <= size) {
    put_be32(scan.xing_tag_offset + 12, size - scan.first_frame_offset);
  }
  for (const size_t tag : scan.info_tag_offsets) {
    if (tag != scan.xing_tag_offset) std::memset(out.data() + tag, 0, 4);
  }
  return out;
}

bool XingCountsTooFewFrames(const MpegScan& scan) {
  return scan.xing_frames >= 0 && scan.frames > scan.xing_frames + 1 + scan.xing_frames / 100;
}

}  // namespace whisper
