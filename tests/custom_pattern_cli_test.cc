// --pattern through the CLI: train and count accept any PCRE2 pattern, record it in counts
// files, checkpoints and tokenizer files, and resume with it. The PCRE2 path is checked against
// the presets' hand-written scanners (an independent implementation of the same split): a
// preset's pattern wrapped in (?:...) is a different string, so it runs on PCRE2, and must
// train exactly the merges of the preset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "model/model_file.h"
#include "pretokenize/presets.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::RunCli;
using testing::TempDir;

const std::string kSample = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt";
// The patterns users bring: \w, \d, \p{Han}, \p{P}, \p{S} (refused before PCRE2 ran them).
const std::string kUserPattern = R"( ?\p{Han}+| ?\w+| ?\d+| ?[\p{P}\p{S}]+|\s+(?!\S)|\s+)";

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(CustomPatternCli, APresetsPatternOnPcre2TrainsThePresetsMerges) {
  TempDir dir;
  for (const PreTokenizerPreset& preset : kPreTokenizerPresets) {
    const std::string wrapped = "(?:" + std::string(preset.pattern) + ")";
    const std::string name(preset.name);
    auto scanner = RunCli({"train", "--vocab-size", "600", "--preset", name, "--checkpoint=none",
                           "--output", dir.File(name + ".json"), "--quiet", kSample});
    ASSERT_EQ(scanner.exit_code, 0) << scanner.err;
    auto pcre2 = RunCli({"train", "--vocab-size", "600", "--pattern", wrapped, "--checkpoint=none",
                         "--output", dir.File(name + "_pcre2.json"), "--quiet", kSample});
    ASSERT_EQ(pcre2.exit_code, 0) << pcre2.err;
    absl::StatusOr<std::unique_ptr<Model>> a = LoadModel(dir.File(name + ".json"));
    absl::StatusOr<std::unique_ptr<Model>> b = LoadModel(dir.File(name + "_pcre2.json"));
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    const auto ta = (*a)->token_bytes(), tb = (*b)->token_bytes();
    EXPECT_EQ(std::vector<std::string>(ta.begin(), ta.end()),
              std::vector<std::string>(tb.begin(), tb.end()))
        << name;
    EXPECT_EQ((*b)->pre_tokenizer().preset, "custom");
    EXPECT_EQ((*b)->pre_tokenizer().pattern, wrapped);
  }
}

TEST(CustomPatternCli, TheUsersPatternIsRecordedEverywhereAndResumes) {
  TempDir dir;
  const std::string out = dir.File("t.json");
  auto train = RunCli({"train", "--vocab-size", "500", "--pattern", kUserPattern, "--output", out,
                       "--quiet", kSample});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  // The tokenizer file: a Split pre-tokenizer with the pattern, read back as the custom one.
  absl::StatusOr<std::unique_ptr<Model>> model = LoadModel(out);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->pre_tokenizer().preset, "custom");
  EXPECT_EQ((*model)->pre_tokenizer().pattern, kUserPattern);
  // Encoding splits with it: a Han run and the Latin word after it never share a token.
  const std::string text = "机器学习hello 123 深度，world!\n";
  auto encoded = RunCli({"encode", "--tokenizer", out}, text);
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  auto decoded = RunCli({"decode", "--tokenizer", out}, encoded.out);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, text);
  auto explained = RunCli({"explain", "--tokenizer", out, "机器学习hello"});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  // The checkpoint: inspect shows it; a resume gives the same file; another pre-tokenizer on
  // resume is refused, naming the flag.
  auto inspect = RunCli({"inspect", out + ".ckpt"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr(kUserPattern));
  const std::string first = Read(out);
  std::filesystem::remove(out);
  auto resume = RunCli({"train", "--resume", out + ".ckpt", "--quiet"});
  ASSERT_EQ(resume.exit_code, 0) << resume.err;
  EXPECT_EQ(Read(out), first);
  auto changed = RunCli({"train", "--resume", out + ".ckpt", "--pattern", R"(\w+|\s+|.)",
                         "--vocab-size", "600"});
  EXPECT_EQ(changed.exit_code, 2);
  EXPECT_THAT(changed.err, HasSubstr(R"(is 'custom:\w+|\s+|.' but the checkpoint was trained with)"));
  EXPECT_THAT(changed.err, HasSubstr("cannot change on resume"));
  auto same = RunCli({"train", "--resume", out + ".ckpt", "--pattern", kUserPattern,
                      "--vocab-size", "520", "--quiet"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  // The counts file: count records the pattern; train on it with the same pattern gives the
  // tokenizer training on the corpus gave; without it the run is refused, naming the pattern.
  auto count = RunCli({"count", "--pattern", kUserPattern, "--output", dir.File("c.tmc"), "--quiet",
                       kSample});
  ASSERT_EQ(count.exit_code, 0) << count.err;
  auto counts_inspect = RunCli({"inspect", dir.File("c.tmc")});
  EXPECT_THAT(counts_inspect.out, HasSubstr(kUserPattern));
  auto from_counts = RunCli({"train", "--counts", dir.File("c.tmc"), "--pattern", kUserPattern,
                             "--vocab-size", "500", "--checkpoint=none", "--output",
                             dir.File("c.json"), "--quiet"});
  ASSERT_EQ(from_counts.exit_code, 0) << from_counts.err;
  EXPECT_EQ(Read(dir.File("c.json")), first);
  auto other = RunCli({"train", "--counts", dir.File("c.tmc"), "--vocab-size", "500",
                       "--checkpoint=none", "--output", dir.File("d.json")});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.err, HasSubstr("--pattern '" + kUserPattern + "'"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("d.json")));
}

TEST(CustomPatternCli, BadPatternsAreUsageErrorsBeforeAnyWork) {
  TempDir dir;
  for (const std::string command : {"train", "count"}) {
    const std::string out = dir.File(command + ".out");
    std::vector<std::string> args = {command, "--output", out, "--pattern", "a(b"};
    if (command == "train") args.insert(args.end(), {"--vocab-size", "300"});
    args.push_back(kSample);
    auto bad = RunCli(args);
    EXPECT_EQ(bad.exit_code, 2) << command;
    EXPECT_EQ(bad.err, "tokenmill " + command +
                           ": error: --pattern: PCRE2 refuses the pattern at offset 3: missing "
                           "closing parenthesis\n");
    args[4] = R"(\w+)";
    args.insert(args.begin() + 1, {"--preset", "gpt2"});
    auto both = RunCli(args);
    EXPECT_EQ(both.exit_code, 2) << command;
    EXPECT_EQ(both.err, "tokenmill " + command + ": error: give --preset or --pattern, not both\n");
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  auto pretokenize = RunCli({"pretokenize", "--pattern", "[a"}, "abc");
  EXPECT_EQ(pretokenize.exit_code, 2);
  EXPECT_EQ(pretokenize.err,
            "tokenmill pretokenize: error: --pattern: PCRE2 refuses the pattern at offset 2: "
            "missing terminating ] for character class\n");
}

}  // namespace
}  // namespace tokenmill
