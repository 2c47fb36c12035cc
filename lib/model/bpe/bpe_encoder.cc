#include "model/bpe/bpe_encoder.h"

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "model/bpe/byte_hash.h"

#include <tbb/parallel_invoke.h>

namespace tokenmill {
namespace {

// Whether p holds `chars` 3-byte sequences and nothing else.
bool AllThreeByte(const unsigned char* p, size_t chars) {
  for (size_t k = 0; k < chars; ++k, p += 3) {
    if (!CharSegments::IsThreeByte(p, p + 3)) return false;
  }
  return true;
}

}  // namespace

BpeEncoder::BpeEncoder(const BpeModel& model, const EncoderOptions& options,
                       const std::vector<bool>& is_special, Tables prebuilt)
    : model_(model),
      ignore_merges_(model.ignore_merges),
      options_(options),
      bpe_(&pair_table_, byte_token_, options.long_piece),
      caches_([capacity = options.cache_entries] { return PieceCache(capacity); }) {
  // Two independent tables, each megabytes of fresh memory (o200k_base: 6 and 16 MB); in the
  // pair table the first merge of a pair wins. Merges implied by the ranks need no pair table:
  // pairs are looked up by their bytes in the token table (handed over by a .tiktoken reader).
  // The characters' BPE needs the tables; the boundaries CharSegments may split at need only
  // the tokens, so they are found beside both (o200k_base handed its token table, 2 cores:
  // 2.8 ms for the boundaries, 2.2 ms for the characters, one after the other before).
  const bool have_tokens = prebuilt.tokens.has_value();
  if (have_tokens) token_table_ = *std::move(prebuilt.tokens);
  const bool have_segments = prebuilt.segments.has_value();
  if (have_segments) segments_ = *std::move(prebuilt.segments);
  auto tables_then_chars = [&] {
    tbb::parallel_invoke([&] {
                           if (!have_tokens) token_table_.Build(model_.tokens, is_special);
                         },
                         [&] {
                           if (model_.rank_merges_implied) {
                             rank_byte_pairs_ = prebuilt.rank_byte_pairs
                                                    ? *std::move(prebuilt.rank_byte_pairs)
                                                    : SharedArray<PairMerge>(
                                                          RankBytePairs(model_.tokens, is_special));
                           } else {
                             pair_table_.Build(model_.merges, model_.priority);
                           }
                         });
    if (model_.rank_merges_implied) {
      rank_pairs_ = RankPairs(&token_table_, &model_.tokens);
      bpe_ = PieceBpe(&rank_pairs_, byte_token_, options.long_piece, rank_byte_pairs_.data());
    }
    for (int b = 0; b < 256; ++b) {
      byte_token_[b] = token_table_.Find(std::string_view(reinterpret_cast<const char*>(&b), 1));
    }
    if (options_.split_pieces && !have_segments) segments_.EncodeChars(bpe_, model_.tokens.size());
  };
  tbb::parallel_invoke(tables_then_chars, [&] {
    if (options_.split_pieces && !have_segments) segments_.MarkBoundaries(model_.tokens);
  });
}

namespace {

absl::Status CheckRanks(const BpeModel& model) {
  if (model.priority == MergePriority::kTokenRank) {
    for (const Merge& m : model.merges) {
      if (m.result == PairTable::kNone) {
        return absl::InvalidArgumentError("token id too large for a tiktoken rank");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<BpeEncoder>> BpeEncoder::Create(const BpeModel& model,
                                                               const EncoderOptions& options) {
  TM_RETURN_IF_ERROR(CheckRanks(model));
  const std::vector<bool> is_special = SpecialIds(model);
  return std::unique_ptr<BpeEncoder>(new BpeEncoder(model, options, is_special, Tables{}));
}

absl::StatusOr<std::unique_ptr<BpeEncoder>> BpeEncoder::Create(const BpeModel& model,
                                                               const EncoderOptions& options,
                                                               TokenTable tokens) {
  Tables tables;
  tables.tokens = std::move(tokens);
  return Create(model, options, std::move(tables));
}

absl::StatusOr<std::unique_ptr<BpeEncoder>> BpeEncoder::Create(const BpeModel& model,
                                                               const EncoderOptions& options,
                                                               Tables tables) {
  TM_RETURN_IF_ERROR(CheckRanks(model));
  const std::vector<bool> is_special = SpecialIds(model);
  if (tables.tokens) {
    size_t regular = 0;
    for (size_t id = 0; id < model.tokens.size(); ++id) {
      regular += !is_special[id] && !model.tokens[id].empty();
    }
    if (tables.tokens->size() != regular) {
      return absl::InternalError(absl::StrFormat(
          "the token table handed to the encoder holds %d tokens, the model %d",
          tables.tokens->size(), regular));
    }
  }
  if ((tables.rank_byte_pairs && !model.rank_merges_implied) ||
      (tables.segments && !options.split_pieces)) {
    return absl::InternalError("a table handed to the encoder that this model does not use");
  }
  return std::unique_ptr<BpeEncoder>(
      new BpeEncoder(model, options, is_special, std::move(tables)));
}

absl::StatusOr<BpeEncoder::Tables> BpeEncoder::ReadTables(std::string_view bytes,
                                                          const std::shared_ptr<const void>& owner,
                                                          size_t id_bound, bool rank_merges_implied,
                                                          const EncoderOptions& options) {
  auto refused = [] { return absl::InvalidArgumentError("not this model's encoder tables"); };
  BinaryReader in(bytes);
  Tables tables;
  uint64_t has_byte_pairs, has_segments;
  if (!tables.tokens.emplace().ReadFrom(in, id_bound, owner) || !in.Varint(&has_byte_pairs) ||
      has_byte_pairs != (rank_merges_implied ? 1 : 0)) {
    return refused();
  }
  if (has_byte_pairs == 1) {
    SharedArray<PairMerge>& pairs = tables.rank_byte_pairs.emplace();
    if (!ReadAlignedArray(in, size_t{1} << 16, owner, &pairs)) return refused();
    for (const PairMerge& p : pairs.span()) {
      if (p.priority != PairTable::kNone && (p.priority >= id_bound || p.result != p.priority)) {
        return refused();
      }
    }
  }
  if (!in.Varint(&has_segments) || has_segments != (options.split_pieces ? 1 : 0) ||
      (has_segments == 1 && !tables.segments.emplace().ReadFrom(in, id_bound, owner)) ||
      !in.done()) {
    return refused();
  }
  return tables;
}

void BpeEncoder::AppendTables(BinaryWriter& out) const {
  token_table_.AppendTo(out);
  out.Varint(model_.rank_merges_implied);
  if (model_.rank_merges_implied) WriteAlignedArray(out, rank_byte_pairs_.span());
  out.Varint(options_.split_pieces);
  if (options_.split_pieces) segments_.AppendTo(out);
}

PieceCache* BpeEncoder::LocalCache() const {
  return options_.cache_entries == 0 ? nullptr : &caches_.local();
}

void BpeEncoder::EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
  IdWriter writer(out, piece.size());
  EncodePieceCached(piece, LocalCache(), writer);
}

void BpeEncoder::EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                            std::vector<TokenId>& out) const {
  PieceCache* cache = LocalCache();
  IdWriter writer(out, text.size());  // a token covers at least one byte
  pretokenizer.Split(text, [&](std::string_view piece) { EncodePieceCached(piece, cache, writer); });
}

void BpeEncoder::EncodeLines(std::string_view text, const PreTokenizer& pretokenizer,
                             std::vector<TokenId>& out, std::vector<size_t>& ends) const {
  PieceCache* cache = LocalCache();
  IdWriter writer(out, text.size());
  ForEachLineOf(text, [&](std::string_view line, bool ends_with_newline) {
    pretokenizer.Split(line, [&](std::string_view piece) { EncodePieceCached(piece, cache, writer); });
    if (ends_with_newline) ends.push_back(writer.size());
  });
}

void BpeEncoder::EncodePieceCached(std::string_view piece, PieceCache* cache, IdWriter& out) const {
  if (piece.size() <= 1) {
    if (piece.empty()) return;  // the PreTokenizer contract rules these out; be safe anyway
    out.Push(byte_token_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  if (cache != nullptr && piece.size() <= PieceCache::kMaxHotPiece) {
    uint64_t key = PackKey(piece.data(), piece.size()).w0;
    if (cache->LookupHot(key, piece.size(), out)) return;
    size_t start = out.size();
    EncodePieceFully(piece, cache, out);
    cache->InsertHot(key, piece.size(), out.data() + start, out.size() - start);
    return;
  }
  EncodePieceFully(piece, cache, out);
}

void BpeEncoder::EncodePieceFully(std::string_view piece, PieceCache* cache, IdWriter& out) const {
  // A single 3-byte character: its own BPE is in a table (unless it is a whole token).
  const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  if (options_.split_pieces && piece.size() == 3 && segments_.built() &&
      CharSegments::IsThreeByte(bytes, bytes + 3)) {
    TokenId id = ignore_merges_ ? token_table_.Find(piece) : TokenTable::kMissing;
    if (id != TokenTable::kMissing) {
      out.Push(id);
    } else {
      out.Advance(segments_.WriteChar(bytes, out.Room(3)));
    }
    return;
  }
  // A piece ending in a non-ASCII byte may hold 3-byte characters to split between; one that
  // splits is no whole token. Single characters' ids go straight to the output.
  if (options_.split_pieces && piece.size() >= 6 && bytes[piece.size() - 1] >= 0x80) {
    if (piece.size() % 3 == 0 && AllThreeByte(bytes, piece.size() / 3)) {
      const bool split = segments_.SplitChars(
          bytes, piece.size() / 3,
          [&](uint32_t index) { out.Advance(segments_.WriteCharAt(index, out.Room(3))); },
          [&](std::string_view segment) { EncodeByBpe(segment, cache, out); });
      if (split) return;
    } else {
      const bool split = segments_.Split(piece, [&](std::string_view segment) {
        if (segment.size() == 3) {
          out.Advance(segments_.WriteChar(reinterpret_cast<const unsigned char*>(segment.data()),
                                          out.Room(3)));
        } else {
          EncodeByBpe(segment, cache, out);
        }
      });
      if (split) return;
    }
  }
  if (ignore_merges_) {
    TokenId id = token_table_.Find(piece);
    if (id != TokenTable::kMissing) {
      out.Push(id);
      return;
    }
  }
  EncodeByBpe(piece, cache, out);
}

void BpeEncoder::EncodeByBpe(std::string_view piece, PieceCache* cache, IdWriter& out) const {
  uint64_t hash = 0;
  const bool cached = piece.size() <= options_.max_cached_piece && cache != nullptr;
  if (cached) {
    hash = HashPiece(piece);
    if (cache->Lookup(piece, hash, out)) return;
  }
  std::vector<TokenId>& ids = out.scratch();
  bpe_.Encode(piece, ids);
  out.Append(ids.data(), ids.size());
  if (cached) cache->Insert(piece, hash, ids.data(), ids.size());
}

void BpeEncoder::ExplainPiece(ExplainedPiece& p) const {
  for (unsigned char c : p.text) p.initial.push_back(byte_token_[c]);
  if (ignore_merges_ && p.text.size() > 1) {
    TokenId id = token_table_.Find(p.text);
    if (id != TokenTable::kMissing) {
      p.whole_token = true;
      p.ids.push_back(id);
      return;
    }
  }
  p.merges = bpe_.Trace(p.text, p.ids);
}

}  // namespace tokenmill
