// WordPieceEncoder: the piece encoder of a WordPieceModel (wordpiece_model.h): each
// pre-tokenized word, greedy longest match first, exactly as Hugging Face's WordPiece model
// (and BERT's original tokenizer) encodes it:
//   a word of more than max_input_chars_per_word characters is the unknown token; otherwise
//   from its start, the longest stretch that is a token (looked up bare at the word's start,
//   with the prefix after it) is the next piece, and the search goes on after it; when no
//   stretch from some position is a token, the whole word is the unknown token.
// A character is a well-formed UTF-8 sequence or one byte that is not part of one (words of a
// tokenizer trained here may hold such bytes). Lookups are hash probes of views, no string is
// built per candidate; the longest candidate tried is the longest token. Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/strings.h"
#include "model/piece_encoder.h"
#include "model/wordpiece/wordpiece_model.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {

// How a word was encoded, for explain: its pieces, or why it is the unknown token.
struct WordPieceMatch {
  std::vector<TokenId> ids;
  std::vector<size_t> starts;  // each piece's first byte in the word
  // When the word is the unknown token: why ("" otherwise).
  std::string unknown_reason;
};

class WordPieceEncoder : public PieceEncoder {
 public:
  // `model` must outlive the encoder.
  static absl::StatusOr<std::unique_ptr<WordPieceEncoder>> Create(const WordPieceModel& model,
                                                                  const EncoderOptions& options);

  void EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                  std::vector<TokenId>& out) const override;
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const override;
  void ExplainPiece(ExplainedPiece& out) const override;
  // Without the unknown token in the vocabulary: fails on the first word it cannot match.
  absl::Status CheckEncodable(std::string_view text, size_t offset) const override;
  bool may_refuse() const override { return !unknown_.has_value(); }

  // The pieces of one word (not empty).
  WordPieceMatch Match(std::string_view word) const;

 private:
  WordPieceEncoder(const WordPieceModel& model) : model_(model) {}
  // Whether `word` has more than max_input_chars_per_word characters.
  bool TooLong(std::string_view word) const;
  // Appends the pieces of `word` to `out`; false (out unchanged) when it has none.
  bool Pieces(std::string_view word, std::vector<TokenId>& out) const;
  // The longest-match search: on_piece(id, first byte) per piece; returns npos, or the byte
  // where no token matches (the caller drops what it was given).
  template <typename OnPiece>
  size_t Greedy(std::string_view word, OnPiece&& on_piece) const;

  const WordPieceModel& model_;
  StringMap<TokenId> starts_;     // every token, by its bytes: a word's first piece
  StringMap<TokenId> continues_;  // tokens with the prefix, by their bytes after it
  size_t longest_start_ = 0, longest_continue_ = 0;  // in bytes
  std::optional<TokenId> unknown_;
  std::unique_ptr<PreTokenizer> pretokenizer_;  // for CheckEncodable
};


}  // namespace tokenmill
