// Acceptance test of the Normalizer (ICU) against the utf8proc oracle on every shared corpus in
// full, line by line, for every configuration that changes text: zero differing lines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pretokenize/normalizer.h"
#include "reference/checked.h"
#include "reference/pcre2_differential.h"
#include "reference/shared_corpus.h"
#include "reference/utf8proc_normalizer.h"

namespace tokenmill {
namespace {

struct Case {
  std::string corpus;
  NormalForm form;
  bool lowercase;
};

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* corpus : {"brown", "linux_docs", "linux_c_100m", "poetry"}) {
    cases.push_back({corpus, NormalForm::kNfc, false});
    cases.push_back({corpus, NormalForm::kNfkc, false});
    cases.push_back({corpus, NormalForm::kNone, true});
    cases.push_back({corpus, NormalForm::kNfkc, true});
  }
  return cases;
}

class NormalizeCorpusTest : public ::testing::TestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(SharedCorpora, NormalizeCorpusTest, ::testing::ValuesIn(AllCases()),
                         [](const auto& info) {
                           return info.param.corpus + "_" +
                                  std::string(NormalFormName(info.param.form)) +
                                  (info.param.lowercase ? "_lowercase" : "");
                         });

TEST_P(NormalizeCorpusTest, EveryLineAsUtf8procNormalizesIt) {
  static std::string cached_name, cached_text;
  if (cached_name != GetParam().corpus) {
    cached_text = testing::ReadSharedCorpus(GetParam().corpus);
    cached_name = GetParam().corpus;
  }
  const std::string& text = cached_text;
  if (text.empty()) GTEST_SKIP() << "corpus " << GetParam().corpus << " not found";
  NormalizerConfig config;
  config.form = GetParam().form;
  config.lowercase = GetParam().lowercase;
  std::unique_ptr<Normalizer> normalizer =
      testing::OkOrFail(Normalizer::Create(config), "normalizer");
  testing::Utf8procNormalizer oracle(config);
  size_t lines = 0, differing = 0, changed = 0;
  std::string ours, expected;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line = std::string_view(text).substr(start, end - start);
    start = end;
    ++lines;
    ours.clear();
    expected.clear();
    normalizer->Normalize(line, ours);
    oracle.Normalize(line, expected);
    if (ours != line) ++changed;
    if (ours != expected && ++differing <= 3) {
      ADD_FAILURE() << "line " << lines << " \"" << testing::EscapeForMessage(line) << "\": \""
                    << testing::EscapeForMessage(ours) << "\", utf8proc \""
                    << testing::EscapeForMessage(expected) << "\"";
    }
  }
  EXPECT_EQ(differing, 0u) << "of " << lines << " lines";
  RecordProperty("lines", static_cast<int>(lines));
  RecordProperty("changed_lines", static_cast<int>(changed));
  std::printf("%s: %zu lines, %zu changed, %zu differ\n", GetParam().corpus.c_str(), lines,
              changed, differing);
}

}  // namespace
}  // namespace tokenmill
