// PairIndex: every pair of adjacent tokens that training may still merge, with its count and
// the words it occurs in.
//
// Contract:
//  - A pair is (left id, right id), keyed as MakePairKey(left, right); the table holds the
//    pairs with a non-zero count (a pair whose count drops to zero is dropped: it occurs
//    nowhere). count() of any other key is 0.
//  - count(key) is the exact 64-bit count of the contract in bpe_trainer.h.
//    A partial table (set_partial) may lack pairs that occur; they are never merged.
//  - The words of a pair include every word that holds it, and possibly words that no longer
//    do (they are skipped when visited); TakeWords never returns a word twice.
//  - Word lists are written once, in blocks: the initial pairs' lists in one block, then each
//    merge's new pairs' lists in one block per merge. (A pair's count rises only in the merge
//    that creates the newer of its two tokens, so its list is complete from then on.) Should a
//    pair receive words twice (only possible if a merge reused an id), the extra words are
//    kept aside and merged in, without repeats, when the pair is taken.
//  - A block is freed once none of its pairs is alive.
//  - One hash lookup per pair change: the map holds the pair's data itself. Build splits it
//    into kShards shards by left token, so that they fill in parallel, each from one run of
//    groups (a resumed poetry run inserts 5.5 M pairs: 0.44 s on one thread).
//  - Not thread-safe: the trainer changes it from one thread, between parallel phases (Build
//    runs its own parallel loop, in the calling task arena).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/pair_key.h"
#include "common/huge_array.h"
#include "train/bpe/word_store.h"

namespace tokenmill {


// The byte-order tie-break of the trainers' contract (bpe_trainer.h): whether pair x is smaller
// than pair y by (left token's bytes, right token's bytes), `tokens` holding every id's bytes.
inline bool PairBytesBefore(const std::vector<std::string>& tokens, PairKey x, PairKey y) {
  const TokenId xl = PairLeft(x), yl = PairLeft(y);
  if (xl != yl) return tokens[xl] < tokens[yl];  // distinct ids have distinct bytes
  return tokens[PairRight(x)] < tokens[PairRight(y)];
}

// Pairs grouped by left token, as a resumed run counts them: groups[l] holds the pairs
// (l, right), in increasing right, each with its count (non-zero) and the offset of its words
// in one block; a pair's words end where the next pair's begin, the group's last pair's at
// ends[l].
struct RightPair {
  TokenId right;
  uint64_t count;
  uint64_t offset;
};
struct PairsByLeft {
  std::span<const std::vector<RightPair>> groups;
  std::span<const uint64_t> ends;
  // Calls f(key, count, first word, end of its words) for every pair, in key order.
  template <typename F>
  void ForEach(size_t first_left, size_t end_left, F&& f) const {
    for (size_t l = first_left; l < end_left; ++l) {
      const std::vector<RightPair>& g = groups[l];
      for (size_t j = 0; j < g.size(); ++j) {
        f(MakePairKey(static_cast<TokenId>(l), g[j].right), g[j].count, g[j].offset,
          j + 1 < g.size() ? g[j + 1].offset : ends[l]);
      }
    }
  }
};

class PairIndex {
 public:
  size_t size() const;
  // Calls f(key, count) for every pair, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [key, pair] : main_) f(key, pair.count);
    if (shards_ == nullptr) return;
    for (size_t s = 0; s < kShards; ++s) {
      for (const auto& [key, pair] : shards_[s]) f(key, pair.count);
    }
  }
  uint64_t count(PairKey key) const {
    const Map& map = MapOf(key);
    auto it = map.find(key);
    return it == map.end() ? 0 : it->second.count;
  }
  // Fills an empty table at once: each pair of `pairs` gets its count and its words from
  // `words` (one block). One hash insertion per pair; the shards are filled in parallel
  // (oneTBB, in the calling arena).
  void Build(HugeArray<WordRef> words, const PairsByLeft& pairs);

  // Adds `delta` to the count of `key` (adding the pair if new; the result must not be
  // negative) and returns the new count. At zero the pair is dropped. In a partial table, a
  // decrease of a pair it does not hold is ignored (returns 0).
  uint64_t AddCount(PairKey key, int64_t delta);
  // A partial table holds only some of the pairs that occur (a resumed run leaves out those
  // too rare to be merged before training ends: they can only become rarer; see
  // Trainer::CountPairsOfWords).
  void set_partial(bool partial) { partial_ = partial; }

  // Installs one block of word lists: pair keys[i] gets words[offsets[i], offsets[i + 1])
  // (nothing if it is not in the table).
  void AddWordBlock(HugeArray<WordRef> words, std::span<const PairKey> keys,
                    std::span<const uint64_t> offsets);

  // The words of `key`, to merge it everywhere; drops the pair. The span stays valid until
  // the next call of TakeWords or AddWordBlock.
  std::span<const WordRef> TakeWords(PairKey key);

 private:
  struct Pair {
    uint64_t count = 0;
    const WordRef* words = nullptr;
    uint32_t num_words = 0;
    uint32_t block = 0;
  };
  struct Block {
    HugeArray<WordRef> words;
    uint32_t live_pairs = 0;
  };
  using Map = absl::flat_hash_map<PairKey, Pair>;
  static constexpr size_t kShards = 64;
  // The map of `key`: Build's shard for the left tokens it saw (ranges of them), `main_` for
  // the others, which is every pair when Build was not used (training from the start keeps
  // one table: a lookup that went through a shard table there made the merge loop 3% slower).
  Map& MapOf(PairKey key) {
    const TokenId left = PairLeft(key);
    return left < shard_lefts_ ? shards_[shard_of_left_[left]] : main_;
  }
  const Map& MapOf(PairKey key) const { return const_cast<PairIndex*>(this)->MapOf(key); }
  void Release(const Pair& pair);

  Map main_;
  TokenId shard_lefts_ = 0;                // left tokens Build sharded: [0, shard_lefts_)
  std::unique_ptr<Map[]> shards_;          // kShards maps, made by Build
  std::vector<uint8_t> shard_of_left_;
  std::vector<Block> blocks_;
  // Words given to a pair that already had a list (see the contract).
  absl::flat_hash_map<PairKey, std::vector<WordRef>> extra_;
  // Released blocks are freed at the next TakeWords or AddWordBlock (a span may be in use).
  std::vector<HugeArray<WordRef>> retired_;
  std::vector<WordRef> scratch_;
  bool partial_ = false;
};

}  // namespace tokenmill
