#include "model/lookup_tables.h"

#include <bit>

#include "model/byte_hash.h"

namespace tokenmill {
namespace {

size_t TableSize(size_t count) { return std::bit_ceil(std::max<size_t>(16, count * 2)); }

}  // namespace

void PairTable::Build(const std::vector<std::pair<uint64_t, PairMerge>>& entries) {
  size_t size = TableSize(entries.size());
  entries_.assign(size, Entry{kEmptyKey, {kNone, 0}});
  mask_ = size - 1;
  for (const auto& [key, merge] : entries) {
    size_t slot = Slot(key);
    while (entries_[slot].key != kEmptyKey && entries_[slot].key != key) slot = (slot + 1) & mask_;
    if (entries_[slot].key == kEmptyKey) entries_[slot] = {key, merge};
  }
}

void TokenTable::Build(const std::vector<std::string>& tokens, const std::vector<bool>& skip) {
  arena_.clear();
  offset_.assign(tokens.size() + 1, 0);
  size_t count = 0;
  for (size_t id = 0; id < tokens.size(); ++id) {
    offset_[id] = static_cast<uint32_t>(arena_.size());
    if (skip[id] || tokens[id].empty()) continue;
    arena_ += tokens[id];
    ++count;
  }
  offset_[tokens.size()] = static_cast<uint32_t>(arena_.size());
  size_t size = TableSize(count);
  slots_.assign(size, Slot{});
  mask_ = size - 1;
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (skip[id] || tokens[id].empty()) continue;
    uint64_t hash = HashBytes(tokens[id]);
    size_t slot = hash & mask_;
    while (slots_[slot].id != kMissing) slot = (slot + 1) & mask_;
    slots_[slot] = {static_cast<uint32_t>(hash >> 32), static_cast<TokenId>(id)};
  }
}

TokenId TokenTable::Find(std::string_view bytes) const {
  uint64_t hash = HashBytes(bytes);
  uint32_t tag = static_cast<uint32_t>(hash >> 32);
  size_t slot = hash & mask_;
  while (true) {
    const Slot& s = slots_[slot];
    if (s.id == kMissing) return kMissing;
    if (s.tag == tag) {
      uint32_t begin = offset_[s.id];
      uint32_t size = offset_[s.id + 1] - begin;
      if (size == bytes.size() && std::memcmp(arena_.data() + begin, bytes.data(), size) == 0) {
        return s.id;
      }
    }
    slot = (slot + 1) & mask_;
  }
}

}  // namespace tokenmill
