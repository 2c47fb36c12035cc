// The lattice of Unigram training (unigram_trainer.h): the pieces in a trie over character ids,
// the E-step (forward-backward over every word, in parallel, with exact fixed-point sums), and
// Viterbi segmentation (of the words, for pruning, and of one piece's own text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <algorithm>

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
    const uint32_t* const record = records_.data() + node;
    const uint32_t count = record[1];
    const uint32_t* const ids = record + 2;
    if (count <= 8) {
      for (uint32_t k = 0; k < count; ++k) {
        if (ids[k] == id) return ids[count + k];
      }
      return kNone;
    }
    const uint32_t* const at = std::lower_bound(ids, ids + count, id);
    return at != ids + count && *at == id ? at[count] : kNone;
  }
  // The piece ending at `node`, or kNone.
  uint32_t Piece(uint32_t node) const { return records_[node]; }
  // For a subset of the pieces: piece i becomes new_index[i] (kNone: gone). The nodes stay
  // (a path to a gone piece just ends nowhere).
  void Remap(std::span<const uint32_t> new_index);

 private:
  // A node is the offset of its record in records_: its piece, its number of children c, their
  // characters (ascending), then their nodes; 2 + 2c words. A step of a walk reads one record
  // (mostly one cache line) instead of a node and, elsewhere, its links. The root's record is
  // the first (no children there: root_ holds them).
  std::vector<uint32_t> root_;     // the root's children by character id
  std::vector<uint32_t> records_;
  std::vector<uint32_t> nodes_;    // every record's offset, for Remap
};

// The pieces of one round, their trie, scores and the unknown edge's score. Within a round
// pieces only die (the M-step drops them); indices stay, so that the words' lattices, cached
// for the round (Lattices), stay valid.
struct PieceSet {
  explicit PieceSet(std::vector<ScoredPiece> pieces, size_t alphabet);
  // The next round's: `pieces` are a subset of the last round's, whose trie, remapped
  // (PieceTrie::Remap), is `trie`.
  PieceSet(std::vector<ScoredPiece> pieces, PieceTrie trie);
  // After the scores or `alive` changed: the unknown score and the probabilities.
  void Refresh();
  // The living pieces, in order.
  std::vector<ScoredPiece> Alive() const;
  size_t alive_count() const;

  std::vector<ScoredPiece> pieces;
  std::vector<uint8_t> alive;
  // pieces[i].score, densely (the lattices read it per occurrence).
  std::vector<double> score;
  PieceTrie trie;
  double unknown_score = 0;
  // exp(score) of each living piece (0 for the dead) and of the unknown edge, and the most
  // negative edge score: a word of n characters with n * -min_edge_score below kLinearLimit has
  // no path probability that underflows a double, and its forward-backward runs on
  // probabilities instead of logs (a longer word too, when its total probability comes out at
  // least kLowestLinearTotal).
  std::vector<double> probability;
  double unknown_probability = 0;
  double min_edge_score = 0;
};
inline constexpr double kLinearLimit = 600;
// exp(-kLinearLimit): a longer word whose total probability comes out at least this keeps its
// forward-backward on probabilities (RunEStep).
inline constexpr double kLowestLinearTotal = 2.6503965530043108e-261;

// Every word's piece occurrences under one round's pieces (the trie walks done once per round,
// not once per pass), when they fit `max_edges`; otherwise each pass walks the trie again.
class Lattices {
 public:
  Lattices(const UnigramWords& words, const PieceSet& set, uint64_t max_edges);
  // The same for texts that are stretches of words `source` holds (text r: the word
  // sites[r].word from character sites[r].start on), without a trie walk: source's
  // occurrences there that end inside the stretch, of the pieces alive in `set`, shifted. The
  // same lattices, when `source` (cached) was made with each of those pieces alive.
  Lattices(const UnigramWords& texts, const Lattices& source, std::span<const PieceSite> sites,
           const PieceSet& set, uint64_t max_edges);
  bool cached() const { return cached_; }
  // For the next round, whose pieces are a subset of this one's: piece i becomes new_index[i]
  // (kNone: gone). No trie walk: the occurrences are filtered in place (pieces are never
  // added after the seeds).
  void Remap(std::span<const uint32_t> new_index);

  struct Occurrence {
    uint32_t piece;
    uint16_t start, length;  // characters
  };
  // Word w's occurrences, by start then length (cached() only).
  std::span<const Occurrence> Of(size_t w) const {
    const Chunk& c = chunks_[w / kChunkWords];
    const size_t k = w % kChunkWords;
    return {c.edges.data() + c.begin[k], c.begin[k + 1] - c.begin[k]};
  }

 private:
  static constexpr size_t kChunkWords = 1024;
  // Fills the chunks for n texts, in parallel: fill_text(r, edges) appends text r's
  // occurrences (by start, then length), false when it cannot be cached; cached() when each
  // could and their total stays within max_edges.
  template <typename FillText>
  void Fill(size_t n, uint64_t max_edges, FillText fill_text);
  struct Chunk {
    std::vector<uint32_t> begin;  // kChunkWords + 1 (fewer in the last chunk)
    std::vector<Occurrence> edges;
  };
  std::vector<Chunk> chunks_;
  bool cached_ = false;
};

struct EStep {
  std::vector<int64_t> expected;  // by piece, in units of 2^-24
  __int128 log_likelihood = 0;    // sum of count * Z, in units of 2^-24
  double LogLikelihood() const { return static_cast<double>(log_likelihood) / kFixedScale; }
};

// Expected piece counts and the log-likelihood over all words (parallel; the result does not
// depend on the threads).
EStep RunEStep(const UnigramWords& words, const PieceSet& set, const Lattices& lattices);

// Per piece, the count-weighted occurrences on the words' Viterbi paths (parallel).
std::vector<uint64_t> ViterbiCounts(const UnigramWords& words, const PieceSet& set,
                                    const Lattices& lattices);

// The Viterbi path of `text` (character ids) as piece indices; an unknown edge is kNone. With
// `skip_whole`, the edge of a piece spanning all of `text` is left out, and a path needing an
// unknown edge is no path (returns an empty vector).
std::vector<uint32_t> Viterbi(std::span<const uint32_t> text, const PieceSet& set,
                              bool skip_whole = false);

// Pruning's two segmentations of a piece's own text: its Viterbi path, and, when that is the
// piece itself, the best path without it and without unknown edges (empty: none). The same
// as Viterbi(text, set) and Viterbi(text, set, true), from one lattice.
struct PieceSegmentations {
  std::vector<uint32_t> best, alternative;
};
PieceSegmentations SegmentPiece(std::span<const uint32_t> text, const PieceSet& set);
// The same from the piece's cached occurrences in its own text of n characters (a Lattices
// over the pieces' texts: the trie walked once, not once per round).
PieceSegmentations SegmentPiece(std::span<const Lattices::Occurrence> occurrences, size_t n,
                                const PieceSet& set);

}  // namespace tokenmill::unigram
