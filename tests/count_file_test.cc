// Word-count files: write -> read round trip, byte-identical files whatever the thread count,
// summing files equals counting their corpora together, mismatches and corruption are errors.
#include <fstream>
#include <random>
#include <string>

#include "common/file_util.h"
#include "count/count_corpus.h"
#include "count/counts_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

std::string Corpus(int seed) {
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += "line " + std::to_string((i * 7 + seed) % 50) + " of corpus " + std::to_string(seed) +
            (i % 3 ? " with  words\n" : " 中文 <|end|> text\n");
  }
  return text;
}

CountCorpusOptions Options(std::vector<std::string> inputs) {
  CountCorpusOptions options;
  options.inputs = std::move(inputs);
  options.progress = ProgressFormat::kNone;
  options.special_tokens = {"<|end|>"};
  return options;
}

TEST(CountsFile, RoundTripKeepsTableAndHeader) {
  TempDir dir;
  CountCorpusOptions options = Options({dir.Write("a.txt", Corpus(1))});
  options.pretokenizer.preset = "cl100k";
  CorpusCounts counts = CountCorpus(options).value();
  CountsFileHeader header = MakeCountsFileHeader(options, counts);
  ASSERT_TRUE(WriteCountsFile(dir.File("a.tmc"), header, counts.words).ok());
  EXPECT_TRUE(IsCountsFile(dir.File("a.tmc")));
  EXPECT_FALSE(IsCountsFile(dir.File("a.txt")));

  WordCounts read;
  absl::StatusOr<CountsFileHeader> back = ReadCountsFile(dir.File("a.tmc"), &read);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(read == counts.words);
  EXPECT_EQ(back->totals, counts.Totals());
  EXPECT_EQ(back->pretokenizer.preset, "cl100k");
  EXPECT_EQ(back->special_tokens, std::vector<std::string>{"<|end|>"});
  EXPECT_EQ(back->doc_mode, "line");
  EXPECT_EQ(*back, ReadCountsFileHeader(dir.File("a.tmc")).value());

  // The same corpus counted with other thread and shard settings gives the same bytes.
  options.threads = 2;
  options.shard_bytes = 17;
  CorpusCounts again = CountCorpus(options).value();
  ASSERT_TRUE(WriteCountsFile(dir.File("b.tmc"), MakeCountsFileHeader(options, again), again.words).ok());
  EXPECT_EQ(ReadFile(dir.File("a.tmc")).value(), ReadFile(dir.File("b.tmc")).value());

  std::string described;
  ASSERT_TRUE(DescribeCountsFile(dir.File("a.tmc"), 3, &described).ok());
  EXPECT_THAT(described, HasSubstr("pre-tokenizer:           cl100k"));
  EXPECT_THAT(described, HasSubstr("unique words:            " + std::to_string(counts.words.unique_words())));
  EXPECT_THAT(described, HasSubstr("top 3 words:"));
}

TEST(CountsFile, SameBytesWhateverTheNumberOfCompressionWorkers) {
  TempDir dir;
  CountCorpusOptions options = Options({dir.Write("a.txt", Corpus(4))});
  CorpusCounts counts = CountCorpus(options).value();
  // A table large enough (about 14 MB serialized) that zstd cuts it into several jobs.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 600000; ++i) {
    std::string word = std::to_string(rng());
    word.insert(word.begin(), 'w');  // (not "w" + ...: a GCC 12 -Wrestrict false positive)
    counts.words.Add(word, 1 + rng() % 1000);
  }
  const CountsFileHeader header = MakeCountsFileHeader(options, counts);
  std::string first;
  for (int threads : {1, 2, 5}) {
    const std::string path = dir.File("t" + std::to_string(threads) + ".tmc");
    ASSERT_TRUE(WriteCountsFile(path, header, counts.words, threads).ok());
    std::string bytes = ReadFile(path).value();
    if (first.empty()) {
      first = bytes;
      WordCounts read;
      ASSERT_TRUE(ReadCountsFile(path, &read).ok());
      EXPECT_TRUE(read == counts.words);
    } else {
      EXPECT_TRUE(bytes == first) << threads << " threads";
    }
  }
}

TEST(CountsFile, SummingFilesEqualsCountingTogether) {
  TempDir dir;
  std::string a = dir.Write("a.txt", Corpus(1)), b = dir.Write("b.txt", Corpus(2));
  for (const std::string& name : {std::string("a"), std::string("b")}) {
    CountCorpusOptions options = Options({dir.File(name + ".txt")});
    CorpusCounts counts = CountCorpus(options).value();
    ASSERT_TRUE(WriteCountsFile(dir.File(name + ".tmc"), MakeCountsFileHeader(options, counts), counts.words).ok());
  }
  CorpusCounts together = CountCorpus(Options({a, b})).value();
  CountCorpusOptions summed_options = Options({});
  summed_options.counts_files = {dir.File("a.tmc"), dir.File("b.tmc")};
  CorpusCounts summed = CountCorpus(summed_options).value();
  EXPECT_TRUE(summed.words == together.words);
  EXPECT_EQ(summed.Totals(), together.Totals());
  // Counts files among the inputs are recognised by their magic; mixing with text works too.
  CorpusCounts mixed = CountCorpus(Options({dir.File("a.tmc"), b})).value();
  EXPECT_TRUE(mixed.words == together.words);
}

TEST(CountsFile, MismatchesAndCorruptionAreErrors) {
  TempDir dir;
  CountCorpusOptions options = Options({dir.Write("a.txt", Corpus(3))});
  CorpusCounts counts = CountCorpus(options).value();
  std::string path = dir.File("a.tmc");
  ASSERT_TRUE(WriteCountsFile(path, MakeCountsFileHeader(options, counts), counts.words).ok());

  CountCorpusOptions other = Options({path});
  other.pretokenizer.preset = "o200k";
  absl::StatusOr<CorpusCounts> result = CountCorpus(other);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("'" + path + "' was counted with pre-tokenizer 'gpt2' but this run uses 'o200k'"));
  other = Options({path});
  other.special_tokens = {};
  result = CountCorpus(other);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("special tokens"));

  std::string bytes = ReadFile(path).value();
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  std::string corrupt = dir.Write("corrupt.tmc", flipped);
  WordCounts words;
  EXPECT_THAT(std::string(ReadCountsFile(corrupt, &words).status().message()),
              HasSubstr("checksum mismatch"));
  std::string truncated = dir.Write("truncated.tmc", bytes.substr(0, bytes.size() - 9));
  EXPECT_THAT(std::string(ReadCountsFile(truncated, &words).status().message()),
              HasSubstr("'" + truncated + "' is not a valid word-count file"));
  std::string newer = bytes;
  newer[8] = 99;
  std::string future = dir.Write("future.tmc", newer);
  EXPECT_THAT(std::string(ReadCountsFile(future, &words).status().message()),
              HasSubstr("format version 99"));
}

}  // namespace
}  // namespace tokenmill
