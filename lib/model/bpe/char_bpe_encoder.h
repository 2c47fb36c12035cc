// CharBpeEncoder: the piece encoder of a BpeModel of character units (units.h): each character
// of a piece becomes its token; a character without one (never seen in training, left out by
// the coverage) and each byte that is not well-formed UTF-8 becomes the byte-fallback tokens of
// its bytes, or the unknown token (one per character, as Hugging Face's fuse_unk false does),
// or, with neither, is dropped (UnknownBytes::kDrop, Hugging Face's rule) or refused
// (kError, CheckEncodable). Then BPE (PieceBpe on ids: the scan for short pieces, the heap for
// long ones) applies the merges. Hugging Face's BPE with byte_fallback encodes the same way.
// With word-boundary markers a piece's characters are looked up as the trainer made them (a
// later one with the prefix, the last with the suffix); a character whose variant has no token
// falls back to the bytes of the whole symbol, markers included, as Hugging Face's does (so
// decoding shows the marker's text there). Thread-safe; each thread gets its own piece cache.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include <tbb/enumerable_thread_specific.h>

#include "absl/status/statusor.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/lookup_tables.h"
#include "model/bpe/piece_bpe.h"
#include "model/bpe/piece_cache.h"
#include "model/piece_encoder.h"

namespace tokenmill {

class CharBpeEncoder : public PieceEncoder {
 public:
  // `model` (character units) must outlive the encoder.
  static absl::StatusOr<std::unique_ptr<CharBpeEncoder>> Create(const BpeModel& model,
                                                                const EncoderOptions& options);

  void EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                  std::vector<TokenId>& out) const override;
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const override;
  void ExplainPiece(ExplainedPiece& out) const override;
  absl::Status CheckEncodable(std::string_view text, size_t offset) const override;
  bool may_refuse() const override {
    return !byte_fallback_ && unknown_ == kMissing && options_.unknown_bytes == UnknownBytes::kError;
  }

 private:
  CharBpeEncoder(const BpeModel& model, const EncoderOptions& options);
  // EncodePiece with this thread's cache (nullptr: no cache).
  void EncodePieceCached(std::string_view piece, PieceCache* cache, std::vector<TokenId>& out) const;
  PieceCache* LocalCache() const;
  // The piece's initial symbols, appended to `ids`.
  void InitialIds(std::string_view piece, std::vector<TokenId>& ids) const;
  // The token of character `cp` as a symbol of kind `variant` (units.h: CharVariant).
  TokenId CharId(int32_t cp, uint8_t variant = kPlainChar) const {
    const std::vector<TokenId>& table = char_id_[variant];
    return cp >= 0 && static_cast<size_t>(cp) < table.size() ? table[cp] : kMissing;
  }

  static constexpr TokenId kMissing = UINT32_MAX;
  const BpeModel& model_;
  EncoderOptions options_;
  std::vector<TokenId> char_id_[4];  // by CharVariant, then code point
  bool prefix_ = false, suffix_ = false;  // the model has word-boundary markers
  TokenId byte_id_[256];          // byte-fallback tokens, or kMissing
  bool byte_fallback_ = false;
  TokenId unknown_ = kMissing;
  TokenTable token_table_;  // whole tokens, for ignore_merges
  PairTable pair_table_;
  PieceBpe bpe_;
  mutable tbb::enumerable_thread_specific<PieceCache> caches_;
};

}  // namespace tokenmill
