#include "model/bpe/rank_merges.h"

#include "model/bpe/lookup_tables.h"

#include <tbb/parallel_for.h>

#include <algorithm>

namespace tokenmill {

std::vector<Merge> DeriveRankMerges(const BpeModel& model, const TokenTable& index) {
  const std::vector<bool> is_special = SpecialIds(model);
  // In blocks of ids, in parallel; the blocks' merges are joined in id order.
  constexpr TokenId kBlock = 8192;
  const TokenId n = static_cast<TokenId>(model.tokens.size());
  std::vector<std::vector<Merge>> blocks((n + kBlock - 1) / kBlock);
  tbb::parallel_for(size_t{0}, blocks.size(), [&](size_t b) {
    std::vector<Merge>& out = blocks[b];
    const TokenId first = static_cast<TokenId>(b) * kBlock;
    const TokenId last = std::min<TokenId>(n, first + kBlock);
    for (TokenId id = first; id < last; ++id) {
      std::string_view token = model.tokens[id];
      if (token.size() < 2 || is_special[id]) continue;
      for (size_t split = 1; split < token.size(); ++split) {
        TokenId left = index.Find(token.substr(0, split));
        if (left == TokenTable::kMissing) continue;
        TokenId right = index.Find(token.substr(split));
        if (right == TokenTable::kMissing) continue;
        out.push_back({left, right, id});
      }
    }
  });
  std::vector<Merge> merges;
  size_t total = 0;
  for (const auto& b : blocks) total += b.size();
  merges.reserve(total);
  for (const auto& b : blocks) merges.insert(merges.end(), b.begin(), b.end());
  return merges;
}

}  // namespace tokenmill
