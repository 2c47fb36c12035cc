#include "model/bpe/lookup_tables.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

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

void TokenTable::Reserve(size_t count) {
  reserved_slots_ = HugeArray<Slot>(TableSize(count));
  reserved_values_ = HugeArray<Slot>(std::max<size_t>(count, 1));
}

void TokenTable::Build(const std::vector<std::string>& tokens, const std::vector<bool>& skip) {
  const size_t n = tokens.size();
  auto taken = [&](size_t id) { return !skip[id] && !tokens[id].empty(); };
  constexpr size_t kBlockIds = size_t{1} << 12;  // ids per task of the passes over the tokens
  const size_t blocks = (n + kBlockIds - 1) / kBlockIds;
  auto for_each_block = [&](auto body) {
    tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
      body(b, b * kBlockIds, std::min(n, (b + 1) * kBlockIds));
    });
  };
  // Each token's hash; per block the tokens taken, their bytes in long keys, the longest.
  std::unique_ptr<uint64_t[]> hash(new uint64_t[n]);
  std::vector<size_t> taken_before(blocks + 1, 0), long_before(blocks + 1, 0), longest(blocks, 0);
  auto hash_tokens = [&] {
    for_each_block([&](size_t b, size_t first, size_t last) {
      size_t count = 0, long_bytes = 0, most = 0;
      for (size_t id = first; id < last; ++id) {
        if (!taken(id)) continue;
        const std::string& token = tokens[id];
        hash[id] = HashPiece(token);
        ++count;
        if (token.size() > kMaxPackedKey) long_bytes += token.size();
        most = std::max(most, token.size());
      }
      taken_before[b + 1] = count;
      long_before[b + 1] = long_bytes;
      longest[b] = most;
    });
  };
  // The slots, and the slots' values in the order they are placed: Reserve()'s when they fit,
  // else zeroed here while the tokens are hashed.
  size_t taken_count = 0;
  for (size_t id = 0; id < n; ++id) taken_count += taken(id);
  const size_t capacity = TableSize(taken_count);
  HugeArray<Slot> slots, values;
  if (reserved_slots_.size() == capacity && reserved_values_.size() >= taken_count) {
    slots = std::exchange(reserved_slots_, HugeArray<Slot>());
    values = std::exchange(reserved_values_, HugeArray<Slot>());
    hash_tokens();
  } else {
    reserved_slots_ = HugeArray<Slot>();
    reserved_values_ = HugeArray<Slot>();
    tbb::parallel_invoke(
        [&] {
          slots = HugeArray<Slot>(capacity);  // zeroed: empty slots
          values = HugeArray<Slot>(std::max<size_t>(taken_count, 1));
        },
        hash_tokens);
  }
  for (size_t b = 0; b < blocks; ++b) {
    taken_before[b + 1] += taken_before[b];
    long_before[b + 1] += long_before[b];
  }
  size_ = taken_before[blocks];
  longest_ = blocks == 0 ? 0 : *std::max_element(longest.begin(), longest.end());
  distinct_ = true;
  mask_ = capacity - 1;
  const size_t region_slots = std::min(capacity, kRegionSlots);
  const int region_shift = std::countr_zero(region_slots);
  const size_t regions = capacity / region_slots;
  auto region_of = [&](size_t id) { return (hash[id] & mask_) >> region_shift; };
  // How many of each block's tokens start their probe in each region, turned into where
  // they go among the tokens ordered by region, and by id within a region.
  std::vector<size_t> at(blocks * regions, 0);  // [block * regions + region]
  for_each_block([&](size_t b, size_t first, size_t last) {
    size_t* count = &at[b * regions];
    for (size_t id = first; id < last; ++id) {
      if (taken(id)) ++count[region_of(id)];
    }
  });
  std::vector<size_t> region_start(regions + 1, 0);
  for (size_t r = 0, total = 0; r < regions; ++r) {
    region_start[r] = total;
    for (size_t b = 0; b < blocks; ++b) {
      const size_t count = at[b * regions + r];
      at[b * regions + r] = total;
      total += count;
    }
    region_start[r + 1] = total;
  }
  // The slots' values in that order (the tokens read in id order, not gathered by region);
  // the long keys in id order, where serial appends would put them.
  long_keys_.assign(long_before[blocks], '\0');
  for_each_block([&](size_t b, size_t first, size_t last) {
    size_t* next = &at[b * regions];
    size_t offset = long_before[b];
    for (size_t id = first; id < last; ++id) {
      if (!taken(id)) continue;
      const std::string& token = tokens[id];
      Slot& value = values[next[region_of(id)]++];
      value.size = static_cast<uint32_t>(token.size());
      value.id = static_cast<TokenId>(id);
      if (token.size() <= kMaxPackedKey) {
        value.key = PackKey(token.data(), token.size());
      } else {
        std::memcpy(long_keys_.data() + offset, token.data(), token.size());
        value.key = {offset, 0};
        offset += token.size();
      }
    }
  });
  auto hash_of = [&](const Slot& value) {
    return value.size <= kMaxPackedKey
               ? HashPacked(value.key, value.size)
               : HashBytes(std::string_view(long_keys_.data() + value.key.w0, value.size));
  };
  auto home = [&](const Slot& value) { return hash_of(value) & mask_; };
  // The filter's bits of a region's home slots are whole words of their own (16K slots: 2K
  // words), so each region's task sets its own.
  std::vector<uint64_t> filter(std::max<size_t>(1, (capacity << kFilterBitsLog2) / 64), 0);
  // Each region filled by one task; a token whose probe reaches the region's end is placed
  // afterwards, in order, by the whole probe (which may wrap to slot 0).
  std::vector<std::vector<Slot>> left(regions);
  std::vector<uint8_t> repeats(regions, 0);
  tbb::parallel_for(size_t{0}, regions, [&](size_t r) {
    const size_t end = (r + 1) * region_slots;
    bool distinct = true;
    // The slots are random within the region: the slot of the token kAhead on is fetched
    // while this one is placed.
    constexpr size_t kAhead = 16;
    for (size_t i = region_start[r]; i < region_start[r + 1]; ++i) {
      if (i + kAhead < region_start[r + 1]) __builtin_prefetch(&slots[home(values[i + kAhead])], 1);
      const uint64_t hash = hash_of(values[i]);
      const size_t bit = FilterBit(hash, mask_);
      filter[bit >> 6] |= uint64_t{1} << (bit & 63);
      if (!Place(slots.data(), values[i], hash & mask_, end, distinct)) {
        left[r].push_back(values[i]);
      }
    }
    repeats[r] = !distinct;
  });
  for (size_t r = 0; r < regions; ++r) {
    if (repeats[r]) distinct_ = false;
    for (const Slot& value : left[r]) {
      const size_t start = home(value);
      if (!Place(slots.data(), value, start, capacity, distinct_)) {
        Place(slots.data(), value, 0, start, distinct_);
      }
    }
  }
  slots_ = SharedArray<Slot>::Owning(std::move(slots));
  filter_ = SharedArray<uint64_t>(std::move(filter));
}

bool TokenTable::SameKey(const Slot& s, const Slot& value) const {
  if (s.size != value.size) return false;
  if (value.size <= kMaxPackedKey) return s.key == value.key;
  return std::memcmp(long_keys_.data() + s.key.w0, long_keys_.data() + value.key.w0,
                     value.size) == 0;
}

bool TokenTable::Place(Slot* slots, Slot value, size_t slot, size_t end, bool& distinct) const {
  // An equal key is in the probe sequence before the first empty slot, if anywhere.
  for (; slot < end; ++slot) {
    Slot& s = slots[slot];
    if (s.size == 0) {
      s = value;
      return true;
    }
    if (SameKey(s, value)) distinct = false;
  }
  return false;
}

void TokenTable::AppendTo(BinaryWriter& out) const {
  out.Varint(mask_);
  out.Varint(size_);
  out.Varint(longest_);
  out.Varint(distinct_);
  WriteAlignedArray(out, slots_.span());
  WriteAlignedArray(out, filter_.span());
  out.Bytes(long_keys_);
}

bool TokenTable::ReadFrom(BinaryReader& in, size_t id_bound,
                          const std::shared_ptr<const void>& owner) {
  *this = TokenTable();
  uint64_t mask, size, longest, distinct;
  std::string_view long_keys;
  if (!in.Varint(&mask) || !in.Varint(&size) || !in.Varint(&longest) || !in.Varint(&distinct) ||
      distinct > 1 || !std::has_single_bit(mask + 1) || mask + 1 < 16 ||
      mask + 1 > in.remaining() / sizeof(Slot) || size > mask) {
    return false;
  }
  const size_t capacity = mask + 1;
  SharedArray<Slot> slots;
  SharedArray<uint64_t> filter;
  if (!ReadAlignedArray(in, capacity, owner, &slots) ||
      !ReadAlignedArray(in, (capacity << kFilterBitsLog2) / 64, owner, &filter) ||
      !in.Bytes(&long_keys)) {
    return false;
  }
  // Every slot in bounds: a full slot's id below id_bound, its long key inside long_keys.
  size_t full = 0;
  for (size_t i = 0; i < capacity; ++i) {
    const Slot& s = slots[i];
    if (s.size == 0) continue;
    ++full;
    if (s.id >= id_bound || s.size > longest ||
        (s.size > kMaxPackedKey && (s.key.w1 != 0 || s.key.w0 > long_keys.size() ||
                                     s.size > long_keys.size() - s.key.w0))) {
      return false;
    }
  }
  if (full != size) return false;
  slots_ = std::move(slots);
  filter_ = std::move(filter);
  long_keys_ = std::string(long_keys);
  mask_ = mask;
  size_ = size;
  longest_ = longest;
  distinct_ = distinct == 1;
  return true;
}

TokenId TokenTable::FindLong(std::string_view bytes) const {
  const uint64_t hash = HashBytes(bytes);
  if (!MayHold(hash)) return kMissing;
  for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
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
