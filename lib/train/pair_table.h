// PairTable: every pair of adjacent tokens that training may still merge, with its count and
// the words it occurs in.
//
// Contract:
//  - A pair is (left id, right id), keyed as MakePairKey(left, right). Each pair seen gets a
//    dense index that stays valid for the whole run.
//  - count(p) is the exact 64-bit count of the contract in bpe_trainer.h.
//  - The words of p include every word that holds p, and possibly words that no longer do
//    (they are skipped when visited); TakeWords never returns a word twice.
//  - Word lists are written once, in blocks: the initial pairs' lists in one block, then each
//    merge's new pairs' lists in one block per merge. (A pair's count rises only in the merge
//    that creates the newer of its two tokens, so its list is complete from then on.) Should a
//    pair receive words twice (only possible if a merge reused an id), the extra words are
//    kept aside and merged in, without repeats, when the pair is taken.
//  - When a pair's count drops to zero (or it is taken) its list is released, and a block is
//    freed once none of its pairs is alive.
//  - Not thread-safe: the trainer changes it from one thread, between parallel phases.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/bpe_model.h"
#include "train/huge_array.h"
#include "train/word_store.h"

namespace tokenmill {

using PairKey = uint64_t;
inline PairKey MakePairKey(TokenId left, TokenId right) {
  return (static_cast<uint64_t>(left) << 32) | right;
}
inline TokenId PairLeft(PairKey key) { return static_cast<TokenId>(key >> 32); }
inline TokenId PairRight(PairKey key) { return static_cast<TokenId>(key); }

class PairTable {
 public:
  uint32_t size() const { return static_cast<uint32_t>(pairs_.size()); }
  PairKey key(uint32_t p) const { return pairs_[p].key; }
  uint64_t count(uint32_t p) const { return pairs_[p].count; }

  // The index of `key`, or -1 if it was never seen.
  int64_t Find(PairKey key) const;
  // The index of `key`, adding it with count 0 and no words if it is new.
  uint32_t FindOrAdd(PairKey key);
  void Reserve(size_t pairs);

  // Adds `delta` to the count (the result must not be negative); at zero the list is released.
  void AddCount(uint32_t p, int64_t delta);

  // Installs one block of word lists: pair pairs[i] gets words[offsets[i], offsets[i + 1]).
  void AddWordBlock(HugeArray<WordRef> words, std::span<const uint32_t> pairs,
                    std::span<const uint64_t> offsets);

  // The words of p, to merge p everywhere; sets its count to zero. The span stays valid until
  // the next call of TakeWords or AddWordBlock.
  std::span<const WordRef> TakeWords(uint32_t p);

 private:
  struct Pair {
    PairKey key = 0;
    uint64_t count = 0;
    const WordRef* words = nullptr;
    uint32_t num_words = 0;
    uint32_t block = 0;
  };
  struct Block {
    HugeArray<WordRef> words;
    uint32_t live_pairs = 0;
  };
  void Release(Pair& pair);

  absl::flat_hash_map<PairKey, uint32_t> index_;
  std::vector<Pair> pairs_;
  std::vector<Block> blocks_;
  // Words given to a pair that already had a list (see the contract), by pair index.
  absl::flat_hash_map<uint32_t, std::vector<WordRef>> extra_;
  // Released blocks are freed at the next TakeWords or AddWordBlock (a span may be in use).
  std::vector<HugeArray<WordRef>> retired_;
  std::vector<WordRef> scratch_;
};

}  // namespace tokenmill
