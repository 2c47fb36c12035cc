// WordCountCache: a small direct-mapped cache of word counts in front of a WordCounts table,
// for the counting hot path. Word frequencies are Zipfian, so most pieces hit a compact array
// that stays in the core's cache instead of probing the large table; an evicted entry adds its
// count to the table. Words of up to 15 bytes are cached, packed into two 64-bit keys (so a
// lookup is two integer compares); longer words go to the table directly.
//
// Contract: the table's counts are exact after Flush() (or destruction); until then they lag.
// One cache per thread and table; the table must outlive the cache.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "count/word_counts.h"

namespace tokenmill {

class WordCountCache {
 public:
  explicit WordCountCache(WordCounts* table)
      : table_(table), entries_(std::make_unique<Entry[]>(kEntries)) {}
  ~WordCountCache() { Flush(); }
  WordCountCache(const WordCountCache&) = delete;
  WordCountCache& operator=(const WordCountCache&) = delete;

  void Add(std::string_view word) {
    size_t n = word.size();
    if (n > kMaxCached) {
      table_->Add(word);
      return;
    }
    uint64_t lo, hi;
    if (n <= WordCounts::kMaxShortWord) {
      // Same packing as the table's short words: bytes, then the length in the top byte.
      lo = WordCounts::PackShort(word);
      hi = 0;
    } else {
      std::memcpy(&lo, word.data(), 8);
      std::memcpy(&hi, word.data() + n - 8, 8);
      hi = ((hi >> 1) >> (8 * (16 - n) - 1)) | (static_cast<uint64_t>(n) << 56);  // bytes 8..n
    }
    Entry& entry = entries_[((lo ^ (hi * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull) >> (64 - kBits)];
    if (entry.lo == lo && entry.hi == hi) {
      ++entry.count;
      return;
    }
    if (entry.count != 0) Evict(entry);
    entry.lo = lo;
    entry.hi = hi;
    entry.count = 1;
  }

  // Adds every cached count to the table and empties the cache.
  void Flush() {
    for (size_t i = 0; i < kEntries; ++i) {
      if (entries_[i].count != 0) Evict(entries_[i]);
      entries_[i] = Entry();
    }
  }

 private:
  static constexpr size_t kMaxCached = 15;
  static constexpr int kBits = 15;  // 32768 entries of 24 bytes: 768 KiB
  static constexpr size_t kEntries = size_t{1} << kBits;
  struct Entry {
    uint64_t lo = 0;
    uint64_t hi = 0;
    uint64_t count = 0;
  };
  void Evict(const Entry& entry) {
    if (entry.hi == 0) {
      table_->AddPacked(entry.lo, entry.count);
      return;
    }
    char bytes[16];
    std::memcpy(bytes, &entry.lo, 8);
    std::memcpy(bytes + 8, &entry.hi, 8);
    table_->Add(std::string_view(bytes, static_cast<size_t>(entry.hi >> 56)), entry.count);
  }

  WordCounts* table_;
  std::unique_ptr<Entry[]> entries_;
};

}  // namespace tokenmill
