#include "model/rank_merges.h"

namespace tokenmill {

std::vector<Merge> DeriveRankMerges(const BpeModel& model) {
  StringMap<TokenId> index = model.TokenIndex();
  std::vector<Merge> merges;
  merges.reserve(model.tokens.size() * 2);
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    std::string_view token = model.tokens[id];
    if (token.size() < 2) continue;
    auto self = index.find(token);
    if (self == index.end() || self->second != id) continue;  // a special token
    for (size_t split = 1; split < token.size(); ++split) {
      auto left = index.find(token.substr(0, split));
      if (left == index.end()) continue;
      auto right = index.find(token.substr(split));
      if (right == index.end()) continue;
      merges.push_back({left->second, right->second, id});
    }
  }
  return merges;
}

}  // namespace tokenmill
