// Checkpoint files: exact round trip, and every kind of damage is reported, never misread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "checkpoint/checkpoint.h"
#include "driver/describe.h"
#include "driver/stored_options.h"
#include "common/file_util.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"
#include "reference/cli_runner.h"
#include "reference/checked.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;

Checkpoint SampleCheckpoint() {
  Checkpoint c;
  TrainingRunOptions options;
  options.trainer.vocab_size = 300;
  options.corpus.pretokenizer.preset = "gpt2";
  options.corpus.special_tokens = {"<|a|>", "<|b|>"};
  options.Harmonize();
  StoreOptions(options, c);
  c.corpus_files = {{"corpus.txt", 1234, 1700000000123456789}, {"more.txt", 5, 42}};
  c.documents = 7;
  c.corpus_bytes = 1239;
  for (const std::string& w : std::vector<std::string>{"hello", " world", "\n", std::string("a\0b", 3), "\xff\xfe", "中文"}) {
    c.words.Add(w, w.size() * 3 + 1);
  }
  c.merges = {{"l", "l"}, {"he", "llo"}, {std::string("\0", 1), "\xff"}};
  c.merge_counts = {91, 0, uint64_t{1} << 40};
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
  EXPECT_EQ(parsed->model_type, c.model_type);
  EXPECT_EQ(parsed->trainer_options, c.trainer_options);
  EXPECT_EQ(parsed->corpus_options, c.corpus_options);
  EXPECT_EQ(parsed->run_options, c.run_options);
  EXPECT_EQ(parsed->corpus_files, c.corpus_files);
  EXPECT_EQ(parsed->documents, c.documents);
  EXPECT_EQ(parsed->corpus_bytes, c.corpus_bytes);
  EXPECT_EQ(parsed->words, c.words);
  EXPECT_EQ(parsed->merges, c.merges);
  EXPECT_EQ(parsed->merge_counts, c.merge_counts);
  EXPECT_EQ(parsed->finished, c.finished);
  EXPECT_EQ(parsed->created_unix_seconds, c.created_unix_seconds);
  absl::StatusOr<TrainingRunOptions> stored = StoredOptions(*parsed, "mem");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->corpus.special_tokens, (std::vector<std::string>{"<|a|>", "<|b|>"}));
  EXPECT_EQ(stored->trainer.vocab_size, 300u);
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

ino_t Inode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

// Written to a path, a checkpoint is two files; the table's is written once per writer.
TEST(CheckpointFile, TheTableGoesToItsOwnFileOnce) {
  testing::TempDir dir;
  std::string path = dir.File("run.ckpt");
  Checkpoint c = SampleCheckpoint();
  // A table of some size, so that the sizes below tell whether CKPT holds it.
  for (int i = 0; i < 100; ++i) c.words.Add("word" + std::to_string(i * 7919), i + 1);
  CheckpointWriter writer;
  ASSERT_TRUE(writer.SetWordTable(c.words).ok());
  Checkpoint without_table = c;
  without_table.words = WordCounts();
  without_table.merges.resize(1);
  ASSERT_TRUE(writer.Write(without_table, path).ok());
  ASSERT_TRUE(std::filesystem::exists(WordTablePath(path)));
  ino_t table = Inode(WordTablePath(path)), first = Inode(path);
  without_table.merges = c.merges;
  ASSERT_TRUE(writer.Write(without_table, path).ok());
  EXPECT_EQ(Inode(WordTablePath(path)), table) << "the table was written again";
  EXPECT_NE(Inode(path), first) << "the checkpoint was not replaced";
  EXPECT_LT(ReadFile(path)->size(), ReadFile(WordTablePath(path))->size() + 200);

  auto parsed = ReadCheckpoint(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->words, c.words);
  EXPECT_EQ(parsed->merges, c.merges);
  EXPECT_EQ(parsed->words_file, WordTablePath(path));
  EXPECT_THAT(DescribeCheckpoint(*parsed), HasSubstr("word table: " + WordTablePath(path)));
  // Without a way to read the table file, the bytes alone are not a checkpoint.
  EXPECT_THAT(std::string(ParseCheckpoint(testing::ReadFileOrFail(path), "run.ckpt").status().message()),
              HasSubstr("run.ckpt.words"));

  // A writer that adopted the table from where it was read does not write it again there...
  CheckpointWriter adopted;
  adopted.AdoptWordTable(parsed->words_frame, parsed->word_table_hash, c.words.unique_words(),
                         c.words.total_words(), parsed->words_file);
  ASSERT_TRUE(adopted.Write(without_table, path).ok());
  EXPECT_EQ(Inode(WordTablePath(path)), table);
  // ...but does write it beside a checkpoint elsewhere, where it reads back the same.
  std::string elsewhere = dir.File("other.ckpt");
  ASSERT_TRUE(adopted.Write(without_table, elsewhere).ok());
  EXPECT_EQ(testing::ReadFileOrFail(WordTablePath(elsewhere)), testing::ReadFileOrFail(WordTablePath(path)));
  EXPECT_EQ(ReadCheckpoint(elsewhere)->words, c.words);
}

TEST(CheckpointFile, AMissingDamagedOrForeignTableFileIsAClearError) {
  testing::TempDir dir;
  std::string path = dir.File("run.ckpt");
  CheckpointWriter writer;
  ASSERT_TRUE(writer.Write(SampleCheckpoint(), path).ok());
  const std::string table_path = WordTablePath(path);
  const std::string table = testing::ReadFileOrFail(table_path);
  auto error_with = [&](const std::string& table_bytes) {
    {
      std::ofstream out(table_path, std::ios::binary | std::ios::trunc);
      out << table_bytes;
    }
    auto parsed = ReadCheckpoint(path);
    EXPECT_FALSE(parsed.ok());
    return parsed.ok() ? std::string() : std::string(parsed.status().message());
  };
  for (size_t size = 0; size < table.size(); ++size) {
    std::string message = error_with(table.substr(0, size));
    EXPECT_THAT(message, HasSubstr("run.ckpt")) << "truncated to " << size;
  }
  for (size_t byte = 0; byte < table.size(); ++byte) {
    for (int bit : {0, 5}) {
      std::string damaged = table;
      damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
      EXPECT_THAT(error_with(damaged), HasSubstr("run.ckpt.words")) << "byte " << byte;
    }
  }
  // The table of another checkpoint.
  Checkpoint other = SampleCheckpoint();
  other.words.Add("another word", 5);
  std::string other_path = dir.File("other.ckpt");
  ASSERT_TRUE(CheckpointWriter().Write(other, other_path).ok());
  EXPECT_THAT(error_with(testing::ReadFileOrFail(WordTablePath(other_path))), HasSubstr("another table"));
  // No table file at all.
  std::filesystem::remove(table_path);
  auto missing = ReadCheckpoint(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(table_path));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("keep them together"));
  // Back in place, all is well.
  {
    std::ofstream out(table_path, std::ios::binary);
    out << table;
  }
  EXPECT_TRUE(ReadCheckpoint(path).ok());
}

// Format version 1 (one file, no table location in the header) is still read.
// The table read as a flat list (what a resumed run reads) holds the same words and counts.
TEST(CheckpointFile, ReadsTheWordTableAsAListToo) {
  Checkpoint c = SampleCheckpoint();
  std::string data = Serialize(c);
  auto as_list = ParseCheckpoint(data, "mem", nullptr, WordTableAs::kList);
  ASSERT_TRUE(as_list.ok()) << as_list.status();
  EXPECT_EQ(as_list->words.unique_words(), 0u);
  EXPECT_EQ(as_list->word_list.entries.size(), c.words.unique_words());
  uint64_t listed_total = 0;
  for (const auto& entry : as_list->word_list.entries) listed_total += entry.second;
  EXPECT_EQ(listed_total, c.words.total_words());
  EXPECT_EQ(as_list->unique_words, c.words.unique_words());
  EXPECT_EQ(as_list->total_words, c.words.total_words());
  WordCounts rebuilt;
  for (const auto& [word, count] : as_list->word_list.entries) rebuilt.Add(word, count);
  EXPECT_EQ(rebuilt, c.words);
  EXPECT_EQ(as_list->merges, c.merges);
  // A copy shares the bytes its views point into.
  Checkpoint copy = *as_list;
  as_list = absl::StatusOr<Checkpoint>();
  WordCounts from_copy;
  for (const auto& [word, count] : copy.word_list.entries) from_copy.Add(word, count);
  EXPECT_EQ(from_copy, c.words);
}

// A checkpoint in format version 2 (no merge counts), written by tokenmill at 51a2fb5:
// `tokenmill train --vocab-size 400 --output t.json --checkpoint v2.ckpt c.txt`, where c.txt is
// the first 20,000 bytes of tests/data/sample.txt and the line
// "aaaa aaaaaaa aaa ---- ==== ====== zzzz" (so that tokens merge with themselves).
const std::string kV2Checkpoint =
    std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/checkpoint_v2/v2.ckpt";

std::string LittleEndian32(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

// Version 1 had the table inline and no table location in the header: made here from the
// version 2 checkpoint and its table file.
TEST(CheckpointFile, VersionOneFilesAreStillRead) {
  std::string v2 = testing::ReadFileOrFail(kV2Checkpoint);
  std::string table = testing::ReadFileOrFail(kV2Checkpoint + ".words");
  auto original = ReadCheckpoint(kV2Checkpoint);
  ASSERT_TRUE(original.ok()) << original.status();
  ASSERT_EQ(original->format_version, 2u);
  uint32_t header_size = 0;
  std::memcpy(&header_size, v2.data() + 12, 4);
  // The header ends with: 1 (table in a file), the file's name, the CRC-32 of its frame.
  const std::string name = "v2.ckpt.words";
  const size_t location = header_size - (1 + 1 + name.size() + 4);
  ASSERT_EQ(v2[16 + location], '\1');
  ASSERT_EQ(v2.substr(16 + location + 2, name.size()), name);
  // The table file: magic (8), version (4), hash (8), frame, CRC-32 (4).
  const std::string words_frame = table.substr(20, table.size() - 24);
  const std::string merges_frame = v2.substr(16 + header_size + 4, v2.size() - (16 + header_size + 4) - 4);
  const uint32_t size = static_cast<uint32_t>(location);
  std::string v1 = v2.substr(0, 8) + LittleEndian32(1) + LittleEndian32(size) + v2.substr(16, size);
  v1 += LittleEndian32(static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(v1.data()), v1.size())));
  const std::string body = words_frame + merges_frame;
  v1 += body + LittleEndian32(static_cast<uint32_t>(
                   crc32(0L, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  auto parsed = ParseCheckpoint(v1, "v1.ckpt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->format_version, 1u);
  EXPECT_EQ(parsed->words, original->words);
  EXPECT_EQ(parsed->merges, original->merges);
  EXPECT_TRUE(parsed->merge_counts.empty());
}

// Version 2 checkpoints hold no merge counts; they still resume to the result of an
// uninterrupted run (replaying word by word where a count is needed), and extend it.
TEST(CheckpointFile, VersionTwoCheckpointsResumeExactly) {
  auto checkpoint = ReadCheckpoint(kV2Checkpoint);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->format_version, 2u);
  ASSERT_EQ(checkpoint->merges.size(), 144u);
  EXPECT_TRUE(checkpoint->merge_counts.empty());
  TrainerOptions options;
  options.vocab_size = 400;
  auto direct = Train(WordSource::Borrow(checkpoint->words), options);
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_EQ(Bpe(*direct).merges.size(), checkpoint->merges.size());
  bool self_merge = false;
  for (size_t i = 0; i < checkpoint->merges.size(); ++i) {
    const Merge& m = Bpe(*direct).merges[i];
    EXPECT_EQ(checkpoint->merges[i],
              std::make_pair(Bpe(*direct).tokens[m.left], Bpe(*direct).tokens[m.right]));
    self_merge |= m.left == m.right;
  }
  EXPECT_TRUE(self_merge);
  for (size_t vocab : {size_t{400}, size_t{460}}) {
    options.vocab_size = vocab;
    auto uninterrupted = Train(WordSource::Borrow(checkpoint->words), options);
    TrainControl resume;
    resume.resume.merges = checkpoint->merges;
    auto resumed = Train(WordSource::Borrow(checkpoint->words), options, resume);
    ASSERT_TRUE(uninterrupted.ok() && resumed.ok()) << resumed.status();
    EXPECT_EQ(Bpe(*resumed), Bpe(*uninterrupted)) << "vocab " << vocab;
    EXPECT_EQ(resumed->merge_counts, uninterrupted->merge_counts) << "vocab " << vocab;
  }
}

// A checkpoint in format version 3 (the merges' number and the merges in one frame), written
// by tokenmill at f0f75f4 with the same command and corpus as the version 2 one above.
const std::string kV3Checkpoint =
    std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/checkpoint_v3/v3.ckpt";

TEST(CheckpointFile, VersionThreeCheckpointsResumeExactly) {
  auto checkpoint = ReadCheckpoint(kV3Checkpoint);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->format_version, 3u);
  ASSERT_EQ(checkpoint->merges.size(), 144u);
  ASSERT_EQ(checkpoint->merge_counts.size(), 144u);
  TrainerOptions options;
  for (size_t vocab : {size_t{400}, size_t{460}}) {
    options.vocab_size = vocab;
    auto uninterrupted = Train(WordSource::Borrow(checkpoint->words), options);
    ASSERT_TRUE(uninterrupted.ok()) << uninterrupted.status();
    if (vocab == 400) {
      EXPECT_EQ(uninterrupted->merge_counts, checkpoint->merge_counts);
    }
    TrainControl resume;
    resume.resume.merges = checkpoint->merges;
    resume.resume.merge_counts = checkpoint->merge_counts;
    auto resumed = Train(WordSource::Borrow(checkpoint->words), options, resume);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(Bpe(*resumed), Bpe(*uninterrupted)) << "vocab " << vocab;
    EXPECT_EQ(resumed->merge_counts, uninterrupted->merge_counts) << "vocab " << vocab;
  }
}

// Format 4: a writer whose merges grow from write to write compresses only the new ones, as
// one more frame; what it writes reads back as the whole list, the same as a new writer's
// single frame. Merges that do not extend the last write's start over.
TEST(CheckpointFile, MergesWrittenInStepsReadBackWhole) {
  testing::TempDir dir;
  Checkpoint c = SampleCheckpoint();
  std::vector<std::pair<std::string, std::string>> all;
  std::vector<uint64_t> counts;
  for (int i = 0; i < 300; ++i) {
    all.emplace_back(std::string(1 + i % 3, static_cast<char>('a' + i % 26)),
                     std::to_string(i * 7919 % 1000));
    counts.push_back(100000 - i * 17);
  }
  auto with = [&](size_t n, bool other) {
    Checkpoint k = c;
    k.merges.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    k.merge_counts.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(n));
    if (other && n > 0) k.merges[0].first = "other";
    return k;
  };
  CheckpointWriter stepwise;
  const std::string path = dir.File("run.ckpt");
  size_t previous_size = 0;
  for (auto [n, other] : {std::pair<size_t, bool>{0, false}, {100, false}, {101, false},
                          {250, false}, {300, false}, {300, true}, {120, false}, {280, true},
                          {40, false}}) {
    SCOPED_TRACE(std::to_string(n) + (other ? " other" : ""));
    const Checkpoint k = with(n, other);
    ASSERT_TRUE(stepwise.Write(k, path).ok());
    auto read = ReadCheckpoint(path);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->format_version, kCheckpointFormatVersion);
    EXPECT_EQ(read->merges, k.merges);
    EXPECT_EQ(read->merge_counts, k.merge_counts);
    CheckpointWriter fresh;
    auto whole = fresh.Serialize(k);
    ASSERT_TRUE(whole.ok());
    auto parsed = ParseCheckpoint(*whole, "whole");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->merges, k.merges);
    EXPECT_EQ(parsed->merge_counts, k.merge_counts);
    if (n == 300 && !other) {  // written in steps of 100, 1, 149 and 50 merges: four frames
      const std::string data = testing::ReadFileOrFail(path);
      uint32_t header_size = 0;
      std::memcpy(&header_size, data.data() + 12, 4);
      std::string_view frames(data);
      frames = frames.substr(16 + header_size + 4, frames.size() - (16 + header_size + 4) - 4);
      int count = 0;
      while (!frames.empty()) {
        const size_t size = ZSTD_findFrameCompressedSize(frames.data(), frames.size());
        ASSERT_FALSE(ZSTD_isError(size));
        frames.remove_prefix(size);
        ++count;
      }
      EXPECT_EQ(count, 4);
    }
    previous_size = read->file_size;
  }
  EXPECT_GT(previous_size, 0u);
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
  // Mounting the small file system needs root; CI runs the tests as root, so there it runs.
  std::string mount_point = dir.File("small_fs");
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  if (geteuid() != 0 ||
      mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=256k") != 0) {
    GTEST_SKIP() << (::geteuid() != 0
                          ? "not root: mounting the small tmpfs this test fills needs root"
                          : "root, but mounting a tmpfs failed (a container without "
                            "CAP_SYS_ADMIN?): " + std::string(std::strerror(errno)));
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
