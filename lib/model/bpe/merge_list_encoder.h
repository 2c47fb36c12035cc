// MergeListEncoder: BPE of words with a merge list as the priorities (merge i has priority i,
// the lowest merged first, leftmost first), from the words' bytes. This is what training does
// to a word when it applies those merges in order, which makes it the way a resumed training
// run restores its words (lib/train/bpe/replay.cc) without running the merge loop again.
//
// Words of 3-byte characters (Chinese...) start from each character's own BPE, not from their
// bytes, where that gives the same result: a third as many parts, and none of the merges that
// form the characters. Why it is exact, for the merge lists training makes (each merge's parts
// are tokens formed by earlier merges): call a token "partial" when it joins two characters but
// is not made of whole ones (say, one character and the first two bytes of the next). Where no
// partial token can match across any character boundary of the word (CharSegments' windows,
// built from the partial tokens only), every token BPE forms in the word lies within one
// character or is made of whole characters, and a merge across a boundary joins whole
// characters. A character's own merges then run as they do on the character alone, and a merge
// of two characters' tokens comes later in the list than the merges forming them, so it finds
// them formed: BPE from the characters' own encodings takes the same merges in the same order.
// Words that do not qualify (other bytes, an unsafe boundary, over 32 characters: longer words
// go through PieceBpe's heap, which keeps long pieces from costing n^2) are encoded from their
// bytes.
//
// Thread-safe once built; reads `tokens`, which must outlive it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/bpe/bpe_model.h"
#include "model/bpe/char_segments.h"
#include "model/bpe/lookup_tables.h"
#include "model/bpe/piece_bpe.h"

namespace tokenmill {

class MergeListEncoder {
 public:
  // `merges` (ids of `tokens`) in priority order; `byte_token[b]` is the id of byte b's token
  // (an id no merge names for a byte no word holds).
  MergeListEncoder(std::span<const Merge> merges, const std::vector<std::string>& tokens,
                   const TokenId (&byte_token)[256]);
  MergeListEncoder(const MergeListEncoder&) = delete;
  MergeListEncoder& operator=(const MergeListEncoder&) = delete;

  // Appends the ids of `word` (not empty).
  void Encode(std::string_view word, std::vector<TokenId>& out) const {
    if (!EncodeByCharacters(word, out)) bpe_.Encode(word, out);
  }

 private:
  static constexpr size_t kMaxCharacters = 32;
  // The table of every 3-byte sequence's BPE costs 65,536 small encodes (5-6 ms): not worth it
  // where such characters are too rare to have tokens (linux_c_100m: none; poetry: 6,521).
  static constexpr size_t kMinCharacterTokens = 8;

  // Appends the word's BPE from its characters' own and returns true, or returns false
  // (nothing written) when the word does not qualify.
  bool EncodeByCharacters(std::string_view word, std::vector<TokenId>& out) const;

  TokenId byte_token_[256];
  PairTable pairs_;
  std::vector<PairMerge> byte_pairs_;
  PieceBpe bpe_;
  CharSegments characters_;
};

}  // namespace tokenmill
