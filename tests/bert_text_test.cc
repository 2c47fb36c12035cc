// BERT's text side (issue 21): the normalizer's BERT steps (clean_text, handle_chinese_chars,
// strip_accents, then lowercase; pretokenize/normalizer.h) and the "bert" split
// (pretokenize/split_modes.h) on cases checked by hand against Hugging Face's bert.rs and
// UnicodeData.txt; the settings record that stores them (pretokenizer_config_codec.h); the
// tokenizer.json sections (BertNormalizer, BertPreTokenizer). The comparison with Hugging Face
// itself, on the corpora and on every code point, is scripts/ci_parity.sh's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "model/bpe/bpe_hf_json.h"
#include "model/bpe/bpe_model.h"
#include "model/hf_json.h"
#include "pretokenize/normalizer.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/pretokenizer_config_codec.h"
#include "reference/checked.h"
#include "reference/pcre2_differential.h"
#include "reference/utf8_reference.h"

namespace tokenmill {
namespace {

using testing::EscapeForMessage;

struct Steps {
  bool clean = false, chinese = false, strip = false, lower = false;
  NormalForm form = NormalForm::kNone;
};

NormalizerConfig Config(Steps s) {
  NormalizerConfig config;
  config.form = s.form;
  config.clean_text = s.clean;
  config.handle_chinese_chars = s.chinese;
  config.strip_accents = s.strip;
  config.lowercase = s.lower;
  return config;
}

std::string Normalized(Steps steps, std::string_view text) {
  std::unique_ptr<Normalizer> normalizer =
      testing::OkOrFail(Normalizer::Create(Config(steps)), "normalizer");
  std::string out = "kept:";  // Normalize appends
  normalizer->Normalize(text, out);
  EXPECT_TRUE(out.starts_with("kept:"));
  return out.substr(5);
}

constexpr Steps kClean = {.clean = true};
constexpr Steps kChinese = {.chinese = true};
constexpr Steps kStrip = {.strip = true};
constexpr Steps kBert = {.clean = true, .chinese = true};
constexpr Steps kBertUncased = {.clean = true, .chinese = true, .strip = true, .lower = true};

struct Example {
  Steps steps;
  std::string_view text;
  std::string_view expected;
};

// Each written from bert.rs's rules and the characters' UnicodeData.txt entries.
const Example kExamples[] = {
    // clean_text: NUL, U+FFFD and Cc/Cf/Co go, except \t \n \r, which become ' ' as all
    // White_Space does; a control that is also White_Space (VT, FF, NEL) goes.
    {kClean, std::string_view("a\0b", 3), "ab"},
    {kClean, "a\xEF\xBF\xBD" "b", "ab"},                  // U+FFFD
    {kClean, "a\x01\x1F\x7F" "b", "ab"},                  // Cc
    {kClean, "a\x0B\x0C" "b", "ab"},                      // VT, FF: Cc and White_Space
    {kClean, "a\xC2\x85" "b", "ab"},                      // U+0085 NEL: the same
    {kClean, "a\xC2\x9F" "b", "ab"},                      // U+009F (C1, Cc)
    {kClean, "a\t\n\rb", "a   b"},
    {kClean, "a\xC2\xA0" "b\xE3\x80\x80" "c", "a b c"},   // NBSP, U+3000
    {kClean, "a\xE2\x80\xA8\xE2\x80\xA9\xE1\x9A\x80" "b", "a   b"},  // U+2028, U+2029, U+1680
    {kClean, "a\xE2\x80\x8B\xE2\x80\x8D\xEF\xBB\xBF" "b", "ab"},     // U+200B ZWJ BOM: Cf
    {kClean, "a\xC2\xAD" "b\xE2\x81\xA0" "c", "abc"},     // soft hyphen, word joiner: Cf
    {kClean, "a\xEE\x80\x80" "b\xF3\xB0\x80\x80" "c", "abc"},  // U+E000, U+F0000: Co
    {kClean, "a\xF3\xA0\x80\x81" "b", "ab"},              // U+E0001 LANGUAGE TAG: Cf
    {kClean, "a\xCD\xB8" "b", "a\xCD\xB8" "b"},           // U+0378 unassigned (Cn): kept
    {kClean, "a\xE1\xA0\x8E" "b", "ab"},                  // U+180E: Cf, not White_Space
    {kClean, "a\x1C" "b", "ab"},                          // U+001C: Cc (Rust: not whitespace)
    {kClean, "  x  ", "  x  "},
    // handle_chinese_chars: BERT's ranges, assigned or not; kana, Hangul, CJK punctuation and
    // the ranges' gap U+2B820..2B91F are not spaced.
    {kChinese, "\xE9\x87\x8E\xE5\x8F\xA3" "a", " \xE9\x87\x8E  \xE5\x8F\xA3 a"},  // 野口a
    {kChinese, "\xE3\x90\x80", " \xE3\x90\x80 "},          // U+3400
    {kChinese, "\xE4\xB6\xBF", " \xE4\xB6\xBF "},          // U+4DBF
    {kChinese, "\xEF\xA4\x80", " \xEF\xA4\x80 "},          // U+F900 (compatibility ideograph)
    {kChinese, "\xF0\xA0\x80\x80", " \xF0\xA0\x80\x80 "},  // U+20000
    {kChinese, "\xF0\xAB\xA0\x9F", " \xF0\xAB\xA0\x9F "},  // U+2B81F
    {kChinese, "\xF0\xAB\xA0\xA0", "\xF0\xAB\xA0\xA0"},    // U+2B820: in the gap
    {kChinese, "\xF0\xAB\xA4\xA0", " \xF0\xAB\xA4\xA0 "},  // U+2B920
    {kChinese, "\xF0\xAF\xA0\x80", " \xF0\xAF\xA0\x80 "},  // U+2F800
    {kChinese, "\xF0\xB0\x80\x80", "\xF0\xB0\x80\x80"},    // U+30000 (Extension G): not BERT's
    {kChinese, "\xE3\x81\x82\xED\x95\x9C\xE3\x80\x82", "\xE3\x81\x82\xED\x95\x9C\xE3\x80\x82"},
    // strip_accents: NFD, then Mn goes; the rest stays decomposed.
    {kStrip, "caf\xC3\xA9", "cafe"},                           // é precomposed
    {kStrip, "cafe\xCC\x81", "cafe"},                          // e + U+0301
    {kStrip, "Vi\xE1\xBB\x87t", "Viet"},                       // ệ: e + U+0323 + U+0302
    {kStrip, "\xC3\x85\xE2\x84\xAB", "AA"},                    // Å, U+212B ANGSTROM SIGN
    {kStrip, "\xED\x95\x9C", "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"},  // 한: its jamo
    {kStrip, "\xC7\x85\xEF\xAC\x81", "\xC7\x85\xEF\xAC\x81"},  // ǅ, ﬁ: compatibility only
    {kStrip, "\xE0\xA4\x95\xE0\xA4\xBF", "\xE0\xA4\x95\xE0\xA4\xBF"},  // कि: U+093F is Mc
    {kStrip, "a\xE2\x83\x9D", "a\xE2\x83\x9D"},                // U+20DD enclosing circle: Me
    {kStrip, "\xD8\xA8\xD9\x8E", "\xD8\xA8"},                  // بَ: U+064E fatha is Mn
    {kStrip, "\xE2\x9D\xA4\xEF\xB8\x8F", "\xE2\x9D\xA4"},      // ❤ + U+FE0F (Mn)
    {kStrip, "\xCE\x86\xCE\x90", "\xCE\x91\xCE\xB9"},          // Ά ΐ: Α ι
    {kStrip, "plain ascii", "plain ascii"},
    // Lowercase after strip_accents: İ decomposes to I + U+0307, whose mark goes first.
    {{.strip = true, .lower = true}, "\xC4\xB0", "i"},
    {{.clean = true, .lower = true}, "\xC4\xB0", "i\xCC\x87"},
    {{.strip = true, .lower = true}, "\xC3\x89T\xC3\x89 \xCE\xA3", "ete \xCF\x83"},  // ÉTÉ Σ
    // NFKC runs first.
    {{.clean = true, .strip = true, .form = NormalForm::kNfkc}, "\xEF\xAC\x81\xE2\x91\xA0", "fi1"},
    // All of BERT's uncased normalizer.
    {kBertUncased, "H\xC3\xA9llo,\t\xE4\xB8\x96\xE7\x95\x8C!\x01\xC3\x87" "A",
     "hello,  \xE4\xB8\x96  \xE7\x95\x8C !ca"},
    {kBert, "", ""},
};

TEST(BertNormalizer, KnownExamples) {
  for (const Example& e : kExamples) {
    EXPECT_EQ(Normalized(e.steps, e.text), e.expected) << EscapeForMessage(e.text);
  }
}

// The NUL case above is spelled with a length; check it really holds the NUL.
TEST(BertNormalizer, CleanTextDropsNulInsideText) {
  const std::string text("x\0\0y", 4);
  EXPECT_EQ(Normalized(kClean, text), "xy");
  EXPECT_EQ(Normalized({.chinese = true}, text), text);
}

// Invalid bytes stay where they were under every step, and nothing combines across them.
TEST(BertNormalizer, InvalidBytesAreKeptInPlace) {
  EXPECT_EQ(Normalized(kBertUncased, "A\xFF" "B\x80\xC3"), "a\xFF" "b\x80\xC3");
  EXPECT_EQ(Normalized(kChinese, "\xE4\xB8"), "\xE4\xB8");  // a CJK character cut short
  EXPECT_EQ(Normalized(kStrip, "\xC3\xA9\xFF\xCC\x81" "e"), "e\xFF" "e");  // marks go alone too
  EXPECT_EQ(Normalized(kClean, "\xED\xA0\x80\x01"), "\xED\xA0\x80");       // a surrogate
}

TEST(BertNormalizer, OtherConfigsAreUnchangedByTheBertSteps) {
  EXPECT_FALSE(NormalizerConfig{}.bert());
  NormalizerConfig nfkc_lower{NormalForm::kNfkc, true};
  EXPECT_FALSE(nfkc_lower.bert());
  EXPECT_TRUE(Config(kStrip).bert());
  EXPECT_FALSE(Config(kStrip).identity());
  // Lowercase alone is Hugging Face's Lowercase, the same mapping as BertNormalizer's.
  EXPECT_EQ(Normalized({.lower = true}, "\xC4\xB0\xCE\xA3"),
            Normalized({.clean = true, .lower = true}, "\xC4\xB0\xCE\xA3"));
}

TEST(BertNormalizer, ThreadsGiveTheSameOutput) {
  std::unique_ptr<Normalizer> normalizer =
      testing::OkOrFail(Normalizer::Create(Config(kBertUncased)), "normalizer");
  std::string text;
  for (const Example& e : kExamples) text += std::string(e.text) + "\n";
  std::string expected;
  normalizer->Normalize(text, expected);
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (std::string& out : got) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        out.clear();
        normalizer->Normalize(text, out);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& out : got) EXPECT_EQ(out, expected);
}

// ---- the bert split ------------------------------------------------------------------------

std::vector<std::string> Pieces(std::string_view text) {
  std::unique_ptr<PreTokenizer> split =
      testing::OkOrFail(PreTokenizer::Create(PreTokenizerConfig("bert")), "bert");
  std::vector<std::string> pieces;
  for (std::string_view p : testing::SplitToVector(*split, text)) pieces.emplace_back(p);
  return pieces;
}

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(BertSplit, HuggingFacesOwnExample) {  // pre_tokenizers/bert.rs, test "basic"
  EXPECT_THAT(Pieces("Hey friend!     How are you?!?"),
              ElementsAre("Hey", "friend", "!", "How", "are", "you", "?", "!", "?"));
}

TEST(BertSplit, AsciiPunctuationIncludesSymbols) {
  EXPECT_THAT(Pieces("a$b+c<=>d^e`f|g~h_i"),
              ElementsAre("a", "$", "b", "+", "c", "<", "=", ">", "d", "^", "e", "`", "f", "|",
                          "g", "~", "h", "_", "i"));
  EXPECT_THAT(Pieces("don't \"x\" [1,2] \\"),
              ElementsAre("don", "'", "t", "\"", "x", "\"", "[", "1", ",", "2", "]", "\\"));
}

TEST(BertSplit, UnicodePunctuationIsAloneButSymbolsAreNot) {
  // « » — ¿ 、 。 「 」 ‧ ׳: Pi Pf Pd Po Po Po Ps Pe Po Po.
  EXPECT_THAT(Pieces("\xC2\xAB" "a\xC2\xBB\xE2\x80\x94\xC2\xBF" "b\xE3\x80\x81\xE3\x80\x82"
                     "\xE3\x80\x8C" "c\xE3\x80\x8D\xE2\x80\xA7\xD7\xB3"),
              ElementsAre("\xC2\xAB", "a", "\xC2\xBB", "\xE2\x80\x94", "\xC2\xBF", "b",
                          "\xE3\x80\x81", "\xE3\x80\x82", "\xE3\x80\x8C", "c", "\xE3\x80\x8D",
                          "\xE2\x80\xA7", "\xD7\xB3"));
  // € © ° ± (Sc So So Sm) stay in the word; so does U+166D (So since Unicode 12).
  EXPECT_THAT(Pieces("5\xE2\x82\xAC\xC2\xA9\xC2\xB0\xC2\xB1\xE1\x99\xAD"),
              ElementsAre("5\xE2\x82\xAC\xC2\xA9\xC2\xB0\xC2\xB1\xE1\x99\xAD"));
}

TEST(BertSplit, WhitespaceIsWhiteSpaceAndDropped) {
  // \v \f NBSP U+3000 U+2028 U+0085 U+202F separate; U+200B and U+180E are no whitespace.
  EXPECT_THAT(Pieces("a\vb\fc\xC2\xA0" "d\xE3\x80\x80" "e\xE2\x80\xA8" "f\xC2\x85" "g"
                     "\xE2\x80\xAF" "h\xE2\x80\x8B" "i\xE1\xA0\x8E" "j"),
              ElementsAre("a", "b", "c", "d", "e", "f", "g", "h\xE2\x80\x8Bi\xE1\xA0\x8Ej"));
  EXPECT_THAT(Pieces(" \t\n "), IsEmpty());
  EXPECT_THAT(Pieces(""), IsEmpty());
  EXPECT_THAT(Pieces("\x1C" "a\x1F"), ElementsAre("\x1C" "a\x1F"));  // not White_Space
}

TEST(BertSplit, EachInvalidByteIsAPieceOfItsOwn) {
  EXPECT_THAT(Pieces("ab\xFF" "cd"), ElementsAre("ab", "\xFF", "cd"));
  EXPECT_THAT(Pieces("\xE2\x82 x"), ElementsAre("\xE2", "\x82", "x"));
  EXPECT_THAT(Pieces("\xC3\xA9\xED\xA0\x80!"), ElementsAre("\xC3\xA9", "\xED", "\xA0", "\x80", "!"));
}

TEST(BertSplit, AfterTheNormalizerAsHuggingFacesChineseExample) {  // bert.rs, "chinese_chars"
  const std::string text = Normalized(kBert, "\xE9\x87\x8E\xE5\x8F\xA3\xE9\x87\x8C\xE4\xBD\xB3 "
                                             "Noguchi Rika");  // 野口里佳
  EXPECT_THAT(Pieces(text), ElementsAre("\xE9\x87\x8E", "\xE5\x8F\xA3", "\xE9\x87\x8C",
                                        "\xE4\xBD\xB3", "Noguchi", "Rika"));
}

TEST(BertSplit, DigitsSplitAfterIt) {
  PreTokenizerConfig config("bert");
  config.split_digits = true;
  std::unique_ptr<PreTokenizer> split = testing::OkOrFail(PreTokenizer::Create(config), "bert");
  EXPECT_THAT(testing::SplitToVector(*split, "ab12, c3"), ElementsAre("ab", "1", "2", ",", "c", "3"));
}

// ---- the preset, the settings record ------------------------------------------------------------

TEST(BertPreset, BringsCleanTextAndChineseCharsOnly) {
  PreTokenizerConfig config("bert");
  config.normalizer.lowercase = true;
  ApplyPresetNormalizer(&config);
  EXPECT_TRUE(config.normalizer.clean_text && config.normalizer.handle_chinese_chars);
  EXPECT_TRUE(config.normalizer.lowercase);
  EXPECT_FALSE(config.normalizer.strip_accents);
  PreTokenizerConfig gpt2("gpt2");
  ApplyPresetNormalizer(&gpt2);
  EXPECT_TRUE(gpt2.SplitOnly());
  EXPECT_EQ(EffectivePattern(config), "");
  EXPECT_THAT(PresetNames(), ::testing::Contains("bert"));
}

PreTokenizerConfig RoundTripped(const PreTokenizerConfig& v) {
  std::string bytes;
  BinaryWriter w(&bytes);
  ValueCodec<PreTokenizerConfig>::Encode(v, w);
  BinaryReader r(bytes);
  PreTokenizerConfig back;
  EXPECT_TRUE(ValueCodec<PreTokenizerConfig>::Decode(r, &back));
  return back;
}

TEST(TextSettings, BertFieldsRoundTripAsTaggedFields) {
  PreTokenizerConfig v("bert");
  ApplyPresetNormalizer(&v);
  EXPECT_EQ(RoundTripped(v), v);
  EXPECT_EQ(EncodeTextSettings(v), std::string("\x00\x00\x00\x01\x01\x01\x02\x01", 8));
  v.normalizer.strip_accents = v.normalizer.lowercase = true;
  v.normalizer.form = NormalForm::kNfc;
  EXPECT_EQ(RoundTripped(v), v);
  EXPECT_EQ(DescribeTextSettings(v), "nfc clean_text handle_chinese_chars strip_accents lowercase");
  EXPECT_EQ(ValueCodec<PreTokenizerConfig>::Values(v),
            std::vector<std::string>{
                "bert nfc clean_text handle_chinese_chars strip_accents lowercase"});
  PreTokenizerConfig strip_only("gpt2");
  strip_only.normalizer.strip_accents = true;
  EXPECT_EQ(RoundTripped(strip_only), strip_only);
  EXPECT_TRUE(HasTaggedTextSettings(strip_only));
}

TEST(TextSettings, RecordsWithoutTagsReadAsBeforeAndOthersEncodeAsBefore) {
  // nfkc, lowercase, no split_digits, metaspace_prefix: the record files before issue 21 hold.
  const std::string old_record("\x02\x01\x00\x01", 4);
  PreTokenizerConfig v("metaspace");
  ASSERT_TRUE(DecodeTextSettings(old_record, &v));
  EXPECT_EQ(v.normalizer, (NormalizerConfig{NormalForm::kNfkc, true}));
  EXPECT_EQ(EncodeTextSettings(v), old_record);
  EXPECT_FALSE(HasTaggedTextSettings(v));
  EXPECT_EQ(EncodeTextSettings(PreTokenizerConfig("bert")), "");  // the split alone
}

TEST(TextSettings, BadTaggedFieldsAreErrors) {
  PreTokenizerConfig v;
  const std::string head("\x00\x00\x00\x01", 4);
  EXPECT_TRUE(DecodeTextSettings(head + std::string("\x03\x01", 2), &v));
  EXPECT_TRUE(v.normalizer.strip_accents);
  EXPECT_FALSE(DecodeTextSettings(head + std::string("\x09\x01", 2), &v));          // unknown
  EXPECT_FALSE(DecodeTextSettings(head + std::string("\x01\x02", 2), &v));          // not 0/1
  EXPECT_FALSE(DecodeTextSettings(head + std::string("\x01\x01\x01\x01", 4), &v));  // twice
  EXPECT_FALSE(DecodeTextSettings(head + std::string("\x01", 1), &v));              // cut short
}

// ---- tokenizer.json ----------------------------------------------------------------------------

TEST(BertHfJson, NormalizerSections) {
  NormalizerConfig bert = Config(kBert);
  EXPECT_EQ(HfNormalizer(bert),
            R"({"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,)"
            R"("strip_accents":false,"lowercase":false})");
  EXPECT_EQ(HfNormalizer(Config({.clean = true, .strip = true, .lower = true,
                                 .form = NormalForm::kNfkc})),
            R"({"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"BertNormalizer",)"
            R"("clean_text":true,"handle_chinese_chars":false,"strip_accents":true,)"
            R"("lowercase":true}]})");
  // The others as before.
  EXPECT_EQ(HfNormalizer(NormalizerConfig{NormalForm::kNfkc, true}),
            R"({"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"}]})");
  EXPECT_EQ(HfNormalizer(NormalizerConfig{}), "null");
}

// A tokenizer.json of a two-character char-level model with `normalizer` and `pre_tokenizer`.
std::string CharJson(std::string_view normalizer, std::string_view pre_tokenizer) {
  return StrCat(R"({"added_tokens": [], "normalizer": )", normalizer, R"(, "pre_tokenizer": )",
                pre_tokenizer,
                R"(, "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, )"
                R"("merges": [["a", "b"]]}})");
}

PreTokenizerConfig ReadConfig(std::string_view normalizer, std::string_view pre_tokenizer) {
  BpeModel model = testing::OkOrFail(
      BpeModelFromHfJson(CharJson(normalizer, pre_tokenizer), "t.json"), "reading");
  return model.pretokenizer;
}

TEST(BertHfJson, ReadsBertNormalizerAndPreTokenizer) {
  constexpr std::string_view kPre = R"({"type": "BertPreTokenizer"})";
  // As bert-base-uncased's tokenizer.json has it: strip_accents null follows lowercase.
  PreTokenizerConfig uncased = ReadConfig(
      R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
          "strip_accents": null, "lowercase": true})",
      kPre);
  EXPECT_EQ(uncased.preset, "bert");
  EXPECT_EQ(uncased.normalizer, Config(kBertUncased));
  PreTokenizerConfig cased = ReadConfig(
      R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
          "lowercase": false})",
      kPre);
  EXPECT_EQ(cased.normalizer, Config(kBert));
  PreTokenizerConfig lower_keep_accents = ReadConfig(
      R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "BertNormalizer",
          "clean_text": false, "handle_chinese_chars": true, "strip_accents": false,
          "lowercase": true}]})",
      kPre);
  EXPECT_EQ(lower_keep_accents.normalizer,
            Config({.chinese = true, .lower = true, .form = NormalForm::kNfc}));
  // With every BERT step off it is Lowercase: the same text, written back as Lowercase.
  PreTokenizerConfig lower = ReadConfig(
      R"({"type": "BertNormalizer", "clean_text": false, "handle_chinese_chars": false,
          "strip_accents": false, "lowercase": true})",
      kPre);
  EXPECT_EQ(lower.normalizer, (NormalizerConfig{NormalForm::kNone, true}));
}

TEST(BertHfJson, MalformedBertNormalizersNameTheField) {
  constexpr std::string_view kPre = R"({"type": "BertPreTokenizer"})";
  auto error = [&](std::string_view normalizer) {
    absl::StatusOr<BpeModel> model = BpeModelFromHfJson(CharJson(normalizer, kPre), "t.json");
    return model.ok() ? std::string("ok") : std::string(model.status().message());
  };
  EXPECT_THAT(error(R"({"type": "BertNormalizer", "handle_chinese_chars": true,
                        "lowercase": true})"),
              ::testing::HasSubstr("normalizer.clean_text"));
  EXPECT_THAT(error(R"({"type": "BertNormalizer", "clean_text": true,
                        "handle_chinese_chars": true, "strip_accents": 1, "lowercase": true})"),
              ::testing::HasSubstr("normalizer.strip_accents"));
  EXPECT_THAT(error(R"({"type": "Sequence", "normalizers": [{"type": "BertNormalizer",
                        "clean_text": true, "handle_chinese_chars": true, "lowercase": true},
                        {"type": "NFKC"}]})"),
              ::testing::HasSubstr("'NFKC' where tokenmill reads"));
}

}  // namespace
}  // namespace tokenmill
