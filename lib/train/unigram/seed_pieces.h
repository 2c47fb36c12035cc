// The seed vocabulary of Unigram training (unigram_trainer.h: seeds): every character, and the
// most frequent valid substrings of the words that are nodes of their suffix tree, found with
// a suffix array of the words sorted on their first max_piece_length + 1 characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "train/unigram/unigram_words.h"

namespace tokenmill::unigram {

struct ScoredPiece {
  std::vector<uint32_t> symbols;  // character ids
  double score = 0;
};

struct SeedStats {
  uint64_t positions = 0;   // characters in the suffix array
  uint64_t candidates = 0;  // substrings that qualified (before the seed_size cut)
};

// Where a piece occurs: word `word`, from character `start` on.
struct PieceSite {
  uint32_t word = 0;
  uint32_t start = 0;
};

// The seeds in order (the characters by count, then the substrings by score), with their
// initial log-probabilities. With `sites`, also one occurrence of each seed (a character's is
// left {0, 0}).
std::vector<ScoredPiece> MakeSeedPieces(const UnigramWords& words, const PieceRules& rules,
                                        size_t seed_size, size_t max_piece_length,
                                        SeedStats* stats = nullptr,
                                        std::vector<PieceSite>* sites = nullptr);

}  // namespace tokenmill::unigram
