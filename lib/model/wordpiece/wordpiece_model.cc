#include "model/wordpiece/wordpiece_model.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/wordpiece/wordpiece_encoder.h"

namespace tokenmill {

const WordPieceModel* AsWordPiece(const Model& model) {
  return model.type() == ModelType::kWordPiece ? static_cast<const WordPieceModel*>(&model)
                                               : nullptr;
}

bool WordPieceModel::operator==(const WordPieceModel& other) const {
  return tokens == other.tokens && specials == other.specials &&
         pretokenizer == other.pretokenizer && unk_token == other.unk_token &&
         prefix == other.prefix && max_input_chars_per_word == other.max_input_chars_per_word &&
         cleanup == other.cleanup;
}

std::optional<TokenId> WordPieceModel::unknown() const {
  for (const SpecialToken& s : specials) {
    if (s.content == unk_token) return s.id;
  }
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (tokens[id] == unk_token) return id;
  }
  return std::nullopt;
}

absl::Status WordPieceModel::Validate() const {
  TM_ASSIGN_OR_RETURN(const absl::flat_hash_set<TokenId> special_ids,
                      CheckSpecialTokens(tokens, specials));
  if (prefix.empty()) {
    return absl::InvalidArgumentError(
        "a WordPiece model needs a continuing-subword prefix (BERT's \"##\")");
  }
  if (max_input_chars_per_word == 0) {
    return absl::InvalidArgumentError("max_input_chars_per_word must be 1 or more");
  }
  absl::flat_hash_map<std::string_view, TokenId, StringHash, StringEq> seen;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty() || special_ids.contains(id)) continue;
    if (auto [it, fresh] = seen.emplace(tokens[id], id); !fresh) {
      return absl::InvalidArgumentError(
          StrCat("tokens ", it->second, " and ", id, " are the same ('", tokens[id], "')"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PieceEncoder>> WordPieceModel::MakePieceEncoder(
    const EncoderOptions& options) const {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<WordPieceEncoder> encoder,
                      WordPieceEncoder::Create(*this, options));
  return std::unique_ptr<PieceEncoder>(std::move(encoder));
}

std::string WordPieceCleanup(std::string token) {
  // Hugging Face's decoders/wordpiece.rs `cleanup`, in its order.
  static const std::pair<std::string_view, std::string_view> kReplacements[] = {
      {" .", "."},   {" ?", "?"},   {" !", "!"},         {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},     {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kReplacements) {
    if (token.find(from) != std::string::npos) {
      token = absl::StrReplaceAll(token, {{ToAbsl(from), ToAbsl(to)}});
    }
  }
  return token;
}

}  // namespace tokenmill
