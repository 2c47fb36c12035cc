#include "train/word_store.h"

namespace tokenmill {

WordStore WordStore::Build(std::span<const std::pair<std::string_view, uint64_t>> words,
                           const TokenId (&byte_id)[256]) {
  WordStore store;
  size_t total = 0, kept = 0;
  for (const auto& [word, count] : words) {
    if (word.size() >= 2) {
      total += word.size();
      ++kept;
    }
  }
  store.symbols_.resize(total);
  store.begin_.reserve(kept);
  store.length_.reserve(kept);
  store.count_.reserve(kept);
  size_t at = 0;
  for (const auto& [word, count] : words) {
    if (word.size() < 2) continue;
    store.begin_.push_back(at);
    store.length_.push_back(static_cast<uint32_t>(word.size()));
    store.count_.push_back(count);
    for (unsigned char c : word) store.symbols_[at++] = byte_id[c];
  }
  return store;
}

}  // namespace tokenmill
