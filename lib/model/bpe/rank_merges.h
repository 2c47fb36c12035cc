// Merges implied by a tiktoken-style ranked vocabulary.
//
// tiktoken has no merge list: it repeatedly merges the adjacent pair whose concatenation is the
// token of lowest rank. DeriveRankMerges() writes that rule as merges: for every regular token,
// in id (= rank) order, every split of its bytes into two regular tokens becomes a merge
// (left, right, token). With MergePriority::kTokenRank, an encoder using these merges gives
// exactly tiktoken's ids. A model read from a .tiktoken file leaves them implied
// (BpeModel::rank_merges_implied: its encoder finds pairs by their bytes, RankPairs);
// MergeList() derives them here for whoever needs the list (a tokenizer.json writer).
#pragma once

#include <vector>

#include "model/bpe/bpe_model.h"
#include "model/bpe/lookup_tables.h"

namespace tokenmill {

// Requires the model's tokens and specials (merges are ignored) and `index`, the regular
// tokens' TokenTable (Build of the tokens with SpecialIds skipped; the loader builds it anyway,
// to find repeated tokens); returns the merges sorted by result id, the splits of one token by
// split position.
std::vector<Merge> DeriveRankMerges(const BpeModel& model, const TokenTable& index);

}  // namespace tokenmill
