#include "model/bpe/rank_merges.h"

#include "model/bpe/lookup_tables.h"

namespace tokenmill {

std::vector<Merge> DeriveRankMerges(const BpeModel& model) {
  std::vector<bool> is_special(model.tokens.size(), false);
  for (const SpecialToken& s : model.specials) {
    if (s.id < is_special.size()) is_special[s.id] = true;
  }
  TokenTable index;
  index.Build(model.tokens, is_special);
  std::vector<Merge> merges;
  merges.reserve(model.tokens.size() * 2);
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    std::string_view token = model.tokens[id];
    if (token.size() < 2 || is_special[id]) continue;
    for (size_t split = 1; split < token.size(); ++split) {
      TokenId left = index.Find(token.substr(0, split));
      if (left == TokenTable::kMissing) continue;
      TokenId right = index.Find(token.substr(split));
      if (right == TokenTable::kMissing) continue;
      merges.push_back({left, right, id});
    }
  }
  return merges;
}

}  // namespace tokenmill
