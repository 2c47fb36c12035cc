// A Unigram model's "model" object in tokenizer.json (the rest of the file: model/hf_json.h):
//   {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["<0x00>", -10000.0], ...,
//    ["▁the", -3.2], ...], "byte_fallback": true}
// Vocab entries in id order with their scores (written with the shortest text that reads back
// as the same double, so Hugging Face sums the same scores); byte-fallback tokens by their
// names "<0xNN>". Reading: the unknown token, when not among the added tokens, becomes a special
// token; unk_id null is a model without one (an unknown character then cannot be encoded);
// with byte_fallback every "<0xNN>" must be there.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "model/unigram/unigram_model.h"

namespace tokenmill {

// Appends the model object's fields after `"type": "Unigram",` (and the file's closing braces)
// to pieces.back().
void AppendUnigramModelJson(const UnigramModel& model, std::vector<std::string>& pieces);
// Reads the model object into `model` (specials and pre-tokenizer set already; `added`: the
// added tokens, id -> content).
absl::Status ParseUnigramModelJson(simdjson::dom::element model_json,
                                   const absl::flat_hash_map<TokenId, std::string>& added,
                                   std::string_view source, UnigramModel& model);

}  // namespace tokenmill
