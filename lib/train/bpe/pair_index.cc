#include "train/bpe/pair_index.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>

#include "oneapi/tbb/parallel_for.h"

namespace tokenmill {

void PairIndex::Release(const Pair& pair) {
  if (pair.num_words == 0) return;
  Block& block = blocks_[pair.block];
  if (--block.live_pairs == 0) retired_.push_back(std::move(block.words));
}

size_t PairIndex::size() const {
  size_t n = main_.size();
  if (shards_ != nullptr) {
    for (size_t s = 0; s < kShards; ++s) n += shards_[s].size();
  }
  return n;
}

uint64_t PairIndex::AddCount(PairKey key, int64_t delta) {
  Map& map = MapOf(key);
  Map::iterator it;
  if (partial_ && delta < 0) {
    it = map.find(key);
    if (it == map.end()) return 0;  // a pair left out, becoming rarer still
  } else {
    it = map.try_emplace(key).first;
  }
  Pair& pair = it->second;
  assert(delta >= 0 || pair.count >= static_cast<uint64_t>(-delta));
  pair.count += static_cast<uint64_t>(delta);
  const uint64_t count = pair.count;
  if (count == 0) {
    Release(pair);
    map.erase(it);
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
    Map& map = MapOf(keys[i]);
    auto it = map.find(keys[i]);
    if (it == map.end()) continue;  // its count went back to zero: it occurs nowhere
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

void PairIndex::Build(HugeArray<WordRef> words, const PairsByLeft& pairs) {
  assert(size() == 0 && blocks_.empty());
  const size_t lefts = pairs.groups.size();
  size_t n = 0;
  for (const std::vector<RightPair>& g : pairs.groups) n += g.size();
  // Shards are ranges of left tokens holding about n / kShards pairs each (a left token's
  // pairs are never split), so each shard fills from one run of groups.
  shard_of_left_.assign(lefts, 0);
  shards_ = std::make_unique<Map[]>(kShards);
  shard_lefts_ = static_cast<TokenId>(lefts);
  std::array<size_t, kShards + 1> first_left{};
  size_t l = 0, seen = 0;
  for (size_t s = 0; s < kShards; ++s) {
    first_left[s] = l;
    const size_t target = n * (s + 1) / kShards;
    while (l < lefts && (seen < target || pairs.groups[l].empty())) {
      shard_of_left_[l] = static_cast<uint8_t>(s);
      seen += pairs.groups[l].size();
      ++l;
    }
  }
  first_left[kShards] = lefts;
  const uint32_t block = 0;
  std::atomic<uint32_t> live{0};
  tbb::parallel_for(size_t{0}, kShards, [&](size_t s) {
    Map& map = shards_[s];
    size_t in_shard = 0;
    for (size_t k = first_left[s]; k < first_left[s + 1]; ++k) in_shard += pairs.groups[k].size();
    map.reserve(in_shard);
    uint32_t shard_live = 0;
    // Each insertion misses the cache; asking for the slot a few pairs ahead overlaps them.
    constexpr size_t kPrefetchAhead = 8;
    size_t ahead_left = first_left[s], ahead_j = 0;
    auto prefetch_next = [&] {
      while (ahead_left < first_left[s + 1] && ahead_j == pairs.groups[ahead_left].size()) {
        ++ahead_left;
        ahead_j = 0;
      }
      if (ahead_left == first_left[s + 1]) return;
      map.prefetch(MakePairKey(static_cast<TokenId>(ahead_left),
                               pairs.groups[ahead_left][ahead_j++].right));
    };
    for (size_t k = 0; k < kPrefetchAhead; ++k) prefetch_next();
    pairs.ForEach(first_left[s], first_left[s + 1],
                  [&](PairKey key, uint64_t count, uint64_t begin, uint64_t end) {
                    prefetch_next();
                    assert(count > 0);
                    Pair pair{.count = count, .words = words.data() + begin,
                              .num_words = static_cast<uint32_t>(end - begin), .block = block};
                    if (pair.num_words == 0) pair.words = nullptr;
                    shard_live += pair.num_words > 0;
                    map.emplace(key, pair);
                  });
    live += shard_live;
  });
  blocks_.push_back({live > 0 ? std::move(words) : HugeArray<WordRef>(), live.load()});
}

std::span<const WordRef> PairIndex::TakeWords(PairKey key) {
  retired_.clear();
  Map& map = MapOf(key);
  auto it = map.find(key);
  if (it == map.end()) return {};
  const Pair pair = it->second;
  map.erase(it);
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
