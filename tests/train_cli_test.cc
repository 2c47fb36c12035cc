// `tokenmill train` end to end: the trainer's flags, its progress output, its messages for bad
// input, and byte-identical output for any thread count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/hf_json.h"
#include "model/model_file.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::ReadAll;
using testing::RunCli;
using testing::TempDir;

std::string SampleText(size_t bytes) {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<size_t>(in.gcount()));
  return text.substr(0, text.rfind('\n') + 1);
}

size_t Lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A failing train run: exit code, one line naming `expected`, no output file.
void ExpectTrainFails(const TempDir& dir, std::vector<std::string> args, int exit_code,
                      const std::string& expected) {
  std::string output = dir.File("out.json");
  std::vector<std::string> full = {"train", "--output", output};
  full.insert(full.end(), args.begin(), args.end());
  auto result = RunCli(full);
  EXPECT_EQ(result.exit_code, exit_code) << result.err;
  EXPECT_EQ(Lines(result.err), 1u) << result.err;
  EXPECT_THAT(result.err, StartsWith("tokenmill train: error: "));
  EXPECT_THAT(result.err, HasSubstr(expected));
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(TrainCli, SameFileForOneTwoAndEightThreads) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", SampleText(400000));
  std::string first;
  for (const char* threads : {"1", "2", "8"}) {
    std::string out = dir.File(std::string("t") + threads + ".json");
    auto r = RunCli({"train", "--vocab-size", "3000", "--threads", threads, "--quiet",
                     "--output", out, corpus});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string bytes = ReadAll(out);
    if (first.empty()) first = bytes;
    EXPECT_TRUE(bytes == first) << "--threads " << threads << " wrote a different file";
  }
}

TEST(TrainCli, BadInputGivesOneClearLine) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", "hello world\nhello there\n");
  ExpectTrainFails(dir, {"--vocab-size", "300", "--hf-compat", "--special-token", "<s>",
                         "--special-tokens-at", "end", corpus},
                   2, "conflicts with --special-tokens-at=end");
  ExpectTrainFails(dir, {"--vocab-size", "300", "--max-token-length", "1", corpus}, 2,
                   "--max-token-length 1 allows no merge");
  ExpectTrainFails(dir, {"--vocab-size", "300", "--verbose", "--log-every", "0", corpus}, 2,
                   "--log-every");
  // The alphabet with --hf-compat is the bytes that occur: here 10 of them. An option error
  // found once the corpus is read is a usage error (2) all the same.
  ExpectTrainFails(dir, {"--vocab-size", "9", "--hf-compat", corpus}, 2,
                   "--vocab-size 9 is smaller than the alphabet (10 byte tokens) plus 0");
  ExpectTrainFails(dir, {"--vocab-size", "300", dir.Write("single.txt", "a\nb\n\n")}, 1,
                   "no pair to merge");
}

TEST(TrainCli, VocabLargerThanTheCorpusSuppliesWritesTheSizeReached) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", "abcabc abc\n");
  std::string out = dir.File("out.json");
  auto r = RunCli({"train", "--vocab-size", "5000", "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("note: no pair is left to merge; stopped at vocab size"));
  absl::StatusOr<BpeModel> model = LoadBpeModel(out);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_LT(model->VocabSize(), 5000u);
  EXPECT_THAT(r.err, HasSubstr("stopped at vocab size " + std::to_string(model->VocabSize())));
  auto encoded = RunCli({"encode", "--tokenizer", out}, "abcabc abc\n");
  EXPECT_EQ(encoded.exit_code, 0) << encoded.err;
}

TEST(TrainCli, ProgressAsJsonLinesVerboseLogAndSummary) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", SampleText(100000));
  auto r = RunCli({"train", "--vocab-size", "700", "--progress", "json", "--verbose",
                   "--log-every", "100", "--output", dir.File("out.json"), corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.err);
  std::string line;
  size_t train_lines = 0, merge_lines = 0;
  bool done = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("{\"stage\":\"train\"")) {
      ++train_lines;
      EXPECT_THAT(line, HasSubstr("\"planned\":444"));
      done = line.find("\"done\":true") != std::string::npos;
    } else if (line.starts_with("merge ")) {
      ++merge_lines;
      EXPECT_THAT(line, ::testing::MatchesRegex("merge [0-9]+00/444: '.*' \\+ '.*' -> '.*' "
                                                "\\(count [0-9]+\\)"));
    }
  }
  EXPECT_GE(train_lines, 1u);
  EXPECT_TRUE(done) << "the last train progress line says done";
  EXPECT_EQ(merge_lines, 4u);
  EXPECT_THAT(r.err, HasSubstr("trained: vocab size 700, 444 merges"));
  EXPECT_THAT(r.err, HasSubstr("initial pairs"));
  EXPECT_THAT(r.err, HasSubstr("peak memory"));
}

TEST(TrainCli, HfCompatPutsSpecialTokensFirst) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", SampleText(20000));
  std::string out = dir.File("out.json");
  auto r = RunCli({"train", "--vocab-size", "400", "--hf-compat", "--special-token", "<s>",
                   "--quiet", "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<BpeModel> model = LoadBpeModel(out);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->specials.size(), 1u);
  EXPECT_EQ(model->specials[0].id, 0u);
  EXPECT_EQ(model->VocabSize(), 400u);
}

TEST(TrainCli, TiktokenFormatWritesRanksAndSidecarThatEncodeLikeTheJson) {
  TempDir dir;
  std::string text = SampleText(60000);
  std::string corpus = dir.Write("corpus.txt", text);
  std::string ranks = dir.File("tok.tiktoken"), json = dir.File("tok.json.json");
  auto r = RunCli({"train", "--vocab-size", "600", "--special-token", "<|endoftext|>",
                   "--format", "tiktoken", "--quiet", "--output", ranks, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(ranks));
  EXPECT_TRUE(std::filesystem::exists(dir.File("tok.json")));  // the sidecar
  r = RunCli({"train", "--vocab-size", "600", "--special-token", "<|endoftext|>", "--quiet",
              "--output", json, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string sample = text.substr(0, 5000) + "<|endoftext|>";
  auto from_ranks = RunCli({"encode", "--whole", "--tokenizer", ranks}, sample);
  auto from_json = RunCli({"encode", "--whole", "--tokenizer", json}, sample);
  ASSERT_EQ(from_ranks.exit_code, 0) << from_ranks.err;
  EXPECT_EQ(from_ranks.out, from_json.out);
  auto decoded = RunCli({"decode", "--tokenizer", ranks}, from_ranks.out);
  EXPECT_EQ(decoded.out, sample);
}

TEST(TrainCli, HelpListsTheTrainerFlags) {
  auto help = RunCli({"train", "--help"});
  for (const char* flag : {"--min-frequency", "--max-token-length", "--special-tokens-at",
                           "--hf-compat", "--threads", "--verbose", "--log-every", "--progress",
                           "--format=hf|tiktoken"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
}

}  // namespace
}  // namespace tokenmill
