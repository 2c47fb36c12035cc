#include "model/piece_cache.h"

#include <bit>
#include <cstring>

namespace tokenmill {

bool PieceCache::Lookup(std::string_view piece, uint64_t hash, std::vector<TokenId>& out) const {
  if (slots_.empty()) return false;
  size_t slot = hash & mask_;
  while (true) {
    const Slot& s = slots_[slot];
    if (s.key_size == 0) return false;
    if (s.hash == hash && s.key_size == piece.size() &&
        std::memcmp(keys_.data() + s.key_offset, piece.data(), piece.size()) == 0) {
      out.insert(out.end(), ids_.begin() + s.ids_offset, ids_.begin() + s.ids_offset + s.ids_size);
      return true;
    }
    slot = (slot + 1) & mask_;
  }
}

void PieceCache::Clear() {
  size_ = 0;
  keys_.clear();
  ids_.clear();
  std::fill(slots_.begin(), slots_.end(), Slot{});
}

void PieceCache::Insert(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count) {
  if (capacity_ == 0) return;
  if (slots_.empty()) {
    slots_.resize(std::bit_ceil(capacity_ * 2));
    mask_ = slots_.size() - 1;
  }
  if (size_ >= capacity_ || keys_.size() + piece.size() > UINT32_MAX ||
      ids_.size() + count > UINT32_MAX) {
    Clear();
  }
  size_t slot = hash & mask_;
  while (slots_[slot].key_size != 0) slot = (slot + 1) & mask_;
  slots_[slot] = {hash, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(piece.size()),
                  static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count)};
  keys_.append(piece);
  ids_.insert(ids_.end(), ids, ids + count);
  ++size_;
}

}  // namespace tokenmill
