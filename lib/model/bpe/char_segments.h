// CharSegments: splits pieces of 3-byte UTF-8 characters (Chinese, Japanese, Korean and most
// of the BMP) into segments that BPE encodes independently, and knows every 3-byte character's
// own BPE, so that text such as Chinese costs a table lookup per character instead of a BPE
// run per piece.
//
// Why it is exact: every part BPE builds is a token of the vocabulary covering a contiguous
// stretch of the piece. At a boundary that no token can straddle (no token's bytes match the
// text across it), no merge ever joins a part on its left with one on its right; the
// candidate merges on each side are then those of that side alone, and the "lowest priority,
// leftmost first" order restricted to one side is that side's own order. So
// BPE(left + right) == BPE(left) + BPE(right), for any merge priorities (tiktoken ranks or
// Hugging Face merge indexes), with no assumption about the vocabulary. A piece that has such
// a boundary is also never a whole token (the token would straddle it).
//
// Which boundaries are safe is decided conservatively from the vocabulary: between two 3-byte
// sequences A = a0 a1 a2 and B = b0 b1 b2, a token can straddle only if some token has a cut
// (a lead byte e0..ef preceded by a continuation byte) whose two bytes before and two bytes
// after, as far as the token reaches, equal a1 a2 | b0 b1. Those windows are marked in a
// bitset of 2^22 bits (a1, a2, b1: 6 bits each; b0: 4 bits). With cl100k_base 10.6 k of the
// 4.2 M windows are marked, and on the poetry corpus 0.8% of character boundaries are unsafe.
// Other boundaries (ASCII, 2- and 4-byte characters, invalid bytes) are never split.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/binary_io.h"
#include "common/shared_array.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/piece_bpe.h"

namespace tokenmill {

class CharSegments {
 public:
  // `tokens`: every token's bytes (at least every token BPE can produce); `bpe` gives each
  // 3-byte sequence's own encoding.
  void Build(const std::vector<std::string>& tokens, const PieceBpe& bpe);
  // Build() in two halves that touch different members, so they may run at the same time:
  // the boundaries from the tokens alone (while the tables `bpe` reads are still being
  // built, or while the characters are encoded), and the characters' BPE. `vocab_size`: the
  // model's token count (ids of 2^20 and more are not handled: nothing is split).
  void MarkBoundaries(const std::vector<std::string>& tokens);
  void EncodeChars(const PieceBpe& bpe, size_t vocab_size);
  // What Build() made, as bytes for a cache of loaded vocabularies (model/vocab_cache.h), for
  // the same build to read back; ReadFrom is false (and nothing is split) when the bytes are not
  // such a record of ids below `id_bound`. With an `owner` of the bytes `in` reads, the tables
  // are used where they lie (ReadAlignedArray).
  void AppendTo(BinaryWriter& out) const;
  bool ReadFrom(BinaryReader& in, size_t id_bound,
                const std::shared_ptr<const void>& owner = nullptr);

  // Whether `b` starts a 3-byte sequence (e0..ef, then two continuation bytes) within [b, end).
  static bool IsThreeByte(const unsigned char* b, const unsigned char* end) {
    return end - b >= 3 && (b[0] & 0xF0) == 0xE0 && (b[1] & 0xC0) == 0x80 && (b[2] & 0xC0) == 0x80;
  }

  // No token can straddle the boundary at `b`, where b[-3..0) and b[0..3) are 3-byte sequences.
  // A summary over (a2, b0, b1) (8 KB, in L1) answers most boundaries (on poetry with
  // cl100k_base 4.4% pass it), the full bitset (512 KB) the rest.
  bool SafeBoundary(const unsigned char* b) const {
    return SafeWindow(WindowKey(b[-2], b[-1], b[0], b[1]));
  }
  bool SafeWindow(uint32_t key) const {
    uint32_t summary = key & 0xFFFF;
    if ((unsafe_summary_[summary >> 6] >> (summary & 63) & 1) == 0) return true;
    return (unsafe_[key >> 6] >> (key & 63) & 1) == 0;
  }

  // Writes the BPE of the 3-byte sequence at `c` (1 to 3 tokens) to dst[0..3) and returns how
  // many tokens it has (dst must have room for 3; no branch on the count).
  size_t WriteChar(const unsigned char* c, TokenId* dst) const {
    return WriteCharAt(CharIndex(c), dst);
  }

  // Calls on_segment(segment) for each segment of `piece`, in order, and returns true, if the
  // piece has at least one safe boundary; otherwise calls nothing and returns false. Segments of
  // 3 bytes are single 3-byte sequences (for WriteChar).
  template <typename OnSegment>
  bool Split(std::string_view piece, OnSegment on_segment) const {
    if (!built_) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
    const unsigned char* end = p + piece.size();
    const unsigned char* start = p;
    bool previous_three = false;
    bool split = false;
    for (const unsigned char* b = p; b < end;) {
      bool three = IsThreeByte(b, end);
      if (three) {
        __builtin_prefetch(&chars_[CharIndex(b)]);  // WriteChar reads it soon
        if (previous_three && SafeBoundary(b)) {
          on_segment(std::string_view(reinterpret_cast<const char*>(start),
                                      static_cast<size_t>(b - start)));
          start = b;
          split = true;
        }
        b += 3;
      } else {
        b += 1;
      }
      previous_three = three;
    }
    if (split) {
      on_segment(std::string_view(reinterpret_cast<const char*>(start),
                                  static_cast<size_t>(end - start)));
    }
    return split;
  }

  // Split for a piece of `chars` 3-byte sequences and nothing else (IsThreeByte at p, p + 3,
  // ...; chars >= 2), the common case in Chinese text: one pass that reads each character
  // once, takes each boundary's window from the two characters' indexes, and hands single
  // characters over as their index, for WriteCharAt: on_char(index) for a one-character
  // segment, on_segment(segment) for longer ones. Same segments, same return value as Split.
  template <typename OnChar, typename OnSegment>
  bool SplitChars(const unsigned char* p, size_t chars, OnChar on_char,
                  OnSegment on_segment) const {
    if (!built_) return false;
    auto emit = [&](size_t first, size_t end, uint32_t last_index) {
      if (end - first == 1) {
        on_char(last_index);
      } else {
        on_segment(std::string_view(reinterpret_cast<const char*>(p + 3 * first), 3 * (end - first)));
      }
    };
    uint32_t previous = CharIndex(p);
    size_t open = 0;  // first character of the segment not yet handed over
    for (size_t k = 1; k < chars; ++k) {
      const uint32_t index = CharIndex(p + 3 * k);
      if (SafeWindow((previous & 0xFFF) << 10 | index >> 6)) {
        emit(open, k, previous);
        open = k;
      }
      previous = index;
    }
    if (open == 0) return false;
    emit(open, chars, previous);
    return true;
  }

  // WriteChar for the sequence of index `index` (SplitChars' on_char).
  size_t WriteCharAt(uint32_t index, TokenId* dst) const {
    uint64_t entry = chars_[index];
    dst[0] = static_cast<TokenId>(entry & kIdMask);
    dst[1] = static_cast<TokenId>(entry >> kIdBits & kIdMask);
    dst[2] = static_cast<TokenId>(entry >> 2 * kIdBits & kIdMask);
    return static_cast<size_t>(entry >> 3 * kIdBits);
  }

  // Whether Build succeeded (vocabularies of 2^20 tokens or more are not handled).
  bool built() const { return built_; }

 private:
  // chars_ entries: three ids of 20 bits from the low end, then the count.
  static constexpr int kIdBits = 20;
  static constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
  static uint32_t CharIndex(const unsigned char* c) {
    return (c[0] & 0x0Fu) << 12 | (c[1] & 0x3Fu) << 6 | (c[2] & 0x3Fu);
  }
  static uint32_t WindowKey(unsigned a1, unsigned a2, unsigned b0, unsigned b1) {
    return (a1 & 0x3Fu) << 16 | (a2 & 0x3Fu) << 10 | (b0 & 0x0Fu) << 6 | (b1 & 0x3Fu);
  }
  // Marks the window in MarkBoundaries' bitsets.
  static void Mark(unsigned a1, unsigned a2, unsigned b0, unsigned b1,
                   std::vector<uint64_t>& unsafe, std::vector<uint64_t>& summary);

  static bool TooManyIds(size_t vocab_size) { return vocab_size > kIdMask; }

  bool built_ = false;  // false: ids too large to pack; nothing is split
  SharedArray<uint64_t> unsafe_;          // 2^22 bits, by WindowKey
  SharedArray<uint64_t> unsafe_summary_;  // 2^16 bits: some window with these (a2, b0, b1)
  SharedArray<uint64_t> chars_;  // 2^16 entries, by (c0 & 0x0f, c1 & 0x3f, c2 & 0x3f)
};

}  // namespace tokenmill
