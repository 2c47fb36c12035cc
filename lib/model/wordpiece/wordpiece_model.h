// WordPieceModel: a WordPiece tokenizer (BERT's) as data: a vocabulary and the rule that encodes
// a word with it, greedy longest match first (wordpiece_encoder.h). No merges: the pieces of a
// word are found by lookup, not by replaying merges.
//
// Contract:
//  - `tokens[id]` is the bytes of token `id` ("" marks a gap); special tokens are stored at
//    their ids too. A token that starts with `prefix` continues a word ("##ing"); any other
//    starts one. No two non-special tokens have the same bytes.
//  - Units are characters (model/units.h): a word's length, for max_input_chars_per_word, is
//    in characters.
//  - Encoding a pre-tokenized word: more than max_input_chars_per_word characters, or no way
//    to cover it by longest matches (each after the first looked up with the prefix), and the
//    whole word is the token `unk_token` (Hugging Face's and BERT's rule). A vocabulary without
//    that token cannot encode such a word: encoding fails and says which.
//  - Decoding (Hugging Face's WordPiece decoder): a token after the first that starts with the
//    prefix joins the one before without it; any other gets a space before it. With `cleanup`,
//    a token " ." (" ?", " !", " ,", and the decoder's other patterns) loses its space.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace tokenmill {

struct WordPieceModel final : Model {
  std::vector<std::string> tokens;
  std::vector<SpecialToken> specials;
  PreTokenizerConfig pretokenizer;
  std::string unk_token = "[UNK]";
  std::string prefix = "##";
  size_t max_input_chars_per_word = 100;
  // The decoder's cleanup (Hugging Face's default for BERT files: true).
  bool cleanup = true;

  bool operator==(const WordPieceModel& other) const;
  // The id of unk_token, when the vocabulary has it.
  std::optional<TokenId> unknown() const;

  // Model.
  ModelType type() const override { return ModelType::kWordPiece; }
  std::span<const std::string> token_bytes() const override { return tokens; }
  std::span<const SpecialToken> special_tokens() const override { return specials; }
  const PreTokenizerConfig& pre_tokenizer() const override { return pretokenizer; }
  std::string_view continuing_subword_prefix() const override { return prefix; }
  const Units& units() const override { return UnitsOf(UnitKind::kChar); }
  // Checks the contract: specials at their ids, no repeated token, a prefix.
  absl::Status Validate() const override;
  absl::StatusOr<std::unique_ptr<PieceEncoder>> MakePieceEncoder(
      const EncoderOptions& options) const override;
  std::unique_ptr<Model> Clone() const override { return std::make_unique<WordPieceModel>(*this); }
};

// The model as a WordPieceModel, or null when it is another type.
const WordPieceModel* AsWordPiece(const Model& model);

// Hugging Face's WordPiece decoder cleanup of one decoded token (" ." -> ".", ...).
std::string WordPieceCleanup(std::string token);

}  // namespace tokenmill
