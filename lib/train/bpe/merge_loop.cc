#include "train/bpe/merge_loop.h"

#include <algorithm>

#include "common/strings.h"
#include "oneapi/tbb/parallel_for.h"
#include "train/bpe/pair_recount.h"

namespace tokenmill {
namespace {

// Words per batch when a merge's word visits run in parallel, and the fewest words for which
// a merge goes parallel at all.
constexpr size_t kBatchWords = 2048;
constexpr size_t kParallelMinWords = 4 * kBatchWords;

}  // namespace

void MergeLoop::RunBatch(std::span<const WordRef> words, size_t batch) {
  constexpr size_t kPrefetchAhead = 16;
  WordStore& store = state_.words;
  MergeDeltas& deltas = thread_deltas_.local();
  deltas.Begin(slots_.num_slots(), merge_stamp_);
  std::vector<RisenWord>& risen = batch_risen_[batch];
  risen.clear();
  // Likelihood scoring needs the replacements (token counts); BPE does not count them.
  const bool scored = state_.scored != nullptr;
  uint64_t replaced = 0;
  const BpeState::MergeableCheck mergeable = state_.Mergeable();
  for (size_t i = 0; i < std::min(kPrefetchAhead, words.size()); ++i) store.Prefetch(words[i]);
  for (size_t i = 0; i < words.size(); ++i) {
    if (i + kPrefetchAhead < words.size()) store.Prefetch(words[i + kPrefetchAhead]);
    deltas.StartWord();
    uint32_t merged = store.MergeWord(
        words[i], merge_a_, merge_b_, merge_t_, [&](TokenId left, TokenId right, int64_t delta) {
          if (mergeable(left, right)) deltas.Report(left, right, delta);
        });
    if (merged > 0) {
      deltas.FinishWord(slots_, words[i], risen);
      if (scored) replaced += merged * store.count(words[i]);
    }
  }
  batch_replaced_[batch] = replaced;
}

void MergeLoop::ReduceMerge(size_t batches) {
  // Sum the threads' changes per slot; visit the slots in a fixed (sorted) order.
  touched_.clear();
  for (MergeDeltas& deltas : thread_deltas_) {
    for (uint32_t slot : deltas.touched()) {
      if (slot_[slot].seen != merge_stamp_) {
        slot_[slot] = {.sum = 0, .seen = merge_stamp_, .words = 0};
        touched_.push_back(slot);
      }
      slot_[slot].sum += deltas.sum(slot);
    }
    deltas.End();
  }
  std::sort(touched_.begin(), touched_.end());
  for (uint32_t slot : touched_) {
    const int64_t sum = slot_[slot].sum;
    const uint64_t count = state_.pairs.AddCount(slots_.KeyOf(slot), sum);
    if (sum <= 0) continue;
    if (state_.scored) {
      state_.scored->Push(slots_.KeyOf(slot), count, count == static_cast<uint64_t>(sum));
    } else {
      state_.queue.Push(count, slots_.KeyOf(slot));
    }
  }
  // The new pairs' word lists, one block, each list in batch order.
  uint64_t total = 0;
  for (size_t b = 0; b < batches; ++b) {
    for (const RisenWord& r : batch_risen_[b]) ++slot_[r.slot].words;
    total += batch_risen_[b].size();
  }
  std::vector<PairKey> keys;
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  for (uint32_t slot : touched_) {
    if (slot_[slot].words == 0) continue;
    keys.push_back(slots_.KeyOf(slot));
    offsets.push_back(at);
    const uint32_t n = slot_[slot].words;
    slot_[slot].words = static_cast<uint32_t>(at);  // now: where the slot's next word goes
    at += n;
  }
  offsets.push_back(at);
  HugeArray<WordRef> block(total);
  for (size_t b = 0; b < batches; ++b) {
    for (const RisenWord& r : batch_risen_[b]) block[slot_[r.slot].words++] = r.word;
  }
  state_.pairs.AddWordBlock(std::move(block), keys, offsets);
}

void MergeLoop::ApplyMerge(PairKey p, TokenId a, TokenId b, TokenId t) {
  ++merge_stamp_;
  merge_a_ = a, merge_b_ = b, merge_t_ = t;
  slots_.Begin(a, b, t, static_cast<uint32_t>(state_.model.tokens.size()));
  if (slot_.size() < slots_.num_slots()) {
    // Grow by an eighth (the vocabulary grows by one id per merge), not by doubling.
    slot_.reserve(slots_.num_slots() + slots_.num_slots() / 8 + 1024);
    slot_.resize(slot_.capacity());
  }
  std::span<const WordRef> words = state_.pairs.TakeWords(p);
  state_.last_merge_words = words.size();
  const size_t batches =
      words.size() < kParallelMinWords ? 1 : (words.size() + kBatchWords - 1) / kBatchWords;
  if (batch_risen_.size() < batches) {
    batch_risen_.resize(batches);
    batch_replaced_.resize(batches);
  }
  if (batches == 1) {
    RunBatch(words, 0);
  } else {
    state_.arena.execute([&] {
      tbb::parallel_for(size_t{0}, batches, [&](size_t i) {
        size_t begin = i * kBatchWords, end = std::min(words.size(), begin + kBatchWords);
        RunBatch(words.subspan(begin, end - begin), i);
      });
    });
  }
  if (state_.scored) {
    uint64_t replaced = 0;
    for (size_t i = 0; i < batches; ++i) replaced += batch_replaced_[i];
    state_.scored->CountMerge(a, b, t, replaced);
  }
  ReduceMerge(batches);
  if (state_.scored) state_.scored->RescoreMerged(state_.pairs);
}

void MergeLoop::TrackAllPairs() {
  state_.pairs = PairIndex();
  CountPairsOfWords(state_, /*track_all=*/true);
}

absl::Status MergeLoop::Run() {
  BpeModel& model = state_.model;
  while (model.tokens.size() < state_.TargetTokens()) {
    PairKey p;
    const bool popped = state_.scored ? state_.scored->PopBest(state_.pairs, &p)
                                      : state_.queue.PopBest(state_.pairs, &p);
    const uint64_t count = popped ? state_.pairs.count(p) : 0;
    if (state_.untracked_below > 1 && count < state_.untracked_below) {
      // A pair left out might now be the best: count them all (see pair_recount.cc).
      TrackAllPairs();
      continue;
    }
    if (!popped) {
      if (model.merges.empty()) {
        return NothingToLearnError(
            "the corpus yields no pair to merge (every word is a single byte), so no merge "
            "can be learned");
      }
      state_.stop_reason =
          state_.scored && state_.options.min_frequency > 1
              ? StrCat("no pair occurring at least `min_frequency` ", state_.options.min_frequency,
                       " times is left; ", state_.VocabShortfall())
              : StrCat("no pair is left to merge; ", state_.VocabShortfall());
      break;
    }
    if (count < state_.options.min_frequency) {
      state_.stop_reason =
          StrCat("the best pair occurs ", count, " times, below `min_frequency` ",
                 state_.options.min_frequency, "; ", state_.VocabShortfall());
      break;
    }
    const TokenId a = PairLeft(p), b = PairRight(p);
    const size_t tokens_before = model.tokens.size();
    const TokenId t = state_.TokenFor(a, b);
    if (state_.untracked_below > 1 && t < tokens_before) {
      // An existing token again: the pairs it is in may rise, and some may be left out.
      TrackAllPairs();
    }
    model.merges.push_back({a, b, t});
    state_.merge_counts.push_back(count);
    ApplyMerge(p, a, b, t);
    if (!state_.ReportMerge(model.merges.size() - 1, /*replayed=*/false)) break;
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
