// WordCounts: the table of unique pre-tokenized pieces ("words") and how often each occurred.
// This is what counting produces and what trainers consume.
//
// Contract: counts are 64-bit; Add() with an existing word adds to its count. Sorted() gives
// a deterministic order (by bytes, as unsigned chars) that does not depend on insertion order,
// thread count or hash seeds. Not thread-safe: parallel counting keeps one table per thread and
// merges them with MergeFrom (the rvalue overload merges partition by partition in parallel
// and frees the source as it goes).
//
// Layout: the table is split into kPartitions hash partitions (by the top bits of the word's
// hash). In each, words of up to 7 bytes (most words of real text) live packed into a 64-bit
// key (bytes, then the length in the top byte) of an integer flat_hash_map: no pointer to
// chase, no byte comparison. Longer words live in a flat_hash_map keyed on views of bytes kept
// in the partition's WordArena, with the hash stored in the key so rehashing and merging never
// hash bytes again.
//
// The views that Sorted() and ForEach() give are valid until the table is next modified.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "count/word_arena.h"

namespace tokenmill {

// Distinct words with their counts as a flat list, as a stored table is read back: `entries`
// view the bytes `bytes` points to (which never move). Building it costs no hashing, so it is
// what a resumed training run, which needs no lookups, reads a checkpoint into.
struct WordList {
  std::shared_ptr<const std::string> bytes;  // shared by copies (the views stay valid)
  std::vector<std::pair<std::string_view, uint64_t>> entries;
};

class WordCounts {
 public:
  WordCounts();
  WordCounts(const WordCounts& other);
  WordCounts& operator=(const WordCounts& other);
  // A moved-from table is a valid empty table.
  WordCounts(WordCounts&& other) noexcept;
  WordCounts& operator=(WordCounts&& other) noexcept;

  void Add(std::string_view word, uint64_t count = 1);
  // Add() of every (word, count), the partitions filled in parallel (oneTBB): for reading a
  // stored table back, where one thread inserting millions of words was the slow part.
  void AddAll(std::span<const std::pair<std::string_view, uint64_t>> words);
  void MergeFrom(const WordCounts& other);
  void MergeFrom(WordCounts&& other);

  size_t unique_words() const;
  uint64_t total_words() const { return total_; }
  uint64_t Get(std::string_view word) const;

  // (word, count) pairs sorted by the words' bytes.
  std::vector<std::pair<std::string_view, uint64_t>> Sorted() const;

  // Calls f(word, count) for every word, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Partition& p : partitions_) {
      for (const auto& [key, count] : p.short_words) f(ShortView(key), count);
      for (const auto& [key, count] : p.map) f(key.view(), count);
    }
  }

  // Approximate heap bytes held (hash slots + word bytes), for reporting memory use.
  size_t MemoryBytes() const;

  bool operator==(const WordCounts& other) const;

 private:
  friend class WordCountCache;
  // Adds `count` to the short word packed in `key` (see PackShort).
  void AddPacked(uint64_t key, uint64_t count);

  static constexpr int kPartitionBits = 6;
  static constexpr size_t kPartitions = size_t{1} << kPartitionBits;

  struct Key {
    const char* data;
    size_t size;
    size_t hash;
    std::string_view view() const { return {data, size}; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.hash; }
  };
  struct KeyEq {
    bool operator()(const Key& a, const Key& b) const {
      return a.hash == b.hash && a.view() == b.view();
    }
  };
  struct Partition {
    absl::flat_hash_map<uint64_t, uint64_t> short_words;  // packed words of <= 7 bytes
    absl::flat_hash_map<Key, uint64_t, KeyHash, KeyEq> map;  // longer words
    WordArena arena;
    // Adds `count` to `key`'s entry, storing the bytes in this partition's arena if new.
    void Add(const Key& key, uint64_t count);
    void MergeFrom(const Partition& other);
    size_t size() const { return short_words.size() + map.size(); }
  };

  static constexpr size_t kMaxShortWord = 7;
  // Bytes in the low bytes (memory order on little-endian machines), length in the top byte.
  // Overlapping fixed-size loads instead of a variable-length memcpy through the stack, which
  // would stall store-to-load forwarding on every word.
  static uint64_t PackShort(std::string_view word) {
    const char* p = word.data();
    size_t n = word.size();
    uint64_t key = 0;
    if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      key = lo | (static_cast<uint64_t>(hi) << (8 * (n - 4)));
    } else if (n > 0) {
      key = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
            static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << (8 * (n / 2)) |
            static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << (8 * (n - 1));
    }
    return key | (static_cast<uint64_t>(n) << 56);
  }
  static std::string_view ShortView(const uint64_t& key) {
    return {reinterpret_cast<const char*>(&key), static_cast<size_t>(key >> 56)};
  }
  static size_t HashShort(uint64_t key);
  static size_t HashWord(std::string_view word);
  static size_t PartitionOf(size_t hash) { return hash >> (64 - kPartitionBits); }

  std::vector<Partition> partitions_;
  uint64_t total_ = 0;
};

}  // namespace tokenmill
