// Aligned arrays (common/binary_io.h): WriteAlignedArray's items start at a multiple of their
// alignment from the start of the writer's string, whatever came before them; ReadAlignedArray
// gives the same items back, used where they lie when the reader's bytes have an owner and the
// items are aligned there, copied otherwise (no owner, or the bytes moved to an odd address).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/binary_io.h"

namespace tokenmill {
namespace {

struct Item {
  uint64_t key;
  uint32_t size;
  uint32_t id;
};

std::vector<Item> Items(size_t n) {
  std::vector<Item> items(n);
  for (size_t i = 0; i < n; ++i) {
    items[i] = {i * 0x9E3779B97F4A7C15ull, static_cast<uint32_t>(i), 7u};
  }
  return items;
}

bool Same(const SharedArray<Item>& a, const std::vector<Item>& b) {
  return a.size() == b.size() &&
         (b.empty() || std::memcmp(a.data(), b.data(), b.size() * sizeof(Item)) == 0);
}

TEST(AlignedArrays, ItemsStartAlignedAfterAnyPrefix) {
  for (size_t prefix = 0; prefix < 24; ++prefix) {
    for (size_t n : {0, 1, 5, 1000}) {
      SCOPED_TRACE(testing::Message() << "prefix " << prefix << ", " << n << " items");
      const std::vector<Item> items = Items(n);
      std::string bytes;
      BinaryWriter w(&bytes);
      w.Raw(std::string(prefix, 'x'));
      WriteAlignedArray(w, std::span<const Item>(items));
      w.Varint(42);  // what follows is read after it
      // Held at an aligned address (a string's buffer is the allocator's: 16-aligned), owned.
      auto owner = std::make_shared<const std::string>(bytes);
      BinaryReader in(*owner);
      std::string_view skipped;
      ASSERT_TRUE(in.Raw(prefix, &skipped));
      SharedArray<Item> read;
      ASSERT_TRUE(ReadAlignedArray(in, n, owner, &read));
      EXPECT_TRUE(Same(read, items));
      if (n > 0) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(read.data()) % alignof(Item), 0u);
        // Used where it lies: inside the owner's bytes.
        EXPECT_GE(reinterpret_cast<const char*>(read.data()), owner->data());
        EXPECT_LE(reinterpret_cast<const char*>(read.data() + n), owner->data() + owner->size());
      }
      uint64_t after;
      ASSERT_TRUE(in.Varint(&after));
      EXPECT_EQ(after, 42u);
      EXPECT_TRUE(in.done());
    }
  }
}

TEST(AlignedArrays, CopiedWithoutAnOwnerOrAtAnOddAddress) {
  const std::vector<Item> items = Items(100);
  std::string bytes;
  BinaryWriter w(&bytes);
  WriteAlignedArray(w, std::span<const Item>(items));
  // No owner: copied, though aligned.
  {
    BinaryReader in(bytes);
    SharedArray<Item> read;
    ASSERT_TRUE(ReadAlignedArray(in, items.size(), nullptr, &read));
    EXPECT_TRUE(Same(read, items));
    EXPECT_TRUE(reinterpret_cast<const char*>(read.data()) < bytes.data() ||
                reinterpret_cast<const char*>(read.data()) >= bytes.data() + bytes.size());
  }
  // The same bytes one past an aligned address: the items are misaligned there, so copied.
  auto shifted = std::make_shared<const std::string>("x" + bytes);
  BinaryReader in(std::string_view(*shifted).substr(1));
  SharedArray<Item> read;
  ASSERT_TRUE(ReadAlignedArray(in, items.size(), shifted, &read));
  EXPECT_TRUE(Same(read, items));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(read.data()) % alignof(Item), 0u);
  EXPECT_TRUE(reinterpret_cast<const char*>(read.data()) < shifted->data() ||
              reinterpret_cast<const char*>(read.data()) >= shifted->data() + shifted->size());
}

TEST(AlignedArrays, ABadCountOrShortBytesAreRefused) {
  const std::vector<Item> items = Items(10);
  std::string bytes;
  BinaryWriter w(&bytes);
  WriteAlignedArray(w, std::span<const Item>(items));
  auto owner = std::make_shared<const std::string>(bytes);
  SharedArray<Item> read;
  {
    BinaryReader in(*owner);
    EXPECT_FALSE(ReadAlignedArray(in, 9, owner, &read));
  }
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    BinaryReader in(std::string_view(*owner).substr(0, cut));
    EXPECT_FALSE(ReadAlignedArray(in, 10, owner, &read)) << "cut at " << cut;
  }
  // A padding count of alignof(Item) or more is no array of this writer's.
  std::string bad = bytes;
  bad[1] = static_cast<char>(alignof(Item));
  BinaryReader in(bad);
  EXPECT_FALSE(ReadAlignedArray(in, 10, nullptr, &read));
}

}  // namespace
}  // namespace tokenmill
