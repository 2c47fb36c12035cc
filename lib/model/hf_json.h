// Hugging Face tokenizer.json, both directions, for any Model.
//
// This file handles what every model type shares: the skeleton (version, added tokens for the
// specials, normalizer, pre-tokenizer and decoder, both from the model's units), and dispatches
// the "model" object on the model type (BPE: bpe/bpe_hf_json.h). A model type tokenmill does
// not support is an error naming the type.
//
// Written for byte-level units: the pre-tokenizer is ByteLevel with its built-in regex for
// `gpt2`, otherwise a Sequence of Split(the preset's regex, Isolated) and ByteLevel(use_regex =
// false); a ByteLevel decoder. Read: the same shapes (merges as "a b" strings or ["a", "b"]
// pairs); the preset is recognised from the regex. Errors name the field that is wrong.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace tokenmill {

std::string ToHfJson(const Model& model);

// `source` names the input in error messages (e.g. its path).
absl::StatusOr<std::unique_ptr<Model>> FromHfJson(std::string_view json, std::string_view source);

// What a text is by its top-level JSON fields: not JSON (it does not start with '{'), a
// tokenizer.json ("model"), a tiktoken sidecar ("pattern"), or other JSON or invalid JSON. For a
// tokenizer.json with `model` given, the model is read from the same parse (FromHfJson's result):
// parsing cl100k_base's 8 MB tokenizer.json took 14-21 ms here, once to tell what it is and once
// more to read it before.
enum class JsonKind { kNotJson, kTokenizerJson, kTiktokenSidecar, kOther };
JsonKind ClassifyJson(std::string_view text, std::string_view source,
                      absl::StatusOr<std::unique_ptr<Model>>* model = nullptr);

// File helpers: SaveHfJson writes atomically; LoadHfJson reads and parses.
absl::Status SaveHfJson(const Model& model, const std::string& path);
absl::StatusOr<std::unique_ptr<Model>> LoadHfJson(const std::string& path);

}  // namespace tokenmill
