// WordSource: the words a trainer learns from (distinct pre-tokenized words with their counts),
// whoever holds them: the one input type of every trainer.
//
// Borrowed words are only read. Words taken over are the trainer's: it frees them (a taken-over
// WordCounts is emptied in place, so that anyone holding a pointer to it sees an empty table)
// as soon as it holds its own copy, which lowers peak memory; a hook runs just before, for a
// caller still reading them on another thread (a checkpointer serializing the table).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "count/word_counts.h"

namespace tokenmill {

class WordSource {
 public:
  using Entry = std::pair<std::string_view, uint64_t>;

  static WordSource Borrow(const WordCounts& counts);
  // `counts` must stay alive until Release() (it is emptied there).
  static WordSource TakeOver(WordCounts& counts);
  static WordSource TakeOver(WordList list);

  // Runs `hook` just before taken-over words are freed (not for borrowed words).
  WordSource& BeforeRelease(std::function<void()> hook);

  // Every word with its count, in the table's own order (no sort: nothing in training depends
  // on word order); valid until Release().
  std::span<const Entry> Entries();
  // Frees taken-over words (after the hook) and the entries; borrowed words stay as they are.
  void Release();

 private:
  const WordCounts* counts_ = nullptr;
  WordCounts* owned_counts_ = nullptr;
  WordList list_;
  bool has_list_ = false;
  std::vector<Entry> from_counts_;
  std::function<void()> before_release_;
};

}  // namespace tokenmill
