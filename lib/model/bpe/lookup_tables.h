// The encoder's read-only lookup tables, open-addressed for speed.
//
// PairTable: (left id, right id) -> the merge that joins them: its priority and its result.
// TokenTable: a piece's bytes -> the id of the regular token with exactly those bytes.
// RankPairs: tiktoken's rule over a TokenTable: two adjacent parts merge when their bytes
// together are a regular token, whose id is the merge's priority and result.
// All are built once and then only read, so any number of threads may share them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/binary_io.h"
#include "common/huge_array.h"
#include "common/shared_array.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/byte_hash.h"
#include "model/bpe/pair_key.h"

namespace tokenmill {

struct PairMerge {
  uint32_t priority;  // lower merges first
  TokenId result;
};

// The (MakePairKey(left, right), merge) entries of `merges` in rank order, each merge's
// priority by `priority` (BpeModel::priority), for PairTable::Build.
std::vector<std::pair<uint64_t, PairMerge>> MergeEntries(std::span<const Merge> merges,
                                                         MergePriority priority);

class PairTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Keeps the first entry given for a pair.
  void Build(const std::vector<std::pair<uint64_t, PairMerge>>& entries);
  // The same table as Build(MergeEntries(merges, priority)), without the list of entries.
  void Build(std::span<const Merge> merges, MergePriority priority);

  // The merge of (left, right), or {kNone, 0}.
  PairMerge Find(TokenId left, TokenId right) const {
    uint64_t key = MakePairKey(left, right);
    size_t slot = Slot(key);
    while (true) {
      const Entry& e = data_[slot];
      if (e.key == key) return e.merge;
      if (e.key == kEmptyKey) return {kNone, 0};
      slot = (slot + 1) & mask_;
    }
  }

 private:
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};  // ids are < 2^32 - 1, so never a real pair
  struct Entry {
    uint64_t key;
    PairMerge merge;
  };
  static constexpr Entry kNoEntry{kEmptyKey, {kNone, 0}};
  size_t Slot(uint64_t key) const { return HashMix(key, 0x9e3779b97f4a7c15ull) & mask_; }
  // Empties a table of `size` slots (a power of two), in parallel: on a machine where first
  // touching fresh memory is dear, the page faults are shared by the threads.
  void Reset(size_t size);
  // Inserts count entries, entry(i) = {key, merge}, in order; the first of a key stays.
  template <typename EntryOf>
  void InsertAll(size_t count, EntryOf entry);
  HugeArray<Entry> entries_;       // on huge pages where the kernel grants them; Reset fills it
  const Entry* data_ = &kNoEntry;  // entries_, or the one empty slot of an empty table
  size_t mask_ = 0;
};

// The ids of the model's special tokens as flags over its ids: what TokenTable::Build skips.
std::vector<bool> SpecialIds(const BpeModel& model);

class TokenTable {
 public:
  static constexpr TokenId kMissing = UINT32_MAX;

  // The slots one task of Build() fills: a region of the table (384 KiB, in a core's L2).
  static constexpr size_t kRegionSlots = size_t{1} << 14;

  // `tokens[id]` as in BpeModel; ids in `skip` (specials) and gaps are left out. In parallel
  // on the current oneTBB arena: the tokens are grouped by the region of the table their
  // probe starts in, each region filled by one task in id order (a probe that would run past
  // its region's end is left for a serial pass at the end), so the table is the same for
  // any thread count and equal tokens keep the lower id first.
  void Build(const std::vector<std::string>& tokens, const std::vector<bool>& skip);
  // Zeroes the memory Build() needs for `count` tokens (its slots and a scratch array as
  // large), so that a caller may do that beside other work: zeroing cl100k_base's 5 MB took
  // about 1.5 ms of one core, and the page faults of two threads in the same memory were
  // slower than one thread's (FromTiktoken does it while the tokens' strings are made). A
  // later Build() uses it when its tokens need a table of that size, else frees it.
  void Reserve(size_t count);
  // Whether the tokens Build() took are all different (Find gives the lowest id of equal ones).
  bool distinct() const { return distinct_; }
  // The number of slots (a power of two) and of tokens Build() took.
  size_t capacity() const { return mask_ + 1; }
  size_t size() const { return size_; }
  // The bytes of the longest token Build() took.
  size_t longest() const { return longest_; }

  // The built table as bytes, for a cache of loaded vocabularies (model/vocab_cache.h); only the
  // same build may read them back (they are its memory layout and hash).
  void AppendTo(BinaryWriter& out) const;
  // A table AppendTo wrote, of ids below `id_bound`; false (and an empty table) when the bytes
  // are not one: sizes that do not fit, an id or long key out of range. With an `owner` of the
  // bytes `in` reads, the slots and the filter are used where they lie (ReadAlignedArray).
  bool ReadFrom(BinaryReader& in, size_t id_bound,
                const std::shared_ptr<const void>& owner = nullptr);

  TokenId Find(std::string_view bytes) const {
    size_t n = bytes.size();
    if (n <= kMaxPackedKey) {
      PackedKey key = PackKey(bytes.data(), n);
      const uint64_t hash = HashPacked(key, n);
      if (!MayHold(hash)) return kMissing;
      for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
        const Slot& s = slots_[slot];
        if (s.size == n && s.key == key) return s.id;
        if (s.size == 0) return kMissing;
      }
    }
    return FindLong(bytes);
  }
  // Fetches what Find(bytes) reads first, its filter word and home slot, into the cache: for a
  // caller with many lookups at random places, to have several under way at once.
  void Prefetch(std::string_view bytes) const {
    const uint64_t hash = HashPiece(bytes);
    __builtin_prefetch(&filter_[FilterBit(hash, mask_) >> 6]);
    __builtin_prefetch(&slots_[hash & mask_]);
  }

 private:
  // One token; keys of up to 16 bytes inline (one memory access per probe), longer ones as
  // {offset into long_keys_, 0}. size == 0 marks an empty slot (all zero: fresh HugeArray
  // memory is empty slots).
  struct Slot {
    PackedKey key{0, 0};
    uint32_t size = 0;
    TokenId id = 0;
  };
  TokenId FindLong(std::string_view bytes) const;
  // The filter in front of the slots: kFilterBitsLog2 bits per slot (256 KB for o200k_base's
  // 6 MB of slots, in a core's L2 where the slots are not), a key's bit by its home slot and
  // the hash's top bits, set for every token. Most bytes that are no token (the encoder's pair
  // lookups: RankPairs) are answered here: OpenAI's vocabularies fill three quarters of the
  // slots, so 9% of the bits are set and about one such lookup in eleven goes on to the slots.
  static constexpr int kFilterBitsLog2 = 3;
  static size_t FilterBit(uint64_t hash, size_t mask) {
    return (hash & mask) << kFilterBitsLog2 | hash >> (64 - kFilterBitsLog2);
  }
  bool MayHold(uint64_t hash) const {
    const size_t bit = FilterBit(hash, mask_);
    return filter_[bit >> 6] >> (bit & 63) & 1;
  }
  // Whether slot `s` holds the key of `value` (same size and bytes).
  bool SameKey(const Slot& s, const Slot& value) const;
  // Places `value` (whose probe starts at `slot`) among `slots` (Build's) in the first empty
  // slot before `end` (exclusive; no wrapping); false when there is none. Marks a repeated key
  // in distinct.
  bool Place(Slot* slots, Slot value, size_t slot, size_t end, bool& distinct) const;

  static const Slot kNoSlot;
  static constexpr uint64_t kNoFilter = 0;
  SharedArray<Slot> slots_{nullptr, &kNoSlot, 1};  // one empty slot until Build or ReadFrom
  HugeArray<Slot> reserved_slots_, reserved_values_;  // Reserve()'s, until Build
  SharedArray<uint64_t> filter_{nullptr, &kNoFilter, 1};
  size_t mask_ = 0;
  size_t size_ = 0;
  std::string long_keys_;  // the keys over 16 bytes, in id order
  bool distinct_ = true;
  size_t longest_ = 0;
};

inline const TokenTable::Slot TokenTable::kNoSlot{};

// The merges a tiktoken-style vocabulary implies (rank_merges.h), found by the parts' bytes
// instead of a table of every split of every token: for a BpeModel whose `rank_merges_implied`
// is set, the same answers as a PairTable built from DeriveRankMerges() with kTokenRank, with
// nothing to build but the TokenTable the encoder has anyway (o200k_base: 446,189 merges and a
// 16 MB table less to make at start-up).
class RankPairs {
 public:
  RankPairs() = default;
  // `table` (the regular tokens, specials skipped) and `tokens` (by id) must outlive this; the
  // table must be built.
  RankPairs(const TokenTable* table, const std::vector<std::string>* tokens);

  // The merge of the two adjacent parts whose bytes together are bytes[0..size).
  PairMerge Find(const char* bytes, size_t size) const {
    if (size > longest_) return {PairTable::kNone, 0};
    const TokenId id = table_->Find(std::string_view(bytes, size));
    return id == TokenTable::kMissing ? PairMerge{PairTable::kNone, 0} : PairMerge{id, id};
  }
  // Token `id`'s bytes.
  std::string_view bytes(TokenId id) const { return (*tokens_)[id]; }

 private:
  const TokenTable* table_ = nullptr;
  const std::vector<std::string>* tokens_ = nullptr;
  size_t longest_ = 0;  // bytes of the longest token: no longer part can be one
};

}  // namespace tokenmill
