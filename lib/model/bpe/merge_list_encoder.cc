#include "model/bpe/merge_list_encoder.h"

#include <algorithm>

namespace tokenmill {
namespace {

// Could occur inside a word of 3-byte characters (only their bytes), joins two of them (a lead
// byte after a continuation byte), and is not whole characters.
bool IsPartial(std::string_view token) {
  const auto* t = reinterpret_cast<const unsigned char*>(token.data());
  const size_t n = token.size();
  bool joins = false;
  for (size_t k = 0; k < n; ++k) {
    const bool lead = (t[k] & 0xF0) == 0xE0, continuation = (t[k] & 0xC0) == 0x80;
    if (!lead && !continuation) return false;
    joins |= lead && k > 0 && (t[k - 1] & 0xC0) == 0x80;
  }
  if (!joins) return false;
  if (n % 3 != 0) return true;
  for (size_t k = 0; k < n; k += 3) {
    if (!CharSegments::IsThreeByte(t + k, t + k + 3)) return true;
  }
  return false;
}

}  // namespace

MergeListEncoder::MergeListEncoder(std::span<const Merge> merges,
                                   const std::vector<std::string>& tokens,
                                   const TokenId (&byte_token)[256])
    : bpe_(&pairs_, byte_token_, PieceBpe::kDefaultLongPiece) {
  std::copy(std::begin(byte_token), std::end(byte_token), std::begin(byte_token_));
  const std::vector<std::pair<uint64_t, PairMerge>> entries =
      MergeEntries(merges, MergePriority::kMergeIndex);
  pairs_.Build(entries);
  byte_pairs_ = BytePairMerges(entries, byte_token_);
  bpe_ = PieceBpe(&pairs_, byte_token_, PieceBpe::kDefaultLongPiece, byte_pairs_.data());
  if (tokens.size() >= (size_t{1} << 20)) return;  // CharSegments packs ids in 20 bits
  std::vector<std::string> partial;
  size_t characters = 0;
  for (const std::string& token : tokens) {
    if (IsPartial(token)) partial.push_back(token);
    const auto* t = reinterpret_cast<const unsigned char*>(token.data());
    characters += token.size() == 3 && CharSegments::IsThreeByte(t, t + 3);
  }
  if (characters < kMinCharacterTokens) return;
  characters_.Build(partial, bpe_);
}

bool MergeListEncoder::EncodeByCharacters(std::string_view word, std::vector<TokenId>& out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(word.data());
  const size_t chars = word.size() / 3;
  if (!characters_.built() || word.size() % 3 != 0 || chars < 2 || chars > kMaxCharacters) {
    return false;
  }
  for (size_t k = 0; k < chars; ++k) {
    if (!CharSegments::IsThreeByte(p + 3 * k, p + 3 * k + 3)) return false;
    if (k > 0 && !characters_.SafeBoundary(p + 3 * k)) return false;
  }
  TokenId parts[3 * kMaxCharacters];
  size_t n = 0;
  for (size_t k = 0; k < chars; ++k) n += characters_.WriteChar(p + 3 * k, parts + n);
  n = bpe_.MergeParts(parts, n);
  out.insert(out.end(), parts, parts + n);
  return true;
}

}  // namespace tokenmill
