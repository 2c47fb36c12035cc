#include "train/bpe/replay.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/bpe/merge_list_encoder.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_invoke.h"
#include "oneapi/tbb/parallel_pipeline.h"
#include "train/parallel_chunks.h"

namespace tokenmill {

absl::Status Replay::Mismatch(size_t i) const {
  const auto& [left, right] = prior_.merges[i];
  return absl::FailedPreconditionError(StrCat(
      "cannot resume: merge ", i + 1, " of the checkpoint ('", state_.units.TokenToText(left),
      "' + '", state_.units.TokenToText(right),
      "') does not occur in these word counts; the checkpoint belongs to another corpus or "
      "other options"));
}

absl::Status Replay::Resolve() {
  BpeModel& model = state_.model;
  first_ = model.merges.size();
  const size_t most = prior_.merges.size();
  model.tokens.reserve(model.tokens.size() + most);
  model.merges.reserve(model.merges.size() + most);
  state_.token_length.reserve(model.tokens.size() + most);
  state_.token_index.Reserve(model.tokens.size() + most);
  tokens_before_.reserve(most);
  // Ids for the checkpoint's merges, in order, as the merge loop would assign them.
  for (size_t i = 0; i < most && model.tokens.size() < state_.TargetTokens(); ++i) {
    const auto& [left, right] = prior_.merges[i];
    std::optional<TokenId> l = state_.token_index.Find(left), r = state_.token_index.Find(right);
    if (!l.has_value() || !r.has_value()) return Mismatch(i);
    if (!state_.Mergeable(*l, *r)) {
      return MentioningOptions(
          absl::FailedPreconditionError(StrCat(
              "cannot resume: merge ", i + 1, " of the checkpoint forms a token longer than "
              "`max_token_length` ", state_.options.max_token_length)),
          {"max_token_length"});
    }
    tokens_before_.push_back(model.tokens.size());
    model.merges.push_back({*l, *r, state_.TokenFor(*l, *r)});
  }
  return absl::OkStatus();
}

// ---- By encoding ---------------------------------------------------------------------------

namespace {

// The most chunks of words.
constexpr size_t kChunkWords = 4096;
constexpr size_t kMaxChunks = 1024;

// Chunks of words are encoded in parallel into scratch records ([length][count low][count
// high][symbols], as in the store), which are then copied to the store in word order. The
// scratch buffers are recycled, so only the store's own memory is new; its size is only known
// at the end, so it reserves room for the words' bytes (no encoding is longer) and touches only
// what it uses. Each thread sums, per token, the counts of the words the token ends up in.
class StorePipeline {
 public:
  StorePipeline(std::span<const WordSource::Entry> words, const MergeListEncoder& encoder,
                WordStore& store, size_t vocab)
      : words_(words),
        encoder_(encoder),
        store_(store),
        chunks_(Chunks::Of(words.size(), kChunkWords, kMaxChunks)),
        thread_weight_([vocab] { return std::vector<uint64_t>(vocab, 0); }) {}

  void Run(tbb::task_arena& arena);
  // Every token's weight, summed over the threads.
  std::vector<uint64_t> Weights(size_t vocab) const;

 private:
  struct Scratch {
    size_t chunk = 0;
    size_t first_word = 0;  // the store index of the chunk's first word
    uint32_t at = 0;        // where its records go in the store
    std::vector<uint32_t> records;
    size_t words = 0;
  };
  // Serial, in order: the next chunk in a recycled buffer (null at the end).
  Scratch* Next();
  // Parallel: encodes the chunk's words (two bytes or more: shorter ones hold no pair and are
  // no word of the store) into its records.
  void Encode(Scratch& scratch);
  // Serial, in order: where the chunk's words go in the store.
  void Place(Scratch& scratch);
  // Parallel: copies them there and recycles the buffer.
  void Copy(Scratch* scratch);

  std::span<const WordSource::Entry> words_;
  const MergeListEncoder& encoder_;
  WordStore& store_;
  Chunks chunks_;
  tbb::enumerable_thread_specific<std::vector<uint64_t>> thread_weight_;
  std::mutex free_mu_;
  std::vector<std::unique_ptr<Scratch>> free_;
  size_t next_chunk_ = 0, next_word_ = 0;
  uint64_t next_at_ = 0;
};

StorePipeline::Scratch* StorePipeline::Next() {
  if (next_chunk_ == chunks_.count) return nullptr;
  std::unique_ptr<Scratch> scratch;
  {
    std::lock_guard<std::mutex> lock(free_mu_);
    if (!free_.empty()) {
      scratch = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (scratch == nullptr) scratch = std::make_unique<Scratch>();
  scratch->chunk = next_chunk_++;
  return scratch.release();
}

void StorePipeline::Encode(Scratch& scratch) {
  std::vector<uint64_t>& weight = thread_weight_.local();
  std::vector<uint32_t>& out = scratch.records;
  out.clear();
  scratch.words = 0;
  for (size_t i = chunks_.Begin(scratch.chunk); i < chunks_.Begin(scratch.chunk + 1); ++i) {
    const auto& [word, count] = words_[i];
    if (word.size() < 2) continue;
    // The record's header, then the word's ids appended right after it.
    const size_t at = out.size();
    out.insert(out.end(), {0, static_cast<uint32_t>(count), static_cast<uint32_t>(count >> 32)});
    encoder_.Encode(word, out);
    out[at] = static_cast<uint32_t>(out.size() - at - 3);
    for (size_t k = at + 3; k < out.size(); ++k) weight[out[k]] += count;
    ++scratch.words;
  }
}

void StorePipeline::Place(Scratch& scratch) {
  scratch.first_word = next_word_;
  scratch.at = static_cast<uint32_t>(next_at_);
  next_word_ += scratch.words;
  next_at_ += scratch.records.size();
}

void StorePipeline::Copy(Scratch* scratch) {
  store_.PutRecords(scratch->first_word, scratch->at, scratch->records);
  std::lock_guard<std::mutex> lock(free_mu_);
  free_.emplace_back(scratch);
}

void StorePipeline::Run(tbb::task_arena& arena) {
  const size_t tokens = static_cast<size_t>(std::max(1, arena.max_concurrency())) * 2;
  arena.execute([&] {
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, Scratch*>(tbb::filter_mode::serial_in_order,
                                         [&](tbb::flow_control& control) -> Scratch* {
                                           Scratch* scratch = Next();
                                           if (scratch == nullptr) control.stop();
                                           return scratch;
                                         }) &
            tbb::make_filter<Scratch*, Scratch*>(tbb::filter_mode::parallel,
                                                 [&](Scratch* s) { Encode(*s); return s; }) &
            tbb::make_filter<Scratch*, Scratch*>(tbb::filter_mode::serial_in_order,
                                                 [&](Scratch* s) { Place(*s); return s; }) &
            tbb::make_filter<Scratch*, void>(tbb::filter_mode::parallel,
                                             [&](Scratch* s) { Copy(s); }));
  });
  free_.clear();
}

std::vector<uint64_t> StorePipeline::Weights(size_t vocab) const {
  std::vector<uint64_t> weight(vocab, 0);
  for (const std::vector<uint64_t>& local : thread_weight_) {
    for (size_t t = 0; t < vocab; ++t) weight[t] += local[t];
  }
  return weight;
}

}  // namespace

absl::StatusOr<bool> Replay::EncodeWords(std::span<const WordSource::Entry> words) {
  if (state_.units.kind() != UnitKind::kByte) return false;  // BPE from bytes
  std::span<const Merge> merges = Merges();
  const TokenId first_new = static_cast<TokenId>(state_.model.tokens.size() - merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const Merge& m = merges[i];
    // A reused id (also where a pair is listed twice: it forms the same bytes again, so
    // TokenFor gives it the earlier token's id): BPE would not replay it exactly.
    if (m.result != first_new + i) return false;
    if (m.left == m.right && KnownCount(i) == 0) return false;  // its count is unknown
  }
  // Bytes outside the alphabet occur in no word; they map to an id that no merge names. The
  // word store is allocated meanwhile.
  TokenId byte_token[256];
  std::fill(std::begin(byte_token), std::end(byte_token), PairTable::kNone - 1);
  for (size_t k = 0; k < state_.alphabet_size; ++k) {
    const TokenId id = static_cast<TokenId>(state_.first_alphabet_id + k);
    byte_token[static_cast<unsigned char>(state_.model.tokens[id][0])] = id;
  }
  std::optional<MergeListEncoder> encoder;
  absl::StatusOr<WordStore> store;
  state_.arena.execute([&] {
    tbb::parallel_invoke([&] { encoder.emplace(merges, state_.model.tokens, byte_token); },
                         [&] { store = WordStore::Allocate(words); });
  });
  TM_RETURN_IF_ERROR(store.status());
  state_.words = *std::move(store);
  const size_t vocab = state_.model.tokens.size();
  StorePipeline pipeline(words, *encoder, state_.words, vocab);
  pipeline.Run(state_.arena);
  TM_RETURN_IF_ERROR(CountsFromWeights(pipeline.Weights(vocab)));
  return true;
}

absl::Status Replay::CountsFromWeights(std::vector<uint64_t> weight) {
  // How often each merge was applied: every occurrence of a merge's token in the final words
  // came from one application, and so did every occurrence of it that a later merge consumed.
  // Going from the last merge back, a token's weight is complete before its merge is reached
  // (only later merges consume it), and is then handed down to the two tokens it was made of.
  std::span<const Merge> merges = Merges();
  counts_.assign(merges.size(), 0);
  for (size_t i = merges.size(); i-- > 0;) {
    const Merge& m = merges[i];
    const uint64_t applied = weight[m.result];
    weight[m.left] += applied;
    weight[m.right] += applied;
    if (applied == 0) return Mismatch(i);
    // A pair of two different tokens never overlaps itself: its count is how often it was
    // replaced. (t, t) counts every position of a run of t (a run of 3 holds 2 pairs, and is
    // replaced once): between applied and 2 x applied, and taken from the checkpoint.
    const uint64_t known = KnownCount(i);
    const uint64_t count = m.left != m.right ? applied : known;
    if ((known != 0 && m.left != m.right && known != applied) ||
        (m.left == m.right && (known < applied || known > 2 * applied))) {
      return absl::FailedPreconditionError(StrCat(
          "cannot resume: the checkpoint gives merge ", i + 1, " ('",
          state_.units.TokenToText(prior_.merges[i].first), "' + '",
          state_.units.TokenToText(prior_.merges[i].second), "') a count of ", known,
          ", which these word counts do not give (", applied,
          " replacements); the checkpoint belongs to another corpus or other options"));
    }
    counts_[i] = count;
  }
  return absl::OkStatus();
}

// ---- Word by word --------------------------------------------------------------------------

namespace {

constexpr uint32_t kNoRank = PairTable::kNone;

// The merge list by pair: the first rank of each pair (the encoder's pair table; for pairs of
// two ids below `dense_ids`, the alphabet every word starts from, a flat table in front of it)
// and, for the rare pair listed twice, the next rank of the same pair.
class ReplayRanks {
 public:
  ReplayRanks(std::span<const Merge> merges, size_t dense_ids)
      : dense_ids_(dense_ids <= kMaxDenseIds ? static_cast<TokenId>(dense_ids) : 0),
        dense_(size_t{dense_ids_} * dense_ids_, kNoRank),
        next_(merges.size(), kNoRank) {
    first_.Build(MergeEntries(merges, MergePriority::kMergeIndex));  // keeps the first rank
    std::vector<uint32_t> last(merges.size(), kNoRank);  // the chain's end, by first rank
    for (uint32_t i = 0; i < merges.size(); ++i) {
      const TokenId left = merges[i].left, right = merges[i].right;
      const uint32_t first = first_.Find(left, right).priority;
      if (first != i) next_[last[first]] = i;
      last[first] = i;
      if (first == i && left < dense_ids_ && right < dense_ids_) {
        dense_[size_t{left} * dense_ids_ + right] = i;
      }
    }
  }
  // The first rank >= `from` of pair (left, right), or kNoRank.
  uint32_t Rank(TokenId left, TokenId right, uint32_t from) const {
    uint32_t rank = left < dense_ids_ && right < dense_ids_
                        ? dense_[size_t{left} * dense_ids_ + right]
                        : first_.Find(left, right).priority;
    while (rank < from) rank = next_[rank];
    return rank;
  }

 private:
  static constexpr size_t kMaxDenseIds = 1024;
  TokenId dense_ids_;
  std::vector<uint32_t> dense_;
  PairTable first_;
  std::vector<uint32_t> next_;
};

// Rewrites one word (`s`, `n` symbols) under `merges`; adds each applied merge's pair count to
// `counts`; returns the new length. `rank` is scratch space of at least n entries.
uint32_t ReplayWord(TokenId* s, uint32_t n, uint64_t word_count, std::span<const Merge> merges,
                    const ReplayRanks& ranks, std::vector<uint32_t>& rank,
                    std::vector<uint64_t>& counts) {
  if (n < 2) return n;
  if (rank.size() < n) rank.resize(n);
  uint32_t best = kNoRank;
  for (uint32_t k = 0; k + 1 < n; ++k) {
    rank[k] = ranks.Rank(s[k], s[k + 1], 0);
    best = std::min(best, rank[k]);
  }
  // One pass per merge: replace, count the pair's occurrences (overlapping ones too, as pair
  // counts do), set the new pairs' ranks and find the next merge.
  while (best != kNoRank) {
    const TokenId t = merges[best].result;
    uint64_t occurrences = 0;
    uint32_t next_best = kNoRank;
    // `fresh`: the previous output symbol is a new token. The rank of the pair ending at output
    // position `out` is carried over when both symbols were neighbours before, else looked up
    // (from best + 1: merges up to best are past). In-place writes stay behind the reads.
    uint32_t out = 0, i = 0;
    bool prev_fresh = false;
    uint32_t prev_src = 0;  // old index of the previous output symbol
    while (i < n) {
      const bool merge_here = i + 1 < n && rank[i] == best;
      if (merge_here) occurrences += 1 + (i + 2 < n && rank[i + 1] == best);
      const TokenId symbol = merge_here ? t : s[i];
      if (out > 0) {
        const bool carried = !merge_here && !prev_fresh && prev_src + 1 == i;
        const uint32_t r = carried ? rank[prev_src] : ranks.Rank(s[out - 1], symbol, best + 1);
        rank[out - 1] = r;
        next_best = std::min(next_best, r);
      }
      s[out] = symbol;
      prev_fresh = merge_here;
      prev_src = i;
      ++out;
      i += merge_here ? 2 : 1;
    }
    counts[best] += word_count * occurrences;
    n = out;
    best = next_best;
  }
  return n;
}

}  // namespace

void Replay::RewriteWordByWord() {
  std::span<const Merge> merges = Merges();
  const ReplayRanks ranks(merges, state_.first_alphabet_id + state_.alphabet_size);
  struct Scratch {
    std::vector<uint32_t> rank;
    std::vector<uint64_t> counts;
  };
  tbb::enumerable_thread_specific<Scratch> scratch(
      [&] { return Scratch{{}, std::vector<uint64_t>(merges.size(), 0)}; });
  WordStore& words = state_.words;
  std::span<const WordRef> refs = words.refs();
  state_.arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, refs.size(), 1024),
                      [&](const tbb::blocked_range<size_t>& range) {
      Scratch& local = scratch.local();
      for (size_t i = range.begin(); i < range.end(); ++i) {
        const WordRef w = refs[i];
        const uint32_t n = static_cast<uint32_t>(words.symbols(w).size());
        words.set_length(w, ReplayWord(words.mutable_symbols(w), n, words.count(w), merges,
                                       ranks, local.rank, local.counts));
      }
    });
  });
  counts_.assign(merges.size(), 0);
  for (const Scratch& local : scratch) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += local.counts[i];
  }
}

// ---- After either --------------------------------------------------------------------------

absl::Status Replay::Finish() {
  BpeModel& model = state_.model;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) return Mismatch(i);
    if (counts_[i] < state_.options.min_frequency) {
      // Training would have stopped here: keep the merges before it, drop the rest, and say
      // what training would have said then.
      model.merges.resize(first_ + i);
      model.tokens.resize(tokens_before_[i]);
      state_.token_length.resize(tokens_before_[i]);
      state_.stop_reason = StrCat("the best pair occurs ", counts_[i],
                                  " times, below `min_frequency` ", state_.options.min_frequency,
                                  "; ", state_.VocabShortfall());
      counts_.resize(i);
      stopped_ = true;
      break;
    }
  }
  state_.merge_counts.insert(state_.merge_counts.end(), counts_.begin(), counts_.end());
  replayed_ = counts_.size();
  return absl::OkStatus();
}

bool Replay::Report() {
  const size_t first = state_.model.merges.size() - replayed_;
  for (size_t i = 0; i < replayed_; ++i) {
    if (!state_.ReportMerge(first + i, /*replayed=*/true)) return false;
  }
  return true;
}

}  // namespace tokenmill
