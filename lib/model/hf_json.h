// Hugging Face tokenizer.json for byte-level BPE, both directions.
//
// Written: the BPE model (vocab and merges, byte-level strings), added tokens for the specials,
// and the pre-tokenizer: ByteLevel with its built-in regex for `gpt2`, otherwise a Sequence of
// Split(the preset's regex, Isolated) and ByteLevel(use_regex = false); a ByteLevel decoder.
// Read: the same shapes (merges as "a b" strings or ["a", "b"] pairs); the preset is recognised
// from the regex. Errors name the field that is wrong.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "model/bpe_model.h"

namespace tokenmill {

std::string ToHfJson(const BpeModel& model);

// `source` names the input in error messages (e.g. its path).
absl::StatusOr<BpeModel> FromHfJson(std::string_view json, std::string_view source);

// File helpers: SaveHfJson writes atomically; LoadHfJson reads and parses.
absl::Status SaveHfJson(const BpeModel& model, const std::string& path);
absl::StatusOr<BpeModel> LoadHfJson(const std::string& path);

}  // namespace tokenmill
