#include "common/strings.h"
#include "model/bpe_model.h"

#include "absl/strings/str_format.h"

namespace tokenmill {

size_t BpeModel::VocabSize() const {
  size_t n = 0;
  for (const std::string& t : tokens) n += !t.empty();
  return n;
}

StringMap<TokenId> BpeModel::TokenIndex() const {
  StringMap<TokenId> index;
  index.reserve(tokens.size());
  absl::flat_hash_map<TokenId, bool> special_ids;
  for (const SpecialToken& s : specials) special_ids[s.id] = true;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty() || special_ids.contains(id)) continue;
    index.emplace(tokens[id], id);
  }
  return index;
}

absl::Status BpeModel::Validate() const {
  absl::flat_hash_map<TokenId, bool> special_ids;
  for (const SpecialToken& s : specials) {
    if (s.content.empty()) return absl::InvalidArgumentError("a special token is empty");
    if (s.id >= tokens.size() || tokens[s.id] != s.content) {
      return absl::InvalidArgumentError(
          absl::StrFormat("special token '%s' is not stored at its id %d", s.content, s.id));
    }
    if (!special_ids.emplace(s.id, true).second) {
      return absl::InvalidArgumentError(absl::StrFormat("two special tokens share id %d", s.id));
    }
  }
  absl::flat_hash_map<std::string_view, TokenId, StringHash, StringEq> seen;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty() || special_ids.contains(id)) continue;
    auto [it, inserted] = seen.emplace(tokens[id], id);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ids %d and %d name the same bytes", it->second, id));
    }
  }
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const Merge& m = merges[rank];
    auto bad = [&](TokenId id) {
      return id >= tokens.size() || tokens[id].empty() || special_ids.contains(id);
    };
    if (bad(m.left) || bad(m.right) || bad(m.result)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("merge %d refers to an id that is not a regular token", rank));
    }
    const std::string& left = tokens[m.left];
    std::string_view result = tokens[m.result];
    if (result.size() != left.size() + tokens[m.right].size() || !result.starts_with(left) ||
        !result.ends_with(tokens[m.right])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "merge %d: token %d is not the concatenation of tokens %d and %d", rank, m.result,
          m.left, m.right));
    }
  }
  return absl::OkStatus();
}

BpeModel ByteBaseModel() {
  BpeModel model;
  model.tokens.reserve(256);
  for (int b = 0; b < 256; ++b) model.tokens.emplace_back(1, static_cast<char>(b));
  return model;
}

}  // namespace tokenmill
