// Counting a whole corpus: read every input's documents, cut out special tokens, pre-tokenize
// and count the pieces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "count/word_counts.h"
#include "model/bpe_model.h"

namespace tokenmill {

struct CountCorpusOptions {
  std::vector<std::string> inputs;        // files; "-" is stdin
  PreTokenizerConfig pretokenizer;
  std::vector<std::string> special_tokens;  // cut out, never counted
  int threads = 0;                          // 0: all cores
};

struct CorpusCounts {
  WordCounts words;
  uint64_t documents = 0;
  uint64_t bytes = 0;
};

// Fails, naming the input, on a missing/unreadable input or a read error.
absl::StatusOr<CorpusCounts> CountCorpus(const CountCorpusOptions& options);

}  // namespace tokenmill
