#include "count/word_counts.h"

#include <algorithm>

namespace tokenmill {

void WordCounts::Add(std::string_view word, uint64_t count) {
  auto it = counts_.find(word);
  if (it == counts_.end()) {
    counts_.emplace(std::string(word), count);
  } else {
    it->second += count;
  }
  total_ += count;
}

void WordCounts::MergeFrom(const WordCounts& other) {
  counts_.reserve(counts_.size() + other.counts_.size());
  for (const auto& [word, count] : other.counts_) Add(word, count);
}

uint64_t WordCounts::Get(std::string_view word) const {
  auto it = counts_.find(word);
  return it == counts_.end() ? 0 : it->second;
}

std::vector<std::pair<std::string_view, uint64_t>> WordCounts::Sorted() const {
  std::vector<std::pair<std::string_view, uint64_t>> entries;
  entries.reserve(counts_.size());
  for (const auto& [word, count] : counts_) entries.emplace_back(word, count);
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool WordCounts::operator==(const WordCounts& other) const {
  return total_ == other.total_ && counts_ == other.counts_;
}

}  // namespace tokenmill
