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

}  // namespace tokenmill
