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

// The regular and byte-fallback tokens a new special token may not be: by their bytes, and by
// the text tokenizer.json writes for them (byte-level "Ġthe" for " the", "<0x41>"), by which
// Hugging Face looks special tokens up (and then reuses the id).
struct RegularTokens {
  StringMap<TokenId> by_bytes;  // regular tokens (byte-fallback tokens are none)
  StringMap<TokenId> by_text;   // regular and byte-fallback tokens
};

RegularTokens FindRegularTokens(const Model& model) {
  RegularTokens regular;
  regular.by_bytes = model.TokenIndex();
  absl::flat_hash_set<TokenId> special_ids;
  for (const SpecialToken& s : model.special_tokens()) special_ids.insert(s.id);
  const std::vector<std::string> texts = model.TokenTexts();
  regular.by_text.reserve(texts.size());
  for (TokenId id = 0; id < texts.size(); ++id) {
    if (model.token_bytes()[id].empty() || special_ids.contains(id)) continue;
    regular.by_text.emplace(texts[id], id);
  }
  return regular;
}

// Why `token` cannot be special in `model`, if it cannot: it is a regular token's bytes or
// tokenizer.json text.
absl::Status CheckNotRegular(const Model& model, const RegularTokens& regular,
                             const std::string& token) {
  const auto bytes = regular.by_bytes.find(token);
  const auto text = regular.by_text.find(token);
  if (bytes == regular.by_bytes.end() && text == regular.by_text.end()) return absl::OkStatus();
  const std::string what =
      bytes != regular.by_bytes.end()
          ? StrCat("is already regular token id ", bytes->second)
          : StrCat("is how tokenizer.json writes token id ", text->second, " (bytes '",
                   DisplayBytes(model.token_bytes()[text->second]), "')");
  const std::string hf =
      text != regular.by_text.end()
          ? StrCat("Hugging Face would reuse id ", text->second)
          : StrCat("Hugging Face, which looks tokens up by their tokenizer.json text, would add "
                   "it at a new id, and no text would encode to id ", bytes->second, " again");
  return absl::InvalidArgumentError(StrCat("special token '", DisplayBytes(token), "' ", what,
                                           "; tokenmill does not make a regular token special (",
                                           hf, ")"));
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
  const RegularTokens regular = FindRegularTokens(model);
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
    if (absl::Status s = CheckNotRegular(model, regular, token); !s.ok()) return s;
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
