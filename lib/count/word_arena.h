// WordArena: append-only storage for word bytes. Stored words never move until the arena is
// destroyed, so hash tables can key on views into it (one allocation per block, not per word).
//
// Contract: Store() copies `word` and returns a view of the copy, valid for the arena's life
// (moving the arena keeps views valid). Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace tokenmill {

class WordArena {
 public:
  WordArena() = default;
  WordArena(WordArena&& other) noexcept { *this = std::move(other); }
  WordArena& operator=(WordArena&& other) noexcept {
    blocks_ = std::move(other.blocks_);
    next_ = std::exchange(other.next_, nullptr);
    left_ = std::exchange(other.left_, 0);
    block_size_ = std::exchange(other.block_size_, kFirstBlock);
    allocated_ = std::exchange(other.allocated_, 0);
    other.blocks_.clear();
    return *this;
  }

  std::string_view Store(std::string_view word) {
    if (word.size() > left_) Grow(word.size());
    char* out = next_;
    if (!word.empty()) std::memcpy(out, word.data(), word.size());
    next_ += word.size();
    left_ -= word.size();
    return {out, word.size()};
  }

  // Bytes held in blocks (allocated, not only used).
  size_t allocated_bytes() const { return allocated_; }

 private:
  static constexpr size_t kFirstBlock = 4096;
  static constexpr size_t kMaxBlock = size_t{1} << 20;

  void Grow(size_t at_least) {
    size_t size = std::max(block_size_, at_least);
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    next_ = blocks_.back().get();
    left_ = size;
    allocated_ += size;
    block_size_ = std::min(block_size_ * 2, kMaxBlock);
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
  size_t block_size_ = kFirstBlock;
  size_t allocated_ = 0;
};

}  // namespace tokenmill
