#include "train/pair_index.h"

#include <algorithm>
#include <cassert>

namespace tokenmill {

void PairIndex::Release(const Pair& pair) {
  if (pair.num_words == 0) return;
  Block& block = blocks_[pair.block];
  if (--block.live_pairs == 0) retired_.push_back(std::move(block.words));
}

uint64_t PairIndex::AddCount(PairKey key, int64_t delta) {
  auto [it, inserted] = pairs_.try_emplace(key);
  Pair& pair = it->second;
  assert(delta >= 0 || pair.count >= static_cast<uint64_t>(-delta));
  pair.count += static_cast<uint64_t>(delta);
  const uint64_t count = pair.count;
  if (count == 0) {
    Release(pair);
    pairs_.erase(it);
    if (!extra_.empty()) extra_.erase(key);
  }
  return count;
}

void PairIndex::AddWordBlock(HugeArray<WordRef> words, std::span<const PairKey> keys,
                             std::span<const uint64_t> offsets) {
  retired_.clear();
  const uint32_t block = static_cast<uint32_t>(blocks_.size());
  uint32_t live = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t begin = offsets[i], end = offsets[i + 1];
    if (begin == end) continue;
    auto it = pairs_.find(keys[i]);
    if (it == pairs_.end()) continue;  // its count went back to zero: it occurs nowhere
    Pair& pair = it->second;
    if (pair.num_words == 0 && !extra_.contains(keys[i])) {
      pair.words = words.data() + begin;
      pair.num_words = static_cast<uint32_t>(end - begin);
      pair.block = block;
      ++live;
    } else {
      std::vector<WordRef>& extra = extra_[keys[i]];
      extra.insert(extra.end(), words.data() + begin, words.data() + end);
    }
  }
  blocks_.push_back({live > 0 ? std::move(words) : HugeArray<WordRef>(), live});
}

void PairIndex::Build(HugeArray<WordRef> words, std::span<const PairKey> keys,
                      std::span<const uint64_t> counts, std::span<const uint64_t> offsets) {
  assert(pairs_.empty() && blocks_.empty());
  pairs_.reserve(keys.size());
  const uint32_t block = 0;
  uint32_t live = 0;
  // Each insertion misses the cache (millions of pairs); asking for the slot a few pairs ahead
  // overlaps the misses.
  constexpr size_t kPrefetchAhead = 8;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + kPrefetchAhead < keys.size()) pairs_.prefetch(keys[i + kPrefetchAhead]);
    assert(counts[i] > 0);
    const uint64_t begin = offsets[i], end = offsets[i + 1];
    Pair pair{.count = counts[i], .words = words.data() + begin,
              .num_words = static_cast<uint32_t>(end - begin), .block = block};
    if (pair.num_words == 0) pair.words = nullptr;
    live += pair.num_words > 0;
    pairs_.emplace(keys[i], pair);
  }
  blocks_.push_back({live > 0 ? std::move(words) : HugeArray<WordRef>(), live});
}

std::span<const WordRef> PairIndex::TakeWords(PairKey key) {
  retired_.clear();
  auto it = pairs_.find(key);
  if (it == pairs_.end()) return {};
  const Pair pair = it->second;
  pairs_.erase(it);
  std::span<const WordRef> words(pair.words, pair.num_words);
  auto extra = extra_.find(key);
  if (extra == extra_.end()) {
    Release(pair);  // the block outlives this call: retired blocks are freed at the next one
    return words;
  }
  scratch_ = std::move(extra->second);
  extra_.erase(extra);
  scratch_.insert(scratch_.end(), words.begin(), words.end());
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  Release(pair);
  return scratch_;
}

}  // namespace tokenmill
