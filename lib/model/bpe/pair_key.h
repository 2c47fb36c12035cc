// A pair of adjacent token ids as one 64-bit key: (left << 32) | right. The one packing that
// the encoder's tables and the trainer's pair index share.
#pragma once

#include <cstdint>

namespace tokenmill {

using PairKey = uint64_t;
inline constexpr PairKey MakePairKey(uint32_t left, uint32_t right) {
  return (static_cast<uint64_t>(left) << 32) | right;
}
inline constexpr uint32_t PairLeft(PairKey key) { return static_cast<uint32_t>(key >> 32); }
inline constexpr uint32_t PairRight(PairKey key) { return static_cast<uint32_t>(key); }

}  // namespace tokenmill
