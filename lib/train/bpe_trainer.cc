// The incremental BPE trainer. Phases: special tokens -> alphabet -> words -> initial pair
// counts (parallel) -> merge loop -> end special tokens. The merge loop pops the best pair
// from a lazy max-heap, rewrites only the words that hold it (in parallel batches when they
// are many) and applies the neighbouring pairs' count changes, reduced in batch order.
//
// Performance notes (measured in bench/RESULTS.md, Training):
//  - Words are flat records rewritten in place; pairs know their words, not positions, so a
//    visit rescans its word (words are short; position lists would cost far more memory). The
//    visit loop prefetches words a few ahead: visits are dominated by cache misses.
//  - A merge's word visits run in fixed batches (kBatchWords). The changes they cause are
//    keyed by (side, token id) (see merge_deltas.h) and summed in dense per-thread arrays, so
//    the hot path does no hashing; the serial reduction then touches each changed pair once
//    per merge. Counts are exact integer sums and the new pairs' word lists are assembled in
//    batch order, so the output is the same for any number of threads.
//  - A pair's word list is written once, in the merge that creates its newer token, as one
//    block per merge (pair_index.h): no per-pair vectors, no appends.
//  - Initial pairs are dense over the alphabet (at most 256 x 256), so they are counted into
//    per-thread arrays and their word lists built as one block by a two-pass scatter.
#include "train/bpe_trainer.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "absl/container/flat_hash_set.h"
#include "common/byte_level.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_invoke.h"
#include "oneapi/tbb/parallel_pipeline.h"
#include "oneapi/tbb/task_arena.h"
#include "model/bpe/char_segments.h"
#include "model/bpe/lookup_tables.h"
#include "model/bpe/piece_bpe.h"
#include "train/merge_queue.h"
#include "train/merge_deltas.h"
#include "train/pair_index.h"
#include "train/word_store.h"

namespace tokenmill {
namespace {

// Words per batch when a merge's word visits run in parallel, and the fewest words for which
// a merge goes parallel at all.
constexpr size_t kBatchWords = 2048;
constexpr size_t kParallelMinWords = 4 * kBatchWords;
// Words per chunk when counting the initial pairs, and the most chunks.
constexpr size_t kInitialChunkWords = 4096;
constexpr size_t kMaxInitialChunks = 64;
// The most chunks of words when replaying a resumed run's merges by encoding.
constexpr size_t kMaxReplayChunks = 1024;
// Words per chunk when counting a resumed run's pairs: each chunk has a histogram over the
// whole vocabulary, which costs more than the chunk's words below this (linux_c_100m, 174 k
// words: 43 chunks of 4096 words spent 8 ms on 10 MB of histograms).
constexpr size_t kPairChunkWords = 16384;

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

// The non-special tokens by bytes: a set of ids hashed and compared through the token strings,
// 4 bytes a token instead of a second copy of every string.
class TokenIndex {
 public:
  explicit TokenIndex(const std::vector<std::string>& tokens)
      : set_(0, Hash{&tokens}, Eq{&tokens}) {}
  void Add(TokenId id) { set_.insert(id); }
  void Reserve(size_t tokens) { set_.reserve(tokens); }
  std::optional<TokenId> Find(std::string_view bytes) const {
    auto it = set_.find(bytes);
    return it == set_.end() ? std::nullopt : std::optional<TokenId>(*it);
  }

 private:
  struct Hash {
    using is_transparent = void;
    const std::vector<std::string>* tokens;
    size_t operator()(std::string_view s) const { return StringHash{}(s); }
    size_t operator()(TokenId id) const { return StringHash{}((*tokens)[id]); }
  };
  struct Eq {
    using is_transparent = void;
    const std::vector<std::string>* tokens;
    std::string_view View(std::string_view s) const { return s; }
    std::string_view View(TokenId id) const { return (*tokens)[id]; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return View(a) == View(b); }
  };
  absl::flat_hash_set<TokenId, Hash, Eq> set_;
};

class Trainer {
 public:
  // The words come from `counts` or else from `list`. With `owned` (the counts), and always
  // with a `list`, they are the trainer's and are freed once the words are built.
  Trainer(const WordCounts* counts, WordCounts* owned, WordList* list,
          const TrainerOptions& options, const TrainControl& control)
      : counts_(counts),
        owned_(owned),
        list_(list),
        options_(options),
        control_(control),
        arena_(options.threads > 0 ? options.threads : tbb::task_arena::automatic),
        token_index_(result_.model.tokens),
        queue_(result_.model.tokens, options.hf_compat) {}

  absl::StatusOr<TrainResult> Run();

 private:
  void AddSpecialTokens();
  absl::Status BuildAlphabet(std::span<const std::pair<std::string_view, uint64_t>> words);
  absl::Status BuildWords(std::span<const std::pair<std::string_view, uint64_t>> words);
  void CountInitialPairs();
  // Resume (see "Replaying merges on resume" below): ResolveResumeMerges records
  // control_.resume_merges in the model; ReplayByEncoding then builds the words already
  // rewritten by them, or, when it does not apply, BuildWords and ReplayWordByWord do it
  // word by word; FinishReplay checks their counts. Then CountPairsOfWords builds the pair
  // table and queue from the rewritten words, and MergeLoop reports the replayed merges
  // before going on.
  absl::Status ResolveResumeMerges();
  // Both give each resumed merge's pair count at its step.
  absl::StatusOr<bool> ReplayByEncoding(
      std::span<const std::pair<std::string_view, uint64_t>> words, std::vector<uint64_t>* counts);
  std::vector<uint64_t> ReplayWordByWord();
  // The checkpoint's count of resumed merge i (0: not known).
  uint64_t KnownResumeCount(size_t i) const;
  absl::Status FinishReplay(std::vector<uint64_t> counts);
  std::span<const Merge> ResumedMerges() const {
    return {result_.model.merges.data() + first_resumed_, resumed_tokens_before_.size()};
  }
  void CountPairsOfWords(bool track_all);
  // Rebuilds the pair table and the queue (Fill replaces what it held) with every pair, after
  // a partial CountPairsOfWords.
  void TrackAllPairs();
  // Reports the replayed merges to control_.after_merge; false when it asked to stop.
  bool ReportReplayed();
  absl::Status MergeLoop();

  bool Mergeable(TokenId left, TokenId right) const {
    return options_.max_token_length == 0 ||
           tokens()[left].size() + tokens()[right].size() <= options_.max_token_length;
  }
  const std::vector<std::string>& tokens() const { return result_.model.tokens; }
  // The id of the token `left` + `right` forms: an existing one with those bytes, or a new one.
  TokenId TokenFor(TokenId left, TokenId right);
  // Resolves resume merge `i` to its pair of ids.
  absl::StatusOr<PairKey> ResumePair(size_t i) const;
  absl::Status ResumeMismatch(size_t i) const;
  // Merges pair `p` = (a, b) into t in every word holding it and updates the pair counts and
  // the queue.
  void ApplyMerge(PairKey p, TokenId a, TokenId b, TokenId t);
  // Merges the current pair in `words`; risen entries go to batch_risen_[batch].
  void RunBatch(std::span<const WordRef> words, size_t batch);
  // Sums the threads' changes and applies them to the pair table, the queue and the new pairs'
  // word lists.
  void ReduceMerge(size_t batches);
  size_t TargetTokens() const;
  std::string VocabShortfall() const;

  const WordCounts* counts_;
  WordCounts* owned_;
  WordList* list_;
  const TrainerOptions& options_;
  const TrainControl& control_;
  tbb::task_arena arena_;
  TrainResult result_;
  TokenId byte_id_[256] = {};
  TokenId first_alphabet_id_ = 0;
  size_t alphabet_size_ = 0;
  TokenIndex token_index_;
  WordStore words_;
  PairIndex pairs_;
  MergeQueue queue_;
  // Merge-loop state: the merge in progress, per-thread sums, per-batch risen words, and the
  // reduction's dense arrays by slot.
  MergeSlots slots_;
  TokenId merge_a_ = 0, merge_b_ = 0, merge_t_ = 0;
  uint32_t merge_stamp_ = 0;
  tbb::enumerable_thread_specific<MergeDeltas> thread_deltas_;
  std::vector<std::vector<RisenWord>> batch_risen_;
  struct SlotState {
    int64_t sum = 0;
    uint32_t seen = 0;   // the merge stamp that last touched the slot
    uint32_t words = 0;  // risen words, then where the slot's next word goes in the block
  };
  std::vector<SlotState> slot_;
  std::vector<uint32_t> touched_;
  // Resume state: where the resumed merges start in the model, the vocabulary size before
  // each, how many merges were replayed, and why replay ended training (if it did).
  size_t first_resumed_ = 0;
  std::vector<size_t> resumed_tokens_before_;
  size_t replayed_ = 0;
  bool replay_stopped_ = false;
  // Pairs below this count may be missing from pairs_ and queue_ (CountPairsOfWords).
  uint64_t untracked_below_ = 1;
};

void Trainer::AddSpecialTokens() {
  BpeModel& model = result_.model;
  for (const std::string& s : options_.special_tokens) {
    model.specials.push_back({s, static_cast<TokenId>(model.tokens.size())});
    model.tokens.push_back(s);
  }
}

absl::Status Trainer::BuildAlphabet(
    std::span<const std::pair<std::string_view, uint64_t>> words) {
  std::vector<int> alphabet;
  if (options_.hf_compat) {
    bool seen[256] = {};
    for (const auto& [word, count] : words) {
      for (unsigned char c : word) seen[c] = true;
    }
    for (int b = 0; b < 256; ++b) {
      if (seen[b]) alphabet.push_back(b);
    }
    std::sort(alphabet.begin(), alphabet.end(),
              [](int x, int y) { return ByteToCodePoint(x) < ByteToCodePoint(y); });
  } else {
    for (int b = 0; b < 256; ++b) alphabet.push_back(b);
  }
  BpeModel& model = result_.model;
  first_alphabet_id_ = static_cast<TokenId>(model.tokens.size());
  alphabet_size_ = alphabet.size();
  for (int b : alphabet) {
    byte_id_[b] = static_cast<TokenId>(model.tokens.size());
    model.tokens.emplace_back(1, static_cast<char>(b));
    token_index_.Add(byte_id_[b]);
  }
  if (model.tokens.size() > TargetTokens()) {
    return absl::InvalidArgumentError(
        StrCat("--vocab-size ", options_.vocab_size, " is smaller than the alphabet (",
               alphabet.size(), " byte tokens) plus ", options_.special_tokens.size(),
               " special tokens"));
  }
  return absl::OkStatus();
}

absl::Status Trainer::BuildWords(std::span<const std::pair<std::string_view, uint64_t>> words) {
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
  TM_ASSIGN_OR_RETURN(words_, WordStore::Build(words, byte_id_));
  return absl::OkStatus();
}

void Trainer::CountInitialPairs() {
  std::span<const WordRef> refs = words_.refs();
  const size_t n = refs.size();
  const size_t a = alphabet_size_;
  const size_t dense = a * a;
  const size_t chunks =
      std::clamp<size_t>((n + kInitialChunkWords - 1) / kInitialChunkWords, 1, kMaxInitialChunks);
  auto chunk_begin = [&](size_t c) { return n * c / chunks; };
  auto dense_of = [&](TokenId left, TokenId right) {
    return (left - first_alphabet_id_) * a + (right - first_alphabet_id_);
  };
  // Per thread: pair counts (exact sums, so thread order does not matter) and a stamp per pair
  // that lists each word once per pair.
  tbb::enumerable_thread_specific<std::vector<uint64_t>> thread_counts(
      [&] { return std::vector<uint64_t>(dense, 0); });
  tbb::enumerable_thread_specific<std::vector<uint32_t>> thread_stamps(
      [&] { return std::vector<uint32_t>(dense, 0); });
  // Pass 1: per chunk, how many words hold each pair.
  std::vector<std::vector<uint32_t>> cursor(chunks);
  const bool mergeable = options_.max_token_length == 0 || options_.max_token_length >= 2;
  // Calls fn(pair, first) for each adjacent pair of word number i; first is true the first
  // time the pair occurs in the word.
  auto for_each_pair = [&](size_t i, std::vector<uint32_t>& stamps, auto&& fn) {
    std::span<const TokenId> s = words_.symbols(refs[i]);
    const uint32_t stamp = static_cast<uint32_t>(i) + 1;
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      size_t d = dense_of(s[k], s[k + 1]);
      fn(d, stamps[d] != stamp);
      stamps[d] = stamp;
    }
  };
  arena_.execute([&] {
    tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
      std::vector<uint32_t>& hist = cursor[c];
      hist.assign(dense, 0);
      std::vector<uint64_t>& counts = thread_counts.local();
      std::vector<uint32_t>& stamps = thread_stamps.local();
      for (size_t i = chunk_begin(c); i < chunk_begin(c + 1); ++i) {
        const uint64_t count = words_.count(refs[i]);
        for_each_pair(i, stamps, [&](size_t d, bool first) {
          counts[d] += count;
          hist[d] += first;
        });
      }
    });
  });
  std::vector<uint64_t> counts(dense, 0);
  for (const std::vector<uint64_t>& local : thread_counts) {
    for (size_t d = 0; d < dense; ++d) counts[d] += local[d];
  }
  // Offsets of each pair's words in one flat array; each chunk's cursor starts where the
  // earlier chunks' words for that pair end, so the lists come out in word order.
  std::vector<uint64_t> dense_offset(dense + 1, 0);
  uint64_t total = 0;
  for (size_t d = 0; d < dense; ++d) {
    dense_offset[d] = total;
    for (size_t c = 0; c < chunks; ++c) {
      uint32_t in_chunk = cursor[c][d];
      cursor[c][d] = static_cast<uint32_t>(total - dense_offset[d]);
      total += in_chunk;
    }
  }
  dense_offset[dense] = total;
  HugeArray<WordRef> flat(total);
  // Pass 2: scatter the word indices (the stamps start over).
  for (std::vector<uint32_t>& stamps : thread_stamps) std::fill(stamps.begin(), stamps.end(), 0);
  arena_.execute([&] {
    tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
      std::vector<uint32_t>& next = cursor[c];
      std::vector<uint32_t>& stamps = thread_stamps.local();
      for (size_t i = chunk_begin(c); i < chunk_begin(c + 1); ++i) {
        for_each_pair(i, stamps, [&](size_t d, bool first) {
          if (first) flat[dense_offset[d] + next[d]++] = refs[i];
        });
      }
    });
  });
  std::vector<PairKey> keys;
  std::vector<uint64_t> offsets, key_counts;
  if (mergeable) {
    for (size_t d = 0; d < dense; ++d) {
      if (counts[d] == 0) continue;
      PairKey key = MakePairKey(static_cast<TokenId>(first_alphabet_id_ + d / a),
                                static_cast<TokenId>(first_alphabet_id_ + d % a));
      pairs_.AddCount(key, static_cast<int64_t>(counts[d]));
      keys.push_back(key);
      key_counts.push_back(counts[d]);
      offsets.push_back(dense_offset[d]);
    }
  }
  offsets.push_back(total);
  pairs_.AddWordBlock(std::move(flat), keys, offsets);
  queue_.Fill(keys, key_counts);
}

TokenId Trainer::TokenFor(TokenId left, TokenId right) {
  BpeModel& model = result_.model;
  std::string merged = model.tokens[left] + model.tokens[right];
  if (std::optional<TokenId> id = token_index_.Find(merged)) return *id;
  const TokenId id = static_cast<TokenId>(model.tokens.size());
  model.tokens.push_back(std::move(merged));
  token_index_.Add(id);
  return id;
}

absl::Status Trainer::ResumeMismatch(size_t i) const {
  const auto& [left, right] = control_.resume_merges[i];
  return absl::FailedPreconditionError(StrCat(
      "cannot resume: merge ", i + 1, " of the checkpoint ('", BytesToByteLevel(left), "' + '",
      BytesToByteLevel(right),
      "') does not occur in these word counts; the checkpoint belongs to another corpus or "
      "other options"));
}

absl::StatusOr<PairKey> Trainer::ResumePair(size_t i) const {
  const auto& [left, right] = control_.resume_merges[i];
  std::optional<TokenId> l = token_index_.Find(left), r = token_index_.Find(right);
  if (!l.has_value() || !r.has_value()) return ResumeMismatch(i);
  const PairKey key = MakePairKey(*l, *r);
  if (!Mergeable(*l, *r)) {
    return absl::FailedPreconditionError(StrCat(
        "cannot resume: merge ", i + 1, " of the checkpoint forms a token longer than "
        "--max-token-length ", options_.max_token_length));
  }
  return key;
}

// Replaying merges on resume. Training applies merge i to every word that holds its pair at
// step i, so a word's state after the first k merges depends on that word alone: it is what
// applying, in order, those of the k merges whose pair the word holds at their step gives.
// Each word is therefore rewritten on its own (in parallel), which costs far less than the
// merge loop (no pair counts to maintain), and the pair counts are rebuilt once afterwards.
//
// By encoding (ReplayByEncoding, the usual way): when every resumed merge forms a new token and
// no pair is listed twice, the trainer's rewriting of a word is exactly BPE of its bytes with
// those merges as priorities (BPE applies the lowest merge first, leftmost first, and a merge
// can only create pairs of later merges, so it visits the merges in order and replaces each
// pair left to right): PieceBpe (model/piece_bpe.h), from the characters' own encodings for
// Chinese words (CharacterStart below). Each merge's count is then derived
// from the encoded words (see the weights below) instead of counted during the rewriting; the
// checkpoint's counts are checked against it, and supply the count of a token merged with
// itself, whose occurrences may overlap. Otherwise (ReplayWordByWord), word by word:
//
// Per word: each adjacent pair carries the rank of the next merge it will undergo (the first
// occurrence in the merge list at or after the current step; normally a pair appears once in
// the list, and a pair formed after its own step never merges again, unless the list repeats
// it). The smallest rank among the word's pairs is the next merge that touches the word; its
// occurrences are replaced left to right, without overlap, as the trainer does, and only the
// pairs next to a new token get new ranks. The pair's count at its step (the merge count the
// trainer reports) is the sum of (word count x occurrences before the replacement).
namespace {

constexpr uint32_t kNoRank = std::numeric_limits<uint32_t>::max();

// The merge list by pair: the first rank of each pair and, for the rare pair listed twice, the
// next rank of the same pair. Pairs of two ids below `dense_ids` (the alphabet, which every
// word starts from) are looked up in a flat table, the others in a hash map.
class ReplayRanks {
 public:
  ReplayRanks(std::span<const Merge> merges, size_t dense_ids)
      : dense_ids_(dense_ids <= kMaxDenseIds ? static_cast<TokenId>(dense_ids) : 0),
        dense_(size_t{dense_ids_} * dense_ids_, kNoRank),
        next_(merges.size(), kNoRank) {
    for (size_t i = merges.size(); i-- > 0;) {
      const TokenId left = merges[i].left, right = merges[i].right;
      uint32_t& first = left < dense_ids_ && right < dense_ids_
                            ? dense_[size_t{left} * dense_ids_ + right]
                            : first_.try_emplace(MakePairKey(left, right), kNoRank).first->second;
      next_[i] = first;
      first = static_cast<uint32_t>(i);
    }
  }
  // The first rank >= `from` of pair (left, right), or kNoRank.
  uint32_t Rank(TokenId left, TokenId right, uint32_t from) const {
    uint32_t rank;
    if (left < dense_ids_ && right < dense_ids_) {
      rank = dense_[size_t{left} * dense_ids_ + right];
    } else {
      auto it = first_.find(MakePairKey(left, right));
      if (it == first_.end()) return kNoRank;
      rank = it->second;
    }
    while (rank < from) rank = next_[rank];
    return rank;
  }

 private:
  static constexpr size_t kMaxDenseIds = 1024;
  TokenId dense_ids_;
  std::vector<uint32_t> dense_;
  absl::flat_hash_map<PairKey, uint32_t> first_;
  std::vector<uint32_t> next_;
};

// BPE of a word of 3-byte characters (Chinese...) from each character's own BPE, instead of
// from its bytes: a third as many parts, and none of the merges that form the characters.
//
// Why it is exact, for the merge lists training makes (each merge's parts are tokens formed by
// earlier merges): call a token "partial" when it joins two characters but is not made of
// whole ones (say, one character and the first two bytes of the next). Where no partial token
// can match across any character boundary of the word (CharSegments' windows, built from the
// partial tokens only), every token BPE forms in the word lies within one character or is
// made of whole characters, and a merge across a boundary joins whole characters. A
// character's own merges then run as they do on the character alone, and a merge of two
// characters' tokens comes later in the list than the merges forming them, so it finds them
// formed: BPE from the characters' own encodings takes the same merges in the same order.
// Words that do not qualify (other bytes, an unsafe boundary, over kMaxCharacters) are
// encoded from their bytes.
class CharacterStart {
 public:
  CharacterStart(const std::vector<std::string>& tokens, const PieceBpe& bpe) : bpe_(bpe) {
    if (tokens.size() >= (size_t{1} << 20)) return;  // CharSegments packs ids in 20 bits
    std::vector<std::string> partial;
    size_t characters = 0;
    for (const std::string& token : tokens) {
      if (IsPartial(token)) partial.push_back(token);
      characters += token.size() == 3 && CharSegments::IsThreeByte(
                                             reinterpret_cast<const unsigned char*>(token.data()),
                                             reinterpret_cast<const unsigned char*>(token.data()) + 3);
    }
    // The table of every 3-byte sequence's BPE costs 65,536 small encodes (5-6 ms): not worth
    // it where such characters are too rare to have tokens (linux_c_100m: none; poetry: 6,521).
    if (characters < kMinCharacterTokens) return;
    characters_.Build(partial, bpe);
  }

  // Writes the word's BPE to `ids` and returns true, or returns false (nothing written) when
  // the word does not qualify.
  bool Encode(std::string_view word, std::vector<TokenId>& ids) const {
    const auto* p = reinterpret_cast<const unsigned char*>(word.data());
    const size_t chars = word.size() / 3;
    if (!characters_.built() || word.size() % 3 != 0 || chars < 2 || chars > kMaxCharacters) {
      return false;
    }
    for (size_t k = 0; k < chars; ++k) {
      if (!CharSegments::IsThreeByte(p + 3 * k, p + 3 * k + 3)) return false;
      if (k > 0 && !characters_.SafeBoundary(p + 3 * k)) return false;
    }
    TokenId parts[3 * kMaxCharacters];
    size_t n = 0;
    for (size_t k = 0; k < chars; ++k) n += characters_.WriteChar(p + 3 * k, parts + n);
    n = bpe_.MergeParts(parts, n);
    ids.insert(ids.end(), parts, parts + n);
    return true;
  }

 private:
  // Longer words are encoded from their bytes, where PieceBpe's heap keeps long pieces from
  // costing n^2.
  static constexpr size_t kMaxCharacters = 32;
  static constexpr size_t kMinCharacterTokens = 8;

  // Could occur inside a word of 3-byte characters (only their bytes), joins two of them (a
  // lead byte after a continuation byte), and is not whole characters.
  static bool IsPartial(std::string_view token) {
    const auto* t = reinterpret_cast<const unsigned char*>(token.data());
    const size_t n = token.size();
    bool joins = false;
    for (size_t k = 0; k < n; ++k) {
      const bool lead = (t[k] & 0xF0) == 0xE0, continuation = (t[k] & 0xC0) == 0x80;
      if (!lead && !continuation) return false;
      joins |= lead && k > 0 && (t[k - 1] & 0xC0) == 0x80;
    }
    if (!joins) return false;
    if (n % 3 != 0) return true;
    for (size_t k = 0; k < n; k += 3) {
      if (!CharSegments::IsThreeByte(t + k, t + k + 3)) return true;
    }
    return false;
  }

  const PieceBpe& bpe_;
  CharSegments characters_;
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

absl::Status Trainer::ResolveResumeMerges() {
  BpeModel& model = result_.model;
  first_resumed_ = model.merges.size();
  const size_t most = control_.resume_merges.size();
  model.tokens.reserve(model.tokens.size() + most);
  model.merges.reserve(model.merges.size() + most);
  token_index_.Reserve(model.tokens.size() + most);
  resumed_tokens_before_.reserve(most);
  // Ids for the checkpoint's merges, in order, as the merge loop would assign them.
  for (size_t i = 0; i < control_.resume_merges.size() && tokens().size() < TargetTokens(); ++i) {
    TM_ASSIGN_OR_RETURN(PairKey p, ResumePair(i));
    resumed_tokens_before_.push_back(tokens().size());
    const TokenId a = PairLeft(p), b = PairRight(p);
    model.merges.push_back({a, b, TokenFor(a, b)});
  }
  return absl::OkStatus();
}

std::vector<uint64_t> Trainer::ReplayWordByWord() {
  std::span<const Merge> merges = ResumedMerges();
  const ReplayRanks ranks(merges, first_alphabet_id_ + alphabet_size_);
  struct Scratch {
    std::vector<uint32_t> rank;
    std::vector<uint64_t> counts;
  };
  tbb::enumerable_thread_specific<Scratch> scratch(
      [&] { return Scratch{{}, std::vector<uint64_t>(merges.size(), 0)}; });
  std::span<const WordRef> refs = words_.refs();
  arena_.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, refs.size(), 1024),
                      [&](const tbb::blocked_range<size_t>& range) {
      Scratch& local = scratch.local();
      for (size_t i = range.begin(); i < range.end(); ++i) {
        const WordRef w = refs[i];
        const uint32_t n = static_cast<uint32_t>(words_.symbols(w).size());
        words_.set_length(w, ReplayWord(words_.mutable_symbols(w), n, words_.count(w), merges,
                                        ranks, local.rank, local.counts));
      }
    });
  });
  std::vector<uint64_t> counts(merges.size(), 0);
  for (const Scratch& local : scratch) {
    for (size_t i = 0; i < counts.size(); ++i) counts[i] += local.counts[i];
  }
  return counts;
}

uint64_t Trainer::KnownResumeCount(size_t i) const {
  return i < control_.resume_counts.size() ? control_.resume_counts[i] : 0;
}

absl::StatusOr<bool> Trainer::ReplayByEncoding(
    std::span<const std::pair<std::string_view, uint64_t>> words, std::vector<uint64_t>* counts) {
  std::span<const Merge> merges = ResumedMerges();
  const TokenId first_new = static_cast<TokenId>(tokens().size() - merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const Merge& m = merges[i];
    // A reused id (also where a pair is listed twice: it forms the same bytes again, so
    // TokenFor gives it the earlier token's id): BPE would not replay it exactly.
    if (m.result != first_new + i) return false;
    if (m.left == m.right && KnownResumeCount(i) == 0) return false;  // its count is unknown
  }
  // BPE with the resumed merges as priorities (model/piece_bpe.h). Bytes outside the alphabet
  // occur in no word; they map to an id that no merge names. The word store is allocated
  // meanwhile.
  const std::vector<std::pair<uint64_t, PairMerge>> entries =
      MergeEntries(merges, MergePriority::kMergeIndex);
  TokenId byte_token[256];
  std::fill(std::begin(byte_token), std::end(byte_token), PairTable::kNone - 1);
  for (size_t k = 0; k < alphabet_size_; ++k) {
    const TokenId id = static_cast<TokenId>(first_alphabet_id_ + k);
    byte_token[static_cast<unsigned char>(tokens()[id][0])] = id;
  }
  PairTable merge_table;
  std::vector<PairMerge> byte_pairs;
  std::optional<PieceBpe> piece_bpe;
  std::optional<CharacterStart> character_start;
  absl::StatusOr<WordStore> store;
  arena_.execute([&] {
    tbb::parallel_invoke(
        [&] {
          merge_table.Build(entries);
          byte_pairs = BytePairMerges(entries, byte_token);
          piece_bpe.emplace(&merge_table, byte_token, PieceBpe::kDefaultLongPiece,
                            byte_pairs.data());
          character_start.emplace(tokens(), *piece_bpe);
        },
        [&] { store = WordStore::Allocate(words); });
  });
  const PieceBpe& bpe = *piece_bpe;
  TM_RETURN_IF_ERROR(store.status());
  words_ = *std::move(store);
  const CharacterStart& by_characters = *character_start;
  const size_t vocab = tokens().size();

  // Chunks of words are encoded in parallel into scratch records ([length][count low][count
  // high][symbols], as in the store), which are then copied to the store in word order. The
  // scratch buffers are recycled, so only the store's own memory is new; its size is only
  // known at the end, so it reserves room for the words' bytes (no encoding is longer) and
  // touches only what it uses. Each thread sums, per token, the counts of the words the token
  // ends up in.
  const size_t n = words.size();
  const size_t chunks = std::clamp<size_t>((n + kInitialChunkWords - 1) / kInitialChunkWords, 1,
                                           kMaxReplayChunks);
  auto chunk_begin = [&](size_t c) { return n * c / chunks; };
  struct Scratch {
    size_t chunk = 0;
    size_t first_word = 0;  // the store index of the chunk's first word
    uint32_t at = 0;        // where its records go in the store
    std::vector<uint32_t> records;
    size_t words = 0;
  };
  std::mutex free_mu;
  std::vector<std::unique_ptr<Scratch>> free_scratch;
  tbb::enumerable_thread_specific<std::vector<uint64_t>> thread_weight(
      [&] { return std::vector<uint64_t>(vocab, 0); });
  size_t next_chunk = 0, next_word = 0;
  uint64_t next_at = 0;
  const size_t tokens = static_cast<size_t>(std::max(1, arena_.max_concurrency())) * 2;
  arena_.execute([&] {
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, Scratch*>(
            tbb::filter_mode::serial_in_order,
            [&](tbb::flow_control& control) -> Scratch* {
              if (next_chunk == chunks) {
                control.stop();
                return nullptr;
              }
              std::unique_ptr<Scratch> scratch;
              {
                std::lock_guard<std::mutex> lock(free_mu);
                if (!free_scratch.empty()) {
                  scratch = std::move(free_scratch.back());
                  free_scratch.pop_back();
                }
              }
              if (scratch == nullptr) scratch = std::make_unique<Scratch>();
              scratch->chunk = next_chunk++;
              return scratch.release();
            }) &
            tbb::make_filter<Scratch*, Scratch*>(
                tbb::filter_mode::parallel,
                [&](Scratch* scratch) {
                  std::vector<uint64_t>& weight = thread_weight.local();
                  std::vector<uint32_t>& out = scratch->records;
                  out.clear();
                  scratch->words = 0;
                  for (size_t i = chunk_begin(scratch->chunk); i < chunk_begin(scratch->chunk + 1); ++i) {
                    const auto& [word, count] = words[i];
                    if (word.size() < 2) continue;  // holds no pair (and is no word of the store)
                    // The record's header, then the word's ids appended right after it.
                    const size_t at = out.size();
                    out.insert(out.end(), {0, static_cast<uint32_t>(count),
                                           static_cast<uint32_t>(count >> 32)});
                    if (!by_characters.Encode(word, out)) bpe.Encode(word, out);
                    out[at] = static_cast<uint32_t>(out.size() - at - 3);
                    for (size_t k = at + 3; k < out.size(); ++k) weight[out[k]] += count;
                    ++scratch->words;
                  }
                  return scratch;
                }) &
            tbb::make_filter<Scratch*, Scratch*>(
                tbb::filter_mode::serial_in_order,
                [&](Scratch* scratch) {
                  scratch->first_word = next_word;
                  scratch->at = static_cast<uint32_t>(next_at);
                  next_word += scratch->words;
                  next_at += scratch->records.size();
                  return scratch;
                }) &
            tbb::make_filter<Scratch*, void>(
                tbb::filter_mode::parallel, [&](Scratch* scratch) {
                  words_.PutRecords(scratch->first_word, scratch->at, scratch->records);
                  std::lock_guard<std::mutex> lock(free_mu);
                  free_scratch.emplace_back(scratch);
                }));
  });
  free_scratch.clear();

  // How often each merge was applied: every occurrence of a merge's token in the final words
  // came from one application, and so did every occurrence of it that a later merge consumed.
  // Going from the last merge back, a token's weight is complete before its merge is reached
  // (only later merges consume it), and is then handed down to the two tokens it was made of.
  std::vector<uint64_t> weight(vocab, 0);
  for (const std::vector<uint64_t>& local : thread_weight) {
    for (size_t t = 0; t < vocab; ++t) weight[t] += local[t];
  }
  counts->assign(merges.size(), 0);
  for (size_t i = merges.size(); i-- > 0;) {
    const Merge& m = merges[i];
    const uint64_t applied = weight[m.result];
    weight[m.left] += applied;
    weight[m.right] += applied;
    if (applied == 0) return ResumeMismatch(i);
    // A pair of two different tokens never overlaps itself: its count is how often it was
    // replaced. (t, t) counts every position of a run of t (a run of 3 holds 2 pairs, and is
    // replaced once): between applied and 2 x applied, and taken from the checkpoint.
    const uint64_t known = KnownResumeCount(i);
    const uint64_t count = m.left != m.right ? applied : known;
    if ((known != 0 && m.left != m.right && known != applied) ||
        (m.left == m.right && (known < applied || known > 2 * applied))) {
      return absl::FailedPreconditionError(StrCat(
          "cannot resume: the checkpoint gives merge ", i + 1, " ('",
          BytesToByteLevel(control_.resume_merges[i].first), "' + '",
          BytesToByteLevel(control_.resume_merges[i].second), "') a count of ", known,
          ", which these word counts do not give (", applied,
          " replacements); the checkpoint belongs to another corpus or other options"));
    }
    (*counts)[i] = count;
  }
  return true;
}

absl::Status Trainer::FinishReplay(std::vector<uint64_t> counts) {
  BpeModel& model = result_.model;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) return ResumeMismatch(i);
    if (counts[i] < options_.min_frequency) {
      // Training would have stopped here: keep the merges before it, drop the rest.
      result_.stop_reason = StrCat("the best pair occurs ", counts[i],
                                   " times, below --min-frequency ", options_.min_frequency, "; ",
                                   VocabShortfall());
      model.merges.resize(first_resumed_ + i);
      model.tokens.resize(resumed_tokens_before_[i]);
      counts.resize(i);
      replay_stopped_ = true;
      break;
    }
  }
  result_.merge_counts.insert(result_.merge_counts.end(), counts.begin(), counts.end());
  replayed_ = counts.size();
  return absl::OkStatus();
}

// The pairs of the rewritten words, grouped by left token: the pair universe is now large
// (millions of pairs on big corpora), so instead of hashing each occurrence, every (pair, word)
// is scattered into its left token's group (a counting sort over the chunks of words, so each
// group is in word order), and each group is then counted and split by right token with dense
// per-thread arrays. Pairs come out in key order with their word lists in word order: the same
// whatever the number of threads.
//
// Unless `track_all`, only the pairs that the remaining merges can plausibly reach are kept:
// a pair that occurs now involves no token made later, so its count can only fall (merges
// raise only the counts of pairs with their new token), and a pair counted below the floor
// cannot be merged while the best kept pair is at or above it. Most pairs are rare (poetry at
// 30k merges: 3.4 M of its 5.5 M pairs occur once), and leaving them out saves their word
// lists and table entries. The floor is one power-of-two tier below the highest tier that
// holds 8 pairs per remaining merge; when no merge remains, nothing is kept. MergeLoop counts
// every pair (TrackAllPairs) should the best kept pair fall below the floor after all.
void Trainer::CountPairsOfWords(bool track_all) {
  const size_t remaining = TargetTokens() > tokens().size() ? TargetTokens() - tokens().size() : 0;
  if (!track_all && remaining == 0) {
    untracked_below_ = std::numeric_limits<uint64_t>::max();
    pairs_.set_partial(true);
    return;
  }
  std::span<const WordRef> refs = words_.refs();
  const size_t n = refs.size();
  const size_t vocab = tokens().size();
  // Chunks of words; their per-token histograms cost chunks x vocab x 8 bytes, kept to about
  // 32 MB (fewer chunks for a large vocabulary).
  const size_t chunks = std::clamp<size_t>(
      std::min((n + kPairChunkWords - 1) / kPairChunkWords, (size_t{4} << 20) / vocab), 1,
      kMaxInitialChunks);
  auto chunk_begin = [&](size_t c) { return n * c / chunks; };
  // Calls fn(left, right, occurrences) once for each distinct mergeable pair of word w.
  auto for_each_pair = [&](WordRef w, absl::flat_hash_map<PairKey, uint32_t>& seen, auto&& fn) {
    std::span<const TokenId> s = words_.symbols(w);
    constexpr size_t kShort = 32;  // up to this length, look around instead of hashing
    if (s.size() <= kShort) {
      for (size_t k = 0; k + 1 < s.size(); ++k) {
        if (!Mergeable(s[k], s[k + 1])) continue;
        bool first = true;
        for (size_t j = 0; j < k && first; ++j) first = !(s[j] == s[k] && s[j + 1] == s[k + 1]);
        if (!first) continue;
        uint32_t occurrences = 1;
        for (size_t j = k + 1; j + 1 < s.size(); ++j) {
          occurrences += s[j] == s[k] && s[j + 1] == s[k + 1];
        }
        fn(s[k], s[k + 1], occurrences);
      }
      return;
    }
    seen.clear();
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      if (Mergeable(s[k], s[k + 1])) ++seen[MakePairKey(s[k], s[k + 1])];
    }
    // In order of first occurrence, so that the result does not depend on the hash order.
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      auto it = seen.find(MakePairKey(s[k], s[k + 1]));
      if (it == seen.end() || it->second == 0) continue;
      fn(s[k], s[k + 1], it->second);
      it->second = 0;
    }
  };
  tbb::enumerable_thread_specific<absl::flat_hash_map<PairKey, uint32_t>> thread_seen;
  // Pass 1: per chunk, how many (pair, word) entries each left token has.
  std::vector<std::vector<uint64_t>> cursor(chunks);
  arena_.execute([&] {
    tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
      std::vector<uint64_t>& hist = cursor[c];
      hist.assign(vocab, 0);
      auto& seen = thread_seen.local();
      for (size_t i = chunk_begin(c); i < chunk_begin(c + 1); ++i) {
        for_each_pair(refs[i], seen, [&](TokenId left, TokenId, uint32_t) { ++hist[left]; });
      }
    });
  });
  std::vector<uint64_t> group(vocab + 1, 0);  // left token l's entries: [group[l], group[l + 1])
  uint64_t total = 0;
  for (size_t l = 0; l < vocab; ++l) {
    group[l] = total;
    for (size_t c = 0; c < chunks; ++c) {
      const uint64_t in_chunk = cursor[c][l];
      cursor[c][l] = total;
      total += in_chunk;
    }
  }
  group[vocab] = total;
  // Pass 2: scatter the entries into their groups.
  // 12 bytes, not 16: the count rarely needs 64 bits (see kLargeCount).
  struct Entry {
    TokenId right;
    WordRef word;
    uint32_t count;  // word count x occurrences in the word, or kLargeCount
  };
  // Marks a count of 2^32 - 1 or more, which is taken from the word itself when summed.
  constexpr uint32_t kLargeCount = std::numeric_limits<uint32_t>::max();
  HugeArray<Entry> entries(total);
  arena_.execute([&] {
    tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
      std::vector<uint64_t>& next = cursor[c];
      auto& seen = thread_seen.local();
      for (size_t i = chunk_begin(c); i < chunk_begin(c + 1); ++i) {
        const uint64_t count = words_.count(refs[i]);
        for_each_pair(refs[i], seen, [&](TokenId left, TokenId right, uint32_t occurrences) {
          const uint64_t c = count * occurrences;
          entries[next[left]++] = {right, refs[i],
                                   c < kLargeCount ? static_cast<uint32_t>(c) : kLargeCount};
        });
      }
    });
  });
  std::vector<std::vector<uint64_t>>().swap(cursor);
  // Pass 3: per left token, count by right token and write the word lists of the pairs kept,
  // in (right, word) order, from the start of the group's own range of the flat list.
  struct Dense {
    std::vector<uint64_t> count;
    std::vector<uint64_t> next;  // words of the pair, then where its next word goes
    std::vector<TokenId> touched;
    std::vector<TokenId> dropped;
    std::vector<uint64_t> tiers = std::vector<uint64_t>(64, 0);  // pairs per power-of-two count
  };
  tbb::enumerable_thread_specific<Dense> thread_dense(
      [&] { return Dense{std::vector<uint64_t>(vocab, 0), std::vector<uint64_t>(vocab, 0), {}, {}}; });
  // The exact count of a kLargeCount entry of left token l: its word's count times the pair's
  // occurrences in it.
  auto large_count = [&](size_t l, const Entry& entry) {
    std::span<const TokenId> s = words_.symbols(entry.word);
    uint64_t occurrences = 0;
    for (size_t k = 0; k + 1 < s.size(); ++k) occurrences += s[k] == l && s[k + 1] == entry.right;
    return words_.count(entry.word) * occurrences;
  };
  auto count_group = [&](Dense& d, size_t l) {
    d.touched.clear();
    for (uint64_t e = group[l]; e < group[l + 1]; ++e) {
      const Entry& entry = entries[e];
      if (d.next[entry.right]++ == 0) d.touched.push_back(entry.right);
      d.count[entry.right] += entry.count != kLargeCount ? entry.count : large_count(l, entry);
    }
  };
  uint64_t keep_from = 1;
  if (!track_all) {
    // The counts' distribution, for the floor.
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, vocab, 64),
                        [&](const tbb::blocked_range<size_t>& range) {
        Dense& d = thread_dense.local();
        for (size_t l = range.begin(); l < range.end(); ++l) {
          count_group(d, l);
          for (TokenId right : d.touched) {
            ++d.tiers[std::bit_width(d.count[right]) - 1];
            d.count[right] = d.next[right] = 0;
          }
        }
      });
    });
    std::vector<uint64_t> tiers(64, 0);
    for (const Dense& d : thread_dense) {
      for (size_t t = 0; t < 64; ++t) tiers[t] += d.tiers[t];
    }
    uint64_t above = 0;
    int tier = 63;
    for (; tier > 0; --tier) {
      above += tiers[tier];
      if (above >= 8 * remaining) break;
    }
    keep_from = tier <= 1 ? 1 : uint64_t{1} << (tier - 1);
    if (control_.resume_pair_floor != 0) keep_from = control_.resume_pair_floor;
  }
  untracked_below_ = keep_from;
  pairs_.set_partial(keep_from > 1);
  constexpr uint64_t kDropped = std::numeric_limits<uint64_t>::max();
  std::vector<std::vector<RightPair>> group_pairs(vocab);
  std::vector<uint64_t> group_end(vocab, 0);
  HugeArray<WordRef> flat(total);
  arena_.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, vocab, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
      Dense& d = thread_dense.local();
      for (size_t l = range.begin(); l < range.end(); ++l) {
        group_end[l] = group[l];
        if (group[l] == group[l + 1]) continue;
        count_group(d, l);
        d.dropped.clear();
        size_t kept = 0;
        for (TokenId right : d.touched) {
          if (d.count[right] >= keep_from) {
            d.touched[kept++] = right;
          } else {
            d.dropped.push_back(right);
            d.next[right] = kDropped;
          }
        }
        d.touched.resize(kept);
        std::sort(d.touched.begin(), d.touched.end());
        std::vector<RightPair>& out = group_pairs[l];
        out.reserve(d.touched.size());
        uint64_t at = group[l];
        for (TokenId right : d.touched) {
          out.push_back({right, d.count[right], at});
          const uint64_t words = d.next[right];
          d.next[right] = at;
          at += words;
        }
        group_end[l] = at;
        if (!d.touched.empty()) {
          for (uint64_t e = group[l]; e < group[l + 1]; ++e) {
            uint64_t& next = d.next[entries[e].right];
            if (next != kDropped) flat[next++] = entries[e].word;
          }
        }
        for (TokenId right : d.touched) d.count[right] = d.next[right] = 0;
        for (TokenId right : d.dropped) d.count[right] = d.next[right] = 0;
      }
    });
  });
  entries = HugeArray<Entry>();  // frees them
  // The index's shards are filled in parallel from the groups, beside the queue (which heaps
  // only the pairs of the highest counts; merge_queue.h).
  const PairsByLeft pairs{group_pairs, group_end};
  arena_.execute([&] {
    tbb::parallel_invoke([&] { pairs_.Build(std::move(flat), pairs); },
                         [&] { queue_.Fill(pairs); });
  });
}

void Trainer::TrackAllPairs() {
  pairs_ = PairIndex();
  CountPairsOfWords(/*track_all=*/true);
}

bool Trainer::ReportReplayed() {
  if (!control_.after_merge) return true;
  const BpeModel& model = result_.model;
  const size_t first = model.merges.size() - replayed_;
  for (size_t i = 0; i < replayed_; ++i) {
    const Merge& m = model.merges[first + i];
    const size_t done = first + i + 1;
    MergeEvent event{.merges_done = done,
                     .left = model.tokens[m.left],
                     .right = model.tokens[m.right],
                     .count = result_.merge_counts[first + i],
                     .id = m.result,
                     .merges_planned = model.merges.size() + TargetTokens() - tokens().size(),
                     .replayed = true};
    if (!control_.after_merge(event)) {
      result_.interrupted = true;
      result_.stop_reason = StrCat("interrupted after ", done, " merges");
      return false;
    }
  }
  return true;
}

void Trainer::RunBatch(std::span<const WordRef> words, size_t batch) {
  constexpr size_t kPrefetchAhead = 16;
  MergeDeltas& deltas = thread_deltas_.local();
  deltas.Begin(slots_.num_slots(), merge_stamp_);
  std::vector<RisenWord>& risen = batch_risen_[batch];
  risen.clear();
  for (size_t i = 0; i < std::min(kPrefetchAhead, words.size()); ++i) words_.Prefetch(words[i]);
  for (size_t i = 0; i < words.size(); ++i) {
    if (i + kPrefetchAhead < words.size()) words_.Prefetch(words[i + kPrefetchAhead]);
    deltas.StartWord();
    uint32_t merged = words_.MergeWord(
        words[i], merge_a_, merge_b_, merge_t_, [&](TokenId left, TokenId right, int64_t delta) {
          if (Mergeable(left, right)) deltas.Report(left, right, delta);
        });
    if (merged > 0) deltas.FinishWord(slots_, words[i], risen);
  }
}

void Trainer::ReduceMerge(size_t batches) {
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
    const uint64_t count = pairs_.AddCount(slots_.KeyOf(slot), sum);
    if (sum > 0) queue_.Push(count, slots_.KeyOf(slot));
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
  pairs_.AddWordBlock(std::move(block), keys, offsets);
}

void Trainer::ApplyMerge(PairKey p, TokenId a, TokenId b, TokenId t) {
  ++merge_stamp_;
  merge_a_ = a, merge_b_ = b, merge_t_ = t;
  slots_.Begin(a, b, t, static_cast<uint32_t>(tokens().size()));
  if (slot_.size() < slots_.num_slots()) {
    // Grow by an eighth (the vocabulary grows by one id per merge), not by doubling.
    slot_.reserve(slots_.num_slots() + slots_.num_slots() / 8 + 1024);
    slot_.resize(slot_.capacity());
  }
  std::span<const WordRef> words = pairs_.TakeWords(p);
  const size_t batches =
      words.size() < kParallelMinWords ? 1 : (words.size() + kBatchWords - 1) / kBatchWords;
  if (batch_risen_.size() < batches) batch_risen_.resize(batches);
  if (batches == 1) {
    RunBatch(words, 0);
  } else {
    arena_.execute([&] {
      tbb::parallel_for(size_t{0}, batches, [&](size_t i) {
        size_t begin = i * kBatchWords, end = std::min(words.size(), begin + kBatchWords);
        RunBatch(words.subspan(begin, end - begin), i);
      });
    });
  }
  ReduceMerge(batches);
}

size_t Trainer::TargetTokens() const {
  size_t end_specials =
      options_.special_tokens_at == SpecialTokensAt::kEnd ? options_.special_tokens.size() : 0;
  return options_.vocab_size > end_specials ? options_.vocab_size - end_specials : 0;
}

std::string Trainer::VocabShortfall() const {
  size_t reached = tokens().size() + (TargetTokens() < options_.vocab_size
                                          ? options_.vocab_size - TargetTokens() : 0);
  return StrCat("stopped at vocab size ", reached, " of the ", options_.vocab_size, " asked for");
}

absl::Status Trainer::MergeLoop() {
  BpeModel& model = result_.model;
  result_.stop_reason = StrCat("reached --vocab-size ", options_.vocab_size);
  if (replay_stopped_) return absl::OkStatus();  // stop_reason was set by the replay
  if (!ReportReplayed()) return absl::OkStatus();
  while (model.tokens.size() < TargetTokens()) {
    PairKey p;
    const bool popped = queue_.PopBest(pairs_, &p);
    const uint64_t count = popped ? pairs_.count(p) : 0;
    if (untracked_below_ > 1 && count < untracked_below_) {
      // A pair left out might now be the best: count them all (see CountPairsOfWords).
      TrackAllPairs();
      continue;
    }
    if (!popped) {
      if (model.merges.empty()) {
        return absl::FailedPreconditionError(
            "the corpus yields no pair to merge (every word is a single byte), so no merge "
            "can be learned");
      }
      result_.stop_reason = StrCat("no pair is left to merge; ", VocabShortfall());
      break;
    }
    if (count < options_.min_frequency) {
      result_.stop_reason = StrCat("the best pair occurs ", count, " times, below --min-frequency ",
                                   options_.min_frequency, "; ", VocabShortfall());
      break;
    }
    const TokenId a = PairLeft(p), b = PairRight(p);
    const size_t tokens_before = model.tokens.size();
    const TokenId t = TokenFor(a, b);
    if (untracked_below_ > 1 && t < tokens_before) {
      // An existing token again: the pairs it is in may rise, and some may be left out.
      TrackAllPairs();
    }
    model.merges.push_back({a, b, t});
    result_.merge_counts.push_back(count);
    ApplyMerge(p, a, b, t);
    if (control_.after_merge) {
      MergeEvent event{.merges_done = model.merges.size(),
                       .left = model.tokens[a],
                       .right = model.tokens[b],
                       .count = count,
                       .id = t,
                       .merges_planned = model.merges.size() + TargetTokens() - tokens().size(),
                       .replayed = false};
      if (!control_.after_merge(event)) {
        result_.interrupted = true;
        result_.stop_reason = StrCat("interrupted after ", model.merges.size(), " merges");
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainResult> Trainer::Run() {
  TM_RETURN_IF_ERROR(options_.Validate());
  Stopwatch clock;
  auto lap = [&](const char* phase) { result_.phase_seconds.emplace_back(phase, clock.Lap()); };
  if (options_.special_tokens_at == SpecialTokensAt::kStart) AddSpecialTokens();
  const bool resuming = !control_.resume_merges.empty();
  // Starts the arena's threads now, with an empty task: on a resumed run this is their first
  // use, and they take about half a millisecond to come up, which resolving the merges hides.
  // (With one thread there are none: TBB would add one for the task.)
  if (arena_.max_concurrency() > 1) arena_.enqueue([] {});
  bool replayed = false;  // the words were built with the resumed merges applied
  std::vector<uint64_t> replay_counts;
  {
    // The words in the table's own order: nothing downstream depends on word order (counts
    // are exact sums, word lists are sets, ties go by bytes or ids), so no sort is needed.
    std::vector<std::pair<std::string_view, uint64_t>> from_counts;
    if (counts_ != nullptr) {
      from_counts.reserve(counts_->unique_words());
      counts_->ForEach(
          [&](std::string_view word, uint64_t count) { from_counts.emplace_back(word, count); });
    }
    std::span<const std::pair<std::string_view, uint64_t>> words =
        counts_ != nullptr ? std::span(from_counts) : std::span(list_->entries);
    TM_RETURN_IF_ERROR(BuildAlphabet(words));
    if (resuming) {
      TM_RETURN_IF_ERROR(ResolveResumeMerges());
      lap("words");
      TM_ASSIGN_OR_RETURN(replayed, ReplayByEncoding(words, &replay_counts));
    }
    if (!replayed) TM_RETURN_IF_ERROR(BuildWords(words));
  }
  if (owned_ != nullptr || list_ != nullptr) {  // the words live on in words_
    if (control_.before_counts_freed) control_.before_counts_freed();
    if (owned_ != nullptr) *owned_ = WordCounts();
    if (list_ != nullptr) *list_ = WordList();
  }
  if (!resuming) {
    lap("words");
    CountInitialPairs();
    lap("initial pairs");
  } else {
    if (!replayed) replay_counts = ReplayWordByWord();
    TM_RETURN_IF_ERROR(FinishReplay(std::move(replay_counts)));
    lap("replay");
    CountPairsOfWords(/*track_all=*/false);
    lap("pairs");
  }
  TM_RETURN_IF_ERROR(MergeLoop());
  lap("merges");
  if (options_.special_tokens_at == SpecialTokensAt::kEnd) AddSpecialTokens();
  return std::move(result_);
}

}  // namespace

namespace {

absl::StatusOr<TrainResult> Train(const WordCounts* counts, WordCounts* owned, WordList* list,
                                  const TrainerOptions& options, const TrainControl& control) {
  // --threads above the core count is honoured (oversubscribed), not capped with a warning.
  std::optional<tbb::global_control> parallelism;
  if (options.threads > 0) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism,
                        static_cast<size_t>(options.threads));
  }
#ifdef __GLIBC__
  // Give the memory that earlier stages (counting) freed back to the system before the trainer
  // allocates its own, so that peak RSS is not their high-water mark plus ours.
  malloc_trim(0);
#endif
  Trainer trainer(counts, owned, list, options, control);
  return trainer.Run();
}

}  // namespace

absl::StatusOr<TrainResult> TrainBpe(const WordCounts& counts, const TrainerOptions& options,
                                     const TrainControl& control) {
  return Train(&counts, nullptr, nullptr, options, control);
}

absl::StatusOr<TrainResult> TrainBpe(WordCounts&& counts, const TrainerOptions& options,
                                     const TrainControl& control) {
  // Emptied in place (not moved from at once), after control.before_counts_freed.
  return Train(&counts, &counts, nullptr, options, control);
}

absl::StatusOr<TrainResult> TrainBpe(WordList&& words, const TrainerOptions& options,
                                     const TrainControl& control) {
  return Train(nullptr, nullptr, &words, options, control);
}

}  // namespace tokenmill
