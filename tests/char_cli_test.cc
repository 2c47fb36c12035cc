// `tokenmill train --unit char` end to end through the real binary: the seed users' Chinese
// case (whole technical terms become one token), bad flags as one-line errors, the <unk>
// summary, checkpoints and resume, and encode/decode of unseen characters and invalid bytes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_expect.h"
#include "reference/cli_runner.h"
#include "reference/training_child.h"

namespace tokenmill {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::CliResult;
using testing::InterruptAtMerge;
using testing::RunCli;
using testing::SplitWords;
using testing::ReadAll;
using testing::TempDir;
using testing::TrainingChild;

// A Chinese technical corpus: sentences about 机器学习, 深度神经网络, Transformer架构 and other
// terms, from templates with varied terms and numbers.
std::string ChineseCorpus(size_t lines) {
  const std::vector<std::string> terms = {
      "机器学习", "深度神经网络", "Transformer架构", "注意力机制", "梯度下降",
      "卷积神经网络", "自然语言处理", "强化学习", "大语言模型", "数据集"};
  const std::vector<std::vector<std::string>> frames = {
      {"", "是人工智能的重要方向。"},
      {"我们使用", "和", "来解决问题。"},
      {"", "在", "中的应用越来越广泛。"},
      {"研究人员提出了一种基于", "的新方法，效果优于", "。"},
      {"", "需要大量的训练数据和计算资源。"},
      {"与", "相比，", "的性能提高了#%。"},
      {"本文介绍", "的基本原理以及", "的实现细节。"},
      {"在第#章中，我们讨论", "与", "的关系。"}};
  std::mt19937 rng(7);
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    const std::vector<std::string>& frame = frames[rng() % frames.size()];
    std::string line;
    for (size_t k = 0; k < frame.size(); ++k) {
      if (k > 0) line += terms[rng() % terms.size()];
      line += frame[k];
    }
    for (size_t at; (at = line.find('#')) != std::string::npos;) {
      line = line.substr(0, at) + std::to_string(1 + rng() % 99) + line.substr(at + 1);
    }
    text += line + "\n";
  }
  return text;
}

// The ids `tokenizer` gives `text` (encoded as one text), and the text of each id alone.
struct Encoded {
  std::vector<std::string> ids;
  std::vector<std::string> pieces;
};
Encoded EncodeWithPieces(const std::string& tokenizer, const std::string& text) {
  Encoded e;
  CliResult r = RunCli({"encode", "--whole", "--tokenizer", tokenizer}, text);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  e.ids = SplitWords(r.out);
  for (const std::string& id : e.ids) {
    CliResult d = RunCli({"decode", "--tokenizer", tokenizer}, id + "\n");
    EXPECT_EQ(d.exit_code, 0) << d.err;
    e.pieces.push_back(d.out);
  }
  return e;
}

std::string Show(const Encoded& e) {
  std::string s;
  for (size_t i = 0; i < e.ids.size(); ++i) s += e.ids[i] + "[" + e.pieces[i] + "] ";
  return s;
}

// ---- the seed users' case -------------------------------------------------------------------

// Each term is one token, alone and between punctuation, with the gpt2 preset (where a run
// of letters, Latin and CJK alike, is one word: "Transformer架构很重要" is one \p{L}+ piece)
// and with no split at all (each line one word).
class ChineseTerms : public ::testing::TestWithParam<std::string> {};

TEST_P(ChineseTerms, AreOneTokenEach) {
  TempDir dir;
  const std::string corpus = dir.Write("zh.txt", ChineseCorpus(3000));
  const std::string out = dir.File("zh.json");
  CliResult r = RunCli({"train", "--unit", "char", "--vocab-size", "800", "--preset", GetParam(),
                        "--quiet", "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string term : {"机器学习", "深度神经网络", "Transformer架构"}) {
    SCOPED_TRACE(term);
    Encoded alone = EncodeWithPieces(out, term);
    ASSERT_EQ(alone.ids.size(), 1u) << Show(alone);
    EXPECT_EQ(alone.pieces[0], term);
  }
  // Between punctuation (split apart by gpt2; one word for none and metaspace) and in a
  // sentence. With metaspace a text starts with "▁", which may be a token of its own (it
  // decodes alone to "": the prefix space is dropped).
  auto drop_prefix = [](Encoded e) {
    if (!e.pieces.empty() && e.pieces[0].empty()) {
      e.pieces.erase(e.pieces.begin());
      e.ids.erase(e.ids.begin());
    }
    return e;
  };
  Encoded punct = drop_prefix(EncodeWithPieces(out, "机器学习，深度神经网络。"));
  EXPECT_EQ(punct.pieces, (std::vector<std::string>{"机器学习", "，", "深度神经网络", "。"}))
      << Show(punct);
  Encoded sentence = drop_prefix(EncodeWithPieces(out, "用Transformer架构。"));
  EXPECT_EQ(sentence.pieces, (std::vector<std::string>{"用", "Transformer架构", "。"}))
      << Show(sentence);
  // 很 never occurs in the corpus: its three bytes are byte-fallback tokens, and the whole
  // still decodes to the text.
  Encoded unseen = drop_prefix(EncodeWithPieces(out, "Transformer架构很重要"));
  ASSERT_GE(unseen.ids.size(), 4u) << Show(unseen);
  EXPECT_EQ(unseen.pieces[0], "Transformer架构");
  EXPECT_EQ(unseen.pieces[1] + unseen.pieces[2] + unseen.pieces[3], "很");
  std::string ids;
  for (const std::string& id : unseen.ids) ids += id + " ";
  EXPECT_EQ(RunCli({"decode", "--tokenizer", out}, ids + "\n").out, "Transformer架构很重要");
}

INSTANTIATE_TEST_SUITE_P(Presets, ChineseTerms, ::testing::Values("gpt2", "none", "metaspace"));

// ---- bad input ------------------------------------------------------------------------------

// Each a one-line usage error (exit 2) before any input is read: no output, no checkpoint.
TEST(CharCli, BadFlagsAreOneLineErrorsWithExitCode2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--normalize", "nfd"}, "--normalize"},
      {{"--normalize", "nfd"}, "nfd"},
      {{"--unit", "char", "--format", "tiktoken"}, "--format tiktoken"},
      {{"--unit", "char", "--character-coverage", "0"}, "--character-coverage 0"},
      {{"--unit", "char", "--character-coverage", "1.5"}, "--character-coverage 1.5"},
      {{"--unit", "char", "--character-coverage", "-0.5"}, "--character-coverage"},
      {{"--limit-alphabet", "5"}, "--limit-alphabet"},
      {{"--unit", "byte", "--limit-alphabet", "5"}, "--unit char"},
      {{"--unit", "word"}, "--unit"},
      {{"--unit", "char", "--hf-compat", "--hf-all-bytes"}, "--hf-all-bytes"},
      {{"--end-of-word-suffix", "</w>"}, "--unit char"},
      {{"--unit", "char", "--continuing-subword-prefix", "# #"}, "space"},
  };
  for (const auto& [flags, expected] : cases) {
    TempDir dir;
    const std::string corpus = dir.Write("c.txt", "hello world\n机器学习\n");
    const std::string out = dir.File("out.json");
    std::vector<std::string> args = {"train", "--vocab-size", "600", "--output", out};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(corpus);
    CliResult r = RunCli(args);
    std::string shown;
    for (const std::string& f : flags) shown += f + " ";
    SCOPED_TRACE(shown);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, StartsWith("tokenmill train: error: "));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, EndsWith("\n"));
    EXPECT_THAT(r.err, HasSubstr(expected));
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".ckpt"));
  }
}

TEST(CharCli, WithoutByteFallbackTheSummarySaysHowMuchBecameUnknown) {
  TempDir dir;
  const std::string corpus = dir.Write("u.txt", "abc abd\nabc \xf0\x9f\xa6\x84 \xff\n");
  const std::string out = dir.File("u.json");
  CliResult r = RunCli({"train", "--unit", "char", "--byte-fallback=false", "--limit-alphabet",
                        "5", "--vocab-size", "9", "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("alphabet: 5 of 7 characters, covering 13 of 15 occurrences"));
  EXPECT_THAT(r.err, HasSubstr("2 occurrences of characters outside it and 1 bytes that are not "
                               "UTF-8 became the unknown token <unk>"));
  // The same with <unk> listed as a special token at the start (it is that token).
  CliResult listed = RunCli({"train", "--unit", "char", "--byte-fallback=false", "--limit-alphabet",
                             "5", "--vocab-size", "9", "--special-token", "<unk>",
                             "--special-tokens-at", "start", "--output", dir.File("l.json"), corpus});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.err, HasSubstr("became the unknown token <unk>"));
  {
    const std::string listed_json = ReadAll(dir.File("l.json"));
    size_t mentions = 0;
    for (size_t at = listed_json.find("<unk>", listed_json.find("\"vocab\""));
         at != std::string::npos; at = listed_json.find("<unk>", at + 1)) {
      ++mentions;
    }
    EXPECT_EQ(mentions, 1u) << "a listed <unk> was merged";
  }
  const std::string json = ReadAll(out);
  EXPECT_THAT(json, HasSubstr("\"unk_token\": \"<unk>\""));
  EXPECT_THAT(json, HasSubstr("\"byte_fallback\": false"));
  // <unk> (id 0), then the 5 characters by code point.
  EXPECT_THAT(json, HasSubstr("\"<unk>\": 0,"));
  EXPECT_THAT(json, HasSubstr("\"\\n\": 1,"));
  EXPECT_THAT(json, HasSubstr("\" \": 2,"));
  EXPECT_THAT(json, HasSubstr("\"c\": 5,"));
  const size_t vocab = json.find("\"vocab\"");
  ASSERT_NE(vocab, std::string::npos);
  size_t unk_mentions = 0;
  for (size_t at = json.find("<unk>", vocab); at != std::string::npos; at = json.find("<unk>", at + 1)) {
    ++unk_mentions;
  }
  EXPECT_EQ(unk_mentions, 1u) << "tokens or merges of the vocabulary hold <unk>";
  CliResult e = RunCli({"encode", "--whole", "--tokenizer", out}, "abc");
  EXPECT_EQ(e.exit_code, 0) << e.err;
}

// Encoding without byte fallback: each unknown character is one <unk> and decodes as
// "<unk>". The corpus has no character left out (coverage 1), so no merge holds <unk>.
TEST(CharCli, WithoutByteFallbackUnseenCharactersEncodeAsUnknown) {
  TempDir dir;
  const std::string corpus = dir.Write("u.txt", "abc abd\nabc abc\n");
  const std::string out = dir.File("u.json");
  CliResult r = RunCli({"train", "--unit", "char", "--byte-fallback=false",
                        "--character-coverage", "1", "--vocab-size", "12", "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("alphabet: 6 of 6 characters, covering 16 of 16 occurrences"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("became the unknown token")));
  EXPECT_THAT(ReadAll(out), HasSubstr("\"unk_token\": \"<unk>\""));
  CliResult e = RunCli({"encode", "--whole", "--tokenizer", out}, "\xf0\x9f\xa6\x84" "e\xff");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out, "0 0 0\n");
  CliResult d = RunCli({"decode", "--tokenizer", out}, e.out);
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, "<unk><unk><unk>");
  CliResult known = RunCli({"encode", "--whole", "--tokenizer", out}, "abc abd");
  ASSERT_EQ(known.exit_code, 0) << known.err;
  EXPECT_EQ(RunCli({"decode", "--tokenizer", out}, known.out).out, "abc abd");
}

// ---- checkpoints and resume -----------------------------------------------------------------

std::string MixedCorpus() {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(20000, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(text.rfind('\n') + 1);
  return text + ChineseCorpus(3000);
}

const std::vector<std::string> kCharOptions = {"--unit", "char", "--vocab-size", "2000",
                                               "--character-coverage", "0.999", "--preset",
                                               "metaspace", "--normalize", "nfkc"};

// `train` of `corpus` with kCharOptions, uninterrupted and without checkpoints, writing
// direct.json in `dir`: what every resumed run must equal.
std::vector<std::string> DirectRun(TempDir& dir, const std::string& corpus) {
  std::vector<std::string> args = {"train", "--output", dir.File("direct.json"),
                                   "--checkpoint=none", "--quiet"};
  args.insert(args.end(), kCharOptions.begin(), kCharOptions.end());
  args.push_back(corpus);
  return args;
}

TEST(CharCli, ResumeExtendsAFinishedRunToTheDirectRunsFile) {
  TempDir dir;
  const std::string corpus = dir.Write("mix.txt", MixedCorpus());
  std::vector<std::string> small = {"train", "--output", dir.File("small.json"), "--quiet"};
  small.insert(small.end(), kCharOptions.begin(), kCharOptions.end());
  small[std::find(small.begin(), small.end(), "2000") - small.begin()] = "900";
  small.push_back(corpus);
  ASSERT_EQ(RunCli(small).exit_code, 0);
  CliResult extended = RunCli({"train", "--resume", dir.File("small.json.ckpt"), "--vocab-size",
                               "2000", "--output", dir.File("extended.json"), "--quiet"});
  ASSERT_EQ(extended.exit_code, 0) << extended.err;
  const std::vector<std::string> direct = DirectRun(dir, corpus);
  ASSERT_EQ(RunCli(direct).exit_code, 0);
  const std::string expected = ReadAll(dir.File("direct.json"));
  ASSERT_THAT(expected, HasSubstr("\"<0xFF>\""));
  EXPECT_TRUE(ReadAll(dir.File("extended.json")) == expected);
  // The checkpoint keeps the character options: changing one on resume is refused.
  CliResult changed = RunCli({"train", "--resume", dir.File("small.json.ckpt"), "--unit", "byte",
                              "--output", dir.File("x.json"), "--quiet"});
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_THAT(changed.err, HasSubstr("--unit"));
  CliResult coverage = RunCli({"train", "--resume", dir.File("small.json.ckpt"),
                               "--character-coverage", "0.5", "--output", dir.File("y.json"),
                               "--quiet"});
  EXPECT_NE(coverage.exit_code, 0);
  EXPECT_THAT(coverage.err, HasSubstr("--character-coverage"));
}

TEST(CharCli, InterruptedRunResumesToTheUninterruptedRunsFile) {
  TempDir dir;
  const std::string corpus = dir.Write("mix.txt", MixedCorpus());
  const std::vector<std::string> direct = DirectRun(dir, corpus);
  ASSERT_EQ(RunCli(direct).exit_code, 0);
  const std::string expected = ReadAll(dir.File("direct.json"));
  ASSERT_FALSE(expected.empty());

  const std::string out = dir.File("out.json");
  for (size_t stop_at : {size_t{150}, size_t{700}}) {
    SCOPED_TRACE("stop at merge " + std::to_string(stop_at));
    std::vector<std::string> args = {"train", "--output", out, "--checkpoint-every", "50",
                                     "--quiet", "--verbose", "--log-every", "1"};
    if (std::filesystem::exists(out + ".ckpt")) {
      args.insert(args.end(), {"--resume", out + ".ckpt"});
    } else {
      args.insert(args.end(), kCharOptions.begin(), kCharOptions.end());
      args.push_back(corpus);
    }
    InterruptAtMerge(args, stop_at, out);
    if (::testing::Test::HasFatalFailure()) return;
  }
  CliResult resumed = RunCli({"train", "--resume", out + ".ckpt", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(ReadAll(out) == expected) << "the resumed run wrote another tokenizer.json";
  // With 1 and 2 threads the same file too.
  for (const char* threads : {"1", "2"}) {
    std::vector<std::string> again = direct;
    again[2] = dir.File(std::string("t") + threads + ".json");
    again.insert(again.end() - 1, {"--threads", threads});
    ASSERT_EQ(RunCli(again).exit_code, 0);
    EXPECT_TRUE(ReadAll(again[2]) == expected) << "--threads " << threads;
  }
}

// ---- encode and decode ----------------------------------------------------------------------

TEST(CharCli, EncodeThenDecodeGivesUnseenEmojiAndInvalidBytesBack) {
  TempDir dir;
  const std::string corpus = dir.Write("zh.txt", ChineseCorpus(2000));
  for (const std::string preset : {"gpt2", "none"}) {
    SCOPED_TRACE(preset);
    const std::string out = dir.File(preset + ".json");
    ASSERT_EQ(RunCli({"train", "--unit", "char", "--vocab-size", "700", "--preset", preset,
                      "--quiet", "--checkpoint=none", "--output", out, corpus})
                  .exit_code,
              0);
    const std::string text = std::string("机器学习\xf0\x9f\xa6\x84 and \xff\xfe bytes\n") +
                             "\xe9\xbe\x98\xc3\n" + std::string("nul\0here\n", 9) +
                             "深度神经网络 \xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7\n";
    CliResult e = RunCli({"encode", "--tokenizer", out}, text);
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_EQ(std::count(e.out.begin(), e.out.end(), '\n'), 4);  // one line of ids per line
    CliResult d = RunCli({"decode", "--tokenizer", out}, e.out);
    ASSERT_EQ(d.exit_code, 0) << d.err;
    EXPECT_TRUE(d.out == text) << "decoded: " << d.out;
    // The unseen emoji became its four byte-fallback tokens <0xF0> <0x9F> <0xA6> <0x84>.
    const std::string json = ReadAll(out);
    for (const char* name : {"<0xF0>", "<0x9F>", "<0xA6>", "<0x84>", "<0xFF>"}) {
      EXPECT_THAT(json, HasSubstr(std::string("\"") + name + "\""));
    }
    CliResult emoji = RunCli({"encode", "--whole", "--tokenizer", out}, "\xf0\x9f\xa6\x84");
    ASSERT_EQ(emoji.exit_code, 0) << emoji.err;
    const std::vector<std::string> ids = SplitWords(emoji.out);
    ASSERT_EQ(ids.size(), 4u) << emoji.out;
    // Byte-fallback ids are 256 consecutive ids in byte order: <0xF0> - <0x84> = 0xF0 - 0x84.
    EXPECT_EQ(std::stoi(ids[0]) - std::stoi(ids[3]), 0xf0 - 0x84);
    EXPECT_EQ(std::stoi(ids[1]) - std::stoi(ids[3]), 0x9f - 0x84);
  }
}

}  // namespace
// ---- inspect and explain ------------------------------------------------------------------

// `inspect` says what a character-level tokenizer is made of (units, where the byte-fallback
// tokens are, its normalizer and split); `explain` shows characters, byte-fallback pieces by
// name and the preparation of the text.
TEST(CharCli, InspectAndExplainShowCharactersByteFallbackAndTheNormalizer) {
  TempDir dir;
  const std::string corpus = dir.Write("zh.txt", ChineseCorpus(1000));
  const std::string out = dir.File("t.json");
  ASSERT_EQ(RunCli({"train", "--unit", "char", "--vocab-size", "600", "--preset", "metaspace",
                    "--normalize", "nfkc", "--quiet", "--checkpoint=none", "--output", out, corpus})
                .exit_code,
            0);
  CliResult inspect = RunCli({"inspect", out});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("units:         char (characters; byte fallback: the 256 "
                                     "tokens <0x00>..<0xFF> at ids 0..255)"));
  EXPECT_THAT(inspect.out, HasSubstr("normalizer:    nfkc\n"));
  EXPECT_THAT(inspect.out, HasSubstr("pre-tokenizer: metaspace"));
  EXPECT_THAT(inspect.out, HasSubstr(" single-character tokens"));
  // "Ａ" (full width) is "A" after NFKC; the emoji was never seen: four byte-fallback tokens.
  CliResult explain = RunCli({"explain", "--tokenizer", out, "机器学习\xef\xbc\xa1\xf0\x9f\xa6\x84"});
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_THAT(explain.out, HasSubstr("nfkc normalization"));
  EXPECT_THAT(explain.out, HasSubstr("characters: "));
  EXPECT_THAT(explain.out, HasSubstr("<0xF0> <0x9F> <0xA6> <0x84>"));
  EXPECT_THAT(explain.out, HasSubstr("习A"));     // Ａ normalized to A before it was split ...
  EXPECT_THAT(explain.out, HasSubstr("<0x41>"));  // ... and no A in the Chinese corpus
}

}  // namespace tokenmill
