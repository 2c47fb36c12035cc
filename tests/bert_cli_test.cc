// `--preset bert` through the real binary: pretokenize prints the pieces of the normalized text;
// train and count record BERT's normalizer (tokenizer.json, word-count files, inspect, explain);
// counts only add up under the same text settings.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/checked.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::CliResult;
using testing::RunCli;
using testing::Lines;
using testing::TempDir;

// "Héllo,<TAB>WORLD! 野口<U+0001>x" and a special token.
const std::string kText = "H\xC3\xA9llo,\tWORLD! \xE9\x87\x8E\xE5\x8F\xA3\x01x<s>\xC3\x89t\xC3\xA9";

TEST(BertCli, PretokenizePrintsThePiecesOfTheNormalizedText) {
  CliResult r = RunCli({"pretokenize", "--preset", "bert", "--special-token", "<s>"}, kText);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("H\xC3\xA9llo", ",", "WORLD", "!", "\xE9\x87\x8E",
                                        "\xE5\x8F\xA3", "x", "\\special <s>", "\xC3\x89t\xC3\xA9"));
  r = RunCli({"pretokenize", "--preset", "bert", "--lowercase", "--strip-accents",
              "--special-token", "<s>"},
             kText);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("hello", ",", "world", "!", "\xE9\x87\x8E", "\xE5\x8F\xA3",
                                        "x", "\\special <s>", "ete"));
}

TEST(BertCli, PretokenizePreparesTextForEveryPreset) {
  CliResult r = RunCli({"pretokenize", "--preset", "metaspace"}, "a b");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("\xE2\x96\x81" "a", "\xE2\x96\x81" "b"));
  r = RunCli({"pretokenize", "--preset", "gpt2", "--normalize", "nfkc", "--lowercase"},
             "\xEF\xAC\x81X");  // ﬁX
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("fix"));
  // Without --preset bert the BERT steps are only what is asked for.
  r = RunCli({"pretokenize", "--preset", "whitespace", "--strip-accents"}, "caf\xC3\xA9\x01");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("cafe", "\\x01"));  // \x01 kept: no clean_text
}

// English with accents and Chinese, to train on.
std::string Corpus() {
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += "The caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9, number " + std::to_string(i) +
            "! \xE6\x9C\xBA\xE5\x99\xA8\xE5\xAD\xA6\xE4\xB9\xA0\xE3\x80\x82 Fine.\n";
  }
  return text;
}

TEST(BertCli, TrainRecordsBertsNormalizerInTokenizerJsonInspectAndExplain) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus());
  const std::string out = dir.File("t.json");
  CliResult train = RunCli({"train", "--unit", "char", "--vocab-size", "400", "--preset", "bert",
                            "--lowercase", "--strip-accents", "--quiet", "--checkpoint=none",
                            "--output", out, corpus});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const std::string json = testing::ReadFileOrFail(out);
  EXPECT_THAT(json, HasSubstr(R"("normalizer": {"type":"BertNormalizer","clean_text":true,)"
                              R"("handle_chinese_chars":true,"strip_accents":true,)"
                              R"("lowercase":true},)"));
  EXPECT_THAT(json, HasSubstr(R"("pre_tokenizer": {"type":"BertPreTokenizer"},)"));

  CliResult inspect = RunCli({"inspect", out});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out,
              HasSubstr("normalizer:    BERT's clean text (controls dropped, whitespace as "
                        "spaces), then BERT's spaces around CJK ideographs, then accents "
                        "stripped (NFD, marks dropped), then lowercase\n"));
  EXPECT_THAT(inspect.out,
              HasSubstr("pre-tokenizer: bert (whitespace dropped, each punctuation character "
                        "alone)\n"));
  CliResult explain = RunCli({"explain", "--tokenizer", out, "CAF\xC3\x89!"});
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_THAT(explain.out,
              HasSubstr("text is prepared before it is split: control characters dropped, "
                        "whitespace as spaces, spaces around CJK ideographs, accents stripped "
                        "(NFD, marks dropped), lowercase; "));
  // Encoding normalizes as training did.
  CliResult a = RunCli({"encode", "--tokenizer", out}, "CAF\xC3\x89\x01 \xE6\x9C\xBA\xE5\x99\xA8!");
  CliResult b = RunCli({"encode", "--tokenizer", out}, "cafe \xE6\x9C\xBA \xE5\x99\xA8 !");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(BertCli, CountsFilesRecordTheSettingsAndOnlyAddUpUnderTheSame) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus());
  const std::string counts = dir.File("c.tmc");
  CliResult count = RunCli({"count", "--preset", "bert", "--strip-accents", "--quiet", "--output",
                            counts, corpus});
  ASSERT_EQ(count.exit_code, 0) << count.err;
  CliResult inspect = RunCli({"inspect", counts});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("format version:          3 "));
  EXPECT_THAT(inspect.out,
              HasSubstr("text settings:           clean_text handle_chinese_chars strip_accents\n"));
  CliResult same = RunCli({"train", "--unit", "char", "--vocab-size", "400", "--preset", "bert",
                           "--strip-accents", "--quiet", "--checkpoint=none", "--output",
                           dir.File("a.json"), counts});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  CliResult other = RunCli({"train", "--unit", "char", "--vocab-size", "400", "--preset", "bert",
                            "--quiet", "--checkpoint=none", "--output", dir.File("b.json"),
                            counts});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, HasSubstr("was counted with text settings 'clean_text "
                                   "handle_chinese_chars strip_accents' but this run uses "
                                   "'clean_text handle_chinese_chars'"));
}

}  // namespace
}  // namespace tokenmill
