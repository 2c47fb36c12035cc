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
