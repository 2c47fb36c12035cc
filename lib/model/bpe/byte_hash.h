// A fast 64-bit hash of short byte strings (pre-tokenized pieces, tokens), for the encoder's
// lookup tables. Not for anything that needs to resist chosen inputs.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace tokenmill {

inline uint64_t HashMix(uint64_t a, uint64_t b) {
  __uint128_t product = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Whether a[0..n) == b[0..n), for the short strings the encoder compares (no library call).
inline bool BytesEqual(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    if (n > 16) return std::memcmp(a, b, n) == 0;
    return ((Load64(a) ^ Load64(b)) | (Load64(a + n - 8) ^ Load64(b + n - 8))) == 0;
  }
  if (n >= 4) return ((Load32(a) ^ Load32(b)) | (Load32(a + n - 4) ^ Load32(b + n - 4))) == 0;
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// wyhash-style: whole 8-byte words, then the last 1..16 bytes read as overlapping words (no
// variable-length copies, which cost a library call).
inline uint64_t HashBytes(std::string_view bytes) {
  constexpr uint64_t kSeed0 = 0xa0761d6478bd642full;
  constexpr uint64_t kSeed1 = 0xe7037ed1a0b428dbull;
  constexpr uint64_t kSeed2 = 0x8ebc6af09c88c6e3ull;
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = kSeed0 ^ n;
  uint64_t a, b;
  if (n <= 16) {
    if (n >= 4) {
      size_t half = (n >> 3) << 2;  // 0 for n < 8, 4 for n >= 8
      a = Load32(p) << 32 | Load32(p + half);
      b = Load32(p + n - 4) << 32 | Load32(p + n - 4 - half);
    } else if (n > 0) {
      a = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) << 16 |
          static_cast<uint64_t>(static_cast<unsigned char>(p[n >> 1])) << 8 |
          static_cast<unsigned char>(p[n - 1]);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    while (n > 16) {
      h = HashMix(Load64(p) ^ kSeed1, Load64(p + 8) ^ h);
      p += 16;
      n -= 16;
    }
    a = Load64(p + n - 16);
    b = Load64(p + n - 8);
  }
  return HashMix(kSeed1 ^ bytes.size(), HashMix(a ^ kSeed1, b ^ h ^ kSeed2));
}

// A string of at most 16 bytes packed into two words, zero-padded: equal strings of equal
// length pack equally, so a table can keep short keys inline and compare two words.
struct PackedKey {
  uint64_t w0;
  uint64_t w1;
  bool operator==(const PackedKey&) const = default;
};
inline constexpr size_t kMaxPackedKey = 16;

inline PackedKey PackKey(const char* p, size_t n) {  // n <= kMaxPackedKey
  if (n > 8) return {Load64(p), Load64(p + n - 8) >> (8 * (16 - n))};
  if (n >= 4) {
    uint64_t lo = Load32(p), hi = Load32(p + n - 4);
    return {lo | hi << (8 * (n - 4)), 0};
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return {w, 0};
}

inline uint64_t HashPacked(PackedKey key, size_t n) {
  return HashMix(key.w0 ^ 0xa0761d6478bd642full, key.w1 ^ n ^ 0xe7037ed1a0b428dbull);
}

// The hash the encoder's tables use for a piece of any length.
inline uint64_t HashPiece(std::string_view piece) {
  return piece.size() <= kMaxPackedKey ? HashPacked(PackKey(piece.data(), piece.size()), piece.size())
                                       : HashBytes(piece);
}

}  // namespace tokenmill
