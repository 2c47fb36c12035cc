// TrainerOptions: every setting of BPE training, with its default, in one place. The CLI's
// flags take their defaults from here; Validate() is the one place they are checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tokenmill {

enum class SpecialTokensAt {
  kStart,  // ids 0..k-1, before the alphabet (Hugging Face)
  kEnd,    // after the last merge (tiktoken)
};

struct TrainerOptions {
  // Total number of ids: alphabet + merges + special tokens.
  size_t vocab_size = 30000;
  // Stop when the most frequent pair occurs fewer times than this (0 or 1: never stop early).
  uint64_t min_frequency = 0;
  // Never form a token longer than this many bytes (0: no limit).
  size_t max_token_length = 0;
  // Literal strings that get their own ids and are never split or merged.
  std::vector<std::string> special_tokens;
  SpecialTokensAt special_tokens_at = SpecialTokensAt::kEnd;
  // Hugging Face's alphabet (bytes that occur, by byte-level code point), ids and tie-break.
  bool hf_compat = false;
  // Worker threads (0: all cores). Never changes the result.
  int threads = 0;

  absl::Status Validate() const;
};

}  // namespace tokenmill
