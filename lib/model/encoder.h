// Encoder: text -> token ids and back, for a BpeModel; exact and fast.
//
// Contract: Encode() cuts out special tokens (per `SpecialPolicy`), pre-tokenizes the rest with
// the model's pre-tokenizer and applies BPE to each piece (PieceBpe: repeatedly merge the
// adjacent pair of lowest priority, leftmost first among equals, until none applies). With the
// model's `ignore_merges`, a piece that is a whole token becomes that token directly. For a
// model read from OpenAI's .tiktoken files the ids are exactly tiktoken's.
// Decode(Encode(x)) == x for every byte string x.
//
// Speed: pieces of up to 8 bytes first look in a small per-thread table of their final ids;
// pieces of 3-byte characters (Chinese...) are split where no token can straddle
// (CharSegments), single characters costing a table lookup; whole-token pieces cost one hash
// lookup; other pieces and segments go through a per-thread cache of recently seen pieces, then
// BPE (scan for short pieces, heap for long ones: no quadratic blow-up). EncodeBatch() encodes
// many texts in parallel (oneTBB), results in input order.
//
// The Encoder is thread-safe: any number of threads may call it at once (each gets its own
// piece cache).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tbb/enumerable_thread_specific.h>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/bpe_model.h"
#include "model/char_segments.h"
#include "model/id_writer.h"
#include "model/lookup_tables.h"
#include "model/piece_bpe.h"
#include "model/piece_cache.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/special_tokens.h"

namespace tokenmill {

// The ids of a batch of texts in one flat array (no allocation per text): text i's ids are
// ids[offsets[i], offsets[i + 1]).
struct EncodedBatch {
  std::vector<TokenId> ids;
  std::vector<size_t> offsets;  // size() + 1 entries, from 0
  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  absl::Span<const TokenId> operator[](size_t i) const {
    return absl::Span<const TokenId>(ids.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
};

// What Encode() does with special-token strings found in the text (tiktoken's allowed /
// disallowed special).
enum class SpecialPolicy {
  kAllow,     // they become their ids
  kDisallow,  // finding one is an error
  kAsText,    // they are encoded as ordinary text
};

struct EncoderOptions {
  // Pieces each thread's cache holds before it is emptied; 0 turns the cache off. (linux_docs
  // has 136k distinct pieces that are not whole cl100k tokens; 2^18 entries take ~15 MB.)
  size_t cache_entries = 1 << 18;
  // Longer pieces are not cached (they are rare and would crowd the cache).
  size_t max_cached_piece = 256;
  // Pieces longer than this use the heap algorithm instead of the scan.
  size_t long_piece = PieceBpe::kDefaultLongPiece;
  // Split pieces of 3-byte characters where no token can straddle (CharSegments: exact, and a
  // table lookup per Chinese character); false only to compare against the plain path.
  bool split_pieces = true;
};

// How one pre-tokenized piece was encoded (Encoder::Explain).
struct ExplainedPiece {
  std::string_view text;          // the piece (a view into the explained text)
  int special_index = -1;         // >= 0: the piece is this special token (model.specials)
  bool whole_token = false;       // encoded directly as one token (ignore_merges)
  std::vector<MergeStep> merges;  // the merges applied, in order (empty when whole_token)
  std::vector<TokenId> ids;       // the piece's tokens
};

class Encoder {
 public:
  static absl::StatusOr<std::unique_ptr<Encoder>> Create(BpeModel model,
                                                         EncoderOptions options = {});

  absl::StatusOr<std::vector<TokenId>> Encode(std::string_view text,
                                              SpecialPolicy policy = SpecialPolicy::kAllow) const;
  // Like Encode, appending to `out`; on error `out` may hold part of the ids.
  absl::Status EncodeTo(std::string_view text, SpecialPolicy policy,
                        std::vector<TokenId>& out) const;
  // Encodes text with no special-token handling at all, appending to `out`.
  void EncodeOrdinary(std::string_view text, std::vector<TokenId>& out) const;
  // BPE on one pre-tokenized piece (not empty), appending to `out`.
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const;

  // Encodes every text, in parallel on the current oneTBB arena; result i belongs to texts[i]
  // whatever the thread count. Fails with the error of the first failing text (by index).
  absl::StatusOr<EncodedBatch> EncodeBatch(absl::Span<const std::string_view> texts,
                                           SpecialPolicy policy = SpecialPolicy::kAllow) const;

  // The pieces of `text` and how each became tokens; the ids concatenate to Encode(text).
  absl::StatusOr<std::vector<ExplainedPiece>> Explain(
      std::string_view text, SpecialPolicy policy = SpecialPolicy::kAllow) const;

  // The exact bytes of `ids`. Fails on an id that names no token.
  absl::StatusOr<std::string> Decode(absl::Span<const TokenId> ids) const;
  // Appends the bytes of `ids` to `out`; same errors as Decode.
  absl::Status DecodeTo(absl::Span<const TokenId> ids, std::string& out) const;

  const BpeModel& model() const { return model_; }
  const CharSegments& char_segments() const { return segments_; }
  // The token id of the single byte `b`.
  TokenId ByteToken(uint8_t b) const { return byte_token_[b]; }

 private:
  Encoder(BpeModel model, EncoderOptions options, std::unique_ptr<PreTokenizer> pretokenizer,
          std::unique_ptr<SpecialTokenMatcher> specials);

  // EncodePiece with this thread's cache (nullptr: no cache).
  void EncodePieceCached(std::string_view piece, PieceCache* cache, IdWriter& out) const;
  // EncodePieceCached without the cache of short pieces' final ids.
  void EncodePieceFully(std::string_view piece, PieceCache* cache, IdWriter& out) const;
  // BPE of a piece or of a segment of one, through the cache (no whole-token shortcut).
  void EncodeByBpe(std::string_view piece, PieceCache* cache, IdWriter& out) const;
  PieceCache* LocalCache() const;

  // Calls on_segment(text, special_index) for the ordinary stretches (-1) and allowed
  // specials; fails on a disallowed one.
  template <typename OnSegment>
  absl::Status SplitSpecials(std::string_view text, SpecialPolicy policy,
                             OnSegment on_segment) const;

  BpeModel model_;
  EncoderOptions options_;
  std::unique_ptr<PreTokenizer> pretokenizer_;
  std::unique_ptr<SpecialTokenMatcher> specials_;  // null when the model has none
  std::vector<TokenId> special_ids_;               // parallel to specials_->tokens()
  TokenTable token_table_;
  PairTable pair_table_;
  TokenId byte_token_[256];
  PieceBpe bpe_;
  CharSegments segments_;
  mutable tbb::enumerable_thread_specific<PieceCache> caches_;
};

}  // namespace tokenmill
