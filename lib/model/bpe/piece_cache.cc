#include "model/bpe/piece_cache.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace tokenmill {

bool PieceCache::Lookup(std::string_view piece, uint64_t hash, IdWriter& out) const {
  if (slots_.size() == 0) return false;
  PackedKey packed = piece.size() <= kMaxPackedKey ? PackKey(piece.data(), piece.size()) : PackedKey{0, 0};
  for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
    const Slot& s = slots_[slot];
    if (s.size == 0) return false;
    if (!KeyEquals(s, piece, packed)) continue;
    if (s.count <= 3) {
      std::memcpy(out.Room(3), s.ids, sizeof(s.ids));  // all three: no branch on count
      out.Advance(s.count);
    } else {
      out.Append(ids_.data() + s.ids[0], s.count);
    }
    return true;
  }
}

void PieceCache::Clear() {
  size_ = 0;
  keys_.clear();
  ids_.clear();
  std::memset(static_cast<void*>(slots_.data()), 0, slots_.size() * sizeof(Slot));
}

void PieceCache::Grow() {
  constexpr size_t kFirstSlots = 1024;
  HugeArray<Slot> old = std::move(slots_);
  slots_ = HugeArray<Slot>(old.size() == 0 ? std::min(kFirstSlots, std::bit_ceil(2 * capacity_))
                                           : 2 * old.size());
  mask_ = slots_.size() - 1;
  for (const Slot& s : old.span()) {
    if (s.size == 0) continue;
    const uint64_t hash = s.size <= kMaxPackedKey
                              ? HashPacked(s.key, s.size)
                              : HashBytes(std::string_view(keys_.data() + s.key.w0, s.size));
    size_t slot = hash & mask_;
    while (slots_[slot].size != 0) slot = (slot + 1) & mask_;
    slots_[slot] = s;
  }
}

void PieceCache::Insert(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count) {
  if (capacity_ == 0 || piece.size() > UINT16_MAX || count > UINT16_MAX) return;
  if (size_ >= capacity_ || keys_.size() + piece.size() > UINT32_MAX ||
      ids_.size() + count > UINT32_MAX) {
    Clear();
  }
  // The table grows with what it holds (at most half full), up to the size for capacity_:
  // a text with few distinct pieces (poetry's 15 k segments) then probes a table that stays in
  // the core's cache, not 16 MB of mostly empty slots (a cache and TLB miss per lookup).
  if (2 * (size_ + 1) > slots_.size()) Grow();
  Slot value;
  value.size = static_cast<uint16_t>(piece.size());
  value.count = static_cast<uint16_t>(count);
  if (piece.size() <= kMaxPackedKey) {
    value.key = PackKey(piece.data(), piece.size());
  } else {
    value.key = {keys_.size(), 0};
    keys_.append(piece);
  }
  if (count <= 3) {
    std::copy(ids, ids + count, value.ids);
  } else {
    value.ids[0] = static_cast<uint32_t>(ids_.size());
    ids_.insert(ids_.end(), ids, ids + count);
  }
  size_t slot = hash & mask_;
  while (slots_[slot].size != 0) slot = (slot + 1) & mask_;
  slots_[slot] = value;
  ++size_;
}

}  // namespace tokenmill
