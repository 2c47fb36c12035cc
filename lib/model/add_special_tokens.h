// Adding special tokens to a trained tokenizer (Hugging Face's `add_special_tokens`, the
// textbook tokenizers' `add_special_token`): each new one gets the next id after the whole
// vocabulary and is never split or merged; nothing else of the model changes, so every text
// without the new tokens encodes to the same ids as before. For every model type.
//
// Where Hugging Face differs: it looks a new token up by the text tokenizer.json gives the
// regular tokens, and when one has that text it makes that token special at its id ("the" in
// GPT-2: then "the" is cut out of any text before the merges, and "new" splits "renewed");
// a byte-level token's bytes (" the", written "Ġthe") it adds at a new id, after which no text
// encodes to the regular token. tokenmill refuses both.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace tokenmill {

struct AddedSpecialTokens {
  std::unique_ptr<Model> model;  // the model with the new special tokens
  std::vector<TokenId> ids;      // for each requested token, its id (new or already special)
  size_t added = 0;              // how many were new
};

// Adds `tokens` as special tokens of a copy of `model`: each one that is not already a special
// token gets the next id after the whole current vocabulary (token_bytes().size(), the highest
// id in use + 1: VocabSize() when the ids have no gaps, as Hugging Face numbers them too), in
// the order given (a token repeated in the list once). A token that is already special keeps
// its id (not an error, as in Hugging Face). A Unigram model gives a new special the score of
// its first special token (0 in models trained here), or without one its highest score, so that
// the lowest score, from which the unknown token's is taken, stays as it was.
// Errors (InvalidArgument, naming the token): an empty token; one that is not UTF-8 (no
// tokenizer.json can hold it); one whose bytes are a regular (non-special) token of the
// vocabulary, or whose text is the text tokenizer.json gives a regular or byte-fallback token
// ("Ġthe" for byte-level " the", "<0x41>"), naming that token's id and what Hugging Face would
// do (see above); a result that fails the model's Validate().
absl::StatusOr<AddedSpecialTokens> AddSpecialTokens(const Model& model,
                                                    std::span<const std::string> tokens);

}  // namespace tokenmill
