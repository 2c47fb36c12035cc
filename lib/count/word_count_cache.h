// WordCountCache: a small direct-mapped cache of word counts in front of a WordCounts table,
// for the counting hot path. Word frequencies are Zipfian, so most pieces hit a compact array
// that stays in the core's cache instead of probing the large table; an evicted entry adds its
// count to the table. Words of up to 7 bytes (most pieces of real text) are cached, packed into
// a 64-bit key as the table packs them (a lookup is one integer compare); longer words go to
// the table directly.
//
// Why not longer words: this cache once took words of up to 15 bytes (two keys). Where such
// words are many and even (poetry: millions of distinct 3-5 character CJK words) nearly every
// lookup missed and evicted. tokenmill count's counting phase, one thread, medians of 6 (two
// builds alternating): poetry 2.21 s with them, 1.60 s without; linux_c_100m 0.64 s and
// 0.62 s; brown and linux_docs the same (bench/RESULTS.md, "Counting").
//
// Contract: the table's counts are exact after Flush() (or destruction); until then they lag.
// One cache per thread and table; the table must outlive the cache.
#pragma once

#include <cstdint>
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
    if (word.size() > WordCounts::kMaxShortWord) {
      table_->Add(word);
      return;
    }
    // Bytes, then the length in the top byte: never 0 (pieces are not empty), so 0 marks an
    // empty entry.
    const uint64_t key = WordCounts::PackShort(word);
    Entry& entry = entries_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kBits)];
    if (entry.key == key) {
      ++entry.count;
      return;
    }
    if (entry.count != 0) table_->AddPacked(entry.key, entry.count);
    entry.key = key;
    entry.count = 1;
  }

  // Adds every cached count to the table and empties the cache.
  void Flush() {
    for (size_t i = 0; i < kEntries; ++i) {
      if (entries_[i].count != 0) table_->AddPacked(entries_[i].key, entries_[i].count);
      entries_[i] = Entry();
    }
  }

 private:
  static constexpr int kBits = 15;  // 32768 entries of 16 bytes: 512 KiB
  static constexpr size_t kEntries = size_t{1} << kBits;
  struct Entry {
    uint64_t key = 0;
    uint64_t count = 0;
  };

  WordCounts* table_;
  std::unique_ptr<Entry[]> entries_;
};

}  // namespace tokenmill
