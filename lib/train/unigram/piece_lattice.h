// The lattice of Unigram training (unigram_trainer.h): the pieces in a trie over character ids,
// the E-step (forward-backward over every word, in parallel, with exact fixed-point sums), and
// Viterbi segmentation (of the words, for pruning, and of one piece's own text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "train/unigram/seed_pieces.h"
#include "train/unigram/unigram_words.h"

namespace tokenmill::unigram {

// The scale of the fixed-point sums (2^24).
inline constexpr double kFixedScale = 16777216.0;
// The unknown edge's score below the lowest piece score (SentencePiece's kUnkPenalty).
inline constexpr double kUnknownPenalty = 10.0;

class PieceTrie {
 public:
  PieceTrie(std::span<const ScoredPiece> pieces, size_t alphabet);

  static constexpr uint32_t kNone = UINT32_MAX;
  // The node after `node` reads character `id` (the root is kRoot), or kNone.
  static constexpr uint32_t kRoot = 0;
  uint32_t Child(uint32_t node, uint32_t id) const {
    if (node == kRoot) return id < root_.size() ? root_[id] : kNone;
    if (!has_children_[node]) return kNone;
    auto it = children_.find((uint64_t{node} << 32) | id);
    return it == children_.end() ? kNone : it->second;
  }
  // The piece ending at `node`, or kNone.
  uint32_t Piece(uint32_t node) const { return piece_[node]; }

 private:
  std::vector<uint32_t> root_;
  absl::flat_hash_map<uint64_t, uint32_t> children_;
  std::vector<uint32_t> piece_;
  std::vector<bool> has_children_;
};

// The pieces, their trie, scores and the unknown edge's score.
struct PieceSet {
  explicit PieceSet(std::vector<ScoredPiece> pieces, size_t alphabet);
  std::vector<ScoredPiece> pieces;
  PieceTrie trie;
  double unknown_score;
};

struct EStep {
  std::vector<int64_t> expected;  // by piece, in units of 2^-24
  __int128 log_likelihood = 0;    // sum of count * Z, in units of 2^-24
  double LogLikelihood() const { return static_cast<double>(log_likelihood) / kFixedScale; }
};

// Expected piece counts and the log-likelihood over all words (parallel; the result does not
// depend on the threads).
EStep RunEStep(const UnigramWords& words, const PieceSet& set);

// Per piece, the count-weighted occurrences on the words' Viterbi paths (parallel).
std::vector<uint64_t> ViterbiCounts(const UnigramWords& words, const PieceSet& set);

// The Viterbi path of `text` (character ids) as piece indices; an unknown edge is kNone. With
// `skip_whole`, the edge of a piece spanning all of `text` is left out, and a path needing an
// unknown edge is no path (returns an empty vector).
std::vector<uint32_t> Viterbi(std::span<const uint32_t> text, const PieceSet& set,
                              bool skip_whole = false);

}  // namespace tokenmill::unigram
