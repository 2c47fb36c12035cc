// Little binary encoding helpers for tokenmill's own files (counts, checkpoints):
// LEB128 varints, length-prefixed byte strings, fixed 32/64-bit little-endian integers.
//
// BinaryReader never reads past its buffer: each Read* returns false on truncated or malformed
// input and leaves the reader failed; callers turn that into a Status naming the file.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/shared_array.h"

namespace tokenmill {

// The bytes BinaryWriter::Varint writes for `value`.
inline size_t VarintSize(uint64_t value) {
  return static_cast<size_t>(1 + (std::bit_width(value | 1) - 1) / 7);
}

// Writes `value` as a LEB128 varint (VarintSize(value) bytes) at `out`; returns the end.
inline char* EncodeVarint(uint64_t value, char* out) {
  while (value >= 0x80) {
    *out++ = static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

// The zero bytes that bring `offset` to a multiple of `alignment`.
inline size_t PaddingTo(size_t offset, size_t alignment) {
  return (alignment - offset % alignment) % alignment;
}

class BinaryWriter {
 public:
  explicit BinaryWriter(std::string* out) : out_(out) {}
  void Varint(uint64_t value);
  void Bytes(std::string_view bytes);  // varint length, then the bytes
  void Fixed32(uint32_t value);
  void Fixed64(uint64_t value);
  void Raw(std::string_view bytes) { out_->append(bytes); }
  // The bytes written to the string so far (with what it held before).
  size_t size() const { return out_->size(); }
  // A byte giving the number of zero bytes that follow, then those bytes: what is written next
  // starts at a multiple of `alignment` (at most 256) from the start of the string.
  void Pad(size_t alignment) {
    const size_t pad = PaddingTo(size() + 1, alignment);
    out_->push_back(static_cast<char>(pad));
    out_->append(pad, '\0');
  }

 private:
  std::string* out_;
};

class BinaryReader {
 public:
  explicit BinaryReader(std::string_view data) : data_(data) {}
  bool Varint(uint64_t* value);
  bool Bytes(std::string_view* bytes);
  bool Fixed32(uint32_t* value);
  bool Fixed64(uint64_t* value);
  bool Raw(size_t size, std::string_view* bytes);
  // Moves past what BinaryWriter::Pad(alignment) wrote; false when its count is not below
  // `alignment` or the bytes are short.
  bool SkipPad(size_t alignment);

  size_t offset() const { return offset_; }
  size_t remaining() const { return data_.size() - offset_; }
  bool done() const { return offset_ == data_.size(); }

 private:
  std::string_view data_;
  size_t offset_ = 0;
};

// An array of trivially copyable T: a varint count, then its bytes as they lie in memory (this
// machine's byte order and layout: for a cache that only the same build reads back).
template <typename T>
void WriteArray(BinaryWriter& out, std::span<const T> items) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.Varint(items.size());
  out.Raw(std::string_view(reinterpret_cast<const char*>(items.data()), items.size_bytes()));
}

// WriteArray's array with its items at a multiple of alignof(T) from the start of the writer's
// string: a varint count, a byte giving the number of zero bytes that follow (below
// alignof(T)), those bytes, then the items. Bytes that start at such an address hold the items
// ready to use where they lie (ReadAlignedArray).
template <typename T>
void WriteAlignedArray(BinaryWriter& out, std::span<const T> items) {
  // (A vocabulary cache entry's payload is 64-aligned: items aligned more would be copied.)
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 64);
  out.Varint(items.size());
  out.Pad(alignof(T));
  out.Raw(std::string_view(reinterpret_cast<const char*>(items.data()), items.size_bytes()));
}

// WriteAlignedArray's array of exactly `count` items: used where it lies, kept alive by
// `owner`, when there is an owner (the bytes `in` reads must then be `owner`'s) and the items
// are aligned; otherwise copied. False when the count differs or the bytes are short.
template <typename T>
bool ReadAlignedArray(BinaryReader& in, size_t count, const std::shared_ptr<const void>& owner,
                      SharedArray<T>* out) {
  static_assert(std::is_trivially_copyable_v<T>);
  uint64_t n;
  std::string_view bytes;
  if (!in.Varint(&n) || n != count || !in.SkipPad(alignof(T)) ||
      count > in.remaining() / sizeof(T) || !in.Raw(count * sizeof(T), &bytes)) {
    return false;
  }
  if (owner != nullptr && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) == 0) {
    *out = SharedArray<T>(owner, reinterpret_cast<const T*>(bytes.data()), count);
  } else {
    std::vector<T> items(count);
    if (count > 0) std::memcpy(static_cast<void*>(items.data()), bytes.data(), bytes.size());
    *out = SharedArray<T>(std::move(items));
  }
  return true;
}

}  // namespace tokenmill
