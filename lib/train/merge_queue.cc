#include "train/merge_queue.h"

#include <algorithm>

namespace tokenmill {

bool MergeQueue::TieBefore(PairKey x, PairKey y) const {
  if (id_ties_) return x < y;
  TokenId xl = PairLeft(x), yl = PairLeft(y);
  if (xl != yl) return tokens_[xl] < tokens_[yl];  // distinct ids have distinct bytes
  return tokens_[PairRight(x)] < tokens_[PairRight(y)];
}

bool MergeQueue::After(const Entry& x, const Entry& y) const {
  if (x.count != y.count) return x.count < y.count;
  return x.key != y.key && TieBefore(y.key, x.key);
}

void MergeQueue::Push(uint64_t count, PairKey key) {
  heap_.push_back({count, key});
  std::push_heap(heap_.begin(), heap_.end(),
                 [this](const Entry& x, const Entry& y) { return After(x, y); });
}

void MergeQueue::Fill(std::span<const PairKey> keys, std::span<const uint64_t> counts) {
  heap_.clear();
  heap_.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) heap_.push_back({counts[i], keys[i]});
  if (id_ties_) {
    std::make_heap(heap_.begin(), heap_.end(),
                   [this](const Entry& x, const Entry& y) { return After(x, y); });
    return;
  }
  // Millions of pairs share a few small counts, so most comparisons are ties: compare the
  // tokens' ranks in byte order (the same order as comparing their bytes, without touching
  // the strings).
  std::vector<TokenId> by_bytes(tokens_.size());
  for (TokenId id = 0; id < by_bytes.size(); ++id) by_bytes[id] = id;
  std::sort(by_bytes.begin(), by_bytes.end(),
            [this](TokenId a, TokenId b) { return tokens_[a] < tokens_[b]; });
  std::vector<uint32_t> rank(tokens_.size());
  for (uint32_t r = 0; r < by_bytes.size(); ++r) rank[by_bytes[r]] = r;
  auto tie_key = [&rank](PairKey key) {
    return uint64_t{rank[PairLeft(key)]} << 32 | rank[PairRight(key)];
  };
  std::make_heap(heap_.begin(), heap_.end(), [&](const Entry& x, const Entry& y) {
    if (x.count != y.count) return x.count < y.count;
    return tie_key(x.key) > tie_key(y.key);
  });
}

bool MergeQueue::PopBest(const PairIndex& pairs, PairKey* best) {
  auto after = [this](const Entry& x, const Entry& y) { return After(x, y); };
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), after);
    Entry top = heap_.back();
    heap_.pop_back();
    uint64_t current = pairs.count(top.key);
    if (current == 0 || top.count < current) continue;
    if (top.count > current) {
      Push(current, top.key);
      continue;
    }
    *best = top.key;
    return true;
  }
  return false;
}

}  // namespace tokenmill
