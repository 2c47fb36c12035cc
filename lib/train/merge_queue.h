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
// Performance note: count buckets are the alternative; they were not tried, because the
// heap's pops and pushes are a small share of the merge loop (PopBest + Push 3-5% of a poetry
// profile; the heap holds one entry per count rise, a few million at most).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "train/pair_index.h"

namespace tokenmill {

class MergeQueue {
 public:
  // `tokens` (the bytes of every id) must outlive the queue; it may grow.
  MergeQueue(const std::vector<std::string>& tokens, bool id_ties)
      : tokens_(tokens), id_ties_(id_ties) {}

  void Push(uint64_t count, PairKey key);
  // Builds the heap from all pairs with their counts (initial fill): pair keys[i] has count
  // counts[i]. Needs no PairIndex, so it may run while the index is built.
  void Fill(std::span<const PairKey> keys, std::span<const uint64_t> counts);
  // Sets *best to the pair with the highest current count (by the order above) and removes it
  // from the queue; false when no pair has a non-zero count.
  bool PopBest(const PairIndex& pairs, PairKey* best);
  size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    uint64_t count;
    PairKey key;
  };
  // True when x is to be merged after y (x is "less" in the max-heap).
  bool After(const Entry& x, const Entry& y) const;
  bool TieBefore(PairKey x, PairKey y) const;

  const std::vector<std::string>& tokens_;
  bool id_ties_;
  std::vector<Entry> heap_;
};

}  // namespace tokenmill
