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

void MergeQueue::Push(uint64_t count, PairKey key, uint32_t pair) {
  heap_.push_back({count, key, pair});
  std::push_heap(heap_.begin(), heap_.end(),
                 [this](const Entry& x, const Entry& y) { return After(x, y); });
}

void MergeQueue::Fill(const PairTable& pairs) {
  heap_.clear();
  for (uint32_t p = 0; p < pairs.size(); ++p) {
    if (pairs.count(p) > 0) heap_.push_back({pairs.count(p), pairs.key(p), p});
  }
  std::make_heap(heap_.begin(), heap_.end(),
                 [this](const Entry& x, const Entry& y) { return After(x, y); });
}

int64_t MergeQueue::PopBest(const PairTable& pairs) {
  auto after = [this](const Entry& x, const Entry& y) { return After(x, y); };
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), after);
    Entry top = heap_.back();
    heap_.pop_back();
    uint64_t current = pairs.count(top.pair);
    if (current == 0 || top.count < current) continue;
    if (top.count > current) {
      Push(current, top.key, top.pair);
      continue;
    }
    return top.pair;
  }
  return -1;
}

}  // namespace tokenmill
