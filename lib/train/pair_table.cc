#include "train/pair_table.h"

#include <algorithm>
#include <cassert>

namespace tokenmill {

int64_t PairTable::Find(PairKey key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

uint32_t PairTable::FindOrAdd(PairKey key) {
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(pairs_.size()));
  if (inserted) pairs_.push_back({.key = key});
  return it->second;
}

void PairTable::Reserve(size_t pairs) {
  index_.reserve(pairs);
  pairs_.reserve(pairs);
}

void PairTable::Release(Pair& pair) {
  if (pair.num_words > 0) {
    Block& block = blocks_[pair.block];
    if (--block.live_pairs == 0) {
      retired_.push_back(std::move(block.words));
    }
    pair.words = nullptr;
    pair.num_words = 0;
  }
}

void PairTable::AddCount(uint32_t p, int64_t delta) {
  Pair& pair = pairs_[p];
  assert(delta >= 0 || pair.count >= static_cast<uint64_t>(-delta));
  pair.count += static_cast<uint64_t>(delta);
  if (pair.count == 0) {
    Release(pair);
    if (!extra_.empty()) extra_.erase(p);
  }
}

void PairTable::AddWordBlock(HugeArray<WordRef> words, std::span<const uint32_t> pairs,
                             std::span<const uint64_t> offsets) {
  retired_.clear();
  const uint32_t block = static_cast<uint32_t>(blocks_.size());
  uint32_t live = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    Pair& pair = pairs_[pairs[i]];
    const uint64_t begin = offsets[i], end = offsets[i + 1];
    if (begin == end) continue;
    if (pair.num_words == 0 && !extra_.contains(pairs[i])) {
      pair.words = words.data() + begin;
      pair.num_words = static_cast<uint32_t>(end - begin);
      pair.block = block;
      ++live;
    } else {
      std::vector<WordRef>& extra = extra_[pairs[i]];
      extra.insert(extra.end(), words.data() + begin, words.data() + end);
    }
  }
  blocks_.push_back({live > 0 ? std::move(words) : HugeArray<WordRef>(), live});
}

std::span<const WordRef> PairTable::TakeWords(uint32_t p) {
  retired_.clear();
  Pair& pair = pairs_[p];
  pair.count = 0;
  std::span<const WordRef> words(pair.words, pair.num_words);
  auto extra = extra_.find(p);
  if (extra != extra_.end()) {
    scratch_ = std::move(extra->second);
    extra_.erase(extra);
    scratch_.insert(scratch_.end(), words.begin(), words.end());
    std::sort(scratch_.begin(), scratch_.end());
    scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    Release(pair);
    retired_.clear();
    return scratch_;
  }
  Release(pair);
  return words;
}

}  // namespace tokenmill
