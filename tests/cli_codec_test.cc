// The encoding commands end to end: encode/decode with .tiktoken files, convert, explain,
// inspect, and the errors a user can cause (one line on stderr, exit 1 or 2, no output file).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/file_util.h"
#include "reference/cli_runner.h"
#include "reference/checked.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::RunCli;
using testing::TempDir;

const std::string kGpt2 = testing::TestVocabDir() + "gpt2.tiktoken";
const std::string kCl100k = testing::TestVocabDir() + "cl100k_base.tiktoken";
const std::string kInputs = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/tiktoken_expected/inputs.txt";

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(CliEncode, TiktokenFileHello) {
  auto r = RunCli({"encode", "--tokenizer", kCl100k}, "hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "15339\n");
}

TEST(CliEncode, LinesMatchTiktokenOnAnyThreadCountAndBlockSize) {
  std::string expected = testing::ReadFileOrFail(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/tiktoken_expected/gpt2.lines.ids");
  for (const char* threads : {"1", "2"}) {
    for (const char* block : {"100", "4194304"}) {
      auto r = RunCli({"encode", "--tokenizer", kGpt2, "--threads", threads, "--block-bytes", block, kInputs});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, expected) << threads << " threads, blocks of " << block;
    }
  }
}

TEST(CliEncode, DisallowedSpecialNamesTheLine) {
  auto r = RunCli({"encode", "--tokenizer", kGpt2, "--specials", "disallow", "--block-bytes", "5"},
                  "one\ntwo\nthree <|endoftext|>\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tokenmill encode: error: stdin:3: the text contains the special token '<|endoftext|>' "
                   "at byte 6, which --specials refuses: allow special tokens or encode them as text\n");
}

TEST(CliDecode, ExactBytesUnknownIdsAndLossy) {
  auto exact = RunCli({"decode", "--tokenizer", kCl100k}, "15339 220\n");
  EXPECT_EQ(exact.exit_code, 0);
  EXPECT_EQ(exact.out, "hello ");
  // 'é' is 0xC3 0xA9; cl100k's single-byte tokens for them, decoded apart, are not valid UTF-8.
  auto c3 = RunCli({"encode", "--tokenizer", kCl100k}, "\xc3");
  ASSERT_EQ(c3.exit_code, 0);
  auto raw = RunCli({"decode", "--tokenizer", kCl100k}, c3.out);
  EXPECT_EQ(raw.out, "\xc3");
  auto lossy = RunCli({"decode", "--tokenizer", kCl100k, "--lossy"}, c3.out);
  EXPECT_EQ(lossy.out, "\xef\xbf\xbd");
  auto unknown = RunCli({"decode", "--tokenizer", kCl100k}, "15339\n15339 100256\n");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err, "tokenmill decode: error: -:2: id 100256 (position 1) is not in the vocabulary\n");
  auto not_id = RunCli({"decode", "--tokenizer", kCl100k}, "15339\n15339 -1\n");
  EXPECT_EQ(not_id.exit_code, 1);
  EXPECT_EQ(not_id.err, "tokenmill decode: error: -:2: '-1' is not a token id\n");
  EXPECT_EQ(not_id.out, "hello");  // the lines before it
}

TEST(CliConvert, BothWaysKeepTheIds) {
  TempDir dir;
  auto to_json = RunCli({"convert", kGpt2, dir.File("gpt2.json")});
  ASSERT_EQ(to_json.exit_code, 0) << to_json.err;
  auto back = RunCli({"convert", dir.File("gpt2.json"), dir.File("again.tiktoken")});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(testing::ReadFileOrFail(dir.File("again.tiktoken")), testing::ReadFileOrFail(kGpt2));
  EXPECT_TRUE(std::filesystem::exists(dir.File("again.json")));
  std::string expected = testing::ReadFileOrFail(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/tiktoken_expected/gpt2.lines.ids");
  for (const std::string& tokenizer : {dir.File("gpt2.json"), dir.File("again.tiktoken"), dir.File("again.json")}) {
    auto r = RunCli({"encode", "--tokenizer", tokenizer, kInputs});
    EXPECT_EQ(r.out, expected) << tokenizer;
  }
}

TEST(CliConvert, UserErrors) {
  TempDir dir;
  auto no_ext = RunCli({"convert", kGpt2, dir.File("out.bin")});
  EXPECT_EQ(no_ext.exit_code, 2);
  EXPECT_THAT(no_ext.err, HasSubstr("cannot tell the output format"));
  // a.tiktoken's sidecar is a.json: converting a.tiktoken to a.json would destroy the input.
  ASSERT_EQ(RunCli({"convert", kGpt2, dir.File("a.tiktoken")}).exit_code, 0);
  auto clobber = RunCli({"convert", dir.File("a.tiktoken"), dir.File("a.json")});
  EXPECT_EQ(clobber.exit_code, 2);
  EXPECT_THAT(clobber.err, HasSubstr("would overwrite the input file"));
  auto exists = RunCli({"convert", kGpt2, dir.File("a.tiktoken")});
  EXPECT_EQ(exists.exit_code, 1);
  EXPECT_THAT(exists.err, HasSubstr("already exists (use --force"));
  dir.Write("bad.tiktoken", "IQ== 0\nIQ== 1\n");
  dir.Write("bad.json", R"({"pattern": "\\s+"})");
  auto bad = RunCli({"convert", dir.File("bad.tiktoken"), dir.File("out.json")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "tokenmill convert: error: " + dir.File("bad.tiktoken") +
                         ":2: token '!' is already given on line 1\n");
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.json")));
  auto missing = RunCli({"convert", dir.File("nope.json"), dir.File("out.json")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(Lines(missing.err), 1);
}

TEST(CliExplain, PiecesMergesAndTheSameIdsAsEncode) {
  auto r = RunCli({"explain", "--tokenizer", kCl100k, "hello unbelievably<|endoftext|>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ids = RunCli({"encode", "--tokenizer", kCl100k, "--whole"}, "hello unbelievably<|endoftext|>");
  EXPECT_THAT(r.out, HasSubstr("piece 1: 'hello' (5 bytes)\n  the whole piece is a token -> 15339"));
  EXPECT_THAT(r.out, HasSubstr("piece 3: '<|endoftext|>' (13 bytes)\n  special token -> 100257"));
  EXPECT_THAT(r.out, HasSubstr("rank 359: 'u' + 'n' -> 'un' (359)"));
  EXPECT_THAT(r.out, HasSubstr("31 bytes, 3 pieces, 4 tokens: " + ids.out));
  auto usage = RunCli({"explain", "--tokenizer", kCl100k});
  EXPECT_EQ(usage.exit_code, 2);
}

TEST(CliInspect, TokenizerSummaryAndCorpusStats) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", "hello world\nhello\n");
  auto r = RunCli({"inspect", kCl100k, "--top", "3", "--corpus", corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("vocabulary:    100261 tokens (100256 regular + 5 special), ids 0..100276"));
  EXPECT_THAT(r.out, HasSubstr("pre-tokenizer: cl100k"));
  EXPECT_THAT(r.out, HasSubstr("<|endoftext|>=100257"));
  EXPECT_THAT(r.out, HasSubstr("18 bytes, 2 lines, 18 characters, 3 words -> 5 tokens"));
  auto missing = RunCli({"inspect", dir.File("nope")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, StartsWith("tokenmill inspect: error: "));
}

}  // namespace
}  // namespace tokenmill
