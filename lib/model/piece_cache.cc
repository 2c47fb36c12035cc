#include "model/piece_cache.h"

#include <algorithm>
#include <bit>

namespace tokenmill {

bool PieceCache::Lookup(std::string_view piece, uint64_t hash, std::vector<TokenId>& out) const {
  if (slots_.empty()) return false;
  PackedKey packed = piece.size() <= kMaxPackedKey ? PackKey(piece.data(), piece.size()) : PackedKey{0, 0};
  for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
    const Slot& s = slots_[slot];
    if (s.size == 0) return false;
    if (!KeyEquals(s, piece, packed)) continue;
    if (s.count <= 3) {
      out.insert(out.end(), s.ids, s.ids + s.count);
    } else {
      out.insert(out.end(), ids_.begin() + s.ids[0], ids_.begin() + s.ids[0] + s.count);
    }
    return true;
  }
}

void PieceCache::Clear() {
  size_ = 0;
  keys_.clear();
  ids_.clear();
  std::fill(slots_.begin(), slots_.end(), Slot{});
}

void PieceCache::Insert(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count) {
  if (capacity_ == 0 || piece.size() > UINT16_MAX || count > UINT16_MAX) return;
  if (slots_.empty()) {
    slots_.resize(std::bit_ceil(capacity_ * 2));
    mask_ = slots_.size() - 1;
  }
  if (size_ >= capacity_ || keys_.size() + piece.size() > UINT32_MAX ||
      ids_.size() + count > UINT32_MAX) {
    Clear();
  }
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
