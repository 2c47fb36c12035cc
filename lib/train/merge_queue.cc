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

void MergeQueue::Fill(const PairIndex& pairs) {
  heap_.clear();
  pairs.ForEach([&](PairKey key, uint64_t count) { heap_.push_back({count, key}); });
  std::make_heap(heap_.begin(), heap_.end(),
                 [this](const Entry& x, const Entry& y) { return After(x, y); });
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
