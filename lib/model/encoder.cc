#include "model/encoder.h"

#include "common/strings.h"
#include "common/status_macros.h"

namespace tokenmill {

Encoder::Encoder(BpeModel model, std::unique_ptr<PreTokenizer> pretokenizer,
                 std::unique_ptr<SpecialTokenMatcher> specials)
    : model_(std::move(model)),
      pretokenizer_(std::move(pretokenizer)),
      specials_(std::move(specials)) {
  for (const SpecialToken& s : model_.specials) special_ids_.push_back(s.id);
  token_index_ = model_.TokenIndex();
  for (uint32_t rank = 0; rank < model_.merges.size(); ++rank) {
    const Merge& m = model_.merges[rank];
    uint64_t key = (uint64_t{m.left} << 32) | m.right;
    merge_of_pair_.try_emplace(key, MergeTarget{rank, m.result});  // the first rank wins
  }
  byte_token_.resize(256);
  for (int b = 0; b < 256; ++b) {
    auto it = token_index_.find(std::string(1, static_cast<char>(b)));
    byte_token_[b] = it == token_index_.end() ? ~TokenId{0} : it->second;
  }
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Create(BpeModel model) {
  TM_RETURN_IF_ERROR(model.Validate());
  TM_ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> pretokenizer,
                      PreTokenizer::Create(model.pretokenizer));
  std::unique_ptr<SpecialTokenMatcher> specials;
  if (!model.specials.empty()) {
    std::vector<std::string> contents;
    for (const SpecialToken& s : model.specials) contents.push_back(s.content);
    TM_ASSIGN_OR_RETURN(specials, SpecialTokenMatcher::Create(std::move(contents)));
  }
  for (int b = 0; b < 256; ++b) {
    bool found = false;
    for (TokenId id = 0; id < model.tokens.size() && !found; ++id) {
      found = model.tokens[id].size() == 1 && static_cast<unsigned char>(model.tokens[id][0]) == b;
    }
    if (!found) {
      return absl::InvalidArgumentError(StrCat(
          "the vocabulary has no token for byte ", b, ", so not every text can be encoded"));
    }
  }
  return std::unique_ptr<Encoder>(
      new Encoder(std::move(model), std::move(pretokenizer), std::move(specials)));
}

void Encoder::EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
  if (model_.ignore_merges) {
    if (auto it = token_index_.find(piece); it != token_index_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<TokenId> parts;
  parts.reserve(piece.size());
  for (unsigned char c : piece) parts.push_back(byte_token_[c]);
  while (parts.size() > 1) {
    uint32_t best_rank = UINT32_MAX;
    size_t best_pos = 0;
    TokenId best_result = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto it = merge_of_pair_.find((uint64_t{parts[i]} << 32) | parts[i + 1]);
      if (it != merge_of_pair_.end() && it->second.rank < best_rank) {
        best_rank = it->second.rank;
        best_pos = i;
        best_result = it->second.result;
      }
    }
    if (best_rank == UINT32_MAX) break;
    parts[best_pos] = best_result;
    parts.erase(parts.begin() + best_pos + 1);
  }
  out.insert(out.end(), parts.begin(), parts.end());
}

void Encoder::EncodeOrdinary(std::string_view text, std::vector<TokenId>& out) const {
  pretokenizer_->Split(text, [&](std::string_view piece) { EncodePiece(piece, out); });
}

absl::StatusOr<std::vector<TokenId>> Encoder::Encode(std::string_view text,
                                                     SpecialPolicy policy) const {
  std::vector<TokenId> ids;
  if (specials_ == nullptr || policy == SpecialPolicy::kAsText) {
    EncodeOrdinary(text, ids);
    return ids;
  }
  absl::Status status;
  size_t offset = 0;
  specials_->Split(text, [&](std::string_view segment, int special_index) {
    if (special_index < 0) {
      EncodeOrdinary(segment, ids);
    } else if (policy == SpecialPolicy::kAllow) {
      ids.push_back(special_ids_[special_index]);
    } else if (status.ok()) {
      status = absl::InvalidArgumentError(StrCat(
          "the text contains the special token '", segment, "' at byte ", offset,
          "; allow special tokens or encode them as text"));
    }
    offset += segment.size();
  });
  if (!status.ok()) return status;
  return ids;
}

absl::StatusOr<std::string> Encoder::Decode(absl::Span<const TokenId> ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenId id = ids[i];
    if (id >= model_.tokens.size() || model_.tokens[id].empty()) {
      return absl::InvalidArgumentError(
          StrCat("id ", id, " (position ", i, ") is not in the vocabulary"));
    }
    text += model_.tokens[id];
  }
  return text;
}

}  // namespace tokenmill
