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

absl::StatusOr<WordStore> WordStore::Allocate(size_t symbols, size_t words) {
  if (symbols >= std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError(
        StrCat("the words hold ", symbols, " symbols; training supports fewer than 2^32"));
  }
  WordStore store;
  store.data_ = HugeArray<uint32_t>(symbols);
  store.refs_.resize(words);
  return store;
}

}  // namespace tokenmill
