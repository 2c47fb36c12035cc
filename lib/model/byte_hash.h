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

inline uint64_t HashBytes(std::string_view bytes) {
  constexpr uint64_t kSeed0 = 0xa0761d6478bd642full;
  constexpr uint64_t kSeed1 = 0xe7037ed1a0b428dbull;
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = kSeed0 ^ n;
  while (n > 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = HashMix(h ^ word, kSeed1);
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  return HashMix(h ^ tail, kSeed1 ^ (static_cast<uint64_t>(bytes.size()) << 32));
}

}  // namespace tokenmill
