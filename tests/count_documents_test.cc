// CountDocuments: documents a caller hands over in batches (as the Python binding hands over
// an iterator's strings) give exactly the counts and totals CountCorpus gives for the same text
// in files, whatever the thread count and however the documents are cut into batches; the
// source's errors come back unchanged, with every thread joined; the source never runs more
// than the queue's bound ahead of the counting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/option_error.h"
#include "count/count_corpus.h"
#include "count/counts_file.h"
#include "reference/cli_runner.h"
#include "reference/shared_corpus.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

using Documents = std::vector<std::string>;

// Each line of `text` with its '\n' (the last one without, if the text does not end with one):
// CountCorpus's documents in doc_mode line.
Documents Lines(const std::string& text) {
  Documents lines;
  for (size_t start = 0; start < text.size();) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// How a source cuts its documents into batches: at most `documents` documents and, once
// `bytes` are reached, no more; every `empty_every`-th call (0: never) hands over nothing.
struct Batching {
  size_t documents = 1;
  size_t bytes = SIZE_MAX;
  size_t empty_every = 0;
  std::string Name() const {
    return std::to_string(documents) + " documents, " + std::to_string(bytes) + " bytes, empty every " +
           std::to_string(empty_every);
  }
};

// Hands `documents` over as `batching` says; the last batch comes with `false`. A call after
// that, or with a batch not cleared, fails the test.
DocumentSource ListSource(const Documents& documents, Batching batching) {
  struct State {
    size_t next = 0, calls = 0;
    bool ended = false;
  };
  auto state = std::make_shared<State>();
  return [&documents, batching, state](DocumentBatch& batch) -> absl::StatusOr<bool> {
    EXPECT_FALSE(state->ended) << "the source was called after its end";
    EXPECT_TRUE(batch.text.empty() && batch.ends.empty()) << "the batch was not cleared";
    ++state->calls;
    if (batching.empty_every != 0 && state->calls % batching.empty_every == 0) return true;
    while (state->next < documents.size() && batch.ends.size() < batching.documents &&
           batch.text.size() < batching.bytes) {
      batch.text += documents[state->next++];
      batch.ends.push_back(batch.text.size());
    }
    state->ended = state->next == documents.size();
    return !state->ended;
  };
}

CountCorpusOptions Quiet(std::vector<std::string> inputs = {}) {
  CountCorpusOptions options;
  options.inputs = std::move(inputs);
  options.progress = ProgressFormat::kNone;
  return options;
}

CorpusCounts CountOrDie(const absl::StatusOr<CorpusCounts>& counts) {
  EXPECT_TRUE(counts.ok()) << counts.status();
  return counts.ok() ? *counts : CorpusCounts();
}

void ExpectSameCounts(const CorpusCounts& got, const CorpusCounts& expected) {
  EXPECT_TRUE(got.words == expected.words);
  EXPECT_EQ(got.words.total_words(), expected.words.total_words());
  EXPECT_EQ(got.documents, expected.documents);
  EXPECT_EQ(got.bytes, expected.bytes);
  EXPECT_EQ(got.invalid_utf8, expected.invalid_utf8);
  EXPECT_EQ(got.nul_bytes, expected.nul_bytes);
  EXPECT_EQ(got.files, 0u);
}

// Random text: words, code, CJK, runs of spaces, blank lines, special tokens (one with a
// space), invalid UTF-8 and NUL bytes; `newlines` of the pieces are line breaks.
std::string RandomText(size_t pieces, uint32_t seed, bool newlines = true) {
  std::mt19937 rng(seed);
  const std::vector<std::string> words = {
      "the",  "cat",  " ",    "  ",  "\t",     "don't", "I'm",     "x=1;", "  return 0;", "诗歌",
      "山水", "123",  "4567", "...", "!!",     "\r",    "é",       "E\xcc\x81", "\xff\xfe", std::string(1, '\0'),
      "a b",  "Hello", "WORLD", "\xe4\xb8", "\xb8\x80", "<|endoftext|>", "<|x y|>", "ﬁ", "Ⅻ"};
  std::string text;
  for (size_t i = 0; i < pieces; ++i) {
    text += words[rng() % words.size()];
    if (rng() % 3 == 0) text += ' ';
    if (newlines && rng() % 9 == 0) text += rng() % 4 == 0 ? "\n\n" : "\n";
  }
  return text;
}

// The options the random corpora are counted with: the default split with special tokens, and
// the metaspace after NFKC and lowercasing (text preparation, a prefix per document).
std::vector<CountCorpusOptions> RandomTextOptions() {
  CountCorpusOptions plain = Quiet();
  plain.special_tokens = {"<|endoftext|>", "<|x y|>"};
  CountCorpusOptions prepared = Quiet();
  prepared.pretokenizer.preset = "metaspace";
  prepared.pretokenizer.normalizer.form = NormalForm::kNfkc;
  prepared.pretokenizer.normalizer.lowercase = true;
  prepared.special_tokens = {"<|endoftext|>"};
  return {plain, prepared};
}

// The lines of `text`, handed over with every thread count and batching, count as CountCorpus
// counts the file.
void ExpectLinesCountAsTheFile(const std::string& text, const CountCorpusOptions& options,
                               const std::string& name) {
  TempDir dir;
  CountCorpusOptions file_options = options;
  file_options.inputs = {dir.Write("corpus.txt", text)};
  file_options.threads = 2;
  const CorpusCounts expected = CountOrDie(CountCorpus(file_options));
  ASSERT_GT(expected.documents, 100u);
  const Documents lines = Lines(text);
  for (int threads : {1, 2, 4}) {
    for (Batching batching : {Batching{1}, Batching{7, SIZE_MAX, 5}, Batching{SIZE_MAX, 1 << 20}}) {
      SCOPED_TRACE(name + ", " + std::to_string(threads) + " threads, " + batching.Name());
      CountCorpusOptions document_options = options;
      document_options.threads = threads;
      ExpectSameCounts(CountOrDie(CountDocuments(ListSource(lines, batching), document_options)),
                       expected);
    }
  }
}

TEST(CountDocuments, TheLinesOfACorpusCountAsCountCorpusCountsTheFile) {
  const std::string brown = testing::ReadSharedCorpus("brown", size_t{3} << 20);
  if (brown.empty()) GTEST_SKIP() << "shared corpus brown not found";
  // About 3 MB: the ~1 MB batches are several.
  ExpectLinesCountAsTheFile(brown, Quiet(), "brown");
}

TEST(CountDocuments, TheLinesOfRandomTextCountAsCountCorpusCountsTheFile) {
  const std::string text = RandomText(60000, 1);
  for (const CountCorpusOptions& options : RandomTextOptions()) {
    ExpectLinesCountAsTheFile(text, options, options.pretokenizer.preset);
  }
}

// Documents of several lines (some empty, some split inside a UTF-8 sequence, so that its
// halves are invalid in each) are counted whole: as CountCorpus counts one file a document in
// doc_mode file, and each document's totals on its own.
TEST(CountDocuments, DocumentsOfManyLinesAreCountedWhole) {
  std::mt19937 rng(7);
  const std::string text = RandomText(40000, 2);
  Documents documents;
  for (size_t start = 0; start < text.size();) {
    size_t size = rng() % 5 == 0 ? 0 : rng() % 400;
    documents.push_back(text.substr(start, size));
    start += size;
  }
  documents.push_back("");
  size_t empty = 0;
  for (const std::string& d : documents) empty += d.empty();
  ASSERT_GT(empty, 10u);
  for (const CountCorpusOptions& options : RandomTextOptions()) {
    TempDir dir;
    CountCorpusOptions file_options = options;
    file_options.doc_mode = "file";
    file_options.threads = 2;
    for (size_t i = 0; i < documents.size(); ++i) {
      file_options.inputs.push_back(dir.Write("doc" + std::to_string(i) + ".txt", documents[i]));
    }
    CorpusCounts expected = CountOrDie(CountCorpus(file_options));
    // An empty file is no document in doc_mode file; an empty document handed over is one.
    EXPECT_EQ(expected.documents, documents.size() - empty);
    expected.documents = documents.size();
    for (int threads : {1, 2, 4}) {
      for (Batching batching : {Batching{1}, Batching{5, SIZE_MAX, 3}, Batching{SIZE_MAX, 1 << 20}}) {
        SCOPED_TRACE(options.pretokenizer.preset + ", " + std::to_string(threads) + " threads, " +
                     batching.Name());
        CountCorpusOptions document_options = options;
        document_options.threads = threads;
        ExpectSameCounts(CountOrDie(CountDocuments(ListSource(documents, batching), document_options)),
                         expected);
      }
    }
  }
}

TEST(CountDocuments, WordCountFilesAreAddedAfterTheDocuments) {
  TempDir dir;
  const std::string first = RandomText(3000, 3), second = RandomText(3000, 4);
  CountCorpusOptions options = Quiet({dir.Write("first.txt", first)});
  CorpusCounts counted = CountOrDie(CountCorpus(options));
  const std::string counts_file = dir.File("first.tmc");
  ASSERT_TRUE(WriteCountsFile(counts_file, MakeCountsFileHeader(options, counted), counted.words).ok());

  CountCorpusOptions both = Quiet({dir.Write("second.txt", second), counts_file});
  const CorpusCounts expected = CountOrDie(CountCorpus(both));
  CountCorpusOptions documents_options = Quiet();
  documents_options.counts_files = {counts_file};
  const Documents lines = Lines(second);
  CorpusCounts got = CountOrDie(CountDocuments(ListSource(lines, Batching{10}), documents_options));
  EXPECT_TRUE(got.words == expected.words);
  EXPECT_EQ(got.documents, expected.documents);
  EXPECT_EQ(got.bytes, expected.bytes);
  EXPECT_EQ(got.files, 1u);  // the counts file's one file
}

TEST(CountDocuments, AnEmptyCorpusAndInputsAreRefused) {
  auto error = [](const Documents& documents, const CountCorpusOptions& options) {
    absl::StatusOr<CorpusCounts> counts = CountDocuments(ListSource(documents, Batching{2}), options);
    return counts.ok() ? std::string("ok") : std::string(counts.status().message());
  };
  EXPECT_THAT(error({}, Quiet()), HasSubstr("the corpus is empty: 0 document(s)"));
  EXPECT_THAT(error({"", "", ""}, Quiet()), HasSubstr("the corpus is empty: 3 document(s)"));
  CountCorpusOptions specials = Quiet();
  specials.special_tokens = {"<s>"};
  EXPECT_THAT(error({"<s><s>", "<s>"}, specials), HasSubstr("the corpus is empty"));
  EXPECT_EQ(error({"a", "b"}, specials), "ok");

  absl::StatusOr<CorpusCounts> with_inputs = CountDocuments(ListSource({"a"}, Batching{1}), Quiet({"x.txt"}));
  ASSERT_FALSE(with_inputs.ok());
  EXPECT_TRUE(IsOptionError(with_inputs.status()));
  EXPECT_EQ(OptionNamesOf(with_inputs.status()), std::vector<std::string>{"inputs"});
  CountCorpusOptions bad_threads = Quiet();
  bad_threads.threads = -1;
  EXPECT_EQ(OptionNamesOf(CountDocuments(ListSource({"a"}, Batching{1}), bad_threads).status()),
            std::vector<std::string>{"threads"});
}

TEST(CountDocuments, ABatchWhoseEndsDoNotFitItsTextIsAnError) {
  for (const DocumentBatch& bad : {DocumentBatch{"abc", {1, 0}}, DocumentBatch{"abc", {1, 4}},
                                   DocumentBatch{"abc", {1}}, DocumentBatch{"abc", {}}}) {
    for (int threads : {1, 4}) {
      CountCorpusOptions options = Quiet();
      options.threads = threads;
      int calls = 0;
      absl::StatusOr<CorpusCounts> counts = CountDocuments(
          [&](DocumentBatch& batch) -> absl::StatusOr<bool> {
            if (++calls < 3) {
              batch.text = "good documents\n";
              batch.ends = {batch.text.size()};
            } else {
              batch = bad;
            }
            return true;
          },
          options);
      ASSERT_FALSE(counts.ok());
      EXPECT_EQ(counts.status().code(), absl::StatusCode::kInvalidArgument) << counts.status();
      EXPECT_THAT(std::string(counts.status().message()), HasSubstr("a batch of"));
      EXPECT_EQ(calls, 3);
    }
  }
}

// The status the binding would make of a KeyboardInterrupt, with a payload it might carry.
absl::Status Interrupted() {
  absl::Status status = absl::CancelledError("KeyboardInterrupt");
  status.SetPayload("tokenmill.test/python", absl::Cord("exception object"));
  return status;
}

// A source error at the first call, in the middle (when the queue is full and every counting
// thread is inside a batch, held there until the error) and where the end would be:
// CountDocuments returns it unchanged, and returns (every thread joined, the queue drained),
// with 1 and 4 threads.
TEST(CountDocuments, ASourceErrorComesBackUnchanged) {
  const Documents lines = Lines(RandomText(20000, 5));
  enum class When { kFirstCall, kQueueFull, kAtTheEnd };
  for (int threads : {1, 4}) {
    for (When when : {When::kFirstCall, When::kQueueFull, When::kAtTheEnd}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, case " + std::to_string(static_cast<int>(when)));
      CountCorpusOptions options = Quiet();
      options.threads = threads;
      // The queue holds 2 batches a thread, the threads one each: the caller's next call comes
      // after 3 a thread.
      const size_t queue_full = 3 * static_cast<size_t>(threads) + 1;
      std::mutex mu;
      std::condition_variable failed_cv;
      bool failed = false;
      auto counted = [&](const DocumentBatch&) {
        std::unique_lock<std::mutex> lock(mu);
        if (when == When::kQueueFull) failed_cv.wait(lock, [&] { return failed; });
      };
      DocumentSource lines_source = ListSource(lines, Batching{50});
      size_t calls = 0;
      bool lines_ended = false;
      DocumentSource source = [&](DocumentBatch& batch) -> absl::StatusOr<bool> {
        ++calls;
        if ((when == When::kFirstCall && calls == 1) || (when == When::kQueueFull && calls == queue_full) ||
            lines_ended) {
          std::lock_guard<std::mutex> lock(mu);
          failed = true;
          failed_cv.notify_all();
          return Interrupted();
        }
        absl::StatusOr<bool> more = lines_source(batch);
        // Where the end would be, the source does not end: its next call fails.
        if (more.ok() && !*more) {
          lines_ended = true;
          return true;
        }
        return more;
      };
      absl::StatusOr<CorpusPlan> plan = PlanDocuments(options);
      ASSERT_TRUE(plan.ok()) << plan.status();
      absl::StatusOr<CorpusCounts> counts = CountDocuments(source, *std::move(plan), counted);
      ASSERT_FALSE(counts.ok());
      EXPECT_EQ(counts.status(), Interrupted());
      switch (when) {
        case When::kFirstCall: EXPECT_EQ(calls, 1u); break;
        case When::kQueueFull: EXPECT_EQ(calls, queue_full); break;
        case When::kAtTheEnd: EXPECT_GT(calls, lines.size() / 50); break;
      }
    }
  }
}

TEST(CountDocuments, AnExceptionOfTheSourceLeavesNoThreadRunning) {
  for (int threads : {1, 4}) {
    CountCorpusOptions options = Quiet();
    options.threads = threads;
    int calls = 0;
    auto source = [&](DocumentBatch& batch) -> absl::StatusOr<bool> {
      if (++calls == 10) throw std::runtime_error("from the source");
      batch.text = "some text to count\n";
      batch.ends = {batch.text.size()};
      return true;
    };
    EXPECT_THROW((void)CountDocuments(source, options), std::runtime_error);
  }
}

// Counting made slow (each batch takes 3 ms), a source that could hand out batches at once is
// never more than the queue (2 batches a thread) plus the batches being counted (1 a thread)
// ahead of the counting, and is handed no more distinct batch objects than those plus the one
// it fills: memory is bounded whatever the stream's length. It does get that far ahead (the
// queue is what holds it back).
TEST(CountDocuments, TheSourceRunsAtMostTheQueueAheadOfTheCounting) {
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    CountCorpusOptions options = Quiet();
    options.threads = threads;
    std::atomic<size_t> counted{0};
    auto slow_count = [&](const DocumentBatch&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      counted.fetch_add(1);
    };
    size_t handed = 0, most_ahead = 0;
    std::set<const DocumentBatch*> batches;
    const size_t total = 40 * static_cast<size_t>(threads);
    auto source = [&](DocumentBatch& batch) -> absl::StatusOr<bool> {
      most_ahead = std::max(most_ahead, handed - counted.load());
      batches.insert(&batch);
      batch.text = "a document " + std::to_string(handed) + "\n";
      batch.ends = {batch.text.size()};
      return ++handed < total;
    };
    absl::StatusOr<CorpusPlan> plan = PlanDocuments(options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    CorpusCounts counts = CountOrDie(CountDocuments(source, *std::move(plan), slow_count));
    EXPECT_EQ(counts.documents, total);
    EXPECT_EQ(counted.load(), total);
    const size_t bound = 3 * static_cast<size_t>(threads);
    EXPECT_LE(most_ahead, bound);
    EXPECT_GE(most_ahead, 2 * static_cast<size_t>(threads));
    EXPECT_LE(batches.size(), bound + 1);
  }
}

}  // namespace
}  // namespace tokenmill
