// MergeDeltas: the pair-count changes of one merge (a, b) -> t, gathered from many words on
// many threads and reduced in a fixed order.
//
// Every pair a merge changes is (t, y) or (x, t) (pairs it creates) or (x, a) or (b, y) (pairs
// that lose an occurrence), so a change is keyed by a slot = (side, token id) and summed in
// dense per-thread arrays indexed by slot: no hashing on the hot path. Each thread nets one
// word's changes per pair first, so a word appears once in the list of each pair it gains.
//
// Contract:
//  - Begin(a, b, t) before a merge; per word: StartWord(), Report(...) for each change, then
//    FinishWord(word, risen) on the thread's accumulator.
//  - The sums are exact integers, so the order in which threads add them does not matter;
//    risen (slot, word) entries go to the caller's per-batch vectors, which it reads in batch
//    order. Hence the result never depends on the thread count or on scheduling.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "train/bpe/pair_index.h"
#include "train/bpe/word_store.h"

namespace tokenmill {

// Which pairs a merge (a, b) -> t changes, and their slots.
class MergeSlots {
 public:
  // `stride` must exceed every token id.
  void Begin(TokenId a, TokenId b, TokenId t, uint32_t stride) {
    a_ = a, b_ = b, t_ = t, stride_ = stride;
  }
  uint32_t num_slots() const { return 4 * stride_; }
  uint32_t SlotOf(PairKey key) const {
    TokenId left = PairLeft(key), right = PairRight(key);
    if (left == t_) return right;                // (t, y)
    if (right == t_) return stride_ + left;      // (x, t)
    if (right == a_) return 2 * stride_ + left;  // (x, a)
    return 3 * stride_ + right;                  // (b, y)
  }
  PairKey KeyOf(uint32_t slot) const {
    TokenId id = slot % stride_;
    switch (slot / stride_) {
      case 0: return MakePairKey(t_, id);
      case 1: return MakePairKey(id, t_);
      case 2: return MakePairKey(id, a_);
      default: return MakePairKey(b_, id);
    }
  }

 private:
  TokenId a_ = 0, b_ = 0, t_ = 0;
  uint32_t stride_ = 1;
};

struct RisenWord {
  uint32_t slot;
  WordRef word;
};

// One thread's sums for the current merge.
class MergeDeltas {
 public:
  // Sizes the arrays for `num_slots` and, if `stamp` is not the current merge's, starts merge
  // number `stamp` (> every earlier one). Every batch calls it; the first on a thread starts.
  void Begin(uint32_t num_slots, uint32_t stamp);
  // Forgets the merge (after its sums were read).
  void End() {
    stamp_ = 0;
    touched_.clear();
  }

  void StartWord() { pending_.clear(); }
  void Report(TokenId left, TokenId right, int64_t delta) {
    pending_.push_back({MakePairKey(left, right), delta});
  }
  // Nets the word's reports per pair, adds them to the sums, and appends (slot, word) to
  // `risen` for every pair whose count rose in this word.
  void FinishWord(const MergeSlots& slots, WordRef word, std::vector<RisenWord>& risen);

  // Slots with a change in this merge, and the sum of each.
  const std::vector<uint32_t>& touched() const { return touched_; }
  int64_t sum(uint32_t slot) const { return sums_[slot]; }

 private:
  uint32_t stamp_ = 0;
  std::vector<int64_t> sums_;
  std::vector<uint32_t> seen_;  // the merge stamp that last touched each slot
  std::vector<uint32_t> touched_;
  std::vector<std::pair<PairKey, int64_t>> pending_;  // the current word's raw reports
};

}  // namespace tokenmill
