// UnigramEncoder: the piece encoder of a UnigramModel (unigram_model.h: the Viterbi rule and
// its tie-break, the unknown edge, byte fallback), with the n best segmentations for explain and
// sampling for subword regularization (EncoderOptions::unigram_alpha, unigram_nbest). The
// tokens are in a trie over bytes; a piece's lattice is built from its character starts.
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "model/piece_encoder.h"
#include "model/unigram/unigram_model.h"

namespace tokenmill {

// One segmentation of a piece.
struct UnigramPath {
  std::vector<TokenId> ids;    // the tokens (unknown runs as byte-fallback tokens or unk_id)
  std::vector<size_t> starts;  // each id's first byte in the piece
  double score = 0;            // the sum of the edges' scores, added left to right
};

class UnigramEncoder : public PieceEncoder {
 public:
  // `model` must outlive the encoder.
  static absl::StatusOr<std::unique_ptr<UnigramEncoder>> Create(const UnigramModel& model,
                                                                const EncoderOptions& options);

  void EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                  std::vector<TokenId>& out) const override;
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const override;
  // ids and piece_starts of the best path, its score, and the runner-up.
  void ExplainPiece(ExplainedPiece& out) const override;
  // Without an unknown token and byte fallback: fails on the first character no
  // one-character token covers.
  absl::Status CheckEncodable(std::string_view text, size_t offset) const override;
  bool may_refuse() const override {
    return model_.unk_id == kNoUnknownToken && model_.byte_fallback.empty();
  }

  // The n best segmentations of `piece` (not empty), best first (fewer when it has fewer).
  std::vector<UnigramPath> NBest(std::string_view piece, size_t n) const;
  // A segmentation drawn with probability proportional to exp(alpha * score): among all (nbest
  // <= 0, forward filtering and backward sampling) or among the nbest best.
  UnigramPath Sample(std::string_view piece, double alpha, int nbest, std::mt19937_64& rng) const;

 private:
  struct Edge {
    uint32_t start, end;  // bytes
    TokenId id;           // kUnknown: an unknown edge
    double score;
  };
  static constexpr TokenId kUnknown = UINT32_MAX;
  explicit UnigramEncoder(const UnigramModel& model) : model_(model) {}
  // The lattice's edges, by start ascending, each start's by length ascending, then its
  // unknown edge.
  void Edges(std::string_view piece, std::vector<Edge>& edges) const;
  // The Viterbi path's edges (indices into `edges`).
  void Best(std::string_view piece, const std::vector<Edge>& edges, std::vector<uint32_t>& path) const;
  // A path of edges as ids (fusing unknown runs) and starts.
  void Emit(std::string_view piece, const std::vector<Edge>& edges,
            const std::vector<uint32_t>& path, UnigramPath& out) const;

  const UnigramModel& model_;
  double unknown_score_ = 0;
  // The trie over the regular tokens' bytes: node -> child by byte; the token ending at a node.
  std::vector<uint32_t> root_;
  absl::flat_hash_map<uint64_t, uint32_t> children_;
  std::vector<TokenId> token_at_;
  std::vector<uint8_t> has_children_;
  double alpha_ = 0;
  int nbest_ = 0;
  uint64_t seed_ = 0;
  // Distinct for every encoder created (from 1): whose draws a thread's generator holds.
  uint64_t serial_ = 0;
};

}  // namespace tokenmill
