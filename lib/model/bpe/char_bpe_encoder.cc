#include "model/bpe/char_bpe_encoder.h"

#include "absl/strings/str_format.h"
#include "common/utf8.h"
#include "model/bpe/byte_hash.h"
#include "model/bpe/id_writer.h"

namespace tokenmill {

CharBpeEncoder::CharBpeEncoder(const BpeModel& model, const EncoderOptions& options)
    : model_(model),
      options_(options),
      bpe_(&pair_table_, byte_id_, options.long_piece),
      caches_([capacity = options.cache_entries] { return PieceCache(capacity); }) {
  std::vector<bool> skip(model.tokens.size(), false);
  for (const SpecialToken& s : model.specials) skip[s.id] = true;
  std::fill(std::begin(byte_id_), std::end(byte_id_), kMissing);
  if (model.byte_fallback.size() == 256) {
    byte_fallback_ = true;
    for (int b = 0; b < 256; ++b) {
      byte_id_[b] = model.byte_fallback[b];
      skip[model.byte_fallback[b]] = true;
    }
  }
  if (model.unknown) unknown_ = *model.unknown;
  // Each regular token that is one character, bare or with the model's markers.
  const std::string& prefix = model.subword_prefix;
  const std::string& suffix = model.word_suffix;
  prefix_ = !prefix.empty();
  suffix_ = !suffix.empty();
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    const std::string& t = model.tokens[id];
    if (skip[id] || t.empty()) continue;
    for (uint8_t variant = 0; variant < 4; ++variant) {
      std::string_view rest = t;
      if (variant & kPrefixedChar) {
        if (!prefix_ || !rest.starts_with(prefix)) continue;
        rest.remove_prefix(prefix.size());
      }
      if (variant & kSuffixedChar) {
        if (!suffix_ || !rest.ends_with(suffix)) continue;
        rest.remove_suffix(suffix.size());
      }
      if (rest.empty()) continue;
      const CodePoint c = DecodeCodePoint(reinterpret_cast<const unsigned char*>(rest.data()),
                                          rest.size(), 0);
      if (c.cp < 0 || c.len != rest.size()) continue;
      std::vector<TokenId>& table = char_id_[variant];
      if (table.size() <= static_cast<size_t>(c.cp)) table.resize(static_cast<size_t>(c.cp) + 1, kMissing);
      if (table[c.cp] == kMissing) table[c.cp] = id;
    }
  }
  token_table_.Build(model.tokens, skip);
  pair_table_.Build(model.merges, model.priority);
}

absl::StatusOr<std::unique_ptr<CharBpeEncoder>> CharBpeEncoder::Create(
    const BpeModel& model, const EncoderOptions& options) {
  if (model.unit_kind != UnitKind::kChar) {
    return absl::InvalidArgumentError("the character encoder needs a model of character units");
  }
  if (model.priority != MergePriority::kMergeIndex) {
    return absl::InvalidArgumentError("character units merge by merge index only");
  }
  return std::unique_ptr<CharBpeEncoder>(new CharBpeEncoder(model, options));
}

void CharBpeEncoder::InitialIds(std::string_view piece, std::vector<TokenId>& ids) const {
  const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  for (size_t i = 0; i < n;) {
    const CodePoint c = DecodeCodePoint(s, n, i);
    const uint8_t variant = CharVariantAt(i == 0, i + c.len >= n, prefix_, suffix_);
    const TokenId id = CharId(c.cp, variant);
    if (id != kMissing) {
      ids.push_back(id);
    } else if (byte_fallback_) {
      // The symbol's bytes, its markers' too, as Hugging Face's BPE falls back.
      if (variant & kPrefixedChar) {
        for (unsigned char b : model_.subword_prefix) ids.push_back(byte_id_[b]);
      }
      for (size_t k = 0; k < c.len; ++k) ids.push_back(byte_id_[s[i + k]]);
      if (variant & kSuffixedChar) {
        for (unsigned char b : model_.word_suffix) ids.push_back(byte_id_[b]);
      }
    } else if (unknown_ != kMissing) {
      ids.push_back(unknown_);
    }  // else dropped (CheckEncodable refuses such text under UnknownBytes::kError)
    i += c.len;
  }
}

absl::Status CharBpeEncoder::CheckEncodable(std::string_view text, size_t offset) const {
  if (byte_fallback_ || unknown_ != kMissing || options_.unknown_bytes == UnknownBytes::kDrop) {
    return absl::OkStatus();
  }
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const CodePoint c = DecodeCodePoint(s, text.size(), i);
    // (Checked bare: with word-boundary markers a character's variant depends on the piece.)
    if (CharId(c.cp) == kMissing) {
      return absl::InvalidArgumentError(
          c.cp < 0 ? absl::StrFormat("byte 0x%02X at byte %d is not UTF-8, and the vocabulary has "
                                     "no byte fallback or unknown token, so the text cannot be "
                                     "encoded; `unknown_bytes`=drop leaves it out",
                                     s[i], offset + i)
                   : absl::StrFormat("character U+%04X at byte %d is in no token of the "
                                     "vocabulary, which has no byte fallback or unknown token, "
                                     "so the text cannot be encoded; `unknown_bytes`=drop "
                                     "leaves such characters out, as Hugging Face does",
                                     c.cp, offset + i));
    }
    i += c.len;
  }
  return absl::OkStatus();
}

void CharBpeEncoder::EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                                std::vector<TokenId>& out) const {
  PieceCache* cache = LocalCache();  // once per text: a thread-local lookup
  pretokenizer.Split(text, [&](std::string_view piece) { EncodePieceCached(piece, cache, out); });
}

PieceCache* CharBpeEncoder::LocalCache() const {
  return options_.cache_entries == 0 ? nullptr : &caches_.local();
}

void CharBpeEncoder::EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
  EncodePieceCached(piece, LocalCache(), out);
}

void CharBpeEncoder::EncodePieceCached(std::string_view piece, PieceCache* cache,
                                       std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  if (model_.ignore_merges) {
    if (TokenId id = token_table_.Find(piece); id != TokenTable::kMissing) {
      out.push_back(id);
      return;
    }
  }
  const bool cached = cache != nullptr && piece.size() <= options_.max_cached_piece;
  IdWriter writer(out, piece.size() * (1 + model_.subword_prefix.size()) + model_.word_suffix.size());
  uint64_t hash = 0;
  if (cached) {
    hash = HashPiece(piece);
    if (cache->Lookup(piece, hash, writer)) return;
  }
  std::vector<TokenId>& ids = writer.scratch();
  InitialIds(piece, ids);
  ids.resize(bpe_.MergeIds(ids.data(), ids.size()));
  writer.Append(ids.data(), ids.size());
  if (cached) cache->Insert(piece, hash, ids.data(), ids.size());
}

void CharBpeEncoder::ExplainPiece(ExplainedPiece& p) const {
  InitialIds(p.text, p.initial);
  if (model_.ignore_merges) {
    if (TokenId id = token_table_.Find(p.text); id != TokenTable::kMissing) {
      p.whole_token = true;
      p.ids.push_back(id);
      return;
    }
  }
  p.merges = bpe_.TraceParts(p.initial, p.ids);
}

}  // namespace tokenmill
