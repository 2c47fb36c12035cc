#include "model/encoder.h"

#include <algorithm>
#include <cstdint>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/huge_pages.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/byte_hash.h"

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

Encoder::Encoder(BpeModel model, EncoderOptions options,
                 std::unique_ptr<PreTokenizer> pretokenizer,
                 std::unique_ptr<SpecialTokenMatcher> specials)
    : model_(std::move(model)),
      options_(options),
      pretokenizer_(std::move(pretokenizer)),
      specials_(std::move(specials)),
      bpe_(&pair_table_, byte_token_, options.long_piece),
      caches_([capacity = options.cache_entries] { return PieceCache(capacity); }) {
  std::vector<bool> is_special(model_.tokens.size(), false);
  for (const SpecialToken& s : model_.specials) {
    special_ids_.push_back(s.id);
    is_special[s.id] = true;
  }
  token_table_.Build(model_.tokens, is_special);
  std::vector<std::pair<uint64_t, PairMerge>> pairs;
  pairs.reserve(model_.merges.size());
  for (uint32_t rank = 0; rank < model_.merges.size(); ++rank) {
    const Merge& m = model_.merges[rank];
    uint32_t priority = model_.priority == MergePriority::kTokenRank ? m.result : rank;
    pairs.push_back({PairTable::Key(m.left, m.right), PairMerge{priority, m.result}});
  }
  pair_table_.Build(pairs);  // the first merge of a pair wins
  for (int b = 0; b < 256; ++b) {
    byte_token_[b] = token_table_.Find(std::string_view(reinterpret_cast<const char*>(&b), 1));
  }
  if (options_.split_pieces) segments_.Build(model_.tokens, bpe_);
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Create(BpeModel model, EncoderOptions options) {
  TM_RETURN_IF_ERROR(model.Validate());
  if (model.priority == MergePriority::kTokenRank) {
    for (const Merge& m : model.merges) {
      if (m.result == PairTable::kNone) {
        return absl::InvalidArgumentError("token id too large for a tiktoken rank");
      }
    }
  }
  TM_ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> pretokenizer,
                      PreTokenizer::Create(model.pretokenizer));
  std::unique_ptr<SpecialTokenMatcher> specials;
  if (!model.specials.empty()) {
    std::vector<std::string> contents;
    for (const SpecialToken& s : model.specials) contents.push_back(s.content);
    TM_ASSIGN_OR_RETURN(specials, SpecialTokenMatcher::Create(std::move(contents)));
  }
  std::vector<bool> has_byte(256, false);
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    if (model.tokens[id].size() == 1) has_byte[static_cast<unsigned char>(model.tokens[id][0])] = true;
  }
  for (const SpecialToken& s : model.specials) {
    if (s.content.size() == 1) has_byte[static_cast<unsigned char>(s.content[0])] = false;
  }
  for (int b = 0; b < 256; ++b) {
    if (!has_byte[b]) {
      return absl::InvalidArgumentError(StrCat(
          "the vocabulary has no token for byte ", b, ", so not every text can be encoded"));
    }
  }
  return std::unique_ptr<Encoder>(
      new Encoder(std::move(model), options, std::move(pretokenizer), std::move(specials)));
}

PieceCache* Encoder::LocalCache() const {
  return options_.cache_entries == 0 ? nullptr : &caches_.local();
}

void Encoder::EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
  IdWriter writer(out, piece.size());
  EncodePieceCached(piece, LocalCache(), writer);
}

void Encoder::EncodePieceCached(std::string_view piece, PieceCache* cache, IdWriter& out) const {
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

void Encoder::EncodePieceFully(std::string_view piece, PieceCache* cache, IdWriter& out) const {
  // A single 3-byte character: its own BPE is in a table (unless it is a whole token).
  const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  if (options_.split_pieces && piece.size() == 3 && segments_.built() &&
      CharSegments::IsThreeByte(bytes, bytes + 3)) {
    TokenId id = model_.ignore_merges ? token_table_.Find(piece) : TokenTable::kMissing;
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
  if (model_.ignore_merges) {
    TokenId id = token_table_.Find(piece);
    if (id != TokenTable::kMissing) {
      out.Push(id);
      return;
    }
  }
  EncodeByBpe(piece, cache, out);
}

void Encoder::EncodeByBpe(std::string_view piece, PieceCache* cache, IdWriter& out) const {
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

void Encoder::EncodeOrdinary(std::string_view text, std::vector<TokenId>& out) const {
  PieceCache* cache = LocalCache();
  IdWriter writer(out, text.size());  // a token covers at least one byte
  pretokenizer_->Split(text, [&](std::string_view piece) { EncodePieceCached(piece, cache, writer); });
}

template <typename OnSegment>
absl::Status Encoder::SplitSpecials(std::string_view text, SpecialPolicy policy,
                                    OnSegment on_segment) const {
  if (specials_ == nullptr || policy == SpecialPolicy::kAsText) {
    if (!text.empty()) on_segment(text, -1);
    return absl::OkStatus();
  }
  absl::Status status;
  size_t offset = 0;
  specials_->Split(text, [&](std::string_view segment, int special_index) {
    if (!status.ok()) return;
    if (special_index >= 0 && policy == SpecialPolicy::kDisallow) {
      status = absl::InvalidArgumentError(StrCat(
          "the text contains the special token '", segment, "' at byte ", offset,
          "; allow special tokens or encode them as text"));
      return;
    }
    on_segment(segment, special_index);
    offset += segment.size();
  });
  return status;
}

absl::Status Encoder::EncodeTo(std::string_view text, SpecialPolicy policy,
                               std::vector<TokenId>& out) const {
  return SplitSpecials(text, policy, [&](std::string_view segment, int special_index) {
    if (special_index < 0) {
      EncodeOrdinary(segment, out);
    } else {
      out.push_back(special_ids_[special_index]);
    }
  });
}

absl::StatusOr<std::vector<TokenId>> Encoder::Encode(std::string_view text,
                                                     SpecialPolicy policy) const {
  std::vector<TokenId> ids;
  // Chinese text takes a token per 1.85 bytes (poetry, cl100k_base), English about 4: room for
  // a token per 1.5 bytes avoids a reallocation; pages never written cost nothing.
  ids.reserve(text.size() / 3 * 2 + 16);
  // A whole file's ids take hundreds of MB (poetry: 192 MB): with 4 KB pages, faulting them
  // in took about a fifth of poetry's encode (perf).
  AdviseHugePages(ids.data(), ids.capacity() * sizeof(TokenId));
  TM_RETURN_IF_ERROR(EncodeTo(text, policy, ids));
  return ids;
}

absl::StatusOr<EncodedBatch> Encoder::EncodeBatch(absl::Span<const std::string_view> texts,
                                                   SpecialPolicy policy) const {
  // Texts are encoded in fixed chunks, each into one buffer of its own, then the buffers are
  // copied into place in parallel: one allocation per chunk, not per text, and nothing serial
  // but a prefix sum over the chunks.
  constexpr size_t kChunkTexts = 256;
  const size_t n = texts.size();
  const size_t chunks = (n + kChunkTexts - 1) / kChunkTexts;
  struct Chunk {
    std::vector<TokenId> ids;
    std::vector<size_t> ends;  // each text's end in ids
    absl::Status error;
    size_t failed = 0;  // the failing text, when !error.ok()
  };
  std::vector<Chunk> parts(chunks);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    Chunk& part = parts[c];
    const size_t begin = c * kChunkTexts, end = std::min(n, begin + kChunkTexts);
    size_t bytes = 0;
    for (size_t i = begin; i < end; ++i) bytes += texts[i].size();
    part.ids.reserve(bytes / 3 + 16);
    part.ends.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      if (absl::Status s = EncodeTo(texts[i], policy, part.ids); !s.ok()) {
        part.error = std::move(s);
        part.failed = i;
        return;
      }
      part.ends.push_back(part.ids.size());
    }
  });
  std::vector<size_t> start(chunks + 1, 0);
  for (size_t c = 0; c < chunks; ++c) {
    const Chunk& part = parts[c];
    if (!part.error.ok()) {
      return absl::Status(part.error.code(),
                          StrCat("text ", part.failed, ": ", part.error.message()));
    }
    start[c + 1] = start[c] + part.ids.size();
  }
  EncodedBatch batch;
  batch.ids.resize(start[chunks]);
  batch.offsets.resize(n + 1);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    Chunk& part = parts[c];
    std::copy(part.ids.begin(), part.ids.end(), batch.ids.begin() + start[c]);
    for (size_t k = 0; k < part.ends.size(); ++k) {
      batch.offsets[c * kChunkTexts + k + 1] = start[c] + part.ends[k];
    }
    std::vector<TokenId>().swap(part.ids);
  });
  return batch;
}

absl::StatusOr<std::vector<ExplainedPiece>> Encoder::Explain(std::string_view text,
                                                             SpecialPolicy policy) const {
  std::vector<ExplainedPiece> pieces;
  TM_RETURN_IF_ERROR(SplitSpecials(text, policy, [&](std::string_view segment, int special_index) {
    if (special_index >= 0) {
      ExplainedPiece& p = pieces.emplace_back();
      p.text = segment;
      p.special_index = special_index;
      p.ids.push_back(special_ids_[special_index]);
      return;
    }
    pretokenizer_->Split(segment, [&](std::string_view piece) {
      ExplainedPiece& p = pieces.emplace_back();
      p.text = piece;
      if (model_.ignore_merges && piece.size() > 1) {
        TokenId id = token_table_.Find(piece);
        if (id != TokenTable::kMissing) {
          p.whole_token = true;
          p.ids.push_back(id);
          return;
        }
      }
      p.merges = bpe_.Trace(piece, p.ids);
    });
  }));
  return pieces;
}

absl::Status Encoder::DecodeTo(absl::Span<const TokenId> ids, std::string& out) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenId id = ids[i];
    if (id >= model_.tokens.size() || model_.tokens[id].empty()) {
      return absl::InvalidArgumentError(
          StrCat("id ", id, " (position ", i, ") is not in the vocabulary"));
    }
    out += model_.tokens[id];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Encoder::Decode(absl::Span<const TokenId> ids) const {
  std::string text;
  TM_RETURN_IF_ERROR(DecodeTo(ids, text));
  return text;
}

}  // namespace tokenmill
