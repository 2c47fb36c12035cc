// A WordPiece model's files: the "model" object of tokenizer.json (the rest of the file:
// model/hf_json.h), and BERT's vocab.txt.
//
// vocab.txt (BERT, Hugging Face's BertWordPieceTokenizer / `WordPiece.from_file`): one token
// per line in id order, line k holding token k, "\n" after each (a "\r\n" or a last line
// without one reads the same). It holds nothing else: reading one gives character units, the
// prefix "##", unk_token "[UNK]", max_input_chars_per_word 100, BERT's five special tokens
// where the file has them, and the pre-tokenizer and normalizer the caller says. Trailing
// whitespace of a line is not part of its token (Hugging Face trims it), so a token may not end
// with whitespace nor hold "\n" or "\r"; an empty line is an error (no token is empty), as is a
// repeated token.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "model/wordpiece/wordpiece_model.h"

namespace tokenmill {

// Appends the model object's fields after `"type": "WordPiece",` (and the file's closing
// braces) to pieces.back().
void AppendWordPieceModelJson(const WordPieceModel& model, std::vector<std::string>& pieces);
// Reads the model object into `model` (specials and pre-tokenizer set already; `added`: the
// added tokens, id -> content).
absl::Status ParseWordPieceModelJson(simdjson::dom::element model_json,
                                     const absl::flat_hash_map<TokenId, std::string>& added,
                                     std::string_view source, WordPieceModel& model);
// tokenizer.json's "decoder" object of the model.
std::string WordPieceHfDecoder(const WordPieceModel& model);

// BERT's special tokens, which vocab.txt marks by name only.
inline constexpr std::string_view kBertSpecialTokens[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                          "[MASK]"};
// vocab.txt: the text, and back. Fails (naming the id) on a token vocab.txt cannot hold.
absl::StatusOr<std::string> ToVocabTxt(const WordPieceModel& model);
absl::StatusOr<WordPieceModel> FromVocabTxt(std::string_view text, std::string_view source);

}  // namespace tokenmill
