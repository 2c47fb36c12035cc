// Numbers about a tokenizer for `tokenmill inspect`: its longest tokens, and the compression it
// achieves on a corpus (bytes per token, tokens per word), so users can compare tokenizers on
// their own text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"
#include "model/encoder.h"

namespace tokenmill {

// The ids of the `count` longest regular tokens (by bytes), longest first, ties by id.
std::vector<TokenId> LongestTokens(const Model& model, size_t count);

struct CorpusStats {
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t characters = 0;  // UTF-8 code points (invalid bytes count one each)
  uint64_t words = 0;       // maximal runs of non-whitespace (ASCII whitespace)
  uint64_t tokens = 0;
  double seconds = 0;       // encoding time (lines encoded in parallel)

  double BytesPerToken() const { return tokens ? double(bytes) / double(tokens) : 0; }
  double TokensPerWord() const { return words ? double(tokens) / double(words) : 0; }
  double TokensPerCharacter() const { return characters ? double(tokens) / double(characters) : 0; }
};

// Encodes `path` line by line (special tokens as text) and counts. Errors name the file.
absl::StatusOr<CorpusStats> MeasureCorpus(const Encoder& encoder, const std::string& path);

}  // namespace tokenmill
