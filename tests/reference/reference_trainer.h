// The slow reference BPE trainer: the textbook algorithm, for tests only ("should never be used
// in production"). Every step recounts all pairs from scratch over words held as lists of byte
// strings, merges the most frequent pair everywhere, and repeats. It implements the contract
// written in lib/train/bpe/bpe_trainer.h independently of the product trainer's data structures,
// and is the oracle every faster trainer is compared against.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tokenmill::testing {

struct ReferenceOptions {
  size_t vocab_size = 0;           // alphabet + merges + specials
  uint64_t min_frequency = 0;
  size_t max_token_length = 0;     // 0: no limit
  size_t num_special_tokens = 0;   // they only take up ids
  bool hf_compat = false;          // HF alphabet (bytes that occur) and (left id, right id) ties
  bool hf_all_bytes = false;       // with hf_compat: all 256 bytes in HF's alphabet order
  // Character units: symbols are UTF-8 characters; the alphabet keeps the most frequent
  // characters covering `character_coverage` of the occurrences (and at most limit_alphabet),
  // ordered by code point after `byte_fallback` tokens (256 ids that never merge) or one
  // unknown token (an id too); a character left out, and each byte that is no UTF-8, becomes
  // byte tokens, the unknown token, or (hf_compat without byte fallback) nothing. Lengths
  // count characters.
  bool chars = false;
  double character_coverage = 1.0;
  size_t limit_alphabet = 0;
  bool byte_fallback = true;
  // Character units, word-boundary markers: a word's symbols but the first carry `prefix`, its
  // last `suffix`; the alphabet's marked symbols follow the plain characters, by code point,
  // then (prefixed, suffixed, both); a merge drops the right symbol's prefix.
  std::string prefix;
  std::string suffix;
};

struct ReferenceMerge {
  std::string left, right;
  uint64_t count = 0;
  bool operator==(const ReferenceMerge&) const = default;
};

// `words`: (word bytes, count) pairs; duplicates are summed.
std::vector<ReferenceMerge> ReferenceTrain(
    const std::vector<std::pair<std::string, uint64_t>>& words, const ReferenceOptions& options);

}  // namespace tokenmill::testing
