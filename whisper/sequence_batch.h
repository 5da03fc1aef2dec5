// The sequences that decode together, step after step, over one InferenceState: continuous
// batching (a finished sequence leaves, a new one joins at the next step) for a batched pipeline
// of many windows and for a server's requests in flight.
//
// A member is a SequenceStep (whisper/state.h): its decoder (self KV cache and logits), its window
// (cross K/V slot), the token it decodes at the next Step and that token's position n_past.
// Step() runs one InferenceState::DecodeSequences over all members, so every weight matrix is read
// once for the batch, then advances each member's n_past by one; the caller reads each member's
// logits (state->logits(decoder)), picks its next token (SetToken) or lets it leave (Leave), and
// may Join new sequences (after their prompt pass, InferenceState::Decode with their window).
// Members of one window are kept next to each other (beams of one window then share one
// cross-attention product, whisper/decoder.h).
//
// Memory: the member list holds up to state->n_decoders() entries, reserved by the constructor;
// Join, Leave, SetToken and Step allocate nothing (the state's step is allocation-free too).
// Not thread-safe; one batch per state.
#ifndef GGML_WHISPER_WHISPER_SEQUENCE_BATCH_H_
#define GGML_WHISPER_WHISPER_SEQUENCE_BATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "whisper/state.h"

namespace whisper {

class SequenceBatch {
 public:
  // A batch over `state` (not owned; it must outlive the batch), empty, with room for
  // state->n_decoders() members.
  explicit SequenceBatch(InferenceState* state);

  // Adds the sequence of `decoder` attending to `window`, whose next token `token` is decoded at
  // position n_past of its cache at the next Step (positions [0, n_past) hold its prompt, decoded
  // before with state->Decode(decoder, ..., window)). Placed after the last member of the same
  // window (or last). Errors: InvalidArgument for a decoder or window out of range, a decoder
  // already in the batch, a token not in [0, n_vocab) or n_past not in [0, n_text_ctx).
  absl::Status Join(int decoder, int window, int32_t token, int n_past);
  // Removes decoder's sequence (NotFound when it is not a member); its cache and logits stay.
  absl::Status Leave(int decoder);
  // The token decoder's sequence decodes at the next Step (at its current n_past). Errors:
  // NotFound for a non-member, InvalidArgument for a token not in [0, n_vocab).
  absl::Status SetToken(int decoder, int32_t token);
  // One step of every member (InferenceState::DecodeSequences): each member's logits are then
  // state->logits(decoder) and its n_past has grown by one, and each needs SetToken (or Leave)
  // before the next Step. Errors: FailedPrecondition for an empty batch or a member whose token
  // was not set since the last Step; a member whose n_past reached n_text_ctx (InvalidArgument,
  // from the state: let it Leave); the state's errors (nothing advances then).
  absl::Status Step();

  int size() const { return static_cast<int>(members_.size()); }
  // Member i in [0, size()), in step order.
  const SequenceStep& member(int i) const { return members_[i]; }
  // Index of decoder's member, or -1.
  int Find(int decoder) const;

 private:
  InferenceState* state_;
  std::vector<SequenceStep> members_;  // capacity n_decoders, reserved at construction
  std::vector<uint8_t> token_set_;     // [n_decoders]: 1 once the member's next token is set
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_SEQUENCE_BATCH_H_
