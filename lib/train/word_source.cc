#include "train/word_source.h"

namespace tokenmill {

WordSource WordSource::Borrow(const WordCounts& counts) {
  WordSource source;
  source.counts_ = &counts;
  return source;
}

WordSource WordSource::TakeOver(WordCounts& counts) {
  WordSource source;
  source.counts_ = &counts;
  source.owned_counts_ = &counts;
  return source;
}

WordSource WordSource::TakeOver(WordList list) {
  WordSource source;
  source.list_ = std::move(list);
  source.has_list_ = true;
  return source;
}

WordSource& WordSource::BeforeRelease(std::function<void()> hook) {
  before_release_ = std::move(hook);
  return *this;
}

std::span<const WordSource::Entry> WordSource::Entries() {
  if (has_list_) return list_.entries;
  if (counts_ != nullptr && from_counts_.empty() && counts_->unique_words() > 0) {
    from_counts_.reserve(counts_->unique_words());
    counts_->ForEach(
        [&](std::string_view word, uint64_t count) { from_counts_.emplace_back(word, count); });
  }
  return from_counts_;
}

void WordSource::Release() {
  std::vector<Entry>().swap(from_counts_);
  if (owned_counts_ == nullptr && !has_list_) return;
  if (before_release_) before_release_();
  if (owned_counts_ != nullptr) *owned_counts_ = WordCounts();
  list_ = WordList();
  owned_counts_ = nullptr;
  counts_ = nullptr;
  has_list_ = false;
}

}  // namespace tokenmill
