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
  index_.clear();
  index_.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (skip[id] || tokens[id].empty()) continue;
    index_.emplace(tokens[id], static_cast<TokenId>(id));
  }
}

}  // namespace tokenmill
