#include "model/add_special_tokens.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "common/strings.h"
#include "common/utf8.h"
#include "model/bpe/bpe_model.h"
#include "model/text_display.h"
#include "model/unigram/unigram_model.h"
#include "model/units.h"
#include "model/wordpiece/wordpiece_model.h"

namespace tokenmill {
namespace {

// A regular or byte-fallback token a new special token may not be: found by its bytes, or by
// the text tokenizer.json writes for it where that differs (byte-level "Ġthe", "<0x41>"), which
// Hugging Face looks special tokens up by.
struct RegularName {
  TokenId id = 0;
  bool written = false;  // the name is the token's text in tokenizer.json, not its bytes
};

StringMap<RegularName> RegularNames(const Model& model) {
  std::span<const std::string> tokens = model.token_bytes();
  absl::flat_hash_set<TokenId> special_ids;
  for (const SpecialToken& s : model.special_tokens()) special_ids.insert(s.id);
  std::vector<int> fallback_byte(tokens.size(), -1);
  std::span<const TokenId> fallback = model.byte_fallback_ids();
  for (size_t b = 0; b < fallback.size(); ++b) {
    if (fallback[b] < tokens.size()) fallback_byte[fallback[b]] = static_cast<int>(b);
  }
  // Bytes first: a string that is one token's bytes and another's text names the former.
  StringMap<RegularName> names;
  names.reserve(tokens.size());
  auto regular = [&](TokenId id) { return !tokens[id].empty() && !special_ids.contains(id); };
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (regular(id) && fallback_byte[id] < 0) names.emplace(tokens[id], RegularName{id, false});
  }
  const Units& units = model.units();
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (!regular(id)) continue;
    std::string text = fallback_byte[id] >= 0
                           ? ByteFallbackName(static_cast<unsigned char>(fallback_byte[id]))
                           : units.TokenToText(tokens[id]);
    if (text != tokens[id]) names.emplace(std::move(text), RegularName{id, true});
  }
  return names;
}

bool IsUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t subpart = 0;
    const size_t n = ValidUtf8Length(text.substr(i), &subpart);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// The score of a new Unigram special: its first special's, else the highest score (so that the
// lowest stays the lowest), else 0.
double NewSpecialScore(const UnigramModel& model) {
  if (!model.specials.empty() && model.specials[0].id < model.scores.size()) {
    return model.scores[model.specials[0].id];
  }
  if (model.scores.empty()) return 0;
  return *std::max_element(model.scores.begin(), model.scores.end());
}

// Appends `token` to `model`'s tokens and specials at the next id, which it returns.
template <typename M>
TokenId AppendSpecial(M& model, const std::string& token) {
  const TokenId id = static_cast<TokenId>(model.tokens.size());
  model.tokens.push_back(token);
  model.specials.push_back({token, id});
  return id;
}

TokenId AppendSpecial(Model& model, const std::string& token) {
  switch (model.type()) {
    case ModelType::kBpe:
      return AppendSpecial(static_cast<BpeModel&>(model), token);
    case ModelType::kWordPiece:
      return AppendSpecial(static_cast<WordPieceModel&>(model), token);
    case ModelType::kUnigram: {
      auto& unigram = static_cast<UnigramModel&>(model);
      unigram.scores.push_back(NewSpecialScore(unigram));
      return AppendSpecial(unigram, token);
    }
  }
  return 0;
}

}  // namespace

absl::StatusOr<AddedSpecialTokens> AddSpecialTokens(const Model& model,
                                                    std::span<const std::string> tokens) {
  StringMap<TokenId> special_id;  // the model's specials and those added so far
  for (const SpecialToken& s : model.special_tokens()) special_id.emplace(s.content, s.id);
  const StringMap<RegularName> regular = RegularNames(model);
  AddedSpecialTokens result;
  result.model = model.Clone();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token.empty()) {
      return absl::InvalidArgumentError(StrCat("special token ", i + 1, " of ", tokens.size(),
                                               " is empty; a special token needs a byte at least"));
    }
    if (auto it = special_id.find(token); it != special_id.end()) {
      result.ids.push_back(it->second);
      continue;
    }
    if (!IsUtf8(token)) {
      return absl::InvalidArgumentError(
          StrCat("special token '", DisplayBytes(token),
                 "' is not UTF-8, which tokenizer.json (JSON text) cannot hold"));
    }
    if (auto it = regular.find(token); it != regular.end()) {
      const TokenId id = it->second.id;
      return absl::InvalidArgumentError(StrCat(
          "special token '", DisplayBytes(token), "' ",
          it->second.written ? StrCat("is how tokenizer.json writes token id ", id, " (bytes '",
                                      DisplayBytes(model.token_bytes()[id]), "')")
                             : StrCat("is already regular token id ", id),
          "; tokenmill does not make a regular token special (Hugging Face would reuse id ", id,
          ")"));
    }
    const TokenId id = AppendSpecial(*result.model, token);
    special_id.emplace(token, id);
    result.ids.push_back(id);
    ++result.added;
  }
  if (absl::Status valid = result.model->Validate(); !valid.ok()) {
    return absl::InvalidArgumentError(
        StrCat("the model with the special tokens added is not valid: ", valid.message()));
  }
  return result;
}

}  // namespace tokenmill
