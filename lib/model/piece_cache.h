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
#include "model/byte_hash.h"

namespace tokenmill {

class PieceCache {
 public:
  explicit PieceCache(size_t capacity) : capacity_(capacity) {}

  // Appends the cached ids of `piece` (whose HashPiece is `hash`) to `out`; false if absent.
  // Pieces longer than 65535 bytes are never cached.
  bool Lookup(std::string_view piece, uint64_t hash, std::vector<TokenId>& out) const;

  // Remembers that `piece` encodes to ids[0..count).
  void Insert(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count);

  size_t size() const { return size_; }

 private:
  // Keys of up to 16 bytes and up to 3 ids are kept inline (one memory access for most
  // lookups); longer keys / more ids live in keys_ / ids_ at the offsets in key.w0 / ids[0].
  struct Slot {
    PackedKey key{0, 0};
    uint16_t size = 0;   // key bytes; 0: empty slot (pieces are never empty)
    uint16_t count = 0;  // ids
    uint32_t ids[3] = {0, 0, 0};
  };
  bool KeyEquals(const Slot& slot, std::string_view piece, PackedKey packed) const {
    if (slot.size != piece.size()) return false;
    if (piece.size() <= kMaxPackedKey) return slot.key == packed;
    return BytesEqual(keys_.data() + slot.key.w0, piece.data(), piece.size());
  }
  void Clear();

  size_t capacity_;
  size_t size_ = 0;
  size_t mask_ = 0;
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<TokenId> ids_;
};

}  // namespace tokenmill
