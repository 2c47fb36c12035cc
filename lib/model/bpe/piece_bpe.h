// PieceBpe: byte-pair encoding of one pre-tokenized piece, exactly as tiktoken and Hugging Face
// do it: start from one token per byte, then repeatedly merge the adjacent pair of lowest
// priority (the leftmost among equals) until no adjacent pair has a merge.
//
// Two algorithms give the same result: a scan over a small array for short pieces (tiktoken's
// O(n*m), fastest when n is small) and a heap of candidate pairs over a linked list for long
// ones (O(n log n): a 1 MB piece with no spaces takes milliseconds, not hours). Trace() runs the
// scan and records every merge, for `tokenmill explain`.
//
// Two ways to find a pair's merge: by the two ids in a PairTable (a merge list), or by the
// two parts' bytes in a RankPairs (a tiktoken vocabulary whose merges are implied by its
// ranks: tiktoken's own rule, which needs no merge list).
//
// A PieceBpe only reads the tables it is given (which must outlive it); it is thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "model/bpe/bpe_model.h"
#include "model/bpe/lookup_tables.h"
#include "model/piece_encoder.h"

namespace tokenmill {

class PieceBpe {
 public:
  // Pieces up to this many bytes use the scan; longer ones the heap.
  static constexpr size_t kDefaultLongPiece = EncoderOptions{}.long_piece;

  // `byte_token[b]` is the id of the token for the single byte b. `byte_pairs`, if given (see
  // BytePairMerges), answers the first lookups of every piece scanned from its bytes without
  // hashing (replaying a linux_c_100m checkpoint: 6% less time encoding).
  PieceBpe(const PairTable* pairs, const TokenId* byte_token, size_t long_piece = kDefaultLongPiece,
           const PairMerge* byte_pairs = nullptr)
      : pairs_(pairs), byte_token_(byte_token), byte_pairs_(byte_pairs), long_piece_(long_piece) {}
  // Pairs found by their bytes (RankPairs): the same ids as a PairTable built from the
  // DeriveRankMerges() of the model `ranks` reads, with MergePriority::kTokenRank. `byte_pairs`,
  // if given (see RankBytePairs), answers the first lookups of a piece scanned from its bytes.
  PieceBpe(const RankPairs* ranks, const TokenId* byte_token, size_t long_piece = kDefaultLongPiece,
           const PairMerge* byte_pairs = nullptr)
      : ranks_(ranks), byte_token_(byte_token), byte_pairs_(byte_pairs), long_piece_(long_piece) {}

  // Appends the piece's token ids to `out`. `piece` must not be empty.
  void Encode(std::string_view piece, std::vector<TokenId>& out) const {
    if (piece.size() <= long_piece_) {
      EncodeByScan(piece, out);
    } else {
      EncodeByHeap(piece, out);
    }
  }
  void EncodeByScan(std::string_view piece, std::vector<TokenId>& out) const;
  void EncodeByHeap(std::string_view piece, std::vector<TokenId>& out) const;

  // BPE from the parts ids[0..n) instead of from single bytes (the scan): merges them in place
  // and returns how many parts are left. Used where the parts are known to be what BPE reaches
  // first (e.g. each character's own encoding, where no merge can straddle characters earlier).
  size_t MergeParts(TokenId* ids, size_t n) const;
  // BPE from the parts ids[0..n) (the scan for short ones, the heap for long ones), in place;
  // returns how many parts are left.
  size_t MergeIds(TokenId* ids, size_t n) const;
  // Like MergeIds by the scan, appending the result to `out` and returning each merge.
  std::vector<MergeStep> TraceParts(std::span<const TokenId> parts, std::vector<TokenId>& out) const;

  // Like EncodeByScan, also returning each merge in the order applied.
  std::vector<MergeStep> Trace(std::string_view piece, std::vector<TokenId>& out) const;

 private:
  const PairTable* pairs_ = nullptr;  // one of these two is set
  const RankPairs* ranks_ = nullptr;
  const TokenId* byte_token_;
  const PairMerge* byte_pairs_ = nullptr;
  size_t long_piece_;
};

// The merges of pairs of two byte tokens, as a PairTable built from `entries` would give them,
// at index (first byte << 8 | second byte): 65536 entries, {PairTable::kNone, 0} where none.
std::vector<PairMerge> BytePairMerges(const std::vector<std::pair<uint64_t, PairMerge>>& entries,
                                      const TokenId* byte_token);

// The same for pairs found by their bytes (RankPairs over the TokenTable built from `tokens`
// with `skip`): at (first byte << 8 | second byte), {id, id} of the regular two-byte token (the
// lowest id of equal ones), {PairTable::kNone, 0} where none. Reads only the tokens' sizes and
// the two-byte ones.
std::vector<PairMerge> RankBytePairs(const std::vector<std::string>& tokens,
                                     const std::vector<bool>& skip);

}  // namespace tokenmill
