// Replaying a resumed run's merges (TrainControl::resume) instead of searching for them again.
//
// Training applies merge i to every word that holds its pair at step i, so a word's state
// after the first k merges depends on that word alone: it is what applying, in order, those of
// the k merges whose pair the word holds at their step gives. Each word is therefore rewritten
// on its own (in parallel), which costs far less than the merge loop (no pair counts to
// maintain), and the pair counts are rebuilt once afterwards (pair_recount.h).
//
// By encoding (EncodeWords, the usual way): when the units are bytes, every resumed merge forms
// a new token and no pair is listed twice, the trainer's rewriting of a word is exactly BPE of
// its bytes with those merges as priorities (BPE applies the lowest merge first, leftmost
// first, and a merge can only create pairs of later merges, so it visits the merges in order
// and replaces each pair left to right): model/bpe/merge_list_encoder.h. Each merge's count is
// then derived from the encoded words (see the weights in replay.cc) instead of counted during
// the rewriting; the checkpoint's counts are checked against it, and supply the count of a
// token merged with itself, whose occurrences may overlap. Otherwise (RewriteWordByWord), word
// by word from the words' symbols:
//
// Per word: each adjacent pair carries the rank of the next merge it will undergo (the first
// occurrence in the merge list at or after the current step; normally a pair appears once in
// the list, and a pair formed after its own step never merges again, unless the list repeats
// it). The smallest rank among the word's pairs is the next merge that touches the word; its
// occurrences are replaced left to right, without overlap, as the trainer does, and only the
// pairs next to a new token get new ranks. The pair's count at its step (the merge count the
// trainer reports) is the sum of (word count x occurrences before the replacement).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "train/bpe/bpe_state.h"

namespace tokenmill {

class Replay {
 public:
  explicit Replay(BpeState& state) : state_(state), prior_(state.control.resume) {}

  // Records the resumed merges in the model with the ids the merge loop would give them (up
  // to TargetTokens()). Fails when a merge names a token these words do not form.
  absl::Status Resolve();
  // Builds state.words already rewritten by the resumed merges, by encoding each word, and
  // returns true; or returns false (nothing built) when encoding does not replay them exactly:
  // then build the words from their symbols and call RewriteWordByWord.
  absl::StatusOr<bool> EncodeWords(std::span<const WordSource::Entry> words);
  void RewriteWordByWord();
  // Checks each merge's count against the words (and the checkpoint's counts), records the
  // counts, and ends training at a merge below min_frequency.
  absl::Status Finish();
  // Training ended in the replay (a merge below min_frequency).
  bool stopped() const { return stopped_; }
  // Reports the replayed merges to after_step; false when it asked to stop.
  bool Report();

 private:
  std::span<const Merge> Merges() const {
    return {state_.model.merges.data() + first_, tokens_before_.size()};
  }
  // The checkpoint's count of resumed merge i (0: not known).
  uint64_t KnownCount(size_t i) const {
    return i < prior_.merge_counts.size() ? prior_.merge_counts[i] : 0;
  }
  absl::Status Mismatch(size_t i) const;
  // Encodes the words into state.words; returns each token's weight (the summed counts of the
  // words it ends up in).
  std::vector<uint64_t> EncodeIntoStore(std::span<const WordSource::Entry> words,
                                        const class MergeListEncoder& encoder);
  // Each merge's count from the tokens' weights.
  absl::Status CountsFromWeights(std::vector<uint64_t> weight);

  BpeState& state_;
  const PriorSteps& prior_;
  size_t first_ = 0;                   // where the resumed merges start in the model
  std::vector<size_t> tokens_before_;  // the vocabulary size before each
  std::vector<uint64_t> counts_;       // each one's pair count at its step
  size_t replayed_ = 0;
  bool stopped_ = false;
};

}  // namespace tokenmill
