// PieceCache: remembers the token ids of recently encoded pieces, so that a piece seen before
// costs one hash lookup instead of a BPE run. Owned by one thread (the Encoder keeps one per
// thread); not thread-safe. When it holds `capacity` pieces it is emptied and refills with
// what comes next, so frequent pieces stay in it and memory stays bounded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/bpe_model.h"

namespace tokenmill {

class PieceCache {
 public:
  explicit PieceCache(size_t capacity) : capacity_(capacity) {}

  // Appends the cached ids of `piece` (whose HashBytes is `hash`) to `out`; false if absent.
  bool Lookup(std::string_view piece, uint64_t hash, std::vector<TokenId>& out) const;

  // Remembers that `piece` encodes to ids[0..count).
  void Insert(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count);

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_offset = 0;
    uint32_t key_size = 0;  // 0: empty slot (pieces are never empty)
    uint32_t ids_offset = 0;
    uint32_t ids_size = 0;
  };
  void Clear();

  size_t capacity_;
  size_t size_ = 0;
  size_t mask_ = 0;
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<TokenId> ids_;
};

}  // namespace tokenmill
