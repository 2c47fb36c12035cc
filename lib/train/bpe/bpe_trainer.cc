// The BPE trainer's phases in order (bpe_trainer.h), and the BpeState helpers they share.
//
// Performance notes (measured in bench/RESULTS.md, Training):
//  - Words are flat records rewritten in place; pairs know their words, not positions, so a
//    visit rescans its word (words are short; position lists would cost far more memory). The
//    visit loop prefetches words a few ahead: visits are dominated by cache misses.
//  - A merge's word visits run in fixed batches (merge_loop.cc). The changes they cause are
//    keyed by (side, token id) (see merge_deltas.h) and summed in dense per-thread arrays, so
//    the hot path does no hashing; the serial reduction then touches each changed pair once
//    per merge. Counts are exact integer sums and the new pairs' word lists are assembled in
//    batch order, so the output is the same for any number of threads.
//  - A pair's word list is written once, in the merge that creates its newer token, as one
//    block per merge (pair_index.h): no per-pair vectors, no appends.
//  - Initial pairs of a small alphabet (bytes: at most 256 x 256) are counted into dense
//    per-thread arrays and their word lists built as one block by a two-pass scatter
//    (initial_pairs.cc); a large alphabet's, like a resumed run's, by grouping them by left
//    token (pair_recount.cc).
#include "train/bpe/bpe_trainer.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/parallel_for.h"
#include "train/bpe/bpe_state.h"
#include "train/bpe/initial_pairs.h"
#include "train/bpe/merge_loop.h"
#include "train/bpe/pair_recount.h"
#include "train/bpe/replay.h"

namespace tokenmill {

TokenId BpeState::AddToken(std::string bytes, bool indexed, uint64_t length) {
  const TokenId id = static_cast<TokenId>(model.tokens.size());
  token_length.push_back(length == kNeverMerges
                             ? kNeverMerges
                             : static_cast<uint32_t>(std::min<uint64_t>(
                                   length, std::numeric_limits<uint32_t>::max() / 2)));
  model.tokens.push_back(std::move(bytes));
  if (indexed) token_index.Add(id);
  return id;
}

TokenId BpeState::TokenFor(TokenId left, TokenId right) {
  // The right token's continuing-subword prefix goes (Hugging Face's rule); lengths add up (a
  // symbol of the alphabet counts one, markers nothing).
  std::string_view right_bytes = model.tokens[right];
  const std::string& prefix = options.continuing_subword_prefix;
  if (!prefix.empty() && right_bytes.starts_with(prefix)) right_bytes.remove_prefix(prefix.size());
  std::string merged = units.Join(model.tokens[left], right_bytes);
  if (std::optional<TokenId> id = token_index.Find(merged)) return *id;
  return AddToken(std::move(merged), /*indexed=*/true,
                  uint64_t{token_length[left]} + token_length[right]);
}

size_t BpeState::TargetTokens() const {
  size_t end_specials =
      options.special_tokens_at == SpecialTokensAt::kEnd ? options.special_tokens.size() : 0;
  // An unknown token listed at the end has its id before the alphabet already.
  if (end_specials > 0 && model.unknown &&
      std::find(options.special_tokens.begin(), options.special_tokens.end(),
                model.tokens[*model.unknown]) != options.special_tokens.end()) {
    --end_specials;
  }
  return options.vocab_size > end_specials ? options.vocab_size - end_specials : 0;
}

std::string BpeState::VocabShortfall() const {
  size_t reached = model.tokens.size() + (TargetTokens() < options.vocab_size
                                              ? options.vocab_size - TargetTokens() : 0);
  return StrCat("stopped at vocab size ", reached, " of the ", options.vocab_size, " asked for");
}

bool BpeState::ReportMerge(size_t index, bool replayed) {
  if (!control.after_step) return true;
  const Merge& m = model.merges[index];
  const LearnedMerge merge{.left = model.tokens[m.left],
                           .right = model.tokens[m.right],
                           .token = model.tokens[m.result],
                           .count = merge_counts[index],
                           .id = m.result};
  TrainEvent event;  // (fields by name: a round-based trainer's are left at their defaults)
  event.steps_done = index + 1;
  event.steps_planned = model.merges.size() + RemainingMerges();
  event.replayed = replayed;
  event.work = replayed ? 0 : last_merge_words;
  event.merge = &merge;
  if (control.after_step(event)) return true;
  interrupted = true;
  stop_reason = StrCat("interrupted after ", index + 1, " merges");
  return false;
}

namespace {

class Stopwatch {
 public:
  double Lap() {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

void AddSpecialTokens(BpeState& state) {
  for (const std::string& s : state.options.special_tokens) {
    // The unknown token may be listed too; it has its id already.
    if (state.model.unknown && s == state.model.tokens[*state.model.unknown]) continue;
    state.model.specials.push_back({s, static_cast<TokenId>(state.model.tokens.size())});
    state.AddToken(s, /*indexed=*/false, 1);
  }
}

// Phase 1: the alphabet, after any special tokens at the start: the unknown token (a special
// token too), the byte-fallback tokens (never merged), then the units' symbols.
absl::Status BuildAlphabet(BpeState& state, std::span<const WordSource::Entry> words) {
  const TrainerOptions& o = state.options;
  const bool chars = o.units == UnitKind::kChar;
  state.alphabet = state.units.MakeAlphabet(
      words, AlphabetOptions{.hf_compat = o.hf_compat,
                             .every_symbol = o.hf_all_bytes,
                             .character_coverage = o.character_coverage,
                             .limit_alphabet = o.limit_alphabet,
                             .byte_fallback = chars && o.byte_fallback,
                             .unknown_token = chars && !o.byte_fallback && !o.hf_compat,
                             .unknown_name = o.unknown_token,
                             .continuing_prefix = o.continuing_subword_prefix,
                             .end_suffix = o.end_of_word_suffix,
                             .marked_order = o.marked_symbol_order});
  state.model.subword_prefix = o.continuing_subword_prefix;
  state.model.word_suffix = o.end_of_word_suffix;
  Alphabet& alphabet = state.alphabet;
  // An unknown token listed among the special tokens at the start is that token.
  for (const SpecialToken& s : state.model.specials) {
    if (alphabet.unknown && s.content == alphabet.symbols[0]) {
      alphabet.symbols.erase(alphabet.symbols.begin());
      alphabet.unknown = false;
      alphabet.unknown_id = s.id;
      state.model.unknown = s.id;
      state.token_length[s.id] = kNeverMerges;  // never merged, like the one the alphabet adds
    }
  }
  state.first_alphabet_id = static_cast<TokenId>(state.model.tokens.size());
  state.alphabet_size = alphabet.symbols.size();
  for (size_t i = 0; i < alphabet.symbols.size(); ++i) {
    const TokenId id = static_cast<TokenId>(state.model.tokens.size());
    if (alphabet.unknown && i == 0) {
      state.model.specials.push_back({alphabet.symbols[0], id});
      state.model.unknown = id;
      state.AddToken(alphabet.symbols[0], /*indexed=*/false, kNeverMerges);
    } else if (i < alphabet.first_char()) {
      if (state.model.byte_fallback.empty()) state.model.byte_fallback.reserve(256);
      state.model.byte_fallback.push_back(id);
      state.AddToken(alphabet.symbols[i], /*indexed=*/false, kNeverMerges);
    } else {
      state.AddToken(alphabet.symbols[i], /*indexed=*/true, 1);
    }
  }
  if (state.model.tokens.size() > state.TargetTokens()) {
    return OptionError(
        StrCat("`vocab_size` ", o.vocab_size, " is smaller than the alphabet (",
               state.alphabet_size, " ", UnitKindName(o.units), " tokens) plus ",
               o.special_tokens.size(), " special tokens"),
        {"vocab_size"});
  }
  return absl::OkStatus();
}

// Phase 2: every word as its initial symbols (`splitter`: the alphabet's).
absl::Status BuildWords(BpeState& state, std::span<const WordSource::Entry> words,
                        const SymbolSplitter& splitter) {
  if (words.size() >= std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        StrCat("too many distinct words to train on (", words.size(), "; the limit is 2^32)"));
  }
  for (const auto& [word, count] : words) {
    if (word.size() >= std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          StrCat("a word of ", word.size(), " bytes is too long to train on (limit 2^32)"));
    }
  }
  TM_ASSIGN_OR_RETURN(state.words, WordStore::Build(words, splitter));
  return absl::OkStatus();
}

// With likelihood scoring, after the alphabet: the words of one symbol, which the word store
// leaves out (however it is built), count for the symbols' scores.
void CountLoneSymbols(BpeState& state, std::span<const WordSource::Entry> words,
                      const SymbolSplitter& splitter) {
  state.lone_symbol_counts.assign(state.model.tokens.size(), 0);
  uint32_t symbols[4];
  for (const auto& [word, count] : words) {
    if (word.size() <= 4 && splitter.Split(word, symbols) == 1) {
      state.lone_symbol_counts[symbols[0]] += count;
    }
  }
}

// With likelihood scoring, after the pair count: every token's count, and the score queue.
void StartScoring(BpeState& state) {
  const size_t vocab = state.model.tokens.size();
  std::span<const WordRef> refs = state.words.refs();
  tbb::enumerable_thread_specific<std::vector<uint64_t>> partial(
      [&] { return std::vector<uint64_t>(vocab, 0); });
  state.arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, refs.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& range) {
      std::vector<uint64_t>& counts = partial.local();
      for (size_t i = range.begin(); i < range.end(); ++i) {
        const uint64_t c = state.words.count(refs[i]);
        for (TokenId t : state.words.symbols(refs[i])) counts[t] += c;
      }
    });
  });
  std::vector<uint64_t> counts = state.lone_symbol_counts;
  counts.resize(vocab, 0);
  for (const std::vector<uint64_t>& p : partial) {
    for (size_t t = 0; t < vocab; ++t) counts[t] += p[t];
  }
  state.lone_symbol_counts = {};
  state.scored->Fill(std::move(counts), state.pairs);
}

absl::StatusOr<TrainResult> Run(BpeState& state, WordSource& source) {
  Stopwatch clock;
  std::vector<std::pair<std::string, double>> phases;
  auto lap = [&](const char* phase) { phases.emplace_back(phase, clock.Lap()); };
  if (state.options.special_tokens_at == SpecialTokensAt::kStart) AddSpecialTokens(state);
  // Starts the arena's threads now, with an empty task: on a resumed run this is their first
  // use, and they take about half a millisecond to come up, which resolving the merges hides.
  // (With one thread there are none: TBB would add one for the task.)
  if (state.arena.max_concurrency() > 1) state.arena.enqueue([] {});
  state.stop_reason = StrCat("reached `vocab_size` ", state.options.vocab_size);
  std::optional<Replay> replay;
  if (!state.control.resume.empty()) replay.emplace(state);
  bool replayed = false;  // the words were built with the resumed merges applied
  {
    std::span<const WordSource::Entry> words = source.Entries();
    TM_RETURN_IF_ERROR(BuildAlphabet(state, words));
    const std::unique_ptr<SymbolSplitter> splitter =
        state.units.Splitter(state.alphabet, state.first_alphabet_id);
    if (state.scored) CountLoneSymbols(state, words, *splitter);
    if (replay) {
      TM_RETURN_IF_ERROR(replay->Resolve());
      lap("words");
      TM_ASSIGN_OR_RETURN(replayed, replay->EncodeWords(words));
    }
    if (!replayed) TM_RETURN_IF_ERROR(BuildWords(state, words, *splitter));
  }
  source.Release();  // the words live on in state.words
  if (!replay) {
    lap("words");
    CountInitialPairs(state);
    if (state.scored) StartScoring(state);
    lap("initial pairs");
  } else {
    if (!replayed) replay->RewriteWordByWord();
    TM_RETURN_IF_ERROR(replay->Finish());
    lap("replay");
    // A replay that stopped (min_frequency) ends training: no pair is needed (and the words
    // hold the tokens of the merges it dropped). Its merges are not reported again.
    // Likelihood scores can make the rarest pair the best: all pairs are counted.
    if (!replay->stopped()) {
      CountPairsOfWords(state, /*track_all=*/state.scored != nullptr);
      if (state.scored) StartScoring(state);
    }
    lap("pairs");
  }
  if (!replay || (!replay->stopped() && replay->Report())) {
    TM_RETURN_IF_ERROR(MergeLoop(state).Run());
  }
  lap("merges");
  if (state.options.special_tokens_at == SpecialTokensAt::kEnd) AddSpecialTokens(state);
  TrainResult result;
  result.model = std::make_unique<BpeModel>(std::move(state.model));
  result.merge_counts = std::move(state.merge_counts);
  result.stop_reason = std::move(state.stop_reason);
  result.interrupted = state.interrupted;
  result.phase_seconds = std::move(phases);
  if (state.options.units == UnitKind::kChar) {
    auto Bpe = [](const TrainResult& r) -> const BpeModel& { return *AsBpe(*r.model); };
    const Alphabet& a = state.alphabet;
    // The characters kept, each counted once: their marked forms (##c, c</w>) are more symbols
    // of the alphabet, not more characters.
    const size_t plain = static_cast<size_t>(std::count_if(
        a.chars.begin(), a.chars.end(), [](const auto& c) { return c.second == kPlainChar; }));
    const size_t marked = a.chars.size() - plain;
    std::string markers;
    if (!a.continuing_prefix.empty()) markers = StrCat("the prefix ", a.continuing_prefix);
    if (!a.end_suffix.empty()) {
      StrAppend(&markers, markers.empty() ? "" : " or ", "the suffix ", a.end_suffix);
    }
    result.notes.push_back(StrCat(
        "alphabet: ", plain, " of ", a.distinct_chars, " characters",
        marked > 0 ? StrCat(" and ", marked, " marked forms of them (with ", markers, ")") : "",
        ", covering ", a.char_occurrences - a.uncovered_occurrences, " of ", a.char_occurrences,
        " occurrences"));
    if (a.uncovered_occurrences + a.invalid_bytes > 0) {
      result.notes.push_back(StrCat(
          a.uncovered_occurrences, " occurrences of characters outside it and ", a.invalid_bytes,
          " bytes that are not UTF-8 ",
          a.byte_fallback ? std::string("become byte-fallback tokens")
          : Bpe(result).unknown.has_value()
              ? StrCat("became the unknown token ", state.options.unknown_token)
              : std::string("were dropped from the words (Hugging Face's rule)")));
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<TrainResult> BpeTrainer::Train(WordSource words, const TrainControl& control) {
  // More threads than cores are honoured (oversubscribed); a training run has capped them at
  // ThreadCount's bound (TrainingRunOptions::Harmonize), far above the cores.
  std::optional<tbb::global_control> parallelism;
  if (options_.threads > 0) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism,
                        static_cast<size_t>(options_.threads));
  }
#ifdef __GLIBC__
  // Give the memory that earlier stages (counting) freed back to the system before the trainer
  // allocates its own, so that peak RSS is not their high-water mark plus ours.
  malloc_trim(0);
#endif
  BpeState state(options_, control);
  return Run(state, words);
}

}  // namespace tokenmill
