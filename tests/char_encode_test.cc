// Encoding with character-level models (units = kChar): decode(encode(x)) == x for any bytes
// under byte fallback; unseen characters as byte-fallback tokens or one <unk> each; the
// metaspace split and its prefix; NFKC normalization in the encoder; tokenizer.json written and
// read back to the same model under every text setting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "count/count_text.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/hf_json.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/text_prep.h"
#include "reference/trained_bpe.h"
#include "reference/utf8_reference.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;

const std::string kMeta = "\xe2\x96\x81";  // ▁

// English and Chinese lines: sample.txt's start, and Chinese sentences written here.
std::string TrainingText() {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(20000, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(text.rfind('\n') + 1);
  const std::vector<std::string> zh = {
      "机器学习是人工智能的一个分支。", "深度神经网络在图像识别中表现很好。",
      "我们用Transformer架构训练语言模型。", "数据越多，模型越好，123 和 4567 是数字。"};
  for (int i = 0; i < 200; ++i) text += zh[i % zh.size()] + " " + std::to_string(i) + "\n";
  return text;
}

struct Setting {
  PreTokenizerConfig config;
  bool byte_fallback = true;
  double coverage = 1.0;
  bool hf_compat = false;
  std::string prefix = "", suffix = "";  // word-boundary markers
};

// A character model trained through the library as `train` does: each line counted (prepared
// and split as the config says), then trained.
BpeModel TrainCharModel(const Setting& s, size_t vocab_size = 900,
                        const std::string& text = TrainingText()) {
  absl::StatusOr<std::unique_ptr<PreTokenizer>> pretokenizer = PreTokenizer::Create(s.config);
  EXPECT_TRUE(pretokenizer.ok()) << pretokenizer.status();
  absl::StatusOr<std::unique_ptr<TextPrep>> prep = TextPrep::Create(s.config);
  EXPECT_TRUE(prep.ok()) << prep.status();
  WordCounts counts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    CountDocument(std::string_view(text).substr(start, end - start), **pretokenizer, nullptr,
                  counts, prep->get());
    start = end;
  }
  TrainerOptions options;
  options.units = UnitKind::kChar;
  options.vocab_size = vocab_size;
  options.byte_fallback = s.byte_fallback;
  options.character_coverage = s.coverage;
  options.hf_compat = s.hf_compat;
  options.continuing_subword_prefix = s.prefix;
  options.end_of_word_suffix = s.suffix;
  options.pretokenizer = s.config;
  options.special_tokens = {"<s>"};
  options.special_tokens_at = SpecialTokensAt::kStart;
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return BpeModel{};
  EXPECT_EQ(Bpe(*result).pretokenizer, s.config);
  EXPECT_EQ(Bpe(*result).unit_kind, UnitKind::kChar);
  return Bpe(*result);
}

PreTokenizerConfig Preset(const std::string& name) {
  PreTokenizerConfig config;
  config.preset = name;
  return config;
}

std::unique_ptr<Encoder> MakeEncoder(const BpeModel& model) {
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(model);
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

// Random strings of the kinds the brief names: ASCII, CJK seen in training, CJK never seen
// (龘, 㐀), emoji (4-byte, ZWJ sequences), invalid UTF-8, NUL, long pieces (the heap path).
std::vector<std::string> RandomTexts(size_t n, uint64_t seed, bool allow_meta = true) {
  static const std::vector<std::string> parts = {
      "the ", "interrupt", " ", "  ", "\n", "\t", "a", "Z", "0", "42", ",", ".",
      "\xe6\x9c\xba\xe5\x99\xa8", "\xe5\xad\xa6\xe4\xb9\xa0", "\xe7\xa5\x9e\xe7\xbb\x8f",
      "\xe9\xbe\x98", "\xe3\x90\x80", "\xf0\x9f\x98\x80", "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7",
      "\xff", "\x80", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", std::string(1, '\0'),
      "\xc3\xa9", "\xd0\xb4\xd0\xb0", "\xe2\x96\x81"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> texts = {"", " ", "a", "\xff", std::string(1, '\0'), "\xf0\x9f\x98\x80",
                                    "\xe6\x9c\xba\xe5\x99\xa8\xe5\xad\xa6\xe4\xb9\xa0"};
  for (size_t i = 0; i < n; ++i) {
    std::string t;
    const size_t len = rng() % 10 == 0 ? 100 + rng() % 200 : rng() % 20;
    for (size_t k = 0; k < len; ++k) {
      const std::string& p = parts[rng() % parts.size()];
      if (!allow_meta && p == kMeta) continue;
      t += p;
    }
    texts.push_back(t);
  }
  if (!allow_meta) {
    for (std::string& t : texts) {
      for (size_t at; (at = t.find(kMeta)) != std::string::npos;) t.erase(at, kMeta.size());
    }
  }
  return texts;
}

// ---- round trip ------------------------------------------------------------------------------

class CharRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CharRoundTrip, DecodeOfEncodeIsIdentityWithByteFallback) {
  for (double coverage : {1.0, 0.98}) {
    const BpeModel model = TrainCharModel({Preset(GetParam()), true, coverage});
    ASSERT_EQ(model.byte_fallback.size(), 256u);
    std::unique_ptr<Encoder> encoder = MakeEncoder(model);
    ASSERT_NE(encoder, nullptr);
    for (const std::string& text : RandomTexts(400, 17)) {
      absl::StatusOr<std::vector<TokenId>> ids = encoder->Encode(text);
      ASSERT_TRUE(ids.ok()) << ids.status();
      absl::StatusOr<std::string> back = encoder->Decode(*ids);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, text) << "coverage " << coverage;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, CharRoundTrip, ::testing::Values("gpt2", "none"));

// What the vocabulary has no character token for becomes the fallback tokens of its bytes:
// an unseen emoji its four bytes, an invalid byte itself.
TEST(CharEncode, UnseenCharactersAndInvalidBytesBecomeByteFallbackTokens) {
  const BpeModel model = TrainCharModel({Preset("none")});
  std::unique_ptr<Encoder> encoder = MakeEncoder(model);
  ASSERT_NE(encoder, nullptr);
  const std::string emoji = "\xf0\x9f\xa6\x84";  // 🦄, not in the training text
  ASSERT_EQ(std::count(model.tokens.begin() + 257, model.tokens.end(), emoji), 0);
  auto fb = [&](unsigned char b) { return model.byte_fallback[b]; };
  EXPECT_THAT(*encoder->Encode(emoji), ElementsAre(fb(0xf0), fb(0x9f), fb(0xa6), fb(0x84)));
  EXPECT_THAT(*encoder->Encode("\xff"), ElementsAre(fb(0xff)));
  EXPECT_THAT(*encoder->Encode(std::string("\xc3", 1)), ElementsAre(fb(0xc3)));
  // A seen character is its own token, not its bytes.
  std::vector<TokenId> ji = *encoder->Encode("\xe6\x9c\xba");  // 机
  ASSERT_EQ(ji.size(), 1u);
  EXPECT_EQ(model.tokens[ji[0]], "\xe6\x9c\xba");
  EXPECT_THAT(model.byte_fallback, ::testing::Not(::testing::Contains(ji[0])));
}

// Without byte fallback, each character the vocabulary lacks (and each invalid byte) is one
// <unk>; decoding writes "<unk>" there. The training text holds no unknown character
// (coverage 1), so no merge involves <unk>.
TEST(CharEncode, WithoutByteFallbackUnseenCharactersAreOneUnknownEach) {
  const BpeModel model = TrainCharModel({Preset("gpt2"), /*byte_fallback=*/false});
  ASSERT_TRUE(model.byte_fallback.empty());
  ASSERT_TRUE(model.unknown.has_value());
  const TokenId unk = *model.unknown;
  EXPECT_EQ(model.tokens[unk], "<unk>");
  EXPECT_EQ(unk, 1u);  // after the one special token at the start
  std::unique_ptr<Encoder> encoder = MakeEncoder(model);
  ASSERT_NE(encoder, nullptr);
  const std::string unicorn = "\xf0\x9f\xa6\x84", dragon = "\xe9\xbe\x98";  // 🦄 龘: unseen
  for (const std::string& c : {unicorn, dragon}) {
    ASSERT_EQ(std::count(model.tokens.begin(), model.tokens.end(), c), 0);
  }
  EXPECT_THAT(*encoder->Encode(unicorn), ElementsAre(unk));
  EXPECT_THAT(*encoder->Encode(unicorn + unicorn + dragon), ElementsAre(unk, unk, unk));
  EXPECT_THAT(*encoder->Encode("\xff\xfe"), ElementsAre(unk, unk));  // one per invalid byte
  // Among known text: one <unk> per unknown character, the rest as without them.
  const std::string text = "the " + unicorn + " interrupt" + dragon + dragon;
  std::vector<TokenId> ids = *encoder->Encode(text);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), unk), 3);
  EXPECT_EQ(*encoder->Decode(ids), "the <unk> interrupt<unk><unk>");
  EXPECT_EQ(*encoder->Decode(*encoder->Encode("the interrupt")), "the interrupt");
}

// ---- metaspace -------------------------------------------------------------------------------

PreTokenizerConfig Metaspace(bool prefix) {
  PreTokenizerConfig config = Preset("metaspace");
  config.metaspace_prefix = prefix;
  return config;
}

// The text with every space as "▁", and with `prefix` a "▁" before it unless it then starts
// with one (text_prep.h: " x" prepares as "▁x", as "x" does).
std::string Metaspaced(const std::string& text, bool prefix) {
  std::string out;
  for (char c : text) {
    if (c == ' ') {
      out += kMeta;
    } else {
      out += c;
    }
  }
  return prefix && !out.starts_with(kMeta) ? kMeta + out : out;
}

TEST(CharEncode, MetaspaceRoundTripsTextWithoutLeadingSpaceOrMetaspace) {
  for (bool prefix : {true, false}) {
    const BpeModel model = TrainCharModel({Metaspace(prefix)});
    std::unique_ptr<Encoder> encoder = MakeEncoder(model);
    ASSERT_NE(encoder, nullptr);
    // Tokens hold "▁" for spaces: the trained vocabulary has "▁the" or the like.
    EXPECT_GT(std::count_if(model.tokens.begin(), model.tokens.end(),
                            [](const std::string& t) { return t.starts_with(kMeta) && t.size() > 3; }),
              10);
    for (std::string text : RandomTexts(300, 23, /*allow_meta=*/false)) {
      // With the prefix, a leading space is not restored (Hugging Face's Strip): leave it out.
      if (prefix) {
        while (text.starts_with(" ")) text.erase(0, 1);
      }
      absl::StatusOr<std::vector<TokenId>> ids = encoder->Encode(text);
      ASSERT_TRUE(ids.ok()) << ids.status();
      EXPECT_EQ(*encoder->Decode(*ids), text) << "prefix " << prefix;
    }
  }
}

TEST(CharEncode, MetaspacePiecesStartAtEachMetaspace) {
  const PreTokenizerConfig config = Metaspace(true);
  absl::StatusOr<std::unique_ptr<TextPrep>> prep = TextPrep::Create(config);
  ASSERT_TRUE(prep.ok()) << prep.status();
  absl::StatusOr<std::unique_ptr<PreTokenizer>> splitter = PreTokenizer::Create(config);
  ASSERT_TRUE(splitter.ok()) << splitter.status();
  // The documented example (split_modes.h) and random texts.
  std::vector<std::string> texts = {"a  b", "hello world", "x", "", "\xe6\x9c\xba \xe5\x99\xa8"};
  for (const std::string& t : RandomTexts(1000, 5, /*allow_meta=*/false)) {
    bool valid = true;
    for (size_t i = 0; i < t.size();) {
      const testing::Utf8Sequence seq = testing::DecodeUtf8At(t, i);
      if (seq.length == 0) valid = false;
      i += seq.length == 0 ? 1 : seq.length;
    }
    if (valid) texts.push_back(t);
  }
  ASSERT_GT(texts.size(), 100u);
  for (const std::string& text : texts) {
    std::string prepared;
    (*prep)->Prepare(text, prepared);
    ASSERT_EQ(prepared, Metaspaced(text, true)) << "'" << text << "'";
    std::vector<std::string> pieces;
    (*splitter)->Split(prepared, [&](std::string_view p) { pieces.emplace_back(p); });
    // The pieces are the prepared text cut before each "▁" (it starts with one).
    std::vector<std::string> expected;
    for (size_t at = 0; at < prepared.size();) {
      size_t next = prepared.find(kMeta, at + kMeta.size());
      if (next == std::string::npos) next = prepared.size();
      expected.push_back(prepared.substr(at, next - at));
      at = next;
    }
    EXPECT_EQ(pieces, expected) << "'" << text << "'";
  }
  std::string prepared;
  (*prep)->Prepare("a  b", prepared);
  std::vector<std::string> pieces;
  (*splitter)->Split(prepared, [&](std::string_view p) { pieces.emplace_back(p); });
  EXPECT_THAT(pieces, ElementsAre(kMeta + "a", kMeta, kMeta + "b"));
  // Without the prefix no "▁" is added; " x" prepares as "▁x" either way.
  absl::StatusOr<std::unique_ptr<TextPrep>> bare = TextPrep::Create(Metaspace(false));
  ASSERT_TRUE(bare.ok());
  (*bare)->Prepare("a b", prepared);
  EXPECT_EQ(prepared, "a" + kMeta + "b");
  (*prep)->Prepare(" x", prepared);
  EXPECT_EQ(prepared, kMeta + "x");
}

// ---- normalization ----------------------------------------------------------------------------

TEST(CharEncode, NfkcNormalizesBeforeEncoding) {
  PreTokenizerConfig config = Preset("gpt2");
  config.normalizer.form = NormalForm::kNfkc;
  const BpeModel model = TrainCharModel({config});
  std::unique_ptr<Encoder> encoder = MakeEncoder(model);
  ASSERT_NE(encoder, nullptr);
  const std::string ligature_circled = "\xef\xac\x81\xe2\x91\xa0";  // ﬁ①
  absl::StatusOr<std::vector<TokenId>> got = encoder->Encode(ligature_circled);
  absl::StatusOr<std::vector<TokenId>> plain = encoder->Encode("fi1");
  ASSERT_TRUE(got.ok() && plain.ok());
  EXPECT_EQ(*got, *plain);
  EXPECT_EQ(*encoder->Decode(*got), "fi1");
  // Full-width letters and the compatibility ideograph too.
  EXPECT_EQ(*encoder->Encode("\xef\xbc\xa1\xef\xbc\xa2"), *encoder->Encode("AB"));  // ＡＢ
  // Without normalization the ligature is not "fi".
  const BpeModel raw = TrainCharModel({Preset("gpt2")});
  std::unique_ptr<Encoder> raw_encoder = MakeEncoder(raw);
  ASSERT_NE(raw_encoder, nullptr);
  EXPECT_NE(*raw_encoder->Encode(ligature_circled), *raw_encoder->Encode("fi1"));
  EXPECT_EQ(*raw_encoder->Decode(*raw_encoder->Encode(ligature_circled)), ligature_circled);
}

TEST(CharEncode, NfkcAndLowercase) {
  PreTokenizerConfig config = Preset("metaspace");
  config.normalizer.form = NormalForm::kNfkc;
  config.normalizer.lowercase = true;
  const BpeModel model = TrainCharModel({config});
  std::unique_ptr<Encoder> encoder = MakeEncoder(model);
  ASSERT_NE(encoder, nullptr);
  EXPECT_EQ(*encoder->Encode("Interrupt \xef\xac\x81LE"), *encoder->Encode("interrupt file"));
  EXPECT_EQ(*encoder->Decode(*encoder->Encode("Boot IO")), "boot io");
}

// ---- tokenizer.json ---------------------------------------------------------------------------

TEST(CharHfJson, WriteThenReadGivesTheSameModel) {
  struct Case {
    std::string name;
    Setting setting;
  };
  PreTokenizerConfig digits = Preset("gpt2");
  digits.split_digits = true;
  PreTokenizerConfig nfkc_lower = Preset("metaspace");
  nfkc_lower.normalizer = {NormalForm::kNfkc, true};
  PreTokenizerConfig nfc = Preset("whitespace");
  nfc.normalizer.form = NormalForm::kNfc;
  PreTokenizerConfig meta_digits = Metaspace(false);
  meta_digits.split_digits = true;
  PreTokenizerConfig bert = Preset("bert");
  ApplyPresetNormalizer(&bert);
  PreTokenizerConfig bert_uncased = bert;
  bert_uncased.normalizer.form = NormalForm::kNfkc;
  bert_uncased.normalizer.strip_accents = bert_uncased.normalizer.lowercase = true;
  const std::vector<Case> cases = {
      {"gpt2 fallback", {Preset("gpt2"), true}},
      {"gpt2 unk", {Preset("gpt2"), false}},
      {"metaspace fallback", {Metaspace(true), true, 0.99}},
      {"metaspace unk", {Metaspace(true), false}},
      {"metaspace no prefix, digits", {meta_digits, true}},
      {"whitespace fallback", {Preset("whitespace"), true}},
      {"whitespace unk", {Preset("whitespace"), false}},
      {"whitespace nfc", {nfc, true}},
      {"none", {Preset("none"), true}},
      {"split digits", {digits, true}},
      {"split digits unk", {digits, false}},
      {"nfkc lowercase", {nfkc_lower, true}},
      {"nfkc lowercase unk", {nfkc_lower, false}},
      {"bert", {bert, true}},
      {"bert nfkc uncased unk", {bert_uncased, false}},
      {"hf compat fallback", {Preset("gpt2"), true, 1.0, true}},
      {"hf compat neither", {Preset("gpt2"), false, 1.0, true}},
      {"suffix", {Preset("whitespace"), true, 0.99, false, "", "</w>"}},
      {"prefix", {Preset("gpt2"), true, 0.99, false, "##", ""}},
      {"prefix and suffix unk", {Preset("whitespace"), false, 0.99, false, "##", "</w>"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const BpeModel model = TrainCharModel(c.setting, 700);
    ASSERT_GT(model.merges.size(), 100u);
    const std::string json = ToHfJson(model);
    absl::StatusOr<std::unique_ptr<Model>> read = FromHfJson(json, "t.json");
    ASSERT_TRUE(read.ok()) << read.status();
    absl::StatusOr<BpeModel> back = TakeBpe(*std::move(read), "t.json");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(*back == model) << "tokens " << (back->tokens == model.tokens) << " merges "
                                << (back->merges == model.merges) << " specials "
                                << (back->specials == model.specials) << " pretokenizer "
                                << (back->pretokenizer == model.pretokenizer) << " byte_fallback "
                                << (back->byte_fallback == model.byte_fallback) << " unknown "
                                << (back->unknown == model.unknown) << " markers "
                                << (back->subword_prefix == model.subword_prefix &&
                                    back->word_suffix == model.word_suffix)
                                << " units "
                                << (back->unit_kind == model.unit_kind);
    EXPECT_EQ(ToHfJson(*back), json);
    if (!c.setting.byte_fallback && !c.setting.hf_compat) {
      EXPECT_NE(json.find("\"unk_token\": \"<unk>\""), std::string::npos);
    }
    // The same encodings from the model read back.
    std::unique_ptr<Encoder> a = MakeEncoder(model), b = MakeEncoder(*back);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    for (const std::string& text : RandomTexts(50, 3)) {
      absl::StatusOr<std::vector<TokenId>> x = a->Encode(text), y = b->Encode(text);
      ASSERT_EQ(x.ok(), y.ok());
      if (x.ok()) {
        EXPECT_EQ(*x, *y);
      }
    }
  }
}


// Word-boundary markers: a continuing-subword prefix is dropped in decoding, so with a split
// that keeps every character (gpt2) decode(encode(x)) == x; an end-of-word suffix decodes to a
// space after each word but the last (Hugging Face's BPEDecoder), which restores the spaces the
// whitespace split drops.
TEST(CharEncode, WordBoundaryMarkersDecodeAsHuggingFaceDoes) {
  const BpeModel prefixed = TrainCharModel({Preset("gpt2"), true, 1.0, false, "##", ""}, 700);
  ASSERT_FALSE(prefixed.subword_prefix.empty());
  bool merged_a_prefixed = false;
  for (const Merge& m : prefixed.merges) {
    merged_a_prefixed = merged_a_prefixed || prefixed.tokens[m.right].starts_with("##");
  }
  EXPECT_TRUE(merged_a_prefixed);
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(prefixed);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  // Known characters: exact. A character without its prefixed token (the emoji, never seen,
  // after the space of its piece) falls back to the bytes of "##" and itself, as Hugging Face's
  // BPE does, so the prefix's text shows; an invalid byte is a piece of its own (no prefix).
  for (const auto& [text, decoded] :
       std::vector<std::pair<std::string, std::string>>{
           {"the lowest newer prices.\n", "the lowest newer prices.\n"},
           {"x \xff y \xf0\x9f\x98\x80\n", "x \xff y ##\xf0\x9f\x98\x80\n"}}) {
    absl::StatusOr<std::vector<TokenId>> ids = (*encoder)->Encode(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ((*encoder)->Decode(*ids).value(), decoded);
  }
  const BpeModel suffixed =
      TrainCharModel({Preset("whitespace"), true, 1.0, false, "", "</w>"}, 700);
  absl::StatusOr<std::unique_ptr<Encoder>> words = Encoder::Create(suffixed);
  ASSERT_TRUE(words.ok()) << words.status();
  absl::StatusOr<std::vector<TokenId>> ids = (*words)->Encode("the  lowest\tnewer prices\n");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ((*words)->Decode(*ids).value(), "the lowest newer prices");
  // Each word's last token ends with the suffix.
  std::string last = suffixed.tokens[ids->back()];
  EXPECT_TRUE(last.ends_with("</w>")) << last;
}

}  // namespace
}  // namespace tokenmill
