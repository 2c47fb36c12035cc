// BpeEncoder: the piece encoder of a BpeModel (piece_encoder.h): BPE on each pre-tokenized
// piece (PieceBpe: repeatedly merge the adjacent pair of lowest priority, leftmost first among
// equals, until none applies). With the model's `ignore_merges`, a piece that is a whole token
// becomes that token directly.
//
// Speed: pieces of up to 8 bytes first look in a small per-thread table of their final ids;
// pieces of 3-byte characters (Chinese...) are split where no token can straddle
// (CharSegments), single characters costing a table lookup; whole-token pieces cost one hash
// lookup; other pieces and segments go through a per-thread cache of recently seen pieces, then
// BPE (scan for short pieces, heap for long ones: no quadratic blow-up), its pairs found in a
// PairTable of the merges or, for merges implied by the ranks (a .tiktoken file), by their bytes
// in the token table (RankPairs). Thread-safe (each thread gets its own piece cache).
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <tbb/enumerable_thread_specific.h>

#include "absl/status/statusor.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/char_segments.h"
#include "model/bpe/id_writer.h"
#include "model/bpe/lookup_tables.h"
#include "model/bpe/piece_bpe.h"
#include "model/bpe/piece_cache.h"
#include "model/piece_encoder.h"

namespace tokenmill {

class BpeEncoder : public PieceEncoder {
 public:
  // `model` must outlive the encoder. Fails when its ids do not fit tiktoken ranks
  // (kTokenRank). A vocabulary without some bytes is accepted: the Encoder keeps such bytes
  // from reaching the piece encoder (units.h: UnencodableBytes).
  static absl::StatusOr<std::unique_ptr<BpeEncoder>> Create(const BpeModel& model,
                                                            const EncoderOptions& options);
  // The same, taking over `tokens`: the model's regular tokens by their bytes, built as
  // TokenTable::Build(model.tokens, SpecialIds(model)) (a .tiktoken reader builds it anyway:
  // FromTiktoken's `index`), instead of building it again. Fails when its token count is not
  // the model's.
  static absl::StatusOr<std::unique_ptr<BpeEncoder>> Create(const BpeModel& model,
                                                            const EncoderOptions& options,
                                                            TokenTable tokens);
  // The tables the encoder makes at start-up, made elsewhere; each one absent is built.
  struct Tables {
    std::optional<TokenTable> tokens;  // TokenTable::Build(model.tokens, SpecialIds(model))
    std::optional<SharedArray<PairMerge>> rank_byte_pairs;  // with rank_merges_implied
    std::optional<CharSegments> segments;                   // with options.split_pieces
  };
  // The same, with the tables given (ReadTables'). Fails when the token table's count is not
  // the model's, or a table is there that the model and options do not use.
  static absl::StatusOr<std::unique_ptr<BpeEncoder>> Create(const BpeModel& model,
                                                            const EncoderOptions& options,
                                                            Tables tables);
  // The tables made at start-up as bytes, for a cache of loaded vocabularies
  // (model/vocab_cache.h), and read back, by the same build only (they are its memory
  // layout), for a model of `id_bound` ids with `rank_merges_implied` and these options: every
  // table then given. ReadTables does not need the model, so it may run while the model's
  // tokens are made; it fails when the bytes are not such tables. With an `owner` that holds
  // `bytes` (a mapped cache entry), the large tables are used where they lie instead of copied.
  void AppendTables(BinaryWriter& out) const;
  static absl::StatusOr<Tables> ReadTables(std::string_view bytes,
                                           const std::shared_ptr<const void>& owner,
                                           size_t id_bound, bool rank_merges_implied,
                                           const EncoderOptions& options);

  void EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                  std::vector<TokenId>& out) const override;
  // One cache lookup and one IdWriter for all the lines (a call per line cost about a sixth
  // of encoding linux_c_100m's 3.6 M lines).
  void EncodeLines(std::string_view text, const PreTokenizer& pretokenizer,
                   std::vector<TokenId>& out, std::vector<size_t>& ends) const override;
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const override;
  void ExplainPiece(ExplainedPiece& out) const override;

  const CharSegments& char_segments() const { return segments_; }

 private:
  // `is_special[id]`: id is a special token's.
  BpeEncoder(const BpeModel& model, const EncoderOptions& options,
             const std::vector<bool>& is_special, Tables prebuilt);

  // EncodePiece with this thread's cache (nullptr: no cache).
  void EncodePieceCached(std::string_view piece, PieceCache* cache, IdWriter& out) const;
  // EncodePieceCached without the cache of short pieces' final ids.
  void EncodePieceFully(std::string_view piece, PieceCache* cache, IdWriter& out) const;
  // BPE of a piece or of a segment of one, through the cache (no whole-token shortcut).
  void EncodeByBpe(std::string_view piece, PieceCache* cache, IdWriter& out) const;
  PieceCache* LocalCache() const;

  const BpeModel& model_;
  const bool ignore_merges_;  // model_.ignore_merges, read per piece
  EncoderOptions options_;
  TokenTable token_table_;
  PairTable pair_table_;  // empty with rank_merges_implied, which uses these two instead
  RankPairs rank_pairs_;
  SharedArray<PairMerge> rank_byte_pairs_;  // RankBytePairs: the first lookups of a piece
  TokenId byte_token_[256];
  PieceBpe bpe_;
  CharSegments segments_;
  mutable tbb::enumerable_thread_specific<PieceCache> caches_;
};

}  // namespace tokenmill
