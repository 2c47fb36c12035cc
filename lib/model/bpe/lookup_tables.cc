#include "model/bpe/lookup_tables.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "model/bpe/byte_hash.h"

namespace tokenmill {
namespace {

// Load factor between 0.4 and 0.8: small tables stay in cache; linear probing keeps the extra
// probes of a fuller table on the same cache line.
size_t TableSize(size_t count) { return std::bit_ceil(std::max<size_t>(16, count + count / 4)); }

}  // namespace

std::vector<std::pair<uint64_t, PairMerge>> MergeEntries(std::span<const Merge> merges,
                                                         MergePriority priority) {
  std::vector<std::pair<uint64_t, PairMerge>> entries;
  entries.reserve(merges.size());
  for (uint32_t rank = 0; rank < merges.size(); ++rank) {
    const Merge& m = merges[rank];
    const uint32_t p = priority == MergePriority::kTokenRank ? m.result : rank;
    entries.push_back({MakePairKey(m.left, m.right), PairMerge{p, m.result}});
  }
  return entries;
}

void PairTable::Reset(size_t size) {
  entries_ = HugeArray<Entry>(size);
  mask_ = size - 1;
  constexpr size_t kGrain = size_t{1} << 16;  // 1 MiB of slots
  tbb::parallel_for(tbb::blocked_range<size_t>(0, size, kGrain),
                    [&](const tbb::blocked_range<size_t>& r) {
                      std::fill(entries_.data() + r.begin(), entries_.data() + r.end(), kNoEntry);
                    });
  data_ = entries_.data();
}

template <typename EntryOf>
void PairTable::InsertAll(size_t count, EntryOf entry) {
  // The slots are random, so each insertion misses the cache: the slot of the entry kAhead
  // places on is fetched while this one is placed.
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) __builtin_prefetch(&entries_[Slot(entry(i + kAhead).first)], 1);
    const auto [key, merge] = entry(i);
    size_t slot = Slot(key);
    while (entries_[slot].key != kEmptyKey && entries_[slot].key != key) slot = (slot + 1) & mask_;
    if (entries_[slot].key == kEmptyKey) entries_[slot] = {key, merge};
  }
}

void PairTable::Build(const std::vector<std::pair<uint64_t, PairMerge>>& entries) {
  Reset(TableSize(entries.size()));
  InsertAll(entries.size(), [&](size_t i) { return entries[i]; });
}

void PairTable::Build(std::span<const Merge> merges, MergePriority priority) {
  Reset(TableSize(merges.size()));
  InsertAll(merges.size(), [&](size_t i) {
    const Merge& m = merges[i];
    const uint32_t p = priority == MergePriority::kTokenRank ? m.result : static_cast<uint32_t>(i);
    return std::pair<uint64_t, PairMerge>{MakePairKey(m.left, m.right), PairMerge{p, m.result}};
  });
}

std::vector<bool> SpecialIds(const BpeModel& model) {
  std::vector<bool> is_special(model.tokens.size(), false);
  for (const SpecialToken& s : model.specials) {
    if (s.id < is_special.size()) is_special[s.id] = true;
  }
  return is_special;
}

void TokenTable::Build(const std::vector<std::string>& tokens, const std::vector<bool>& skip) {
  size_t count = 0;
  for (size_t id = 0; id < tokens.size(); ++id) count += !skip[id] && !tokens[id].empty();
  size_t size = TableSize(count);
  slots_ = HugeArray<Slot>(size);
  std::fill(slots_.data(), slots_.data() + size, Slot{});
  mask_ = size - 1;
  long_keys_.clear();
  distinct_ = true;
  longest_ = 0;
  // Random slots: the slot of the token kAhead ids on is fetched while this one is placed.
  constexpr size_t kAhead = 16;
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (id + kAhead < tokens.size()) {
      __builtin_prefetch(&slots_[HashPiece(tokens[id + kAhead]) & mask_], 1);
    }
    if (!skip[id] && !tokens[id].empty()) Insert(tokens[id], static_cast<TokenId>(id));
  }
}

void TokenTable::Insert(std::string_view bytes, TokenId id) {
  Slot slot_value;
  slot_value.size = static_cast<uint32_t>(bytes.size());
  slot_value.id = id;
  longest_ = std::max(longest_, bytes.size());
  if (bytes.size() <= kMaxPackedKey) {
    slot_value.key = PackKey(bytes.data(), bytes.size());
  } else {
    slot_value.key = {long_keys_.size(), 0};
    long_keys_.append(bytes);
  }
  // An equal token is in the probe sequence before the first empty slot, if anywhere.
  size_t slot = HashPiece(bytes) & mask_;
  for (; slots_[slot].size != 0; slot = (slot + 1) & mask_) {
    const Slot& s = slots_[slot];
    if (s.size != bytes.size()) continue;
    if (bytes.size() <= kMaxPackedKey ? s.key == slot_value.key
                                      : std::memcmp(long_keys_.data() + s.key.w0, bytes.data(),
                                                    bytes.size()) == 0) {
      distinct_ = false;
    }
  }
  slots_[slot] = slot_value;
}

TokenId TokenTable::FindLong(std::string_view bytes) const {
  for (size_t slot = HashBytes(bytes) & mask_;; slot = (slot + 1) & mask_) {
    const Slot& s = slots_[slot];
    if (s.size == 0) return kMissing;
    if (s.size == bytes.size() &&
        std::memcmp(long_keys_.data() + s.key.w0, bytes.data(), bytes.size()) == 0) {
      return s.id;
    }
  }
}

RankPairs::RankPairs(const TokenTable* table, const std::vector<std::string>* tokens)
    : table_(table), tokens_(tokens), longest_(table->longest()) {}

}  // namespace tokenmill
