#include "common/byte_level.h"

#include <gtest/gtest.h>

#include <set>

namespace tokenmill {
namespace {

TEST(ByteLevel, IsABijectionOverAllBytes) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    char32_t cp = ByteToCodePoint(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second) << "byte " << b;
    EXPECT_EQ(CodePointToByte(cp), b);
  }
}

// Values from GPT-2's encoder.py: space -> 'Ġ' (U+0120), '\n' -> 'Ċ' (U+010A), 'A' -> 'A'.
TEST(ByteLevel, MatchesGpt2Mapping) {
  EXPECT_EQ(ByteToCodePoint(' '), U'\u0120');
  EXPECT_EQ(ByteToCodePoint('\n'), U'\u010A');
  EXPECT_EQ(ByteToCodePoint('A'), U'A');
  EXPECT_EQ(ByteToCodePoint(0), U'\u0100');
  EXPECT_EQ(ByteToCodePoint(0xAD), U'\u0143');
}

TEST(ByteLevel, RoundTripsEveryByteString) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  absl::StatusOr<std::string> back = ByteLevelToBytes(BytesToByteLevel(all));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, all);
}

TEST(ByteLevel, RejectsCharactersOutsideTheAlphabet) {
  EXPECT_FALSE(ByteLevelToBytes(" ").ok());       // a raw space is not in the alphabet
  EXPECT_FALSE(ByteLevelToBytes("\xe4\xbd\xa0").ok());  // 你
  EXPECT_FALSE(ByteLevelToBytes("\xc4").ok());    // truncated UTF-8
}

}  // namespace
}  // namespace tokenmill
