#include "train/word_store.h"

#include <algorithm>
#include <limits>

#include "common/strings.h"
#include "oneapi/tbb/parallel_for.h"

namespace tokenmill {

absl::StatusOr<WordStore> WordStore::Build(
    std::span<const std::pair<std::string_view, uint64_t>> words, const TokenId (&byte_id)[256]) {
  WordStore store;
  size_t total = 0, kept = 0;
  for (const auto& [word, count] : words) {
    if (word.size() >= 2) {
      total += kHeader + word.size();
      ++kept;
    }
  }
  if (total >= std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError(
        StrCat("the distinct words hold ", total, " bytes; training supports fewer than 2^32"));
  }
  store.data_ = HugeArray<uint32_t>(total);
  store.refs_.reserve(kept);
  uint32_t at = 0;
  for (const auto& [word, count] : words) {
    if (word.size() < 2) continue;
    store.refs_.push_back(at);
    store.data_[at] = static_cast<uint32_t>(word.size());
    store.data_[at + 1] = static_cast<uint32_t>(count);
    store.data_[at + 2] = static_cast<uint32_t>(count >> 32);
    at += kHeader;
    for (unsigned char c : word) store.data_[at++] = byte_id[c];
  }
  return store;
}

absl::StatusOr<WordStore> WordStore::FromRecords(std::span<const std::vector<uint32_t>> parts) {
  size_t total = 0;
  for (const std::vector<uint32_t>& part : parts) total += part.size();
  if (total >= std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError(
        StrCat("the words hold ", total, " symbols; training supports fewer than 2^32"));
  }
  // Where each part's symbols and records go, then every part copied at its place in parallel.
  std::vector<size_t> words(parts.size() + 1, 0), symbols(parts.size() + 1, 0);
  tbb::parallel_for(size_t{0}, parts.size(), [&](size_t p) {
    size_t n = 0;
    for (size_t r = 0; r < parts[p].size(); r += kHeader + parts[p][r]) ++n;
    words[p + 1] = n;
  });
  for (size_t p = 0; p < parts.size(); ++p) {
    words[p + 1] += words[p];
    symbols[p + 1] = symbols[p] + parts[p].size();
  }
  WordStore store;
  store.data_ = HugeArray<uint32_t>(total);
  store.refs_.resize(words.back());
  tbb::parallel_for(size_t{0}, parts.size(), [&](size_t p) {
    const std::vector<uint32_t>& part = parts[p];
    const uint32_t at = static_cast<uint32_t>(symbols[p]);
    std::copy(part.begin(), part.end(), store.data_.data() + at);
    size_t ref = words[p];
    for (size_t r = 0; r < part.size(); r += kHeader + part[r]) store.refs_[ref++] = at + static_cast<uint32_t>(r);
  });
  return store;
}

}  // namespace tokenmill
