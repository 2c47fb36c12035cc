// MergeQueue: the mergeable pairs ordered by count, highest first, as a binary max-heap with
// lazy invalidation.
//
// Contract:
//  - Order: higher count first; among equal counts, with byte ties the pair smaller by (left
//    token's bytes, right token's bytes) lexicographically, with id ties (hf_compat) the pair
//    smaller by (left id, right id). Distinct pairs never compare equal, so the order is total
//    and the pops do not depend on push order.
//  - The caller pushes (count, pair) whenever a pair's count rises (including when it first
//    appears) and never needs to remove anything: PopBest() drops entries of pairs whose count
//    is now zero, drops entries below the current count (a fresher entry exists) and re-queues
//    entries above it at the current count. Invariant kept by the caller: every pair with a
//    non-zero count has an entry with at least its current count.
//
// Performance notes:
//  - Count buckets are the alternative to the heap; they were not tried, because the heap's
//    pops and pushes are a small share of the merge loop (PopBest + Push 3-5% of a poetry
//    profile; the heap holds one entry per count rise, a few million at most).
//  - Fill (a resumed run: millions of pairs, most with small counts) heaps only the pairs of
//    the highest counts, at least min_heap of them, by power-of-two count tiers; the lower
//    tiers wait aside, unordered, and are heaped one tier at a time when a pop reaches their
//    counts (never, when training stops before). Every waiting entry's count is below
//    floor_, so a pop of count >= floor_ beats them all. (Poetry resumed at 30k merges: Fill
//    took 0.22 s to heap 5.5 M pairs.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "train/bpe/pair_index.h"

namespace tokenmill {

class MergeQueue {
 public:
  // Fill heaps at least this many entries (or all) at once.
  static constexpr size_t kMinHeap = size_t{1} << 16;

  // `tokens` (the bytes of every id) must outlive the queue; it may grow. `min_heap`: see
  // Fill (tests make it small).
  MergeQueue(const std::vector<std::string>& tokens, bool id_ties, size_t min_heap = kMinHeap)
      : tokens_(tokens), id_ties_(id_ties), min_heap_(std::max<size_t>(min_heap, 1)) {}

  void Push(uint64_t count, PairKey key);
  // Builds the heap from all pairs with their counts (initial fill): pair keys[i] has count
  // counts[i]. Needs no PairIndex, so it may run while the index is built.
  void Fill(std::span<const PairKey> keys, std::span<const uint64_t> counts);
  // The same from pairs grouped by left token (a resumed run's).
  void Fill(const PairsByLeft& pairs);
  // Sets *best to the pair with the highest current count (by the order above) and removes it
  // from the queue; false when no pair has a non-zero count.
  bool PopBest(const PairIndex& pairs, PairKey* best);
  // Entries queued, in the heap or waiting.
  size_t size() const;

 private:
  struct Entry {
    uint64_t count;
    PairKey key;
  };
  // True when x is to be merged after y (x is "less" in the max-heap).
  bool After(const Entry& x, const Entry& y) const;
  bool TieBefore(PairKey x, PairKey y) const;
  // Fill's work: for_each(f) calls f(key, count) for every pair.
  template <typename ForEach>
  void FillWith(ForEach&& for_each);
  // Heaps all of heap_ at once, comparing ties by the tokens' ranks (fast for millions).
  void MakeHeap();
  // Moves the highest waiting tier into the heap; false when none waits.
  bool HeapNextTier();

  const std::vector<std::string>& tokens_;
  bool id_ties_;
  size_t min_heap_;
  std::vector<Entry> heap_;
  // waiting_[k]: entries of counts in [2^k, 2^(k+1)) not yet in the heap, for k < heaped_tier_.
  std::vector<Entry> waiting_[64];
  int heaped_tier_ = 0;  // tiers >= this are in the heap
  uint64_t floor_ = 0;   // every waiting entry's count is below this
};

}  // namespace tokenmill
