// BpeModel: a BPE tokenizer as data, independent of any file format; the first Model
// (model.h).
//
// Contract:
//  - `tokens[id]` is the byte string of token `id`. Ids may have gaps (e.g. OpenAI's
//    cl100k_base has none between 100256 and 100257); a gap is an empty string, which no real
//    token ever is. Special tokens are stored at their ids too.
//  - `merges` are in rank order (rank 0 is applied first); each names two token ids and the id
//    of the token their concatenation forms. Several merges may form the same token.
//  - `specials` lists the special tokens (literal strings never split or merged) with their ids.
//  - `normalizer` and `pretokenizer` say how text is normalized and split before BPE, as the
//    model was trained; encoders must do the same.
//  - `units` says what the tokens are made of (byte-level: every text is bytes; characters).
//  - Character units: `byte_fallback` holds the ids of the 256 tokens <0x00>..<0xFF> (each
//    stored as its one byte, so they may share bytes with a character token: decoding is
//    still concatenation), which encode what no character token does; or `unknown` the id of
//    the special token such characters become. With neither, they are dropped or refused
//    (EncoderOptions::unknown_bytes), as for a byte-level vocabulary without some bytes.
//  - `priority` says how BPE picks the next pair to merge: by merge index (Hugging Face) or by
//    the rank (id) of the token the pair forms (tiktoken). Both merge the lowest-priority
//    adjacent pair first, the leftmost among equals.
//  - `rank_merges_implied` (kTokenRank only): `merges` is left empty and stands for every split
//    of each regular token into two regular tokens (DeriveRankMerges(), rank_merges.h): what a
//    .tiktoken file means. Encoders then look a pair up by its bytes (tiktoken's own rule);
//    whoever needs the list itself (a tokenizer.json writer) takes MergeList().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "model/model.h"
#include "model/units.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

struct Merge {
  TokenId left = 0;
  TokenId right = 0;
  TokenId result = 0;
  bool operator==(const Merge&) const = default;
};

// How an encoder ranks the adjacent pairs of a piece (see BpeModel::priority).
enum class MergePriority {
  kMergeIndex,  // a pair's priority is the index of its merge in `merges` (Hugging Face)
  kTokenRank,   // a pair's priority is the id of the token it forms (tiktoken, where id = rank);
                // `merges` then lists every split of each token into two tokens
};

struct BpeModel final : Model {
  std::vector<std::string> tokens;
  std::vector<Merge> merges;
  std::vector<SpecialToken> specials;
  PreTokenizerConfig pretokenizer;
  UnitKind unit_kind = UnitKind::kByte;
  std::vector<TokenId> byte_fallback;  // empty, or the ids of bytes 0..255
  std::optional<TokenId> unknown;
  // Character units, word-boundary markers (TrainerOptions): a word's later symbols carry the
  // prefix, its last one the suffix; a merge's result drops its right part's prefix.
  std::string subword_prefix;  // tokenizer.json's continuing_subword_prefix
  std::string word_suffix;     // tokenizer.json's end_of_word_suffix
  // When true, a pre-tokenized piece that is itself a token encodes as that one token before
  // any merge is tried (tiktoken's rule; Hugging Face's `ignore_merges`). When false, every
  // piece goes through the merges (Hugging Face's default).
  bool ignore_merges = false;
  MergePriority priority = MergePriority::kMergeIndex;
  bool rank_merges_implied = false;

  bool operator==(const BpeModel& other) const;

  // Model.
  ModelType type() const override { return ModelType::kBpe; }
  std::span<const std::string> token_bytes() const override { return tokens; }
  std::span<const SpecialToken> special_tokens() const override { return specials; }
  std::span<const TokenId> byte_fallback_ids() const override { return byte_fallback; }
  std::string_view continuing_subword_prefix() const override { return subword_prefix; }
  std::string_view end_of_word_suffix() const override { return word_suffix; }
  const PreTokenizerConfig& pre_tokenizer() const override { return pretokenizer; }
  const Units& units() const override { return UnitsOf(unit_kind); }
  // Checks the contract above: merge ids in range, each merge's result is the concatenation of
  // its parts, specials at their ids, no duplicate non-special token strings.
  absl::Status Validate() const override;
  // Validate() without the merges: for a caller whose merges hold by construction (those
  // DeriveRankMerges finds by looking up each split of a token) and whose tokens it has
  // already checked for duplicates (`check_duplicates` false). The merges' check reads the
  // three tokens of every merge: about 20 ms of the 130 ms it took to load o200k_base.
  absl::Status ValidateTokens(bool check_duplicates = true) const;
  absl::StatusOr<std::unique_ptr<PieceEncoder>> MakePieceEncoder(
      const EncoderOptions& options) const override;
  std::unique_ptr<Model> Clone() const override { return std::make_unique<BpeModel>(*this); }

 private:
  // ValidateTokens(); on success, a flag per id: a regular token (non-empty, neither special
  // nor byte fallback).
  absl::StatusOr<std::vector<uint8_t>> CheckTokens(bool check_duplicates) const;
  // No two regular tokens with the same bytes.
  absl::Status CheckDistinct(const std::vector<uint8_t>& regular) const;
  // merges[rank] joins two regular tokens into the regular token of their bytes.
  absl::Status CheckMerge(size_t rank, const std::vector<uint8_t>& regular) const;
};

// The model's merges: `model.merges`, or with rank_merges_implied the merges its ranks imply
// (derived on each call: o200k_base's 446,189 take tens of milliseconds).
std::vector<Merge> MergeList(const BpeModel& model);

// The model as a BpeModel, or null when it is another type.
const BpeModel* AsBpe(const Model& model);
// The BpeModel `model` holds; an error naming `source` and the type when it holds another.
absl::StatusOr<BpeModel> TakeBpe(std::unique_ptr<Model> model, std::string_view source);

// The 256 single-byte tokens with ids 0..255 in byte order, no merges, no specials.
BpeModel ByteBaseModel();

}  // namespace tokenmill
