// Phase 3 of fresh BPE training: the pair counts of the words as built from their symbols, with
// each pair's word list, into state.pairs and state.queue.
#pragma once

#include "train/bpe/bpe_state.h"

namespace tokenmill {

// Alphabets of up to kMaxDenseAlphabet symbols of one length (bytes) are counted in dense
// per-thread arrays of alphabet x alphabet counters, and the word lists built as one block by
// a two-pass scatter; other ones (characters: 10k CJK characters would be 10^8 counters a
// thread; symbols that never merge) as a resumed run's words are (CountPairsOfWords,
// pair_recount.h), which needs no such arrays.
void CountInitialPairs(BpeState& state);

inline constexpr size_t kMaxDenseAlphabet = 256;

}  // namespace tokenmill
