#include "train/bpe/word_store.h"

#include <algorithm>
#include <limits>

#include "common/strings.h"

namespace tokenmill {

absl::StatusOr<WordStore> WordStore::Build(
    std::span<const std::pair<std::string_view, uint64_t>> words, const SymbolSplitter& splitter) {
  absl::StatusOr<WordStore> allocated = Allocate(words);
  if (!allocated.ok()) return allocated.status();
  WordStore& store = *allocated;
  uint32_t at = 0;
  size_t index = 0;
  for (const auto& [word, count] : words) {
    if (word.size() < 2) continue;
    const size_t symbols = splitter.Split(word, &store.data_[at + kHeader]);
    if (symbols < 2) continue;  // one symbol of several bytes (a character)
    store.refs_[index++] = at;
    store.data_[at] = static_cast<uint32_t>(symbols);
    store.data_[at + 1] = static_cast<uint32_t>(count);
    store.data_[at + 2] = static_cast<uint32_t>(count >> 32);
    at += kHeader + static_cast<uint32_t>(symbols);
  }
  store.refs_.resize(index);
  return allocated;
}

absl::StatusOr<WordStore> WordStore::Allocate(
    std::span<const std::pair<std::string_view, uint64_t>> words) {
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
  WordStore store;
  store.data_ = HugeArray<uint32_t>(total);
  store.refs_.resize(kept);
  return store;
}

}  // namespace tokenmill
