// WordStore: the training words in one flat array, and the per-word merge.
//
// Contract:
//  - A word is named by a WordRef (its offset in the array). Its record is
//    [length][count low 32 bits][count high 32 bits][symbol 0]...[symbol length-1], so one
//    visit touches one contiguous run of memory. A merge rewrites the word in place (it only
//    ever shrinks), so words never allocate. Words of one symbol hold no pair and are not
//    stored. A word has at most one symbol per byte (the units' splitter, model/units.h).
//  - MergeWord replaces every (a, b) in the word left to right, without overlap, by t, and
//    reports the change in the count of every neighbouring pair to `sink` as
//    sink(left, right, delta): the pairs it destroys get -count and the pairs it creates get
//    +count. The merged pair (a, b) itself is never reported (its count drops to zero
//    everywhere; the caller zeroes it). This is Hugging Face's Word::merge; the reported deltas
//    sum exactly to "pairs after" minus "pairs before" for every other pair.
//  - Different words may be merged concurrently; one word must not be.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/bpe/bpe_model.h"
#include "model/units.h"
#include "common/huge_array.h"

namespace tokenmill {

using WordRef = uint32_t;

class WordStore {
 public:
  // Words from (bytes, count) entries, each split into its initial symbols by `splitter`. Words
  // of fewer than two symbols are skipped. Fails if the words do not fit 2^32 array entries.
  static absl::StatusOr<WordStore> Build(
      std::span<const std::pair<std::string_view, uint64_t>> words, const SymbolSplitter& splitter);

  // An empty store with room for `words` (the words of two bytes or more, a symbol per byte),
  // so that any encoding of them fits; they are placed by PutRecords. Only the entries written
  // take memory. Fails as Build does.
  static absl::StatusOr<WordStore> Allocate(
      std::span<const std::pair<std::string_view, uint64_t>> words);
  // Copies `records`, laid out as in the store (see the contract), to array offset `at`, as
  // the words numbered from `first_word` on. The caller keeps the ranges of different calls
  // apart; such calls may run concurrently.
  void PutRecords(size_t first_word, uint32_t at, std::span<const uint32_t> records) {
    std::copy(records.begin(), records.end(), &data_[at]);
    for (size_t r = 0; r < records.size(); r += kHeader + records[r]) {
      refs_[first_word++] = at + static_cast<uint32_t>(r);
    }
  }

  // Every word, in the order given to Build (or numbered by PutRecords).
  std::span<const WordRef> refs() const { return refs_; }
  uint64_t count(WordRef w) const {
    return data_[w + 1] | (static_cast<uint64_t>(data_[w + 2]) << 32);
  }
  std::span<const TokenId> symbols(WordRef w) const { return {&data_[w + kHeader], data_[w]}; }
  // For replaying merges on resume: the word's symbols, to rewrite in place, and its new
  // (never larger) length. Different words may be rewritten concurrently.
  TokenId* mutable_symbols(WordRef w) { return &data_[w + kHeader]; }
  void set_length(WordRef w, uint32_t length) { data_[w] = length; }
  // Hints the CPU to load word w soon.
  void Prefetch(WordRef w) const { __builtin_prefetch(&data_[w]); }

  // See the contract above. Returns how many times the pair was replaced.
  template <typename Sink>
  uint32_t MergeWord(WordRef w, TokenId a, TokenId b, TokenId t, Sink&& sink) {
    TokenId* s = &data_[w + kHeader];
    const uint32_t n = data_[w];
    const int64_t c = static_cast<int64_t>(count(w));
    auto report = [&](TokenId left, TokenId right, int64_t delta) {
      if (left != a || right != b) sink(left, right, delta);
    };
    uint32_t out = 0, i = 0, merged = 0;
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
    data_[w] = out;
    return merged;
  }

 private:
  static constexpr uint32_t kHeader = 3;
  HugeArray<uint32_t> data_;
  std::vector<WordRef> refs_;
};

}  // namespace tokenmill
