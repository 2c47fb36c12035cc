// The pair counts of words already rewritten by merges (a resumed run, after its replay), or of
// words of a large alphabet: into state.pairs and state.queue, with each pair's word list.
#pragma once

#include "train/bpe/bpe_state.h"

namespace tokenmill {

// The pairs are grouped by left token: the pair universe is large (millions of pairs on big
// corpora), so instead of hashing each occurrence, every (pair, word) is scattered into its
// left token's group (a counting sort over chunks of words, so each group is in word order),
// and each group is then counted and split by right token with dense per-thread arrays of the
// vocabulary's size. Pairs come out in key order with their word lists in word order: the same
// whatever the number of threads.
//
// Unless `track_all`, only the pairs that the remaining merges can plausibly reach are kept: a
// pair that occurs now involves no token made later, so its count can only fall (merges raise
// only the counts of pairs with their new token), and a pair counted below the floor cannot be
// merged while the best kept pair is at or above it. Most pairs are rare (poetry at 30k merges:
// 3.4 M of its 5.5 M pairs occur once), and leaving them out saves their word lists and table
// entries. The floor is one power-of-two tier below the highest tier that holds 8 pairs per
// remaining merge (options.resume_pair_floor overrides it); when no merge remains, nothing is
// kept. The merge loop counts every pair (track_all) should the best kept pair fall below the
// floor after all (state.untracked_below).
void CountPairsOfWords(BpeState& state, bool track_all);

}  // namespace tokenmill
