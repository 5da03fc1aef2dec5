#include "whisper/sequence_batch.h"

#include "absl/strings/str_format.h"

namespace whisper {

SequenceBatch::SequenceBatch(InferenceState* state) : state_(state) {
  members_.reserve(state->n_decoders());
  token_set_.assign(state->n_decoders(), 0);
}

int SequenceBatch::Find(int decoder) const {
  for (int i = 0; i < size(); ++i) {
    if (members_[i].decoder == decoder) return i;
  }
  return -1;
}

absl::Status SequenceBatch::Join(int decoder, int window, int32_t token, int n_past) {
  const WhisperHparams& h = state_->model().hparams();
  if (decoder < 0 || decoder >= state_->n_decoders() || window < 0 || window >= state_->n_windows()) {
    return absl::InvalidArgumentError(absl::StrFormat("SequenceBatch: decoder %d, window %d (need [0, %d), [0, %d))",
                                                      decoder, window, state_->n_decoders(), state_->n_windows()));
  }
  if (Find(decoder) >= 0) {
    return absl::InvalidArgumentError(absl::StrFormat("SequenceBatch: decoder %d is already in the batch", decoder));
  }
  if (token < 0 || token >= h.n_vocab || n_past < 0 || n_past >= h.n_text_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SequenceBatch: token %d at n_past %d (need [0, %d), [0, %d))", token, n_past, h.n_vocab, h.n_text_ctx));
  }
  int at = size();
  for (int i = 0; i < size(); ++i) {
    if (members_[i].window == window) at = i + 1;
  }
  // Within the reserved capacity (at most n_decoders distinct decoders): no allocation.
  members_.insert(members_.begin() + at, SequenceStep{decoder, window, token, n_past});
  token_set_[decoder] = 1;
  return absl::OkStatus();
}

absl::Status SequenceBatch::Leave(int decoder) {
  const int i = Find(decoder);
  if (i < 0) return absl::NotFoundError(absl::StrFormat("SequenceBatch: decoder %d is not in the batch", decoder));
  members_.erase(members_.begin() + i);
  token_set_[decoder] = 0;
  return absl::OkStatus();
}

absl::Status SequenceBatch::SetToken(int decoder, int32_t token) {
  const int i = Find(decoder);
  if (i < 0) return absl::NotFoundError(absl::StrFormat("SequenceBatch: decoder %d is not in the batch", decoder));
  if (token < 0 || token >= state_->model().hparams().n_vocab) {
    return absl::InvalidArgumentError(absl::StrFormat("SequenceBatch: token %d is not in [0, n_vocab)", token));
  }
  members_[i].token = token;
  token_set_[decoder] = 1;
  return absl::OkStatus();
}

absl::Status SequenceBatch::Step() {
  if (members_.empty()) return absl::FailedPreconditionError("SequenceBatch: no sequence to step");
  for (const SequenceStep& m : members_) {
    if (!token_set_[m.decoder]) {
      return absl::FailedPreconditionError(
          absl::StrFormat("SequenceBatch: decoder %d has no token for this step (SetToken or Leave)", m.decoder));
    }
  }
  absl::Status s = state_->DecodeSequences(members_.data(), size());
  if (!s.ok()) return s;
  for (SequenceStep& m : members_) {
    m.n_past++;
    token_set_[m.decoder] = 0;
  }
  return absl::OkStatus();
}

}  // namespace whisper
