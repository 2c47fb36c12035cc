#include "train/bpe/merge_queue.h"

#include <algorithm>
#include <cstring>

namespace tokenmill {

bool MergeQueue::TieBefore(PairKey x, PairKey y) const {
  return id_ties_ ? x < y : PairBytesBefore(tokens_, x, y);
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

namespace {

int Tier(uint64_t count) { return 63 - __builtin_clzll(count); }  // count > 0

}  // namespace

size_t MergeQueue::size() const {
  size_t n = heap_.size();
  for (int k = 0; k < heaped_tier_; ++k) n += waiting_[k].size();
  return n;
}

void MergeQueue::Fill(std::span<const PairKey> keys, std::span<const uint64_t> counts) {
  FillWith([&](auto&& f) {
    for (size_t i = 0; i < keys.size(); ++i) f(keys[i], counts[i]);
  });
}

void MergeQueue::Fill(const PairsByLeft& pairs) {
  FillWith([&](auto&& f) {
    pairs.ForEach(0, pairs.groups.size(),
                  [&](PairKey key, uint64_t count, uint64_t, uint64_t) { f(key, count); });
  });
}

template <typename ForEach>
void MergeQueue::FillWith(ForEach&& for_each) {
  heap_.clear();
  for (std::vector<Entry>& w : waiting_) w.clear();
  // The tiers, highest first, that make up at least min_heap_ entries go to the heap.
  size_t in_tier[64] = {};
  for_each([&](PairKey, uint64_t count) { ++in_tier[Tier(count)]; });
  heaped_tier_ = 64;
  size_t heaped = 0;
  while (heaped_tier_ > 0 && heaped < min_heap_) heaped += in_tier[--heaped_tier_];
  floor_ = heaped_tier_ > 0 ? uint64_t{1} << heaped_tier_ : 0;
  heap_.reserve(heaped);
  for (int k = 0; k < heaped_tier_; ++k) waiting_[k].reserve(in_tier[k]);
  for_each([&](PairKey key, uint64_t count) {
    const int tier = Tier(count);
    (tier >= heaped_tier_ ? heap_ : waiting_[tier]).push_back({count, key});
  });
  MakeHeap();
}

void MergeQueue::MakeHeap() {
  // Up to a few entries per token, ties are compared through the tokens' bytes (After): a
  // resumed linux_c_100m run heaps 38k pairs over 30k tokens in 0.7 ms this way, against 3 ms
  // with the token ranks below (most of it sorting the tokens); poetry, 115k pairs: 1.5 ms
  // against 4 ms.
  if (id_ties_ || heap_.size() < 8 * tokens_.size()) {
    std::make_heap(heap_.begin(), heap_.end(),
                   [this](const Entry& x, const Entry& y) { return After(x, y); });
    return;
  }
  // Millions of pairs share a few small counts, so most comparisons are ties: compare the
  // tokens' ranks in byte order (the same order as comparing their bytes, without touching
  // the strings).
  // The sort compares each token's first 8 bytes as one big-endian integer (zero-padded: where
  // two such prefixes differ, the strings compare the same way) and only equal prefixes by
  // their bytes (for a resumed linux_c_100m run with ranks, 30k tokens: the index and queue
  // step took 3.7 ms instead of 5.8 ms).
  struct ByBytes {
    uint64_t prefix;
    TokenId id;
  };
  std::vector<ByBytes> by_bytes(tokens_.size());
  for (TokenId id = 0; id < by_bytes.size(); ++id) {
    const std::string& t = tokens_[id];
    unsigned char prefix[8] = {};
    std::memcpy(prefix, t.data(), std::min<size_t>(t.size(), 8));
    uint64_t key = 0;
    for (unsigned char c : prefix) key = key << 8 | c;
    by_bytes[id] = {key, id};
  }
  std::sort(by_bytes.begin(), by_bytes.end(), [this](const ByBytes& a, const ByBytes& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return tokens_[a.id] < tokens_[b.id];
  });
  std::vector<uint32_t> rank(tokens_.size());
  for (uint32_t r = 0; r < by_bytes.size(); ++r) rank[by_bytes[r].id] = r;
  auto tie_key = [&rank](PairKey key) {
    return uint64_t{rank[PairLeft(key)]} << 32 | rank[PairRight(key)];
  };
  std::make_heap(heap_.begin(), heap_.end(), [&](const Entry& x, const Entry& y) {
    if (x.count != y.count) return x.count < y.count;
    return tie_key(x.key) > tie_key(y.key);
  });
}

bool MergeQueue::HeapNextTier() {
  while (heaped_tier_ > 0 && waiting_[heaped_tier_ - 1].empty()) --heaped_tier_;
  if (heaped_tier_ == 0) {
    floor_ = 0;
    return false;
  }
  std::vector<Entry>& tier = waiting_[--heaped_tier_];
  floor_ = heaped_tier_ > 0 ? uint64_t{1} << heaped_tier_ : 0;
  if (tier.size() < heap_.size() / 8) {
    for (const Entry& e : tier) Push(e.count, e.key);
  } else {
    heap_.insert(heap_.end(), tier.begin(), tier.end());
    MakeHeap();
  }
  std::vector<Entry>().swap(tier);
  return true;
}

bool MergeQueue::PopBest(const PairIndex& pairs, PairKey* best) {
  auto after = [this](const Entry& x, const Entry& y) { return After(x, y); };
  while (true) {
    if (heap_.empty()) {
      if (!HeapNextTier()) return false;
      continue;
    }
    std::pop_heap(heap_.begin(), heap_.end(), after);
    Entry top = heap_.back();
    heap_.pop_back();
    uint64_t current = pairs.count(top.key);
    if (current == 0 || top.count < current) continue;
    if (top.count > current) {
      Push(current, top.key);
      continue;
    }
    if (top.count < floor_) {  // a waiting entry may beat it
      Push(top.count, top.key);
      HeapNextTier();
      continue;
    }
    *best = top.key;
    return true;
  }
}

}  // namespace tokenmill
