// The Unigram trainer's view of the words: every distinct word as a run of character ids (the
// alphabet ranked by count) with its count, and what a piece of those characters may be.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "train/trainer_options.h"
#include "train/word_source.h"

namespace tokenmill::unigram {

// A position no piece covers: a character outside the alphabet, or a byte that is no UTF-8.
inline constexpr uint32_t kUnknownSymbol = UINT32_MAX;

struct UnigramWords {
  // The alphabet: character id k is code point chars[k], seen char_counts[k] times (weighted
  // by word counts); ids by count descending, then code point (SentencePiece's order of its
  // required characters).
  std::vector<uint32_t> chars;
  std::vector<uint64_t> char_counts;
  absl::flat_hash_map<uint32_t, uint32_t> id_of;  // code point -> character id
  // Word w is symbols[begin[w], begin[w + 1]) (character ids, or kUnknownSymbol), counts[w]
  // times.
  std::vector<uint32_t> symbols;
  std::vector<uint64_t> begin;
  std::vector<uint64_t> counts;
  uint64_t total_count = 0;     // sum of counts
  uint64_t char_occurrences = 0, uncovered_occurrences = 0, invalid_bytes = 0;
  size_t distinct_chars = 0;

  size_t size() const { return counts.size(); }
  std::span<const uint32_t> Word(size_t w) const {
    return {symbols.data() + begin[w], static_cast<size_t>(begin[w + 1] - begin[w])};
  }
  // A piece's bytes (UTF-8 of its characters).
  std::string Text(std::span<const uint32_t> piece) const;
  // The character ids of `text`, or an empty vector when a character is not in the alphabet.
  std::vector<uint32_t> Symbols(std::string_view text) const;
};

// Reads the words (in parallel) and picks the alphabet by options.character_coverage and
// limit_alphabet.
UnigramWords ReadWords(std::span<const WordSource::Entry> words, const TrainerOptions& options);

// Which runs of characters may be pieces (unigram_trainer.h: valid pieces).
class PieceRules {
 public:
  PieceRules(const UnigramWords& words, bool split_by_script);
  // Whether characters ids[0..n) form a valid piece (n >= 1).
  bool Valid(const uint32_t* ids, size_t n) const;

 private:
  static constexpr int32_t kNoScript = -1;
  static constexpr int32_t kInherited = -2;
  std::vector<int32_t> script_;  // by character id: a script, kNoScript (▁), kInherited
  std::vector<uint32_t> code_point_;  // by character id
  uint32_t metaspace_ = kUnknownSymbol;
  bool split_by_script_;
};

}  // namespace tokenmill::unigram
