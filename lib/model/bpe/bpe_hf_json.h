// The "model" object of a BPE tokenizer.json, both directions (the rest of the file:
// model/hf_json.h).
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "model/bpe/bpe_model.h"

namespace tokenmill {

// Appends the model object's fields after `"type": "BPE",` (dropout ... merges, and the
// file's closing braces) to `pieces`, whose last element is the text so far. The vocabulary
// and the merges come as chunks built in parallel (oneTBB): each token's JSON string is made
// once (the merges name most tokens twice more). A 30k vocabulary (1.3 MB): 4.6 ms -> 2.5 ms
// on 2 cores.
void AppendBpeModelJson(const BpeModel& model, std::vector<std::string>& pieces);

// A tokenizer.json (FromHfJson in model/hf_json.h) that must hold a BPE model.
absl::StatusOr<BpeModel> BpeModelFromHfJson(std::string_view json, std::string_view source);

// Reads the model object's flags (ignore_merges) into `model`, before the rest of the file.
absl::Status ParseBpeModelFlags(simdjson::dom::element model_json, std::string_view source,
                                BpeModel& model);
// Reads the rest of the model object into `model`, whose specials and pre-tokenizer are set
// already: the vocabulary (with the added tokens `added`, id -> content, at their ids) and the
// merges. Errors name `source` and the field.
absl::Status ParseBpeModelJson(simdjson::dom::element model_json,
                               const absl::flat_hash_map<TokenId, std::string>& added,
                               std::string_view source, BpeModel& model);

}  // namespace tokenmill
