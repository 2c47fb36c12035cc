#include "model/model.h"

#include "model/units.h"

#include "absl/container/flat_hash_set.h"

namespace tokenmill {

std::string_view ModelTypeName(ModelType type) {
  switch (type) {
    case ModelType::kBpe: return "BPE";
    case ModelType::kWordPiece: return "WordPiece";
    case ModelType::kUnigram: return "Unigram";
  }
  return "?";
}

std::string HfNormalizer(const NormalizerConfig& config) {
  auto flag = [](bool on) { return on ? "true" : "false"; };
  std::vector<std::string> parts;
  if (config.form == NormalForm::kNfc) parts.push_back(R"({"type":"NFC"})");
  if (config.form == NormalForm::kNfkc) parts.push_back(R"({"type":"NFKC"})");
  if (config.bert()) {
    parts.push_back(StrCat(R"({"type":"BertNormalizer","clean_text":)", flag(config.clean_text),
                           R"(,"handle_chinese_chars":)", flag(config.handle_chinese_chars),
                           R"(,"strip_accents":)", flag(config.strip_accents),
                           R"(,"lowercase":)", flag(config.lowercase), "}"));
  } else if (config.lowercase) {
    parts.push_back(R"({"type":"Lowercase"})");
  }
  if (parts.empty()) return "null";
  if (parts.size() == 1) return parts[0];
  return StrCat(R"({"type":"Sequence","normalizers":[)", parts[0], ",", parts[1], "]}");
}

absl::StatusOr<absl::flat_hash_set<TokenId>> CheckSpecialTokens(
    std::span<const std::string> tokens, std::span<const SpecialToken> specials) {
  absl::flat_hash_set<TokenId> ids;
  for (const SpecialToken& s : specials) {
    if (s.content.empty()) return absl::InvalidArgumentError("a special token is empty");
    if (s.id >= tokens.size() || tokens[s.id] != s.content) {
      return absl::InvalidArgumentError(
          StrCat("special token '", s.content, "' is not stored at its id ", s.id));
    }
    if (!ids.insert(s.id).second) {
      return absl::InvalidArgumentError(StrCat("two special tokens share id ", s.id));
    }
  }
  return ids;
}

size_t Model::VocabSize() const {
  size_t n = 0;
  for (const std::string& t : token_bytes()) n += !t.empty();
  return n;
}

StringMap<TokenId> Model::TokenIndex() const {
  std::span<const std::string> tokens = token_bytes();
  StringMap<TokenId> index;
  index.reserve(tokens.size());
  absl::flat_hash_set<TokenId> special_ids;
  for (const SpecialToken& s : special_tokens()) special_ids.insert(s.id);
  for (TokenId id : byte_fallback_ids()) special_ids.insert(id);
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty() || special_ids.contains(id)) continue;
    index.emplace(tokens[id], id);
  }
  return index;
}

std::vector<std::string> Model::TokenTexts() const {
  std::span<const std::string> tokens = token_bytes();
  std::vector<std::string> texts(tokens.size());
  std::vector<bool> named(tokens.size(), false);
  for (const SpecialToken& s : special_tokens()) {
    if (s.id < tokens.size()) texts[s.id] = s.content, named[s.id] = true;
  }
  std::span<const TokenId> fallback = byte_fallback_ids();
  for (size_t b = 0; b < fallback.size(); ++b) {
    if (fallback[b] < tokens.size() && !named[fallback[b]]) {
      texts[fallback[b]] = ByteFallbackName(static_cast<unsigned char>(b));
      named[fallback[b]] = true;
    }
  }
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (!named[id] && !tokens[id].empty()) texts[id] = units().TokenToText(tokens[id]);
  }
  return texts;
}

}  // namespace tokenmill
