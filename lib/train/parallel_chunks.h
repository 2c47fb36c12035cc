// The two idioms the trainers' parallel passes share: cutting n items into chunks of nearly
// equal size, and the middle step of a counting sort over those chunks (per-chunk histograms
// turned into the place of each chunk's first entry of each key), which makes every key's
// entries come out in chunk order, the same whatever the number of threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokenmill {

// n items as `count` runs [Begin(c), Begin(c + 1)).
struct Chunks {
  // About `per_chunk` items a chunk, between 1 and `max_chunks` chunks.
  static Chunks Of(size_t n, size_t per_chunk, size_t max_chunks) {
    return {n, std::clamp<size_t>((n + per_chunk - 1) / per_chunk, 1, max_chunks)};
  }
  size_t Begin(size_t c) const { return n * c / count; }

  size_t n;
  size_t count;
};

// Counting sort over chunks: hist[c][k] holds how many entries chunk c has of key k. Replaces
// it by where chunk c's first entry of key k goes: in one flat array where the keys' entries
// follow each other in key order, and each key's in chunk order (relative to the key's own
// start when `relative`, which keeps small counters small). Returns the keys' starts (keys + 1
// entries; the last is the total).
template <typename Count>
std::vector<uint64_t> CountingSortOffsets(std::vector<std::vector<Count>>& hist, size_t keys,
                                          bool relative) {
  std::vector<uint64_t> start(keys + 1, 0);
  uint64_t total = 0;
  for (size_t k = 0; k < keys; ++k) {
    start[k] = total;
    for (std::vector<Count>& chunk : hist) {
      const Count in_chunk = chunk[k];
      chunk[k] = static_cast<Count>(relative ? total - start[k] : total);
      total += in_chunk;
    }
  }
  start[keys] = total;
  return start;
}

}  // namespace tokenmill
