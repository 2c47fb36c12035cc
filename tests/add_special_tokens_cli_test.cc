// `tokenmill add-special-tokens` through the real binary: on tokenizers `train` wrote (byte-level
// BPE, WordPiece, Unigram) and on OpenAI's gpt2.tiktoken, the new tokens' ids and the already
// special ones' on stderr, one line each, then the files written; OUT's format by its extension
// or --format; `encode` and `decode` with the result; vocab.txt, which marks only BERT's
// specials; bad flags as one-line usage errors (exit 2), bad tokens and files as one-line errors
// (exit 1) that leave nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/model_file.h"
#include "reference/checked.h"
#include "reference/cli_expect.h"
#include "reference/cli_runner.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::CliResult;
using testing::ExpectOneErrorLine;
using testing::OkOrFail;
using testing::ReadAll;
using testing::RunCli;
using testing::SplitWords;
using testing::TempDir;

// Lines of English words: a small alphabet, so that small vocabularies train.
std::string Corpus() {
  static const char* kWords[] = {"the",  "man",   "said", "and",   "then", "it",    "was",
                                 "a",    "time",  "of",   "brown", "fox",  "jumps", "over",
                                 "lazy", "dog",   "in",   "there", "light", "night", "sings"};
  std::mt19937 rng(23);
  std::string text;
  for (int line = 0; line < 600; ++line) {
    for (size_t w = 3 + rng() % 8; w > 0; --w) {
      text += kWords[rng() % std::size(kWords)];
      text += w > 1 ? " " : ".\n";
    }
  }
  return text;
}

// Trains a small tokenizer on Corpus() with `flags` into `out`.
void Train(const std::string& out, std::vector<std::string> flags) {
  const std::string corpus = out + ".corpus.txt";
  {
    std::ofstream file(corpus, std::ios::binary);
    file << Corpus();
  }
  std::vector<std::string> args = {"train", "--quiet", "--checkpoint=none", "--output", out};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(corpus);
  CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

size_t IdsOf(const std::string& tokenizer) {
  return OkOrFail(LoadModel(tokenizer), "loading " + tokenizer)->token_bytes().size();
}

struct TrainedCase {
  const char* name;
  std::vector<std::string> flags;
  std::string special;  // one of its special tokens
};
void PrintTo(const TrainedCase& c, std::ostream* os) { *os << c.name; }

class AddSpecialTokensCliTrained : public ::testing::TestWithParam<TrainedCase> {};

// The new tokens get the next ids; the line for each given token says which; encode gives
// their ids inside text, decode gives them back.
TEST_P(AddSpecialTokensCliTrained, PrintsEachIdWritesOutAndEncodesTheNewTokens) {
  TempDir dir;
  const std::string in = dir.File("t.json"), out = dir.File("t2.json");
  ASSERT_NO_FATAL_FAILURE(Train(in, GetParam().flags));
  const size_t n = IdsOf(in);
  const std::string old = GetParam().special;
  const std::unique_ptr<Model> original = OkOrFail(LoadModel(in), "loading");
  const TokenId old_id = [&] {
    for (const SpecialToken& s : original->special_tokens()) {
      if (s.content == old) return s.id;
    }
    ADD_FAILURE() << old << " is no special token";
    return TokenId{0};
  }();
  CliResult r = RunCli({"add-special-tokens", in, "--special-token", "<|im_start|>",
                        "--special-token", old, "--special-token=<|im_start|>",
                        "--special-token", "<|im_end|>", "--output", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, StrCat("added '<|im_start|>' as id ", n, "\n'", old,
                          "' was already special token id ", old_id,
                          "\n'<|im_start|>' was given before: id ", n, "\nadded '<|im_end|>' as id ",
                          n + 1, "\nwrote ", out, "\n"));
  EXPECT_EQ(IdsOf(out), n + 2);
  const std::string text = "the <|im_start|> said <|im_end|>";
  CliResult before = RunCli({"encode", "--whole", "--tokenizer", in}, "the ");
  CliResult middle = RunCli({"encode", "--whole", "--tokenizer", in}, " said ");
  CliResult after = RunCli({"encode", "--whole", "--tokenizer", out}, text);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  std::vector<std::string> expected = SplitWords(before.out);
  expected.push_back(std::to_string(n));
  for (const std::string& id : SplitWords(middle.out)) expected.push_back(id);
  expected.push_back(std::to_string(n + 1));
  EXPECT_EQ(SplitWords(after.out), expected);
  CliResult decoded = RunCli({"decode", "--tokenizer", out}, after.out);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_THAT(decoded.out, HasSubstr("<|im_start|> said <|im_end|>"));
  // Disallowed, the new token is an error; the old tokenizer encodes it as text.
  EXPECT_NE(RunCli({"encode", "--whole", "--specials", "disallow", "--tokenizer", out}, text)
                .exit_code, 0);
  CliResult as_text = RunCli({"encode", "--whole", "--tokenizer", in}, "<|im_start|>");
  ASSERT_EQ(as_text.exit_code, 0) << as_text.err;
  EXPECT_GT(SplitWords(as_text.out).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, AddSpecialTokensCliTrained,
    ::testing::Values(
        TrainedCase{"ByteBpe", {"--vocab-size", "300", "--special-token", "<|endoftext|>"},
                    "<|endoftext|>"},
        TrainedCase{"WordPiece", {"--algorithm", "wordpiece", "--vocab-size", "150"}, "[SEP]"},
        TrainedCase{"Unigram", {"--algorithm", "unigram", "--vocab-size", "330"}, "<unk>"}),
    [](const ::testing::TestParamInfo<TrainedCase>& info) { return info.param.name; });

// OUT's extension picks the format (.tiktoken: with its sidecar; anything but .txt and
// .tiktoken: tokenizer.json); --format overrides it.
TEST(AddSpecialTokensCli, OutputFormatByExtensionOrFormatFlag) {
  TempDir dir;
  const std::string gpt2 = testing::TestVocabDir() + "gpt2.tiktoken";
  CliResult r = RunCli({"add-special-tokens", gpt2, "--special-token", "<|im_start|>", "--output",
                        dir.File("g.tiktoken")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, StrCat("added '<|im_start|>' as id 50257\nwrote ", dir.File("g.tiktoken"),
                          " and ", dir.File("g.json"), "\n"));
  EXPECT_THAT(ReadAll(dir.File("g.json")), HasSubstr("\"<|im_start|>\": 50257"));
  r = RunCli({"add-special-tokens", gpt2, "--special-token", "<|im_start|>", "--format",
              "tiktoken", "--output", dir.File("g.ranks")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadAll(dir.File("g.ranks")), ReadAll(dir.File("g.tiktoken")));
  EXPECT_THAT(ReadAll(dir.File("g.ranks.json")), HasSubstr("\"<|im_start|>\": 50257"));
  r = RunCli({"add-special-tokens", gpt2, "--special-token", "<|im_start|>", "--output",
              dir.File("g.model")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(OkOrFail(DetectModelFormat(dir.File("g.model")), "format"), ModelFormat::kHfJson);
  // The three encode alike.
  const std::string text = "Hello<|im_start|>world<|endoftext|>\n";
  CliResult expected = RunCli({"encode", "--tokenizer", dir.File("g.tiktoken")}, text);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  EXPECT_THAT(expected.out, HasSubstr(" 50257 "));
  EXPECT_EQ(RunCli({"encode", "--tokenizer", dir.File("g.ranks")}, text).out, expected.out);
  EXPECT_EQ(RunCli({"encode", "--tokenizer", dir.File("g.model")}, text).out, expected.out);
  // An existing output needs --force.
  ExpectOneErrorLine(RunCli({"add-special-tokens", gpt2, "--special-token", "<|x|>", "--output",
                             dir.File("g.model")}),
                     "add-special-tokens", 1, {dir.File("g.model"), "--force"});
  r = RunCli({"add-special-tokens", gpt2, "--special-token", "<|x|>", "--force", "--output",
              dir.File("g.model")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, StartsWith("added '<|x|>' as id 50257\n"));
}

// vocab.txt marks only BERT's five special tokens: others are refused there, not in
// tokenizer.json.
TEST(AddSpecialTokensCli, VocabTxtTakesOnlyBertsSpecialTokens) {
  TempDir dir;
  const std::string in = dir.File("v.txt");
  ASSERT_NO_FATAL_FAILURE(Train(in, {"--algorithm", "wordpiece", "--vocab-size", "150",
                                     "--special-token", "[UNK]", "--special-token", "[CLS]"}));
  const size_t n = IdsOf(in);
  CliResult r = RunCli({"add-special-tokens", in, "--special-token", "[MASK]", "--special-token",
                        "[CLS]", "--output", dir.File("v2.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, StrCat("added '[MASK]' as id ", n, "\n'[CLS]' was already special token id 1\n",
                          "wrote ", dir.File("v2.txt"), "\n"));
  const std::unique_ptr<Model> v2 = OkOrFail(LoadModel(dir.File("v2.txt")), "loading");
  EXPECT_EQ(v2->special_tokens().size(), 3u);
  ExpectOneErrorLine(RunCli({"add-special-tokens", in, "--special-token", "<|x|>", "--output",
                             dir.File("v3.txt")}),
                     "add-special-tokens", 1, {"'<|x|>'", "vocab.txt", "tokenizer.json"});
  EXPECT_FALSE(std::filesystem::exists(dir.File("v3.txt")));
  r = RunCli({"add-special-tokens", in, "--special-token", "<|x|>", "--output", dir.File("v3.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(AddSpecialTokensCli, BadFlagsAreUsageErrorsAndBadTokensOrFilesFailWithOneLine) {
  TempDir dir;
  const std::string gpt2 = testing::TestVocabDir() + "gpt2.tiktoken";
  const std::string out = dir.File("o.json");
  const std::string command = "add-special-tokens";
  auto usage = [&](std::vector<std::string> args, std::vector<std::string> names) {
    args.insert(args.begin(), command);
    ExpectOneErrorLine(RunCli(args), command, 2, names);
  };
  usage({gpt2, "--output", out}, {"--special-token is required"});
  usage({gpt2, "--special-token", "<|x|>"}, {"--output is required"});
  usage({"--special-token", "<|x|>", "--output", out}, {"TOKENIZER"});
  usage({gpt2, gpt2, "--special-token", "<|x|>", "--output", out}, {"TOKENIZER"});
  usage({gpt2, "--special-token", "<|x|>", "--output", out, "--format", "sentencepiece"},
        {"--format", "sentencepiece"});
  usage({gpt2, "--special-token", "<|x|>", "--output", out, "--vocab-size", "5"},
        {"--vocab-size"});
  usage({gpt2, "--special-token"}, {"--special-token needs a value"});
  auto failure = [&](std::vector<std::string> args, std::vector<std::string> names) {
    args.insert(args.begin(), command);
    ExpectOneErrorLine(RunCli(args), command, 1, names);
    EXPECT_FALSE(std::filesystem::exists(out));
  };
  failure({dir.File("missing.json"), "--special-token", "<|x|>", "--output", out},
          {dir.File("missing.json")});
  failure({gpt2, "--special-token", "<|x|>", "--special-token", "", "--output", out},
          {"special token 2 of 2 is empty"});
  failure({gpt2, "--special-token", " the", "--output", out},
          {"' the' is already regular token id 262", "no text would encode to id 262 again"});
  failure({gpt2, "--special-token", "the", "--output", out},
          {"'the' is already regular token id 1169", "Hugging Face would reuse id 1169"});
  failure({gpt2, "--special-token", "\xc4\xa0the", "--output", out},
          {"is how tokenizer.json writes token id 262"});
  failure({gpt2, "--special-token", "\xff", "--output", out}, {"'\\xff' is not UTF-8"});
  // A format the model cannot be written in.
  Train(dir.File("wp.json"), {"--algorithm", "wordpiece", "--vocab-size", "150"});
  failure({dir.File("wp.json"), "--special-token", "<|x|>", "--output", dir.File("o.tiktoken")},
          {".tiktoken", "WordPiece"});
  EXPECT_FALSE(std::filesystem::exists(dir.File("o.json")));
}

TEST(AddSpecialTokensCli, HelpExplainsAndTheCommandListNamesIt) {
  CliResult help = RunCli({"add-special-tokens", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, StartsWith("Usage: tokenmill add-special-tokens TOKENIZER --special-token"));
  for (const char* text : {"--output", "--format", "--force", "Hugging Face", "already special"}) {
    EXPECT_THAT(help.out, HasSubstr(text));
  }
  CliResult list = RunCli({"--help"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("  add-special-tokens add special tokens"));
}

}  // namespace
}  // namespace tokenmill
