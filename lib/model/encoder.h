// Encoder: text -> token ids and back, for a BpeModel.
//
// Contract: Encode() cuts out special tokens (per `SpecialPolicy`), pre-tokenizes the rest with
// the model's pre-tokenizer and applies BPE to each piece: repeatedly merge the adjacent pair
// with the lowest merge rank (leftmost first among equal ranks) until none applies. With the
// model's `ignore_merges`, a piece that is a whole token becomes that token directly.
// Decode(Encode(x)) == x for every byte string x. Encoder is immutable and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/bpe_model.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/special_tokens.h"

namespace tokenmill {

// What Encode() does with special-token strings found in the text (tiktoken's allowed /
// disallowed special).
enum class SpecialPolicy {
  kAllow,     // they become their ids
  kDisallow,  // finding one is an error
  kAsText,    // they are encoded as ordinary text
};

class Encoder {
 public:
  static absl::StatusOr<std::unique_ptr<Encoder>> Create(BpeModel model);

  absl::StatusOr<std::vector<TokenId>> Encode(std::string_view text,
                                              SpecialPolicy policy = SpecialPolicy::kAllow) const;
  // Encodes text with no special-token handling at all, appending to `out`.
  void EncodeOrdinary(std::string_view text, std::vector<TokenId>& out) const;
  // BPE on one pre-tokenized piece, appending to `out`.
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const;

  // Fails on an id that names no token.
  absl::StatusOr<std::string> Decode(absl::Span<const TokenId> ids) const;

  const BpeModel& model() const { return model_; }

 private:
  Encoder(BpeModel model, std::unique_ptr<PreTokenizer> pretokenizer,
          std::unique_ptr<SpecialTokenMatcher> specials);

  BpeModel model_;
  std::unique_ptr<PreTokenizer> pretokenizer_;
  std::unique_ptr<SpecialTokenMatcher> specials_;  // null when the model has none
  std::vector<TokenId> special_ids_;               // parallel to specials_->tokens()
  StringMap<TokenId> token_index_;
  struct MergeTarget {
    uint32_t rank;
    TokenId result;
  };
  absl::flat_hash_map<uint64_t, MergeTarget> merge_of_pair_;  // key: left << 32 | right
  std::vector<TokenId> byte_token_;                             // byte value -> its token id
};

}  // namespace tokenmill
