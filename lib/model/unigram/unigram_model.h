// UnigramModel: a Unigram language-model tokenizer (SentencePiece's default, Kudo 2018) as data:
// pieces with log-probability scores; a pre-tokenized piece of text encodes as the segmentation
// into pieces of the highest score sum (Viterbi: unigram_encoder.h).
//
// Contract:
//  - `tokens[id]` is the bytes of token `id`, `scores[id]` its score; special tokens are stored
//    at their ids too, the unknown token (`unk_id`) among them (models trained here always have
//    one; one read from a file may have none, kNoUnknownToken). Byte-fallback tokens (when
//    `byte_fallback` holds the ids of bytes 0..255) are stored as their one byte, as a
//    character-level BPE model's are, and are named "<0xNN>" in tokenizer.json. No two regular
//    tokens have the same bytes.
//  - Units are characters (model/units.h).
//  - Encoding one pre-tokenized piece (Hugging Face's Unigram model, which tokenizer.json files
//    of these models load into, encodes the same): over the piece's characters (a byte that is
//    no UTF-8 is one character), the lattice of every regular token occurring in it, plus, at a
//    character no one-character token covers, an unknown edge scored min(scores) - 10; the
//    path of the highest score sum (added left to right in double), of equal sums the one whose
//    last token starts first (then backwards). Runs of unknown edges are fused and become
//    their bytes' fallback tokens (or the unknown token without byte fallback).
//  - Decoding: the tokens' bytes joined; the metaspace and prefix rules are the pre-tokenizer's
//    (as for character-level BPE).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace tokenmill {

// The score the trainer gives byte-fallback tokens: far below any piece's, so that Hugging
// Face, which also matches the literal text "<0x41>" against them, never prefers that over the
// characters.
inline constexpr double kUnigramByteFallbackScore = -1.0e4;
// A score as tokenizer.json keeps it: rounded to 15 significant digits, the most that every JSON
// reader turns back into the same double (Hugging Face's serde_json reads some 16- and
// 17-digit numbers one unit off, which flips exact ties between segmentations). Trained models
// hold such scores, so the model in memory, the file, and Hugging Face's copy agree.
double UnigramFileScore(double score);

// UnigramModel::unk_id of a model without an unknown token (a Hugging Face file with "unk_id":
// null): a character no token covers then has no encoding.
inline constexpr TokenId kNoUnknownToken = UINT32_MAX;

struct UnigramModel final : Model {
  std::vector<std::string> tokens;
  std::vector<double> scores;
  std::vector<SpecialToken> specials;
  PreTokenizerConfig pretokenizer;
  TokenId unk_id = 0;
  std::vector<TokenId> byte_fallback;  // empty, or the ids of bytes 0..255

  bool operator==(const UnigramModel& other) const;

  // Model.
  ModelType type() const override { return ModelType::kUnigram; }
  std::span<const std::string> token_bytes() const override { return tokens; }
  std::span<const SpecialToken> special_tokens() const override { return specials; }
  const PreTokenizerConfig& pre_tokenizer() const override { return pretokenizer; }
  std::span<const TokenId> byte_fallback_ids() const override { return byte_fallback; }
  const Units& units() const override { return UnitsOf(UnitKind::kChar); }
  // Checks the contract: scores beside every token, finite; specials at their ids, the unknown
  // token one of them; byte-fallback ids distinct, each its byte; no repeated regular token.
  absl::Status Validate() const override;
  absl::StatusOr<std::unique_ptr<PieceEncoder>> MakePieceEncoder(
      const EncoderOptions& options) const override;
  std::unique_ptr<Model> Clone() const override { return std::make_unique<UnigramModel>(*this); }
};

// The model as a UnigramModel, or null when it is another type.
const UnigramModel* AsUnigram(const Model& model);

}  // namespace tokenmill
