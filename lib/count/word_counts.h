// WordCounts: the table of unique pre-tokenized pieces ("words") and how often each occurred.
// This is what counting produces and what trainers consume.
//
// Contract: counts are 64-bit; Add() with an existing word adds to its count. Sorted() gives
// a deterministic order (by bytes) that does not depend on insertion order or thread count.
// Not thread-safe: parallel counting keeps one table per thread and merges them with MergeFrom.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "common/strings.h"

namespace tokenmill {

class WordCounts {
 public:
  void Add(std::string_view word, uint64_t count = 1);
  void MergeFrom(const WordCounts& other);

  size_t unique_words() const { return counts_.size(); }
  uint64_t total_words() const { return total_; }
  uint64_t Get(std::string_view word) const;

  // (word, count) pairs sorted by the words' bytes.
  std::vector<std::pair<std::string_view, uint64_t>> Sorted() const;

  bool operator==(const WordCounts& other) const;

 private:
  StringMap<uint64_t> counts_;
  uint64_t total_ = 0;
};

}  // namespace tokenmill
