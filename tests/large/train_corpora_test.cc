// The trainer on the full shared corpora: the same model for 1, 2 and 8 threads, and resuming
// from an interrupted run's merges gives the uninterrupted model. Label "large" (seconds to
// minutes; sanitizer runs skip it).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "count/count_text.h"
#include "count/word_counts.h"
#include "pretokenize/pretokenizer.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

// The GPT-2 word counts of ../shared/corpora/NAME.txt.zst (lines as documents), or null if the
// corpus is missing.
std::unique_ptr<WordCounts> CountSharedCorpus(const std::string& name) {
  std::string path = std::string(TOKENMILL_SHARED_DIR) + "/corpora/" + name + ".txt.zst";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("zstd -dc '" + path + "' 2>/dev/null").c_str(), "r"),
                                            pclose);
  if (pipe == nullptr) return nullptr;
  std::string text;
  char buffer[1 << 16];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe.get())) > 0;) text.append(buffer, n);
  if (text.empty()) return nullptr;
  auto counts = std::make_unique<WordCounts>();
  auto pretokenizer = PreTokenizer::Create(PreTokenizerConfig{}).value();
  std::string_view all(text);
  for (size_t start = 0; start < all.size();) {
    size_t newline = all.find('\n', start);
    size_t end = newline == std::string_view::npos ? all.size() : newline + 1;
    CountDocument(all.substr(start, end - start), *pretokenizer, nullptr, *counts);
    start = end;
  }
  return counts;
}

class TrainCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(TrainCorpus, SameModelForOneTwoAndEightThreads) {
  std::unique_ptr<WordCounts> counts = CountSharedCorpus(GetParam());
  if (counts == nullptr) GTEST_SKIP() << "shared corpus " << GetParam() << " not found";
  TrainResult first;
  for (int threads : {1, 2, 8}) {
    TrainerOptions options;
    options.vocab_size = 30000;
    options.hf_compat = true;
    options.threads = threads;
    absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(*counts), options);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_TRUE(Bpe(*result).Validate().ok());
    if (threads == 1) {
      first = *std::move(result);
    } else {
      EXPECT_TRUE(Bpe(*result) == Bpe(first)) << threads << " threads differ from 1";
      EXPECT_EQ(result->merge_counts, first.merge_counts);
    }
  }
}

// Trains `counts` to `vocab_size` uninterrupted and interrupted after `stop_after` merges, then
// resumes the latter with and without the interrupted run's merge counts (without them, a
// self-merge such as "--" makes the replay go word by word; with them, as checkpoints give
// them, it encodes the words): both must give the uninterrupted model and counts. Returns the
// interrupted run's model (the vocabulary that was replayed).
BpeModel ExpectResumeMatches(const WordCounts& counts, size_t vocab_size, size_t stop_after) {
  TrainerOptions options;
  options.vocab_size = vocab_size;
  absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(full.ok()) << full.status();
  TrainControl interrupt;
  interrupt.after_step = [&](const TrainEvent& e) { return e.steps_done < stop_after; };
  absl::StatusOr<TrainResult> partial = Train(WordSource::Borrow(counts), options, interrupt);
  EXPECT_TRUE(partial.ok() && partial->interrupted) << partial.status();
  if (!full.ok() || !partial.ok()) return BpeModel();
  TrainControl resume;
  for (const Merge& m : Bpe(*partial).merges) {
    resume.resume.merges.emplace_back(Bpe(*partial).tokens[m.left], Bpe(*partial).tokens[m.right]);
  }
  for (bool with_counts : {false, true}) {
    resume.resume.merge_counts.clear();
    if (with_counts) resume.resume.merge_counts = partial->merge_counts;
    absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), options, resume);
    EXPECT_TRUE(resumed.ok()) << resumed.status();
    if (!resumed.ok()) continue;
    EXPECT_TRUE(Bpe(*resumed) == Bpe(*full)) << "with counts: " << with_counts;
    EXPECT_EQ(resumed->merge_counts, full->merge_counts) << "with counts: " << with_counts;
  }
  return Bpe(*partial);
}

TEST_P(TrainCorpus, ResumingAnInterruptedRunGivesTheSameModel) {
  std::unique_ptr<WordCounts> counts = CountSharedCorpus(GetParam());
  if (counts == nullptr) GTEST_SKIP() << "shared corpus " << GetParam() << " not found";
  ExpectResumeMatches(*counts, 20000, 7777);
}

INSTANTIATE_TEST_SUITE_P(Shared, TrainCorpus, ::testing::Values("brown", "linux_docs"));

// Chinese: the replay starts most words from their characters' own BPE
// (model/bpe/merge_list_encoder.h); poetry's vocabulary has tokens that join a character to
// part of the next, which that path must avoid.
TEST(TrainCorpusPoetry, ResumingAnInterruptedRunGivesTheSameModel) {
  std::unique_ptr<WordCounts> counts = CountSharedCorpus("poetry");
  if (counts == nullptr) GTEST_SKIP() << "shared corpus poetry not found";
  const BpeModel replayed = ExpectResumeMatches(*counts, 12000, 9000);
  // The replayed vocabulary does hold such tokens: a character then a lead byte.
  size_t joining = 0;
  for (const std::string& t : replayed.tokens) {
    joining += t.size() == 4 && (t[0] & 0xF0) == 0xE0 && (t[3] & 0xF0) == 0xE0;
    joining += t.size() == 5 && (t[0] & 0xF0) == 0xE0 && (t[3] & 0xF0) == 0xE0;
  }
  EXPECT_GT(joining, 0u);
}

}  // namespace
}  // namespace tokenmill
