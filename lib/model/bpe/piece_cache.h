// PieceCache: remembers the token ids of recently encoded pieces, so that a piece seen before
// costs one hash lookup instead of a BPE run. Owned by one thread (the Encoder keeps one per
// thread); not thread-safe. When it holds `capacity` pieces it is emptied and refills with
// what comes next, so frequent pieces stay in it and memory stays bounded.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/huge_array.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/byte_hash.h"
#include "model/bpe/id_writer.h"

namespace tokenmill {

class PieceCache {
 public:
  explicit PieceCache(size_t capacity) : capacity_(capacity) {}

  // Appends the cached ids of `piece` (whose HashPiece is `hash`) to `out`; false if absent.
  // Pieces longer than 65535 bytes are never cached.
  bool Lookup(std::string_view piece, uint64_t hash, IdWriter& out) const;

  // Remembers that `piece` encodes to ids[0..count).
  void Insert(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count);

  size_t size() const { return size_; }

  // In front of the table: a direct-mapped array of pieces of up to kMaxHotPiece bytes (key:
  // PackKey's first word) with their final ids when there are at most kMaxHotIds, whole tokens
  // included. Its 4096 entries (128 KB) stay in the core's cache, where the 3 MB token table
  // and the table of longer pieces do not: punctuation, newlines and short words are most
  // pieces. (Four ids, not two: " 其" is three ids in cl100k_base, and 52 k of poetry's pieces.)
  static constexpr size_t kMaxHotPiece = 8;
  static constexpr size_t kMaxHotIds = 4;
  bool LookupHot(uint64_t key, size_t size, IdWriter& out) const {
    const HotSlot& s = hot_[HotIndex(key, size)];
    if (s.key != key || s.size != size) return false;
    std::memcpy(out.Room(kMaxHotIds), s.ids, sizeof(s.ids));  // all four: no branch on count
    out.Advance(s.count);
    return true;
  }
  void InsertHot(uint64_t key, size_t size, const TokenId* ids, size_t count) {
    if (count == 0 || count > kMaxHotIds) return;
    HotSlot& s = hot_[HotIndex(key, size)];
    s.key = key;
    s.size = static_cast<uint32_t>(size);
    s.count = static_cast<uint32_t>(count);
    for (size_t i = 0; i < kMaxHotIds; ++i) s.ids[i] = i < count ? ids[i] : 0;
  }

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
  void Grow();  // doubles slots_ (the first time: allocates it) and reinserts what it holds

  struct alignas(32) HotSlot {  // two to a cache line
    uint64_t key = 0;
    uint32_t size = 0;  // 0: empty (pieces are never empty)
    uint32_t count = 0;
    TokenId ids[kMaxHotIds] = {0, 0, 0, 0};
  };
  static constexpr int kHotBits = 12;
  static size_t HotIndex(uint64_t key, size_t size) {
    return static_cast<size_t>(((key ^ size) * 0x9E3779B97F4A7C15ull) >> (64 - kHotBits));
  }

  size_t capacity_;
  size_t size_ = 0;
  size_t mask_ = 0;
  // Zeroed (every slot empty); from 4 MB in huge pages, where the kernel gives them: the table
  // a thread grows to 4-16 MB was faulted in 4 KB at a time (linux_docs, cl100k_base: 8.8 k
  // -> 5.8 k page faults at 1 thread, 10.4 k -> 8.4 k at 2).
  HugeArray<Slot> slots_;
  std::string keys_;
  std::vector<TokenId> ids_;
  std::vector<HotSlot> hot_ = std::vector<HotSlot>(size_t{1} << kHotBits);
};

}  // namespace tokenmill
