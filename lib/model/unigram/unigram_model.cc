#include "model/unigram/unigram_model.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/unigram/unigram_encoder.h"

namespace tokenmill {

double UnigramFileScore(double score) {
  // printf's "%.15g" read back by strtod, through <charconv> (the same digits, "as if by
  // printf", and the same correctly rounded reading, without a locale or a format string to
  // parse: snprintf and strtod took 1 us a score, 30 ms of a 30000-piece vocabulary).
  char digits[40];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits) - 1, score,
                                       std::chars_format::general, 15);
  *end = '\0';
  double value = 0;
  // (Out of range, where strtod gives infinity and from_chars nothing: +-DBL_MAX rounds up.)
  if (std::from_chars(digits, end, value).ec != std::errc()) value = std::strtod(digits, nullptr);
  return value;
}

const UnigramModel* AsUnigram(const Model& model) {
  return model.type() == ModelType::kUnigram ? static_cast<const UnigramModel*>(&model) : nullptr;
}

bool UnigramModel::operator==(const UnigramModel& other) const {
  return tokens == other.tokens && scores == other.scores && specials == other.specials &&
         pretokenizer == other.pretokenizer && unk_id == other.unk_id &&
         byte_fallback == other.byte_fallback;
}

absl::Status UnigramModel::Validate() const {
  if (scores.size() != tokens.size()) {
    return absl::InvalidArgumentError(
        StrCat("a Unigram model has ", tokens.size(), " tokens but ", scores.size(), " scores"));
  }
  for (TokenId id = 0; id < scores.size(); ++id) {
    if (!std::isfinite(scores[id])) {
      return absl::InvalidArgumentError(StrCat("token ", id, " has the score ", scores[id],
                                               "; a Unigram score is a finite log-probability"));
    }
  }
  TM_ASSIGN_OR_RETURN(const absl::flat_hash_set<TokenId> special_ids,
                      CheckSpecialTokens(tokens, specials));
  if (unk_id != kNoUnknownToken && !special_ids.contains(unk_id)) {
    return absl::InvalidArgumentError(
        StrCat("the unknown token id ", unk_id, " is not a special token"));
  }
  absl::flat_hash_set<TokenId> fallback;
  if (!byte_fallback.empty()) {
    if (byte_fallback.size() != 256) {
      return absl::InvalidArgumentError(
          StrCat("byte fallback needs 256 tokens, not ", byte_fallback.size()));
    }
    for (int b = 0; b < 256; ++b) {
      const TokenId id = byte_fallback[b];
      if (id >= tokens.size() || tokens[id] != std::string(1, static_cast<char>(b)) ||
          special_ids.contains(id) || !fallback.insert(id).second) {
        return absl::InvalidArgumentError(
            StrCat("the byte-fallback token of byte ", b, " (id ", id, ") is not that one byte"));
      }
    }
  }
  absl::flat_hash_map<std::string_view, TokenId, StringHash, StringEq> seen;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (special_ids.contains(id) || fallback.contains(id)) continue;
    if (tokens[id].empty()) {
      return absl::InvalidArgumentError(StrCat("token ", id, " is empty"));
    }
    if (auto [it, fresh] = seen.emplace(tokens[id], id); !fresh) {
      return absl::InvalidArgumentError(
          StrCat("tokens ", it->second, " and ", id, " are the same ('", tokens[id], "')"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PieceEncoder>> UnigramModel::MakePieceEncoder(
    const EncoderOptions& options) const {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<UnigramEncoder> encoder,
                      UnigramEncoder::Create(*this, options));
  return std::unique_ptr<PieceEncoder>(std::move(encoder));
}

}  // namespace tokenmill
