#include "train/pair_deltas.h"

#include <algorithm>

namespace tokenmill {

void PairDeltas::Clear() {
  slot_of_.clear();
  keys_.clear();
  sums_.clear();
  risen_.clear();
  pending_.clear();
}

uint32_t PairDeltas::SlotOf(PairKey key) {
  auto [it, inserted] = slot_of_.try_emplace(key, static_cast<uint32_t>(keys_.size()));
  if (inserted) {
    keys_.push_back(key);
    sums_.push_back(0);
  }
  return it->second;
}

void PairDeltas::EndWord() {
  // Net the word's reports per pair. A word usually reports 2-4 changes; a word with many
  // occurrences is sorted instead of scanned quadratically.
  if (pending_.size() > 16) {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    size_t out = 0;
    for (size_t i = 0; i < pending_.size();) {
      size_t j = i;
      int64_t net = 0;
      for (; j < pending_.size() && pending_[j].first == pending_[i].first; ++j) {
        net += pending_[j].second;
      }
      pending_[out++] = {pending_[i].first, net};
      i = j;
    }
    pending_.resize(out);
  } else {
    size_t out = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      size_t k = 0;
      while (k < out && pending_[k].first != pending_[i].first) ++k;
      if (k < out) {
        pending_[k].second += pending_[i].second;
      } else {
        pending_[out++] = pending_[i];
      }
    }
    pending_.resize(out);
  }
  for (const auto& [key, net] : pending_) {
    if (net == 0) continue;
    uint32_t slot = SlotOf(key);
    sums_[slot] += net;
    if (net > 0) risen_.push_back({slot, word_});
  }
  pending_.clear();
}

}  // namespace tokenmill
