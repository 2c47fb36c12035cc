// A vocabulary without some bytes (what --hf-compat trains: only the bytes seen) loads and
// encodes: text holding such a byte is an error naming the byte and where it is, or, with
// UnknownBytes::kDrop, the byte is left out of its piece as Hugging Face's BPE leaves out a
// symbol it has no id for (scripts/ci_parity.sh checks the ids against Hugging Face itself).
// --hf-all-bytes trains with all 256 bytes, so every text encodes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "count/word_counts.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "reference/cli_runner.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::RunCli;
using testing::TempDir;

const std::string kSample = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt";

// A byte-level model of the bytes 'a', 'b', ' ' and the token "ab", as a --hf-compat run on
// "ab ab" gives it.
BpeModel SmallModel() {
  WordCounts counts;
  counts.Add("ab", 3);
  counts.Add(" ab", 2);
  TrainerOptions options;
  options.hf_compat = true;
  options.vocab_size = 4;
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(result.ok()) << result.status();
  return Bpe(*result);
}

TEST(UnknownBytes, AVocabularyWithoutSomeBytesLoadsAndSaysWhichItLacks) {
  BpeModel model = SmallModel();
  ASSERT_EQ(model.tokens, (std::vector<std::string>{"a", "b", " ", "ab"}));
  auto encoder = Encoder::Create(model);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->unencodable_bytes().count(), 253u);
  EXPECT_FALSE((*encoder)->unencodable_bytes().test('a'));
  EXPECT_TRUE((*encoder)->unencodable_bytes().test(0));
  auto ids = (*encoder)->Encode("ab ab");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<TokenId>{3, 2, 3}));
}

TEST(UnknownBytes, AnUnknownByteIsAnErrorNamingItAndItsOffset) {
  auto encoder = Encoder::Create(SmallModel());
  ASSERT_TRUE(encoder.ok());
  auto ids = (*encoder)->Encode("ab a\xC3\xA9");
  ASSERT_FALSE(ids.ok());
  EXPECT_THAT(std::string(ids.status().message()),
              HasSubstr("byte 0xC3 at byte 4 is in no token of the vocabulary"));
  auto explained = (*encoder)->Explain("ab\x01");
  ASSERT_FALSE(explained.ok());
  EXPECT_THAT(std::string(explained.status().message()), HasSubstr("byte 0x01 at byte 2"));
}

TEST(UnknownBytes, DroppedBytesLeaveTheirPieceWhoseOtherBytesStillMerge) {
  EncoderOptions options;
  options.unknown_bytes = UnknownBytes::kDrop;
  auto encoder = Encoder::Create(SmallModel(), options);
  ASSERT_TRUE(encoder.ok());
  // "a\xC3\xA9b" is one piece (é is a letter): without é's two bytes, "a" and "b" are
  // neighbours and merge, as in Hugging Face, which skips the symbols it has no id for.
  auto ids = (*encoder)->Encode("a\xC3\xA9" "b ab\x01");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<TokenId>{3, 2, 3}));
  auto decoded = (*encoder)->Decode(*ids);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, "ab ab");
  // A piece of unknown bytes only gives no ids.
  auto none = (*encoder)->Encode("\x01\x02");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(UnknownBytes, TheCliNamesTheLineOrDropsAsAsked) {
  TempDir dir;
  const std::string out = dir.File("hf.json");
  auto train = RunCli({"train", "--hf-compat", "--vocab-size", "400", "--checkpoint=none",
                       "--output", out, "--quiet", kSample});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const std::string text = dir.Write("t.txt", "hello world\nhello\x01world\n");
  auto refused = RunCli({"encode", "--tokenizer", out, text});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "tokenmill encode: error: " + text +
                             ":2: byte 0x01 at byte 5 is in no token of the vocabulary (it did "
                             "not occur in training), so the text cannot be encoded; "
                             "--unknown-bytes=drop leaves such bytes out, as Hugging Face does\n");
  auto dropped = RunCli({"encode", "--tokenizer", out, "--unknown-bytes", "drop", text});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  auto decoded = RunCli({"decode", "--tokenizer", out}, dropped.out);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, "hello world\nhelloworld\n");
}

TEST(UnknownBytes, HfAllBytesTrainsEveryByteSoEveryTextEncodes) {
  TempDir dir;
  const std::string all = dir.File("all.json"), seen = dir.File("seen.json");
  auto a = RunCli({"train", "--hf-compat", "--hf-all-bytes", "--vocab-size", "400",
                   "--checkpoint=none", "--output", all, "--quiet", kSample});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto s = RunCli({"train", "--hf-compat", "--vocab-size", "400", "--checkpoint=none",
                   "--output", seen, "--quiet", kSample});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  const std::string text = dir.Write("bytes.txt", every_byte);
  auto ids = RunCli({"encode", "--tokenizer", all, "--whole", text});
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  auto back = RunCli({"decode", "--tokenizer", all}, ids.out);
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, every_byte);
  // The merges are those of the run on the seen bytes, as far as they go: a byte that never
  // occurs is in no pair, and its id, in Hugging Face's code point order, keeps the other
  // ids in the same order, so every tie-break between pairs is decided the same way.
  absl::StatusOr<std::unique_ptr<Model>> ma = LoadModel(all);
  absl::StatusOr<std::unique_ptr<Model>> ms = LoadModel(seen);
  ASSERT_TRUE(ma.ok() && ms.ok());
  const BpeModel& ba = *AsBpe(**ma);
  const BpeModel& bs = *AsBpe(**ms);
  ASSERT_EQ(ba.tokens.size(), 400u);
  ASSERT_LT(ba.merges.size(), bs.merges.size());
  for (size_t i = 0; i < ba.merges.size(); ++i) {
    EXPECT_EQ(ba.tokens[ba.merges[i].result], bs.tokens[bs.merges[i].result]) << "merge " << i;
  }
  auto alone = RunCli({"train", "--hf-all-bytes", "--vocab-size", "400", "--output",
                       dir.File("x.json"), kSample});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err,
            "tokenmill train: error: --hf-all-bytes applies only with --hf-compat (without it "
            "the alphabet holds every byte anyway)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.json")));
}

}  // namespace
}  // namespace tokenmill
