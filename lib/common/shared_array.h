// SharedArray<T>: a read-only array of trivially copyable T whose items either belong to it
// (made in memory) or lie in bytes that something else holds, such as a mapped file, kept
// alive by a shared owner.
//
// Why: the encoder's tables read from the vocabulary cache (model/vocab_cache.h) are used
// where they lie in the mapped entry instead of being copied into fresh memory. On the 2-core
// virtual machines we measure on, each first touch of a fresh 4 KB page costs 1-2 µs: the
// copy of cl100k_base's 4.7 MB of tables took about 2.5 ms of a 15 ms empty `tokenmill encode`,
// while the entry's pages are mapped in one call from the page cache (vocab_cache.cc).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace tokenmill {

template <typename T>
class SharedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SharedArray() = default;
  // Owns `items` (shared by copies, never changed).
  explicit SharedArray(std::vector<T> items) : SharedArray(Owning(std::move(items))) {}
  // Owns `items`, any container of T with data() and size() (a HugeArray).
  template <typename Items>
  static SharedArray Owning(Items items) {
    auto owned = std::make_shared<const Items>(std::move(items));
    return SharedArray(owned, owned->data(), owned->size());
  }
  // Items that lie at `data`, kept valid by `owner` (none: they always are).
  SharedArray(std::shared_ptr<const void> owner, const T* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}
  SharedArray(const SharedArray&) = default;
  SharedArray& operator=(const SharedArray&) = default;
  // A moved-from array is empty (it no longer keeps its items alive).
  SharedArray(SharedArray&& other) noexcept { *this = std::move(other); }
  SharedArray& operator=(SharedArray&& other) noexcept {
    owner_ = std::move(other.owner_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_, size_}; }

 private:
  std::shared_ptr<const void> owner_;
  const T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tokenmill
