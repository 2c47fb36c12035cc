// Long pieces cost O(n log n), not O(n^2): 1 MB and 16 MB pieces with no spaces (random
// letters, one repeated letter, CJK) encode with cl100k_base and decode back exactly. At the
// scan's O(n^2) a 16 MB piece would take days; the test's time is the proof.
#include <gtest/gtest.h>

#include <random>

#include "model/encoder.h"
#include "model/model_file.h"
#include "reference/checked.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

TEST(LongPiece, MegabytesWithoutSpacesEncodeAndDecode) {
  auto encoder = Encoder::Create(
      testing::LoadBpeModelOrFail(testing::TestVocabDir() + "cl100k_base.tiktoken"));
  ASSERT_TRUE(encoder.ok());
  std::mt19937 rng(5);
  const char* kHan[] = {"\xe5\xad\x97", "\xe6\x9c\xac", "\xe4\xb8\x80", "\xe9\xbe\x8d"};
  for (size_t size : {size_t{1} << 20, size_t{16} << 20}) {
    std::string letters, han;
    while (letters.size() < size) letters += static_cast<char>('a' + rng() % 26);
    while (han.size() < size) han += kHan[rng() % 4];
    for (const std::string& text : {letters, han, std::string(size, 'a')}) {
      auto ids = (*encoder)->Encode(text);
      ASSERT_TRUE(ids.ok());
      EXPECT_LT(ids->size(), text.size());
      EXPECT_EQ(*(*encoder)->Decode(*ids), text);
    }
  }
}

}  // namespace
}  // namespace tokenmill
