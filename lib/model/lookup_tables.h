// The encoder's read-only lookup tables, open-addressed for speed.
//
// PairTable: (left id, right id) -> the merge that joins them: its priority and its result.
// TokenTable: a piece's bytes -> the id of the regular token with exactly those bytes.
// Both are built once and then only read, so any number of threads may share them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/bpe_model.h"
#include "model/byte_hash.h"

namespace tokenmill {

struct PairMerge {
  uint32_t priority;  // lower merges first
  TokenId result;
};

class PairTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Keeps the first entry given for a pair.
  void Build(const std::vector<std::pair<uint64_t, PairMerge>>& entries);

  static uint64_t Key(TokenId left, TokenId right) { return uint64_t{left} << 32 | right; }

  // The merge of (left, right), or {kNone, 0}.
  PairMerge Find(TokenId left, TokenId right) const {
    uint64_t key = Key(left, right);
    size_t slot = Slot(key);
    while (true) {
      const Entry& e = entries_[slot];
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
  size_t Slot(uint64_t key) const { return HashMix(key, 0x9e3779b97f4a7c15ull) & mask_; }
  std::vector<Entry> entries_{Entry{kEmptyKey, {kNone, 0}}};
  size_t mask_ = 0;
};

class TokenTable {
 public:
  static constexpr TokenId kMissing = UINT32_MAX;

  // `tokens[id]` as in BpeModel; ids in `skip` (specials) and gaps are left out. The table
  // keeps views into `tokens`, which must outlive it unchanged.
  void Build(const std::vector<std::string>& tokens, const std::vector<bool>& skip);

  TokenId Find(std::string_view bytes) const {
    auto it = index_.find(bytes);
    return it == index_.end() ? kMissing : it->second;
  }

 private:
  struct Hash {
    size_t operator()(std::string_view s) const { return HashBytes(s); }
  };
  absl::flat_hash_map<std::string_view, TokenId, Hash> index_;
};

}  // namespace tokenmill
