// WordStore: the training words as symbol runs in one flat array, and the per-word merge.
//
// Contract:
//  - Word w is the run symbols()[begin(w), begin(w) + length(w)) with multiplicity count(w).
//    A merge rewrites a word in place (it only ever shrinks), so words never allocate. Words
//    of one byte hold no pair and are not stored.
//  - MergeWord replaces every (a, b) in word w left to right, without overlap, by t, and
//    reports the change in the count of every neighbouring pair to `sink` as
//    sink(left, right, delta): the pairs it destroys get -count(w) and the pairs it creates
//    get +count(w). The merged pair (a, b) itself is never reported (its count drops to zero
//    everywhere, the caller zeroes it). This is Hugging Face's Word::merge, and the reported
//    deltas sum exactly to "pairs after" minus "pairs before" for every other pair.
//  - Different words may be merged concurrently; one word must not be.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "model/bpe_model.h"

namespace tokenmill {

class WordStore {
 public:
  // Words from (bytes, count) entries, each byte b mapped to symbol byte_id[b]. Words shorter
  // than two bytes are skipped.
  static WordStore Build(std::span<const std::pair<std::string_view, uint64_t>> words,
                         const TokenId (&byte_id)[256]);

  uint32_t size() const { return static_cast<uint32_t>(count_.size()); }
  uint64_t count(uint32_t w) const { return count_[w]; }
  std::span<const TokenId> symbols(uint32_t w) const {
    return {symbols_.data() + begin_[w], length_[w]};
  }
  size_t total_symbols() const { return symbols_.size(); }

  // See the contract above. Returns how many times the pair was replaced.
  template <typename Sink>
  uint32_t MergeWord(uint32_t w, TokenId a, TokenId b, TokenId t, Sink&& sink) {
    TokenId* s = symbols_.data() + begin_[w];
    const uint32_t n = length_[w];
    const int64_t c = static_cast<int64_t>(count_[w]);
    uint32_t out = 0, i = 0, merged = 0;
    auto report = [&](TokenId left, TokenId right, int64_t delta) {
      if (left != a || right != b) sink(left, right, delta);
    };
    while (i < n) {
      if (s[i] == a && i + 1 < n && s[i + 1] == b) {
        if (out > 0) {
          report(s[out - 1], a, -c);
          report(s[out - 1], t, c);
        }
        if (i + 2 < n) {
          report(b, s[i + 2], -c);
          report(t, s[i + 2], c);
        }
        s[out++] = t;
        i += 2;
        ++merged;
      } else {
        s[out++] = s[i++];
      }
    }
    length_[w] = out;
    return merged;
  }

 private:
  std::vector<TokenId> symbols_;
  std::vector<uint64_t> begin_;
  std::vector<uint32_t> length_;
  std::vector<uint64_t> count_;
};

}  // namespace tokenmill
