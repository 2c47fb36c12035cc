// The bad-input contract (README "Bad input"): for each kind of bad input the CLI prints one
// line `tokenmill <cmd>: error: ...` naming the file, exits 1 (2 for bad usage) and leaves no
// output behind; lossless kinds (NUL bytes, invalid UTF-8) are trained on, not rejected. Also
// the regression tests of the fuzzers' findings (tests/fuzz/).
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "count/counts_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/bpe/bpe_hf_json.h"
#include "model/hf_json.h"
#include "model/tiktoken_file.h"
#include "reference/cli_runner.h"
#include "reference/compress.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::CliResult;
using testing::RunCli;
using testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

long PeakRssKb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

size_t Lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// The one-line error contract; `names` must appear in the message.
void ExpectOneLineError(const CliResult& r, const std::string& command, int exit_code,
                        const std::string& names) {
  EXPECT_EQ(r.exit_code, exit_code) << r.err;
  EXPECT_THAT(r.err, StartsWith("tokenmill " + command + ": error: "));
  EXPECT_EQ(Lines(r.err), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr(names));
}

std::string Corpus() {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox " + std::to_string(i % 17) + " jumps\n";
  return text;
}

std::string TrainTokenizer(const TempDir& dir) {
  std::string corpus = dir.Write("corpus.txt", Corpus());
  std::string tokenizer = dir.File("tok.json");
  CliResult r = RunCli({"train", "--vocab-size", "270", "--quiet", "--output", tokenizer, corpus});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return tokenizer;
}

// ---- tokenizer files ---------------------------------------------------------------------------

TEST(BadInput, MalformedOrWrongTokenizerFilesAreOneLineErrors) {
  TempDir dir;
  std::string good = TrainTokenizer(dir);
  std::string json = ReadFile(good).value();
  std::string depth(100000, '[');
  const std::vector<std::pair<std::string, std::string>> kBad = {
      {"truncated.json", json.substr(0, json.size() / 2)},
      {"not_json.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {"},
      {"wrong_type.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}"},
      {"merges_not_list.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": 7}}"},
      {"deep.json", "{\"model\": " + depth + "}"},
      {"nul.json", std::string("{\"model\"\0: 1}", 13)},
  };
  for (const auto& [name, contents] : kBad) {
    SCOPED_TRACE(name);
    std::string path = dir.Write(name, contents);
    CliResult encode = RunCli({"encode", "--tokenizer", path}, "hello\n");
    ExpectOneLineError(encode, "encode", 1, name);
    EXPECT_TRUE(encode.out.empty());
    CliResult decode = RunCli({"decode", "--tokenizer", path}, "1 2\n");
    ExpectOneLineError(decode, "decode", 1, name);
  }
  CliResult missing = RunCli({"encode", "--tokenizer", dir.File("missing.json")}, "hello\n");
  ExpectOneLineError(missing, "encode", 1, "missing.json");
}

TEST(BadInput, DeeplyNestedTokenizerJsonIsAnErrorNotAStackOverflow) {
  std::string depth(1 << 20, '{');
  absl::StatusOr<BpeModel> model = BpeModelFromHfJson("{\"model\": " + depth, "deep.json");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("deep.json"));
}

// Fuzzer finding (hf_json_fuzz): a vocab or added-token id near 2^32 resized the token table to
// that many strings (a 7 GB allocation for id 222222266, std::bad_alloc abort beyond RAM).
TEST(BadInput, HugeTokenIdsInTokenizerJsonAreErrorsNotAllocations) {
  const std::vector<std::string> kBad = {
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 222222266}, "merges": []}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 4294967295}, "merges": []}})",
      R"({"added_tokens": [{"id": 4000000000, "content": "<s>"}],
          "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})",
  };
  for (const std::string& json : kBad) {
    SCOPED_TRACE(json);
    long before = PeakRssKb();
    absl::StatusOr<BpeModel> model = BpeModelFromHfJson(json, "huge_ids.json");
    ASSERT_FALSE(model.ok());
    EXPECT_THAT(std::string(model.status().message()), HasSubstr("huge_ids.json"));
    EXPECT_LT(PeakRssKb() - before, 64 * 1024);
  }
}

// Fuzzer finding (tiktoken_fuzz): a rank near 2^32 on one line of a .tiktoken file sized the
// rank tables by it (a 3 GB allocation for rank 791788126, std::bad_alloc abort beyond RAM).
TEST(BadInput, HugeRanksInTiktokenFilesAreErrorsNotAllocations) {
  const std::string sidecar =
      R"({"name": "t", "pattern": "\\s+", "special_tokens": {}, "n_ranks": null, "explicit_n_vocab": null})";
  for (const std::string ranks : {"AA== 0\nAQ== 791788126\n", "AA== 4294967294\n"}) {
    SCOPED_TRACE(ranks);
    long before = PeakRssKb();
    absl::StatusOr<BpeModel> model = FromTiktoken(ranks, "huge.tiktoken", sidecar, "huge.json");
    ASSERT_FALSE(model.ok());
    EXPECT_THAT(std::string(model.status().message()), HasSubstr("huge.tiktoken:"));
    EXPECT_LT(PeakRssKb() - before, 64 * 1024);
  }
}

// ---- word-count files ---------------------------------------------------------------------------

// A valid counts file and the offset where its header ends (raw size, compressed size follow).
struct CountsBytes {
  std::string bytes;
  size_t header_end = 0;
};

CountsBytes MakeCountsFile(const TempDir& dir) {
  WordCounts words;
  words.Add("hello", 3);
  words.Add(" world", 2);
  CountsFileHeader header;
  header.tool = "test";
  header.pattern = EffectivePattern(header.pretokenizer);
  header.doc_mode = "line";
  header.text_field = "text";
  std::string path = dir.File("good.tmc");
  EXPECT_TRUE(WriteCountsFile(path, header, words).ok());
  CountsBytes out;
  out.bytes = ReadFile(path).value();
  uint32_t h = 0;
  for (int i = 0; i < 4; ++i) h |= static_cast<uint32_t>(static_cast<unsigned char>(out.bytes[12 + i])) << (8 * i);
  out.header_end = 16 + h;
  return out;
}

void PutU64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

void FixCrc(std::string& s) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(s.data()), s.size() - 4);
  for (int i = 0; i < 4; ++i) s[s.size() - 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
}

// Fuzzer finding (counts_file_fuzz): a header-size field near 4 GiB made ReadCountsFileHeader
// allocate that much before noticing the file is 300 bytes long.
TEST(BadInput, CountsFileWithAHugeHeaderSizeFailsWithoutAllocatingIt) {
  TempDir dir;
  CountsBytes file = MakeCountsFile(dir);
  std::string bad = file.bytes;
  bad[12] = 0x00, bad[13] = 0x00, bad[14] = 0x69, bad[15] = 0x6e;  // 1.85 GB, as the fuzzer found
  std::string path = dir.Write("huge_header.tmc", bad);
  long before = PeakRssKb();
  absl::StatusOr<CountsFileHeader> header = ReadCountsFileHeader(path);
  ASSERT_FALSE(header.ok());
  EXPECT_THAT(std::string(header.status().message()), HasSubstr("huge_header.tmc"));
  EXPECT_THAT(std::string(header.status().message()), HasSubstr("truncated header"));
  EXPECT_LT(PeakRssKb() - before, 64 * 1024) << "the reader allocated what the header claimed";
}

// Fuzzer finding (counts_file_fuzz): with a matching checksum, the body's raw-size field was
// allocated as given: 2^62 threw std::length_error (an abort), 1.5 GB was allocated and zeroed.
TEST(BadInput, CountsFileWithALyingBodySizeIsCorruptNotACrash) {
  TempDir dir;
  CountsBytes file = MakeCountsFile(dir);
  for (uint64_t raw_size : {uint64_t{1} << 62, uint64_t{1500} << 20, uint64_t{3}}) {
    SCOPED_TRACE(raw_size);
    std::string bad = file.bytes;
    PutU64(bad, file.header_end, raw_size);
    FixCrc(bad);
    std::string path = dir.Write("lying_body.tmc", bad);
    long before = PeakRssKb();
    WordCounts words;
    absl::StatusOr<CountsFileHeader> read = ReadCountsFile(path, &words);
    ASSERT_FALSE(read.ok());
    EXPECT_THAT(std::string(read.status().message()), HasSubstr("lying_body.tmc"));
    EXPECT_LT(PeakRssKb() - before, 64 * 1024);
  }
}

TEST(BadInput, CorruptCountsFilesAreOneLineErrorsInTrainAndInspect) {
  TempDir dir;
  CountsBytes file = MakeCountsFile(dir);
  std::string flipped = file.bytes;
  flipped[flipped.size() / 2] ^= 0x20;
  const std::vector<std::pair<std::string, std::string>> kBad = {
      {"truncated.tmc", file.bytes.substr(0, file.bytes.size() - 7)},
      {"flipped.tmc", flipped},
      {"magic_only.tmc", "TMCOUNTS"},
  };
  for (const auto& [name, contents] : kBad) {
    SCOPED_TRACE(name);
    std::string path = dir.Write(name, contents);
    std::string out = dir.File("out.json");
    ExpectOneLineError(RunCli({"train", "--vocab-size", "300", "--output", out, "--counts", path}),
                       "train", 1, name);
    EXPECT_FALSE(Exists(out));
    ExpectOneLineError(RunCli({"inspect", path}), "inspect", 1, name);
  }
}

// ---- corpora ------------------------------------------------------------------------------------

// NUL bytes and invalid UTF-8 are data for a byte-level tokenizer: trained on, and encoded and
// decoded back byte for byte.
TEST(BadInput, NulBytesAndInvalidUtf8AreTrainedOnLosslessly) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 50; ++i) {
    static constexpr char kLine[] = "a\0b \xff\xfe caf\xc3\xa9 \xed\xa0\x80 \xc0\xaf hello\0\0 world\n";
    text += std::string(kLine, sizeof(kLine) - 1);  // NULs inside: not a C string
  }
  std::string corpus = dir.Write("binary.txt", text);
  std::string tokenizer = dir.File("tok.json");
  CliResult train = RunCli({"train", "--vocab-size", "280", "--quiet", "--output", tokenizer, corpus});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  CliResult encode = RunCli({"encode", "--tokenizer", tokenizer, "--whole"}, text);
  ASSERT_EQ(encode.exit_code, 0) << encode.err;
  CliResult decode = RunCli({"decode", "--tokenizer", tokenizer}, encode.out);
  ASSERT_EQ(decode.exit_code, 0) << decode.err;
  EXPECT_EQ(decode.out, text);
}

TEST(BadInput, TruncatedOrCorruptCompressionNamesTheFileAndWritesNothing) {
  TempDir dir;
  const std::string gz = testing::GzipCompress(Corpus());
  ASSERT_FALSE(gz.empty());
  std::string corrupt = gz;
  corrupt[corrupt.size() / 2] ^= 0x55;
  const std::vector<std::pair<std::string, std::string>> kBad = {
      {"cut.txt.gz", gz.substr(0, gz.size() - 9)},
      {"corrupt.txt.gz", corrupt},
      {"cut.txt.zst", std::string("\x28\xb5\x2f\xfd\x04\x58\x45\x00\x00", 9)},
      {"promises_zstd.txt.zst", "plain text, no zstd magic\n"},
  };
  for (const auto& [name, contents] : kBad) {
    SCOPED_TRACE(name);
    std::string path = dir.Write(name, contents);
    std::string out = dir.File("out.json");
    ExpectOneLineError(RunCli({"train", "--vocab-size", "300", "--output", out, path}), "train", 1,
                       name);
    EXPECT_FALSE(Exists(out));
    std::string counts = dir.File("out.tmc");
    ExpectOneLineError(RunCli({"count", "--output", counts, path}), "count", 1, name);
    EXPECT_FALSE(Exists(counts));
  }
}

TEST(BadInput, WhitespaceOnlyCorpusTrainsOrFailsClearly) {
  TempDir dir;
  std::string corpus = dir.Write("spaces.txt", std::string(5000, ' ') + "\n\n\t \n" + std::string(300, '\n'));
  std::string out = dir.File("out.json");
  CliResult r = RunCli({"train", "--vocab-size", "300", "--quiet", "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult encode = RunCli({"encode", "--tokenizer", out, "--whole"}, "   \n\t ");
  ASSERT_EQ(encode.exit_code, 0) << encode.err;
  CliResult decode = RunCli({"decode", "--tokenizer", out}, encode.out);
  EXPECT_EQ(decode.out, "   \n\t ");
}

// ---- output -------------------------------------------------------------------------------------

TEST(BadInput, FullDiskIsAnErrorAndLeavesNoPartialOutput) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", Corpus());
  // /dev/full: the device is never replaced by a regular file.
  ExpectOneLineError(RunCli({"train", "--vocab-size", "300", "--output", "/dev/full", corpus}),
                     "train", 1, "No space left");
  ExpectOneLineError(RunCli({"count", "--output", "/dev/full", corpus}), "count", 1,
                     "No space left");
  struct stat st;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  // A real file system that fills up: the previous output stays, no temporary file is left.
  // Mounting it needs root; CI runs the tests as root, so there this part runs.
  std::string mount_point = dir.File("small_fs");
  ASSERT_EQ(::mkdir(mount_point.c_str(), 0755), 0);
  if (::geteuid() != 0 || ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << (::geteuid() != 0
                          ? "not root: mounting the small tmpfs this test fills needs root"
                          : "root, but mounting a tmpfs failed (a container without "
                            "CAP_SYS_ADMIN?): " + std::string(std::strerror(errno)));
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount(path.c_str()); }
  } unmount{mount_point};
  std::string out = mount_point + "/tok.json";
  std::string small = dir.Write("small.txt", "hello world\n");
  ASSERT_EQ(RunCli({"train", "--vocab-size", "258", "--quiet", "--output", out, small}).exit_code, 0);
  std::string before = ReadFile(out).value();
  {
    std::ofstream filler(mount_point + "/filler", std::ios::binary);
    std::string block(4096, 'x');
    while (filler.write(block.data(), block.size()) && filler.flush()) {
    }
  }
  std::string big_corpus;
  for (int i = 0; i < 3000; ++i) {
    big_corpus += 'w';
    big_corpus += std::to_string(i * 7919);
    big_corpus += ' ';
  }
  std::string big = dir.Write("big.txt", big_corpus + "\n");
  CliResult full = RunCli({"train", "--vocab-size", "2000", "--quiet", "--output", out, big});
  ExpectOneLineError(full, "train", 1, "No space left");
  EXPECT_EQ(ReadFile(out).value(), before) << "the previous tokenizer was damaged";
  for (const auto& entry : std::filesystem::directory_iterator(mount_point)) {
    std::string name = entry.path().filename();
    // tok.json.ckpt(.words): the first run's checkpoint (train keeps one by default).
    EXPECT_TRUE(name == "tok.json" || name == "tok.json.ckpt" || name == "tok.json.ckpt.words" ||
                name == "filler")
        << "left behind: " << name;
  }
}

// ---- flags ----------------------------------------------------------------------------------------

TEST(BadInput, BadFlagsAreUsageErrorsWithExitCode2) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", Corpus());
  std::string out = dir.File("out.json");
  ExpectOneLineError(RunCli({"train", "--vocab-size", "300", "--output", out, "--bogus", corpus}),
                     "train", 2, "--bogus");
  ExpectOneLineError(RunCli({"train", "--vocab-size", "lots", "--output", out, corpus}), "train", 2,
                     "--vocab-size");
  ExpectOneLineError(RunCli({"train", "--vocab-size", "300", "--output", out, "--preset", "gpt5", corpus}),
                     "train", 2, "gpt5");
  ExpectOneLineError(RunCli({"train", "--vocab-size", "300", "--output", out, "--threads", "-1", corpus}),
                     "train", 2, "--threads");
  ExpectOneLineError(RunCli({"count", "--output", dir.File("c.tmc"), "--doc-mode", "page", corpus}),
                     "count", 2, "--doc-mode");
  ExpectOneLineError(RunCli({"count", "--output", dir.File("c.tmc"), "--threads", "-1", corpus}),
                     "count", 2, "--threads");
  ExpectOneLineError(RunCli({"encode", "--tokenizer", out, "--specials", "maybe"}, "x"), "encode", 2,
                     "--specials");
  EXPECT_FALSE(Exists(out));
  EXPECT_FALSE(Exists(dir.File("c.tmc")));
}

}  // namespace
}  // namespace tokenmill
