// The frame structure of an MPEG audio stream (an .mp3 file's bytes), read without decoding: how
// many frames it holds, and what its Xing/Info header (the LAME/FFmpeg VBR header in the first
// frame) claims. libsndfile decodes MP3 through libmpg123, which stops at the Xing header's frame
// count: files joined end to end (`cat a.mp3 b.mp3 > c.mp3`) decode as the first alone, with only
// mpg123's "Xing stream size off by more than 1%" on stderr. apps/common/audio.cc uses this scan to
// find such streams and decode all of their frames.
#ifndef GGML_WHISPER_APPS_COMMON_MPEG_FRAMES_H_
#define GGML_WHISPER_APPS_COMMON_MPEG_FRAMES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace whisper {

struct MpegScan {
  // Frames found by walking frame headers from the first one (ISO/IEC 11172-3 2.4.1.3 and 13818-3:
  // 11 sync bits, version, layer, bitrate and sample-rate indices, padding bit), counting those of
  // the first frame's version, layer and sample rate; ID3v2 tags (anywhere: joined files each
  // start with one) and ID3v1 "TAG" blocks are skipped; other bytes are skipped one at a time
  // until a header follows. 0 when the data has no MPEG audio frame.
  int64_t frames = 0;
  int samples_per_frame = 0;  // of the first frame: 384 (layer I), 1152 (II; III MPEG-1), 576 (III MPEG-2/2.5)
  int sample_rate = 0;        // Hz, of the first frame
  // The first frame's Xing or Info header (layer III only): its frame count (which leaves out the
  // header's own frame), or -1 when there is no such header or it has no count (flag bit 0).
  int64_t xing_frames = -1;
  size_t xing_tag_offset = 0;  // where its 4-byte "Xing"/"Info" tag is (valid when xing_frames >= 0)
  uint32_t xing_flags = 0;     // the header's flags: 1 frame count, 2 byte count, 4 TOC, 8 quality
  size_t first_frame_offset = 0;  // of the first frame (after a leading ID3v2 tag)
  // Where the tag of every layer III frame that holds a Xing/Info header is: the first's, and in
  // joined files each file's first frame.
  std::vector<size_t> info_tag_offsets;
};

// Scans `size` bytes at `data` (any bytes: never reads past the end). Never fails.
MpegScan ScanMpegFrames(const unsigned char* data, size_t size);

// A copy of the `size` bytes at `data` (scanned as `scan`) that libmpg123 (through libsndfile)
// decodes whole: the first Xing/Info header's frame count set to the frames that follow it and its
// byte count (when it has one) to the bytes from the first frame on, so the length libsndfile
// reads to is the stream's (libmpg123 stops at the header's count; without a header it estimates
// the length from the first frame's bitrate, and libsndfile stops there); the tag of every later
// Xing/Info header blanked, so each such frame decodes as one frame of silence. The first
// header's gapless fields (the LAME tag's encoder delay and padding) still apply, to the whole.
std::vector<unsigned char> WithXingCountOfTheWholeStream(const unsigned char* data, size_t size, const MpegScan& scan);

// Whether the stream holds more frames than its Xing/Info header announces, by more than the
// header's own frame and mpg123's 1% tolerance: files joined end to end, each after the first
// decoded by no one that trusts the header.
bool XingCountsTooFewFrames(const MpegScan& scan);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_MPEG_FRAMES_H_
