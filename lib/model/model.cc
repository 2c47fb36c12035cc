#include "model/model.h"

#include "absl/container/flat_hash_set.h"

namespace tokenmill {

std::string_view ModelTypeName(ModelType type) {
  switch (type) {
    case ModelType::kBpe: return "BPE";
  }
  return "?";
}

std::string_view HfNormalizer(Normalization normalization) {
  switch (normalization) {
    case Normalization::kNone: return "null";
  }
  return "null";
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
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty() || special_ids.contains(id)) continue;
    index.emplace(tokens[id], id);
  }
  return index;
}

}  // namespace tokenmill
