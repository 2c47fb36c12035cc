#include "train/trainer_options.h"

#include "absl/container/flat_hash_set.h"
#include "common/strings.h"

namespace tokenmill {

std::string_view AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kBpe: return "bpe";
  }
  return "?";
}

absl::Status TrainerOptions::Validate() const {
  if (threads < 0) return absl::InvalidArgumentError("--threads must be 0 (all cores) or more");
  if (max_token_length == 1) {
    return absl::InvalidArgumentError(
        "--max-token-length 1 allows no merge (every merge forms at least 2 bytes); use 0 for "
        "no limit or 2 and more");
  }
  StringSet seen;
  for (const std::string& s : special_tokens) {
    if (s.empty()) return absl::InvalidArgumentError("--special-token must not be empty");
    if (!seen.insert(s).second) {
      return absl::InvalidArgumentError(StrCat("--special-token '", s, "' is given twice"));
    }
  }
  if (!hf_compat && vocab_size < 256 + special_tokens.size()) {
    return absl::InvalidArgumentError(StrCat(
        "--vocab-size ", vocab_size, " is smaller than the 256 byte tokens plus ",
        special_tokens.size(), " special tokens"));
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
