#include "train/pair_table.h"

#include <cassert>

namespace tokenmill {

void PairTable::SetInitial(std::vector<PairKey> keys, std::vector<uint64_t> counts,
                           std::vector<uint32_t> flat_words, std::vector<uint64_t> offsets) {
  assert(keys_.empty() && keys.size() == counts.size() && offsets.size() == keys.size() + 1);
  num_initial_ = static_cast<uint32_t>(keys.size());
  index_.reserve(keys.size());
  for (uint32_t p = 0; p < keys.size(); ++p) index_.emplace(keys[p], p);
  keys_ = std::move(keys);
  counts_ = std::move(counts);
  flat_words_ = std::move(flat_words);
  offsets_ = std::move(offsets);
  initial_taken_.assign(num_initial_, false);
  dynamic_words_.resize(num_initial_);
}

int64_t PairTable::Find(PairKey key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

uint32_t PairTable::FindOrAdd(PairKey key) {
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(keys_.size()));
  if (inserted) {
    keys_.push_back(key);
    counts_.push_back(0);
    dynamic_words_.emplace_back();
  }
  return it->second;
}

void PairTable::AddCount(uint32_t p, int64_t delta) {
  assert(delta >= 0 || counts_[p] >= static_cast<uint64_t>(-delta));
  counts_[p] += static_cast<uint64_t>(delta);
  if (counts_[p] == 0) {
    std::vector<uint32_t>().swap(dynamic_words_[p]);
    if (p < num_initial_) initial_taken_[p] = true;
  }
}

std::vector<uint32_t> PairTable::TakeWordsAndClear(uint32_t p) {
  std::vector<uint32_t> words = std::move(dynamic_words_[p]);
  dynamic_words_[p] = {};
  if (p < num_initial_ && !initial_taken_[p]) {
    initial_taken_[p] = true;
    words.insert(words.begin(), flat_words_.begin() + static_cast<ptrdiff_t>(offsets_[p]),
                 flat_words_.begin() + static_cast<ptrdiff_t>(offsets_[p + 1]));
  }
  counts_[p] = 0;
  return words;
}

}  // namespace tokenmill
