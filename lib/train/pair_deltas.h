// PairDeltas: the pair-count changes that merging one pair causes in a batch of words,
// netted per word and summed per pair, ready to be applied to the PairTable in one pass.
//
// Contract:
//  - A batch is filled by one thread: BeginWord(w), Report(left, right, delta) for each change
//    in w, EndWord(); then read back. Pairs come back in an order that depends only on the
//    words given and their order (first reported first), never on timing or hashing.
//  - For each pair: the summed delta over the batch, and the words in which the pair's count
//    rose (net over the word), each once, in word order.
//  - Batches are independent, so many run in parallel; the caller reduces them in batch order.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "train/pair_table.h"

namespace tokenmill {

class PairDeltas {
 public:
  void Clear();

  void BeginWord(uint32_t word) {
    word_ = word;
    pending_.clear();
  }
  void Report(TokenId left, TokenId right, int64_t delta) {
    pending_.push_back({MakePairKey(left, right), delta});
  }
  void EndWord();

  struct Risen {
    uint32_t slot;  // index into keys()/sums()
    uint32_t word;
  };
  std::span<const PairKey> keys() const { return keys_; }
  std::span<const int64_t> sums() const { return sums_; }
  std::span<const Risen> risen() const { return risen_; }

 private:
  uint32_t SlotOf(PairKey key);

  uint32_t word_ = 0;
  std::vector<std::pair<PairKey, int64_t>> pending_;  // the current word's raw reports
  absl::flat_hash_map<PairKey, uint32_t> slot_of_;
  std::vector<PairKey> keys_;
  std::vector<int64_t> sums_;
  std::vector<Risen> risen_;
};

}  // namespace tokenmill
