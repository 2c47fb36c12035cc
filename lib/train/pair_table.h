// PairTable: every pair of adjacent tokens that training may still merge, with its count and
// the words it occurs in.
//
// Contract:
//  - A pair is (left id, right id), keyed as PairKey(left, right). Each pair seen gets a dense
//    index that stays valid for the whole training run.
//  - count(p) is the exact 64-bit count of the contract in bpe_trainer.h.
//  - Words(p) lists every word that holds p, possibly also words that no longer do (they are
//    never removed, only skipped when visited) and possibly a word twice. When count(p) drops
//    to zero the list is released: a pair with count zero occurs nowhere.
//  - The initial pairs (both sides single bytes) get their word lists in one flat array, built
//    once; a pair of single bytes never forms again after training starts (every new token is
//    at least two bytes), so those lists never grow. Later pairs own growable lists.
//  - Not thread-safe: the trainer changes it from one thread, between parallel phases.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/bpe_model.h"

namespace tokenmill {

using PairKey = uint64_t;
inline PairKey MakePairKey(TokenId left, TokenId right) {
  return (static_cast<uint64_t>(left) << 32) | right;
}
inline TokenId PairLeft(PairKey key) { return static_cast<TokenId>(key >> 32); }
inline TokenId PairRight(PairKey key) { return static_cast<TokenId>(key); }

class PairTable {
 public:
  // Installs the initial pairs: keys[i] with counts[i], occurring in the words
  // flat_words[offsets[i], offsets[i + 1]). Must be called once, on an empty table.
  void SetInitial(std::vector<PairKey> keys, std::vector<uint64_t> counts,
                  std::vector<uint32_t> flat_words, std::vector<uint64_t> offsets);

  uint32_t size() const { return static_cast<uint32_t>(keys_.size()); }
  PairKey key(uint32_t p) const { return keys_[p]; }
  uint64_t count(uint32_t p) const { return counts_[p]; }

  // The index of `key`, or -1 if it was never seen.
  int64_t Find(PairKey key) const;
  // The index of `key`, adding it with count 0 and no words if it is new.
  uint32_t FindOrAdd(PairKey key);

  // Adds `delta` to the count (the result must not be negative) and releases the word list
  // when it reaches zero.
  void AddCount(uint32_t p, int64_t delta);
  void AddWord(uint32_t p, uint32_t word) { dynamic_words_[p].push_back(word); }

  // Takes the word list of p (to merge p everywhere) and sets its count to zero.
  std::vector<uint32_t> TakeWordsAndClear(uint32_t p);

 private:
  absl::flat_hash_map<PairKey, uint32_t> index_;
  std::vector<PairKey> keys_;
  std::vector<uint64_t> counts_;
  // Initial pairs: words in flat_words_[offsets_[p], offsets_[p + 1]) for p < num_initial_.
  uint32_t num_initial_ = 0;
  std::vector<uint32_t> flat_words_;
  std::vector<uint64_t> offsets_;
  std::vector<bool> initial_taken_;
  // Later pairs (and nothing for initial ones).
  std::vector<std::vector<uint32_t>> dynamic_words_;
};

}  // namespace tokenmill
