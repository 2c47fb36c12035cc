// tokenmill pretokenize: the printed pieces, unescaped, are PCRE2's pieces; special tokens are
// cut out first; bad flags and patterns give one error line and exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "reference/cli_runner.h"
#include "reference/pcre2_differential.h"
#include "reference/checked.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using testing::RunCli;
using testing::Lines;

// Reverses the escaping documented in `tokenmill pretokenize --help`.
std::string Unescape(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      out.push_back(line[i]);
      continue;
    }
    const char c = line[++i];
    if (c == 'n') out.push_back('\n');
    if (c == 'r') out.push_back('\r');
    if (c == 't') out.push_back('\t');
    if (c == '\\') out.push_back('\\');
    if (c == 'x') {
      out.push_back(static_cast<char>(std::stoi(std::string(line.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    }
  }
  return out;
}

std::vector<std::string> PrintedPieces(const std::string& out) {
  std::vector<std::string> pieces;
  for (const std::string& line : Lines(out)) pieces.push_back(Unescape(line));
  return pieces;
}

TEST(PretokenizeCli, PrintsPcre2PiecesForEveryPreset) {
  std::mt19937_64 rng(11);
  std::string text;
  for (int i = 0; i < 300; ++i) text += testing::RandomPreTokenizerText(rng, /*invalid_utf8=*/true);
  for (const char* preset : {"gpt2", "cl100k", "o200k", "qwen2"}) {
    testing::CliResult r = RunCli({"pretokenize", "--preset", preset}, text);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto oracle = testing::OkOrFail(testing::MakePcre2PresetPreTokenizer(preset), preset);
    std::vector<std::string> expected;
    for (std::string_view p : testing::SplitToVector(*oracle, text)) expected.emplace_back(p);
    EXPECT_EQ(PrintedPieces(r.out), expected) << preset;
  }
}

TEST(PretokenizeCli, CutsSpecialTokensOutFirstLongestMatch) {
  testing::TempDir dir;
  const std::string file = dir.Write("in.txt", "a<|end|><|endoftext|>b's");
  testing::CliResult r = RunCli({"pretokenize", "--preset", "gpt2", "--special-token", "<|end|>",
                                 "--special-token", "<|endoftext|>", "--special-token", "<|", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto oracle = testing::OkOrFail(testing::MakePcre2PresetPreTokenizer("gpt2"), "gpt2");
  std::vector<std::string> expected = {"a", "\\special <|end|>", "\\special <|endoftext|>"};
  for (std::string_view p : testing::SplitToVector(*oracle, "b's")) expected.emplace_back(p);
  EXPECT_EQ(Lines(r.out), expected);
}

TEST(PretokenizeCli, InvalidPatternIsOneErrorLineAndExit2) {
  testing::CliResult r = RunCli({"pretokenize", "--pattern", "(ab"}, "x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::StartsWith("tokenmill pretokenize: error: --pattern: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_TRUE(r.out.empty());
}

TEST(PretokenizeCli, BadUsage) {
  EXPECT_EQ(RunCli({"pretokenize", "--preset", "gpt5"}, "x").exit_code, 2);
  EXPECT_EQ(RunCli({"pretokenize", "--preset", "gpt2", "--pattern", "a"}, "x").exit_code, 2);
  EXPECT_EQ(RunCli({"pretokenize", "a", "b"}, "x").exit_code, 2);
  EXPECT_EQ(RunCli({"pretokenize", "/nonexistent/file"}).exit_code, 1);
  testing::CliResult help = RunCli({"pretokenize", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, ::testing::HasSubstr("\\xHH"));
}

}  // namespace
}  // namespace tokenmill
