#include "train/bpe/merge_deltas.h"

#include <algorithm>

namespace tokenmill {

void MergeDeltas::Begin(uint32_t num_slots, uint32_t stamp) {
  if (sums_.size() < num_slots) {
    // Grow by an eighth (the vocabulary grows by one id per merge), not by doubling.
    const size_t n = num_slots + num_slots / 8 + 1024;
    sums_.reserve(n);
    sums_.resize(n, 0);
    seen_.reserve(n);
    seen_.resize(n, 0);
  }
  if (stamp_ != stamp) {
    stamp_ = stamp;
    touched_.clear();
  }
}

void MergeDeltas::FinishWord(const MergeSlots& slots, WordRef word,
                             std::vector<RisenWord>& risen) {
  // A word usually reports 2-4 changes; many occurrences in one word are sorted instead of
  // netted quadratically.
  size_t out = 0;
  if (pending_.size() > 16) {
    std::sort(pending_.begin(), pending_.end());
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (out > 0 && pending_[out - 1].first == pending_[i].first) {
        pending_[out - 1].second += pending_[i].second;
      } else {
        pending_[out++] = pending_[i];
      }
    }
  } else {
    for (size_t i = 0; i < pending_.size(); ++i) {
      size_t k = 0;
      while (k < out && pending_[k].first != pending_[i].first) ++k;
      if (k < out) {
        pending_[k].second += pending_[i].second;
      } else {
        pending_[out++] = pending_[i];
      }
    }
  }
  for (size_t i = 0; i < out; ++i) {
    const auto [key, net] = pending_[i];
    if (net == 0) continue;
    const uint32_t slot = slots.SlotOf(key);
    if (seen_[slot] != stamp_) {
      seen_[slot] = stamp_;
      sums_[slot] = 0;
      touched_.push_back(slot);
    }
    sums_[slot] += net;
    if (net > 0) risen.push_back({slot, word});
  }
}

}  // namespace tokenmill
