// Checkpoint files: exact round trip, and every kind of damage is reported, never misread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "checkpoint/checkpoint.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;

Checkpoint SampleCheckpoint() {
  Checkpoint c;
  c.settings = {{"vocab-size", "300"}, {"preset", "gpt2"}, {"special-token", "<|a|>"},
                {"special-token", "<|b|>"}};
  c.corpus_files = {{"corpus.txt", 1234, 1700000000123456789}, {"more.txt", 5, 42}};
  c.documents = 7;
  c.corpus_bytes = 1239;
  for (const std::string& w : std::vector<std::string>{"hello", " world", "\n", std::string("a\0b", 3), "\xff\xfe", "中文"}) {
    c.words.Add(w, w.size() * 3 + 1);
  }
  c.merges = {{"l", "l"}, {"he", "llo"}, {std::string("\0", 1), "\xff"}};
  c.finished = false;
  c.created_unix_seconds = 1764400000;
  return c;
}

std::string Serialize(const Checkpoint& c) {
  CheckpointWriter writer;
  auto data = writer.Serialize(c);
  EXPECT_TRUE(data.ok()) << data.status();
  return *data;
}

TEST(CheckpointFile, RoundTripsEveryField) {
  Checkpoint c = SampleCheckpoint();
  auto parsed = ParseCheckpoint(Serialize(c), "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->settings, c.settings);
  EXPECT_EQ(parsed->corpus_files, c.corpus_files);
  EXPECT_EQ(parsed->documents, c.documents);
  EXPECT_EQ(parsed->corpus_bytes, c.corpus_bytes);
  EXPECT_EQ(parsed->words, c.words);
  EXPECT_EQ(parsed->merges, c.merges);
  EXPECT_EQ(parsed->finished, c.finished);
  EXPECT_EQ(parsed->created_unix_seconds, c.created_unix_seconds);
  EXPECT_EQ(SettingValue(*parsed, "special-token"), "<|a|>");
  EXPECT_THAT(DescribeCheckpoint(*parsed), HasSubstr("merges done: 3 of a target vocabulary of 300"));
}

TEST(CheckpointFile, WriterReusesTheWordFrameButNotStaleMerges) {
  Checkpoint c = SampleCheckpoint();
  CheckpointWriter writer;
  ASSERT_TRUE(writer.Serialize(c).ok());
  c.merges.push_back({"x", "y"});
  auto parsed = ParseCheckpoint(*writer.Serialize(c), "mem");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->merges, c.merges);
  c.words.Add("new word", 2);  // a changed table is re-serialised
  parsed = ParseCheckpoint(*writer.Serialize(c), "mem");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->words, c.words);
}

// A training run gives the writer its table once and may then free it; a resumed run adopts
// the stored frame. Both must write what a writer holding the table writes.
TEST(CheckpointFile, APinnedOrAdoptedTableWritesTheSameBytes) {
  Checkpoint c = SampleCheckpoint();
  const std::string expected = Serialize(c);
  CheckpointWriter pinned;
  {
    WordCounts table = c.words;
    ASSERT_TRUE(pinned.SetWordTable(table).ok());
  }  // the table is gone; the writer keeps its compressed frame
  Checkpoint without_table = c;
  without_table.words = WordCounts();
  auto bytes = pinned.Serialize(without_table);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, expected);

  auto parsed = ParseCheckpoint(expected, "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CheckpointWriter adopted;
  adopted.AdoptWordTable(parsed->words_frame, parsed->word_table_hash,
                         parsed->words.unique_words(), parsed->words.total_words());
  bytes = adopted.Serialize(without_table);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, expected);
  // More merges later: only the merges frame changes.
  without_table.merges.push_back({"x", "y"});
  parsed = ParseCheckpoint(*adopted.Serialize(without_table), "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->words, c.words);
  EXPECT_EQ(parsed->merges, without_table.merges);
}

TEST(CheckpointFile, EveryTruncationIsAnError) {
  std::string data = Serialize(SampleCheckpoint());
  for (size_t size = 0; size < data.size(); ++size) {
    auto parsed = ParseCheckpoint(std::string_view(data).substr(0, size), "ckpt");
    ASSERT_FALSE(parsed.ok()) << "truncated to " << size << " bytes was accepted";
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("ckpt"));
  }
}

TEST(CheckpointFile, EveryFlippedBitIsAnError) {
  std::string data = Serialize(SampleCheckpoint());
  for (size_t byte = 0; byte < data.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = data;
      damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
      ASSERT_FALSE(ParseCheckpoint(damaged, "ckpt").ok()) << "flip at byte " << byte << " bit " << bit;
    }
  }
}

TEST(CheckpointFile, ForeignFilesAreRecognised) {
  EXPECT_THAT(std::string(ParseCheckpoint("{\"model\": {}}", "t.json").status().message()),
              HasSubstr("wrong magic"));
  EXPECT_THAT(std::string(ParseCheckpoint("", "empty").status().message()), HasSubstr("empty"));
  std::string data = Serialize(SampleCheckpoint());
  EXPECT_FALSE(ParseCheckpoint(data + "x", "ckpt").ok());  // trailing bytes
}

TEST(CheckpointFile, NewerFormatVersionIsRefusedByName) {
  std::string data = Serialize(SampleCheckpoint());
  data[8] = static_cast<char>(kCheckpointFormatVersion + 1);  // version field, little-endian
  // Recompute the header CRC so that only the version is "wrong".
  uint32_t header_size = static_cast<uint8_t>(data[12]) | static_cast<uint8_t>(data[13]) << 8 |
                         static_cast<uint8_t>(data[14]) << 16 | static_cast<uint8_t>(data[15]) << 24;
  size_t crc_at = 16 + header_size;
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(crc_at));
  for (int i = 0; i < 4; ++i) data[crc_at + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  auto parsed = ParseCheckpoint(data, "ckpt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("newer"));
}

TEST(CheckpointFile, WritingToDevFullFailsClearlyAndLeavesTheDeviceAlone) {
  CheckpointWriter writer;
  absl::Status full = writer.Write(SampleCheckpoint(), "/dev/full");
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(std::string(full.message()), HasSubstr("/dev/full"));
  EXPECT_THAT(std::string(full.message()), HasSubstr("No space left"));
  struct stat st;
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full was replaced";
}

// A checkpoint that does not fit on a full file system fails with a clear error; the previous
// checkpoint at the same path stays loadable and no temporary file is left behind.
TEST(CheckpointFile, AFullFileSystemKeepsThePreviousCheckpoint) {
  testing::TempDir dir;
  std::string mount_point = dir.File("small_fs");
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  if (geteuid() != 0 ||
      mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=256k") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root)";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount(path.c_str()); }
  } unmount{mount_point};
  std::string path = mount_point + "/run.ckpt";
  Checkpoint c = SampleCheckpoint();
  CheckpointWriter writer;
  ASSERT_TRUE(writer.Write(c, path).ok());
  // Fill the rest of the file system.
  {
    std::string filler(4096, 'x');
    FILE* f = fopen((mount_point + "/filler").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    while (fwrite(filler.data(), 1, filler.size(), f) == filler.size() && fflush(f) == 0) {
    }
    fclose(f);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) c.words.Add(std::to_string(rng()), 1);  // incompressible-ish
  absl::Status status = writer.Write(c, path);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("No space left"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("previous one"));
  auto reread = ReadCheckpoint(path);
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_EQ(reread->words, SampleCheckpoint().words);
  for (const auto& entry : std::filesystem::directory_iterator(mount_point)) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
  }
}

}  // namespace
}  // namespace tokenmill
