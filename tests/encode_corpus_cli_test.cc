// `tokenmill encode` into token files (issue 24) end to end, through the built binary: binary
// files decode to exactly the input (gpt2 u16, cl100k and o200k u32 and npy, on slices of the
// shared corpora and a random file with invalid UTF-8 and NULs), with and without --eot; the
// u32 file holds the text output's ids, and the text output equals the npm tiktoken peer's;
// any thread count writes the same bytes (tiny shards, --doc-mode file, JSON lines, .zst,
// stdin); u16 is refused for cl100k; Ctrl-C leaves no file; the Megatron .idx and the .npy are
// read back here and by numpy; --stats agrees with counting the ids; inspect shows a token
// file; inputs of every kind given together keep their order; --doc-mode file mixes files and
// JSON records; refusals name their line in any batch; a first signal stops a wait on an idle
// stdin, a second one exits at once; decode reads a token file in parts exactly; and the errors a user can
// cause.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "reference/checked.h"
#include "reference/cli_runner.h"
#include "reference/compress.h"
#include "reference/shared_corpus.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using testing::ZstdCompress;
using ::testing::HasSubstr;
using testing::CliResult;
using testing::FilesStartingWith;
using testing::ReadAll;
using testing::RunCli;
using testing::RunProgram;
using testing::TempDir;

const std::string kGpt2 = testing::TestVocabDir() + "gpt2.tiktoken";
const std::string kCl100k = testing::TestVocabDir() + "cl100k_base.tiktoken";
const std::string kO200k = testing::TestVocabDir() + "o200k_base.tiktoken";
const std::string kEot = "<|endoftext|>";
constexpr const char* kPython = "/usr/bin/python3";

// The first `bytes` bytes of shared corpus `name`, cut after a newline; "" when it is missing.
std::string CorpusSlice(const std::string& name, size_t bytes) {
  std::string text = testing::ReadSharedCorpus(name, bytes);
  if (text.size() <= bytes) return text;
  const size_t eol = text.rfind('\n', bytes);
  text.resize(eol == std::string::npos ? bytes : eol + 1);
  return text;
}

// 2 MB of brown and 2 MB of linux_docs (one real corpus), read once.
const std::string& RealCorpus() {
  static const std::string* text = [] {
    std::string brown = CorpusSlice("brown", 2 << 20);
    std::string docs = CorpusSlice("linux_docs", 2 << 20);
    return new std::string(brown.empty() || docs.empty() ? "" : brown + docs);
  }();
  return *text;
}

#define REQUIRE_REAL_CORPUS()                                                       \
  if (RealCorpus().empty()) GTEST_SKIP() << "shared corpora brown/linux_docs not found"

// Random text: code points from all planes (UTF-8), invalid bytes (lone continuation bytes,
// 0xFF, a lead byte without its continuation, surrogates' encoding), NULs, '\r', short and
// empty lines; the last line has no '\n'.
std::string RandomUnicode(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  auto utf8 = [&](uint32_t c) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  };
  const std::vector<std::string> odd = {std::string(1, '\0'), "\x80", "\xff", "\xc3", "\xed\xa0\x80",
                                        "\r", "\r\n", "\n", "\n\n", "  ", "\t", "<|endoftext|>"};
  while (out.size() < bytes) {
    const uint32_t kind = rng() % 100;
    if (kind < 40) {
      out += static_cast<char>(0x20 + rng() % 95);
    } else if (kind < 55) {
      utf8(0x80 + rng() % (0x800 - 0x80));
    } else if (kind < 70) {
      uint32_t c = 0x800 + rng() % (0x10000 - 0x800);
      if (c >= 0xD800 && c < 0xE000) c -= 0x800;
      utf8(c);
    } else if (kind < 78) {
      utf8(0x10000 + rng() % (0x110000 - 0x10000));
    } else if (kind < 88) {
      out += odd[rng() % odd.size()];
    } else {
      out += '\n';
    }
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  out += "last line without a newline";
  return out;
}

// Documents of --doc-mode line: each line with its '\n' (a last line without one too).
std::vector<std::string> LineDocuments(const std::string& text) {
  std::vector<std::string> docs;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t eol = text.find('\n', begin);
    size_t end = eol == std::string::npos ? text.size() : eol + 1;
    docs.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return docs;
}

std::string WithEot(const std::vector<std::string>& docs) {
  std::string out;
  for (const std::string& d : docs) out += d + kEot;
  return out;
}

std::vector<uint32_t> ReadWords(const std::string& path, size_t width) {
  const std::string bytes = testing::ReadFileOrFail(path);
  EXPECT_EQ(bytes.size() % width, 0u) << path;
  std::vector<uint32_t> ids(bytes.size() / width);
  for (size_t i = 0; i < ids.size(); ++i) {
    uint32_t v = 0;
    for (size_t b = 0; b < width; ++b) v |= uint32_t{static_cast<unsigned char>(bytes[i * width + b])} << (8 * b);
    ids[i] = v;
  }
  return ids;
}

// The text output's lines of ids.
std::vector<std::vector<uint32_t>> ParseTextIds(const std::string& text) {
  std::vector<std::vector<uint32_t>> lines;
  for (const std::string& line : testing::Lines(text)) {
    std::vector<uint32_t>& ids = lines.emplace_back();
    for (const std::string& w : testing::SplitWords(line)) ids.push_back(static_cast<uint32_t>(std::stoul(w)));
  }
  return lines;
}

std::vector<uint32_t> Flatten(const std::vector<std::vector<uint32_t>>& lines) {
  std::vector<uint32_t> all;
  for (const auto& l : lines) all.insert(all.end(), l.begin(), l.end());
  return all;
}

CliResult Encode(const std::string& tokenizer, std::vector<std::string> args, const std::string& input = "") {
  args.insert(args.begin(), {"encode", "--tokenizer", tokenizer});
  return RunCli(args, input);
}


std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// ---- 1. Binary files decode to exactly the input ------------------------------------------

struct BinaryCase {
  std::string tokenizer;
  std::string format;
};

TEST(EncodeCorpusCli, BinaryFilesDecodeToTheInput) {
  REQUIRE_REAL_CORPUS();
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"real", dir.Write("real.txt", RealCorpus())},
      {"random", dir.Write("random.txt", RandomUnicode(300000, 24))}};
  const std::vector<BinaryCase> cases = {
      {kGpt2, "u16"}, {kCl100k, "u32"}, {kCl100k, "npy"}, {kO200k, "u32"}, {kO200k, "npy"}};
  for (const auto& [name, input] : inputs) {
    const std::string text = ReadAll(input);
    for (const BinaryCase& c : cases) {
      SCOPED_TRACE(name + " " + c.tokenizer + " " + c.format);
      const std::string out = dir.File(name + "." + c.format);
      CliResult enc = Encode(c.tokenizer, {"--output", out, "--output-format", c.format, input});
      ASSERT_EQ(enc.exit_code, 0) << enc.err;
      CliResult dec = RunCli({"decode", "--tokenizer", c.tokenizer, "--input-format", c.format, out});
      ASSERT_EQ(dec.exit_code, 0) << dec.err;
      EXPECT_TRUE(dec.out == text) << "decoded " << dec.out.size() << " bytes, input " << text.size();
    }
  }
  // --eot after each document (lines with their '\n'; the last one has none).
  for (const auto& [name, input] : inputs) {
    const std::string expected = WithEot(LineDocuments(ReadAll(input)));
    for (const BinaryCase& c : {BinaryCase{kGpt2, "u16"}, BinaryCase{kCl100k, "u32"}, BinaryCase{kO200k, "npy"}}) {
      SCOPED_TRACE(name + " --eot " + c.tokenizer + " " + c.format);
      const std::string out = dir.File(name + ".eot." + c.format);
      CliResult enc = Encode(c.tokenizer, {"--output", out, "--output-format", c.format, "--eot", kEot, input});
      ASSERT_EQ(enc.exit_code, 0) << enc.err;
      CliResult dec = RunCli({"decode", "--tokenizer", c.tokenizer, "--input-format", c.format, out});
      ASSERT_EQ(dec.exit_code, 0) << dec.err;
      EXPECT_TRUE(dec.out == expected) << "decoded " << dec.out.size() << " bytes, expected " << expected.size();
    }
  }
}

// ---- 2. The u32 file holds the text output's ids; the text output is tiktoken's -----------

TEST(EncodeCorpusCli, U32HoldsTheTextIdsAndTheTextIsTiktokens) {
  REQUIRE_REAL_CORPUS();
  TempDir dir;
  const std::string input = dir.Write("real.txt", RealCorpus());
  CliResult text = Encode(kCl100k, {"--output", dir.File("ids.txt"), input});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string text_out = testing::ReadFileOrFail(dir.File("ids.txt"));
  // Without --output, the text goes to stdout, the same bytes.
  CliResult to_stdout = Encode(kCl100k, {input});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_TRUE(to_stdout.out == text_out);
  const auto lines = ParseTextIds(text_out);
  EXPECT_EQ(lines.size(), LineDocuments(RealCorpus()).size());
  CliResult u32 = Encode(kCl100k, {"--output", dir.File("ids.u32"), "--output-format", "u32", input});
  ASSERT_EQ(u32.exit_code, 0) << u32.err;
  EXPECT_EQ(ReadWords(dir.File("ids.u32"), 4), Flatten(lines));

  const std::string peer = std::string(TOKENMILL_SOURCE_DIR) + "/scripts/peer_encode.cjs";
  const std::string peers = std::string(TOKENMILL_SOURCE_DIR) + "/scripts/.peers/node_modules/tiktoken";
  std::string node;
  for (const char* candidate : {"/usr/bin/node", "/usr/local/bin/node"}) {
    if (access(candidate, X_OK) == 0) {
      node = candidate;
      break;
    }
  }
  if (node.empty() || !std::filesystem::exists(peers)) {
    GTEST_SKIP() << "node or the tiktoken peer (scripts/install_peers.sh) not found";
  }
  CliResult reference = RunProgram(node, {peer, "tiktoken", "cl100k_base", input});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  EXPECT_TRUE(reference.out == text_out) << "tiktoken's ids differ from tokenmill's text output";
  if (reference.out != text_out) {
    const auto theirs = ParseTextIds(reference.out);
    for (size_t i = 0; i < std::min(theirs.size(), lines.size()); ++i) {
      if (theirs[i] != lines[i]) {
        ADD_FAILURE() << "first difference on line " << i + 1;
        break;
      }
    }
  }
}

// ---- 3. Any thread count writes the same bytes ---------------------------------------------

struct Determinism {
  std::string name;
  std::vector<std::string> args;  // after --tokenizer
  std::string stdin_text;
  bool with_index = false;
};

TEST(EncodeCorpusCli, OneTwoAndFourThreadsWriteTheSameBytes) {
  REQUIRE_REAL_CORPUS();
  TempDir dir;
  const std::string slice = RealCorpus().substr(0, RealCorpus().find('\n', 1 << 20) + 1);
  const std::string real = dir.Write("real.txt", slice);
  const std::string random = dir.Write("random.txt", RandomUnicode(200000, 7));
  const std::string zst = dir.Write("real.txt.zst", ZstdCompress(slice));
  std::vector<std::string> parts;
  const std::vector<std::string> docs = LineDocuments(slice);
  for (int f = 0; f < 5; ++f) {
    std::string part;
    for (size_t i = f; i < docs.size(); i += 5) part += docs[i];
    parts.push_back(dir.Write("part" + std::to_string(f) + ".txt", part));
  }
  std::string jsonl;
  for (size_t i = 0; i < docs.size(); ++i) {
    jsonl += "{\"id\": " + std::to_string(i) + ", \"body\": " + JsonString(docs[i]) + "}\n";
  }
  const std::string jsonl_path = dir.Write("records.jsonl", jsonl);
  const std::string bom_path = dir.Write("bom.jsonl", "\xEF\xBB\xBF" + jsonl);  // as Windows tools save it

  std::vector<Determinism> cases = {
      {"plain", {"--output-format", "u32", real, random}, "", false},
      {"tiny shards", {"--output-format", "u32", "--shard-bytes", "4096", "--eot", kEot, real, random}, "", true},
      {"text tiny shards", {"--output-format", "text", "--shard-bytes", "4096", real}, "", false},
      {"doc-mode file", {"--output-format", "u32", "--doc-mode", "file", "--shard-bytes", "4096", "--eot", kEot}, "", true},
      {"jsonl", {"--output-format", "npy", "--text-field", "body", "--shard-bytes", "4096", "--eot", kEot, jsonl_path}, "", false},
      {"jsonl bom", {"--output-format", "npy", "--text-field", "body", "--eot", kEot, bom_path}, "", false},
      {"zst", {"--output-format", "u32", "--batch-bytes", "4096", zst}, "", false},
      {"stdin", {"--output-format", "u32", "--batch-bytes", "4096"}, slice, false},
  };
  for (const std::string& p : parts) cases[3].args.push_back(p);
  std::map<std::string, std::string> first_output;
  for (const Determinism& c : cases) {
    std::string first, first_index;
    for (const char* threads : {"1", "2", "4"}) {
      SCOPED_TRACE(c.name + ", " + threads + " threads");
      const std::string out = dir.File("out." + std::string(threads));
      const std::string idx = dir.File("out." + std::string(threads) + ".idx");
      std::vector<std::string> args = c.args;
      args.insert(args.end(), {"--output", out, "--threads", threads});
      if (c.with_index) args.insert(args.end(), {"--index", idx});
      CliResult r = Encode(kCl100k, args, c.stdin_text);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const std::string bytes = testing::ReadFileOrFail(out);
      const std::string index = c.with_index ? testing::ReadFileOrFail(idx) : "";
      if (std::string(threads) == "1") {
        first = bytes, first_index = index;
        EXPECT_FALSE(first.empty());
      } else {
        EXPECT_TRUE(bytes == first);
        EXPECT_TRUE(index == first_index);
      }
    }
    first_output[c.name] = first;
  }
  // The same text read from a file, a .zst and stdin gives the same ids.
  CliResult whole_file = Encode(kCl100k, {"--output-format", "u32", "--output", dir.File("real.u32"), real});
  ASSERT_EQ(whole_file.exit_code, 0) << whole_file.err;
  EXPECT_TRUE(first_output["zst"] == ReadAll(dir.File("real.u32")));
  EXPECT_TRUE(first_output["stdin"] == ReadAll(dir.File("real.u32")));
  // A byte order mark before the first record is passed over (RFC 8259 allows it), not refused.
  EXPECT_TRUE(first_output["jsonl bom"] == first_output["jsonl"]);
  // JSON records: each text field is a document (here the line, its '\n' included).
  const std::string jsonl_out = dir.Write("jsonl.npy", first_output["jsonl"]);
  CliResult dec = RunCli({"decode", "--tokenizer", kCl100k, "--input-format", "npy", jsonl_out});
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_TRUE(dec.out == WithEot(docs));
}

// ---- 4. u16 cannot hold cl100k's ids -------------------------------------------------------

TEST(EncodeCorpusCli, U16IsRefusedForCl100k) {
  TempDir dir;
  const std::string input = dir.Write("in.txt", "hello world\n");
  CliResult r = Encode(kCl100k, {"--output", dir.File("out.u16"), "--output-format", "u16", input});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("100277"));
  EXPECT_EQ(FilesStartingWith(dir.path(), "out"), std::vector<std::string>{});
  // gpt2's 50,257 ids fit.
  CliResult ok = Encode(kGpt2, {"--output", dir.File("out.u16"), "--output-format", "u16", input});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// ---- 5. Ctrl-C leaves nothing ------------------------------------------------------------

// Starts the CLI with `args` in the background, its stdin, stdout and stderr on `in`, `out` and
// `err` (-1: /dev/null), and SIGINT and SIGHUP as a terminal's job has them, whatever this test
// was started with (nohup, &); returns its pid. The caller's other descriptors it should not
// hold (a pipe's other end) must be close-on-exec.
pid_t StartCli(const std::vector<std::string>& args, int in, int out, int err) {
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    const int null = open("/dev/null", O_RDWR);
    dup2(in >= 0 ? in : null, 0);
    dup2(out >= 0 ? out : null, 1);
    dup2(err >= 0 ? err : null, 2);
    std::vector<char*> argv = {const_cast<char*>(TOKENMILL_CLI_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TOKENMILL_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

// Starts `tokenmill encode ... -` reading a pipe; returns its pid and the pipe's write end.
std::pair<pid_t, int> StartEncodingAPipe(const std::vector<std::string>& args) {
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return {-1, -1};
  const pid_t pid = StartCli(args, in[0], -1, -1);
  close(in[0]);
  return {pid, in[1]};
}

// The exit status of `pid` within 10 s, or -1 (then it is killed).
int WaitUpTo10s(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 1000; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// Whether a file whose name starts with `prefix` appears in `dir` within 10 s.
bool FileAppears(const std::string& dir, const std::string& prefix) {
  for (int i = 0; i < 1000; ++i) {
    if (!FilesStartingWith(dir, prefix).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(EncodeCorpusCli, InterruptedEncodeLeavesNoFile) {
  TempDir dir;
  const std::string out = dir.File("out.u32");
  const auto [pid, feed] = StartEncodingAPipe({"encode", "--tokenizer", kCl100k, "--output", out,
                                               "--output-format", "u32", "--batch-bytes", "4096",
                                               "--threads", "2"});
  ASSERT_GT(pid, 0);
  std::string lines;
  for (int i = 0; i < 2000; ++i) lines += "line " + std::to_string(i) + " of a corpus that is still coming\n";
  ASSERT_EQ(write(feed, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  // Wait until the child has its temporary file (it is reading and encoding by then).
  EXPECT_TRUE(FileAppears(dir.path(), "out.u32.tmp.")) << "no out.u32.tmp.* appeared";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  // stdin stays open and idle: the read waiting on it gives up on the signal (whichever thread
  // takes it), so the encode stops without more input and without the pipe's end.
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 1000 && done == 0; ++i) {
    done = waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {
    ADD_FAILURE() << "encode did not stop within 10 s of SIGINT while stdin stayed open";
    close(feed);
    for (int i = 0; i < 500 && done == 0; ++i) {
      done = waitpid(pid, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  } else {
    close(feed);
  }
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(FilesStartingWith(dir.path(), "out"), std::vector<std::string>{});
}

// ---- 6. The Megatron .idx and the .npy, read back here and by numpy -----------------------

struct IdxFile {
  std::string magic;
  uint64_t version = 0;
  uint8_t dtype = 0;
  uint64_t sequences = 0, documents = 0;
  std::vector<int32_t> sizes;
  std::vector<int64_t> pointers, doc_idx;
  size_t bytes_left = 0;
};

template <typename T>
T Load(const std::string& bytes, size_t& at) {
  T v{};
  if (at + sizeof(T) <= bytes.size()) std::memcpy(&v, bytes.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

// The layout of lib/tokens/token_file.h's header (little-endian, as on this machine).
IdxFile ParseIdx(const std::string& path) {
  const std::string bytes = testing::ReadFileOrFail(path);
  IdxFile idx;
  size_t at = 0;
  idx.magic = bytes.substr(0, 9);
  at = 9;
  idx.version = Load<uint64_t>(bytes, at);
  idx.dtype = Load<uint8_t>(bytes, at);
  idx.sequences = Load<uint64_t>(bytes, at);
  idx.documents = Load<uint64_t>(bytes, at);
  if (idx.sequences > bytes.size()) return idx;
  for (uint64_t i = 0; i < idx.sequences; ++i) idx.sizes.push_back(Load<int32_t>(bytes, at));
  for (uint64_t i = 0; i < idx.sequences; ++i) idx.pointers.push_back(Load<int64_t>(bytes, at));
  for (uint64_t i = 0; i < idx.documents; ++i) idx.doc_idx.push_back(Load<int64_t>(bytes, at));
  idx.bytes_left = at <= bytes.size() ? bytes.size() - at : 0;
  EXPECT_LE(at, bytes.size()) << path << " is too short";
  return idx;
}

void ExpectIndex(const std::string& path, uint8_t dtype, size_t width, const std::vector<int32_t>& sizes) {
  SCOPED_TRACE(path);
  IdxFile idx = ParseIdx(path);
  EXPECT_EQ(idx.magic, std::string("MMIDIDX\0\0", 9));
  EXPECT_EQ(idx.version, 1u);
  EXPECT_EQ(idx.dtype, dtype);
  EXPECT_EQ(idx.sequences, sizes.size());
  EXPECT_EQ(idx.documents, sizes.size() + 1);
  EXPECT_EQ(idx.sizes, sizes);
  std::vector<int64_t> pointers, doc_idx;
  int64_t offset = 0;
  for (int32_t s : sizes) pointers.push_back(offset), offset += s * static_cast<int64_t>(width);
  for (size_t i = 0; i <= sizes.size(); ++i) doc_idx.push_back(static_cast<int64_t>(i));
  EXPECT_EQ(idx.pointers, pointers);
  EXPECT_EQ(idx.doc_idx, doc_idx);
  EXPECT_EQ(idx.bytes_left, 0u);
}

// A numpy reader of Megatron's layout (as megatron/core/datasets/indexed_dataset.py reads it):
// prints dtype code, the sizes' sum, whether pointers are the running byte offsets and doc_idx
// is 0..N, and the sizes.
constexpr const char* kNumpyIdx = R"(
import sys, numpy as np
buf = open(sys.argv[1], 'rb').read()
assert buf[:9] == b'MMIDIDX\x00\x00', buf[:9]
version = np.frombuffer(buf, np.uint64, 1, 9)[0]
code = np.frombuffer(buf, np.uint8, 1, 17)[0]
n = int(np.frombuffer(buf, np.uint64, 1, 18)[0])
d = int(np.frombuffer(buf, np.uint64, 1, 26)[0])
off = 34
sizes = np.frombuffer(buf, np.int32, n, off); off += sizes.nbytes
pointers = np.frombuffer(buf, np.int64, n, off); off += pointers.nbytes
doc_idx = np.frombuffer(buf, np.int64, d, off); off += doc_idx.nbytes
width = {8: 2, 4: 4}[int(code)]
running = np.concatenate([[0], np.cumsum(sizes.astype(np.int64) * width)[:-1]]) if n else np.zeros(0, np.int64)
tokens = np.fromfile(sys.argv[2], dtype='<u2' if width == 2 else '<u4')
print(int(version), int(code), int(sizes.sum()), len(tokens), bool((pointers == running).all()),
      bool((doc_idx == np.arange(n + 1)).all()), off == len(buf))
print(' '.join(map(str, sizes.tolist())))
)";

TEST(EncodeCorpusCli, IndexAndNpyMatchTheTextOutputAndNumpy) {
  REQUIRE_REAL_CORPUS();
  TempDir dir;
  const std::string slice = RealCorpus().substr(0, RealCorpus().find('\n', 500000) + 1);
  const std::string input = dir.Write("real.txt", slice);
  struct Case {
    std::string tokenizer, format;
    bool eot;
    uint8_t dtype;
    size_t width;
    std::string npy_dtype;
  };
  for (const Case& c : {Case{kGpt2, "u16", true, 8, 2, "uint16"}, Case{kCl100k, "u32", false, 4, 4, "uint32"},
                        Case{kCl100k, "u32", true, 4, 4, "uint32"}}) {
    SCOPED_TRACE(c.tokenizer + " " + c.format + (c.eot ? " --eot" : ""));
    std::vector<std::string> extra;
    if (c.eot) extra = {"--eot", kEot};
    std::vector<std::string> text_args = {"--output", dir.File("ids.txt"), input};
    text_args.insert(text_args.end(), extra.begin(), extra.end());
    CliResult text = Encode(c.tokenizer, text_args);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const auto lines = ParseTextIds(ReadAll(dir.File("ids.txt")));
    std::vector<int32_t> sizes;
    for (const auto& l : lines) sizes.push_back(static_cast<int32_t>(l.size()));
    if (c.eot) {
      // The text output has the EOT at the end of each line.
      for (const auto& l : lines) ASSERT_FALSE(l.empty());
    }
    const std::string bin = dir.File("ids.bin"), idx = dir.File("ids.idx");
    std::vector<std::string> bin_args = {"--output", bin, "--output-format", c.format, "--index", idx, input};
    bin_args.insert(bin_args.end(), extra.begin(), extra.end());
    CliResult b = Encode(c.tokenizer, bin_args);
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::vector<uint32_t> ids = ReadWords(bin, c.width);
    EXPECT_EQ(ids, Flatten(lines));
    ExpectIndex(idx, c.dtype, c.width, sizes);
    // Without --eot the sizes are each line's count; with it, one more (checked on the ids:
    // each document's last id is the EOT).
    if (c.eot) {
      const uint32_t eot_id = c.tokenizer == kGpt2 ? 50256 : 100257;
      for (const auto& l : lines) EXPECT_EQ(l.back(), eot_id);
    }

    CliResult py_idx = RunProgram(kPython, {"-c", kNumpyIdx, idx, bin});
    ASSERT_EQ(py_idx.exit_code, 0) << py_idx.err;
    const std::vector<std::string> py_lines = testing::Lines(py_idx.out);
    ASSERT_EQ(py_lines.size(), 2u) << py_idx.out;
    EXPECT_EQ(py_lines[0], "1 " + std::to_string(c.dtype) + " " + std::to_string(ids.size()) + " " +
                               std::to_string(ids.size()) + " True True True");
    std::string expected_sizes;
    for (int32_t s : sizes) expected_sizes += (expected_sizes.empty() ? "" : " ") + std::to_string(s);
    EXPECT_TRUE(py_lines[1] == expected_sizes);

    const std::string npy = dir.File("ids.npy");
    std::vector<std::string> npy_args = {"--output", npy, input};  // npy by the extension
    npy_args.insert(npy_args.end(), extra.begin(), extra.end());
    CliResult n = Encode(c.tokenizer, npy_args);
    ASSERT_EQ(n.exit_code, 0) << n.err;
    CliResult py_npy = RunProgram(
        kPython, {"-c",
                  "import sys, numpy as np\n"
                  "a = np.load(sys.argv[1])\n"
                  "b = np.fromfile(sys.argv[2], dtype='<u2' if sys.argv[3] == '2' else '<u4')\n"
                  "print(a.dtype, a.ndim, a.shape[0], a.tolist() == b.tolist())\n",
                  npy, bin, std::to_string(c.width)});
    ASSERT_EQ(py_npy.exit_code, 0) << py_npy.err;
    EXPECT_EQ(py_npy.out, c.npy_dtype + " 1 " + std::to_string(ids.size()) + " True\n");
  }
}

// .npy files written by others: the header dict is a Python literal, which numpy reads with
// any quotes, spacing and key order, in format version 1 or 2, and a 1-D array marked
// Fortran-ordered is the same bytes. Each such file numpy loads (checked here) decodes; other
// dtypes and shapes are refused naming them, and an .npy name without the header says so.
TEST(EncodeCorpusCli, NpyHeadersAreReadAsNumpyReadsThem) {
  TempDir dir;
  const std::string text = "Hello world, this is a test of npy headers.\n";
  const std::string u32 = dir.File("ids.u32");
  ASSERT_EQ(Encode(kGpt2, {"--output", u32, dir.Write("in.txt", text)}).exit_code, 0);
  CliResult made = RunProgram(kPython, {"-c", R"(
import struct, sys, numpy as np
folder, ids = sys.argv[1], np.fromfile(sys.argv[2], dtype='<u4')
def custom(name, d, arr, version):
    d = d.encode('latin1')
    prefix = 10 if version == 1 else 12
    h = d + b' ' * ((64 - (prefix + len(d) + 1) % 64) % 64) + b'\n'
    size = struct.pack('<H', len(h)) if version == 1 else struct.pack('<I', len(h))
    open(folder + '/' + name, 'wb').write(b'\x93NUMPY' + bytes([version, 0]) + size + h + arr.tobytes())
    assert (np.load(folder + '/' + name) == arr).all(), name
n = len(ids)
custom('nospace.npy', "{'descr':'<u4','fortran_order':False,'shape':(%d,)}" % n, ids, 1)
custom('dq.npy', '{"descr": "<u4", "fortran_order": False, "shape": (%d,), }' % n, ids, 1)
custom('spaces.npy', "{'shape': ( %d , ), 'fortran_order': False, 'descr': '<u2'}" % n, ids.astype('<u2'), 1)
custom('v2.npy', "{'descr': '<u4', 'fortran_order': False, 'shape': (%d,), }" % n, ids, 2)
custom('fortran.npy', "{'descr': '<u4', 'fortran_order': True, 'shape': (%d,), }" % n, ids, 1)
np.save(folder + '/u16.npy', ids.astype(np.uint16))
np.save(folder + '/i8.npy', ids.astype(np.int64))
np.save(folder + '/square.npy', np.zeros((3, 3), dtype=np.uint32))
)", dir.path(), u32});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  for (const char* name : {"nospace.npy", "dq.npy", "spaces.npy", "v2.npy", "fortran.npy", "u16.npy"}) {
    CliResult decoded = RunCli({"decode", "--tokenizer", kGpt2, dir.File(name)});
    EXPECT_EQ(decoded.exit_code, 0) << name << ": " << decoded.err;
    EXPECT_EQ(decoded.out, text) << name;
  }
  CliResult i8 = RunCli({"decode", "--tokenizer", kGpt2, dir.File("i8.npy")});
  EXPECT_EQ(i8.exit_code, 1);
  EXPECT_THAT(i8.err, HasSubstr("dtype is '<i8'"));
  CliResult square = RunCli({"decode", "--tokenizer", kGpt2, dir.File("square.npy")});
  EXPECT_EQ(square.exit_code, 1);
  EXPECT_THAT(square.err, HasSubstr("not a 1-D array: shape (3, 3)"));
  // Named .npy, no header: that is the error (not "its name has no .npy").
  CliResult headless = RunCli({"decode", "--tokenizer", kGpt2, dir.Write("raw.npy", ReadAll(u32))});
  EXPECT_EQ(headless.exit_code, 1);
  EXPECT_THAT(headless.err, HasSubstr("not an .npy file (no \\x93NUMPY magic)"));
  // An .npy read as raw ids (its header would be ids): refused, with the hint.
  for (const char* raw : {"u16", "u32"}) {
    CliResult as_raw = RunCli({"decode", "--tokenizer", kGpt2, "--input-format", raw, dir.File("u16.npy")});
    EXPECT_EQ(as_raw.exit_code, 1) << raw;
    EXPECT_THAT(as_raw.err, HasSubstr(std::string("it is an .npy file, not raw ") + raw +
                                      " ids: give --input-format npy"));
  }
  // A Megatron index cut inside its header says so.
  const std::string idx = dir.File("ids.idx");
  ASSERT_EQ(Encode(kGpt2, {"--output", dir.File("ids2.u32"), "--index", idx, dir.File("in.txt")}).exit_code, 0);
  const std::string cut = dir.Write("cut.idx", ReadAll(idx).substr(0, 20));
  CliResult truncated = RunCli({"inspect", dir.File("ids2.u32"), "--index", cut});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_THAT(truncated.err, HasSubstr("truncated Megatron index (20 bytes"));
}

// ---- 7. --doc-mode file ------------------------------------------------------------------

TEST(EncodeCorpusCli, DocModeFileMakesEachFileADocument) {
  REQUIRE_REAL_CORPUS();
  TempDir dir;
  const std::vector<std::string> texts = {RealCorpus().substr(0, 200000), RandomUnicode(100000, 3),
                                          "a small file\nwithout a final newline", "x"};
  std::vector<std::string> files;
  for (size_t i = 0; i < texts.size(); ++i) files.push_back(dir.Write("f" + std::to_string(i) + ".txt", texts[i]));
  const std::string out = dir.File("docs.u32"), idx = dir.File("docs.idx");
  std::vector<std::string> args = {"--output", out, "--output-format", "u32", "--doc-mode", "file", "--eot",
                                   kEot, "--shard-bytes", "4096", "--index", idx};
  args.insert(args.end(), files.begin(), files.end());
  CliResult r = Encode(kCl100k, args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult dec = RunCli({"decode", "--tokenizer", kCl100k, "--input-format", "u32", out});
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_TRUE(dec.out == WithEot(texts));
  // Each file read in shards of 4 KiB gives the ids of encoding it whole.
  std::vector<uint32_t> expected;
  std::vector<int32_t> sizes;
  for (const std::string& f : files) {
    CliResult whole = Encode(kCl100k, {"--whole", f});
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const auto lines = ParseTextIds(whole.out);
    ASSERT_EQ(lines.size(), 1u);
    expected.insert(expected.end(), lines[0].begin(), lines[0].end());
    expected.push_back(100257);
    sizes.push_back(static_cast<int32_t>(lines[0].size() + 1));
  }
  EXPECT_EQ(ReadWords(out, 4), expected);
  ExpectIndex(idx, 4, 4, sizes);
  // Text output in file mode: one line per file.
  CliResult text = Encode(kCl100k, {"--doc-mode", "file", files[2], files[3]});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(ParseTextIds(text.out).size(), 2u);
}

// ---- 8. --stats --------------------------------------------------------------------------

TEST(EncodeCorpusCli, StatsAgreeWithCountingTheIds) {
  REQUIRE_REAL_CORPUS();
  TempDir dir;
  const std::string slice = RealCorpus().substr(0, RealCorpus().find('\n', 300000) + 1);
  const std::string input = dir.Write("real.txt", slice);
  const std::string out = dir.File("ids.u32");
  CliResult r = Encode(kCl100k, {"--output", out, "--output-format", "u32", "--stats", "--eot", kEot, input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint32_t> ids = ReadWords(out, 4);
  const size_t documents = LineDocuments(slice).size();
  EXPECT_THAT(r.err, HasSubstr("stats: " + std::to_string(documents) + " documents, " +
                                std::to_string(slice.size()) + " bytes, " + std::to_string(ids.size()) +
                                " tokens (" + std::to_string(documents) + " of them --eot)\n"));
  // Per byte and per document: the text's own tokens, the separators left out.
  const double text_tokens = static_cast<double>(ids.size() - documents);
  char per[160];
  std::snprintf(per, sizeof(per), "stats: %.4f tokens per byte (%.3f bytes per token), %.2f tokens per document",
                text_tokens / static_cast<double>(slice.size()), static_cast<double>(slice.size()) / text_tokens,
                text_tokens / static_cast<double>(documents));
  EXPECT_THAT(r.err, HasSubstr(per));
  std::map<uint32_t, uint64_t> counts;
  for (uint32_t id : ids) ++counts[id];
  std::vector<std::pair<uint32_t, uint64_t>> order(counts.begin(), counts.end());
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  EXPECT_THAT(r.err, HasSubstr("stats: " + std::to_string(counts.size()) + " of 100277 ids used"));
  // The ten lines after "the ten most frequent:": id, [token], count, share.
  std::vector<std::pair<uint32_t, uint64_t>> printed;
  const std::vector<std::string> lines = testing::Lines(r.err);
  auto top = std::find_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.find("the ten most frequent:") != std::string::npos; });
  ASSERT_NE(top, lines.end()) << r.err;
  for (auto it = top + 1; it != lines.end() && it->starts_with("  "); ++it) {
    const std::vector<std::string> words = testing::SplitWords(*it);
    ASSERT_GE(words.size(), 4u) << *it;
    printed.push_back({static_cast<uint32_t>(std::stoul(words[0])), std::stoull(words[words.size() - 2])});
  }
  order.resize(std::min<size_t>(order.size(), 10));
  EXPECT_EQ(printed, order);
  // The EOT is one of them: one per document.
  EXPECT_EQ(counts[100257], documents);
  // Shares of the text's tokens: cl100k's single bytes are its ids 0-255; it has no byte fallback.
  uint64_t single = 0;
  for (uint32_t id : ids) single += id < 256;
  char shares[160];
  std::snprintf(shares, sizeof(shares),
                "stats: byte-fallback tokens 0.000%% of the text's tokens, single-byte tokens %.3f%%\n",
                100.0 * static_cast<double>(single) / text_tokens);
  EXPECT_THAT(r.err, HasSubstr(shares));
}

// ---- 9. inspect on a token file ----------------------------------------------------------

TEST(EncodeCorpusCli, InspectShowsTheCountAndTheFirstDocuments) {
  TempDir dir;
  const std::string input =
      dir.Write("in.txt", "the first document is here\nthe second one follows\nand a third\n");
  const std::string bin = dir.File("ids.u32"), idx = dir.File("ids.idx");
  CliResult r = Encode(kCl100k, {"--output", bin, "--output-format", "u32", "--index", idx, input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t tokens = ReadWords(bin, 4).size();
  // ids.u32 by its extension; ids.idx beside it gives the documents.
  CliResult plain = RunCli({"inspect", bin});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("tokens: " + std::to_string(tokens) + "\n"));
  EXPECT_THAT(plain.out, HasSubstr("documents: 3"));
  CliResult decoded = RunCli({"inspect", bin, "--tokenizer", kCl100k, "--documents", "2"});
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_THAT(decoded.out, HasSubstr("document 1 ("));
  EXPECT_THAT(decoded.out, HasSubstr("the first document is here"));
  EXPECT_THAT(decoded.out, HasSubstr("the second one follows"));
  EXPECT_THAT(decoded.out, ::testing::Not(HasSubstr("and a third")));
  // npy by its header, with the index given.
  const std::string npy = dir.File("other.npy");
  ASSERT_EQ(Encode(kCl100k, {"--output", npy, input}).exit_code, 0);
  CliResult n = RunCli({"inspect", npy, "--tokenizer", kCl100k, "--index", idx});
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_THAT(n.out, HasSubstr("tokens: " + std::to_string(tokens) + "\n"));
  EXPECT_THAT(n.out, HasSubstr("the first document is here"));
  // encode's text output under a name that says nothing (stdout redirected): lines of ids, by
  // their content, not a vocab.txt.
  CliResult text = Encode(kCl100k, {input});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string ids_file = dir.Write("ids", text.out);
  CliResult lines = RunCli({"inspect", ids_file, "--tokenizer", kCl100k});
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_THAT(lines.out, HasSubstr("token file: " + ids_file + " (text)"));
  EXPECT_THAT(lines.out, HasSubstr("documents: 3"));
  EXPECT_THAT(lines.out, HasSubstr("document 2 ("));
  // Without an index the ids are not called documents.
  CliResult bare = RunCli({"inspect", npy, "--tokenizer", kCl100k});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_THAT(bare.out, HasSubstr("first " + std::to_string(tokens) + " ids (no index: document ends unknown): the first"));
  EXPECT_THAT(bare.out, ::testing::Not(HasSubstr("document 1")));
  // An index of another file that fits inside this one (fewer tokens) is refused too.
  const std::string longer = dir.File("longer.u32");
  ASSERT_EQ(Encode(kCl100k, {"--output", longer, dir.Write("longer.txt", "more words here\n" + ReadAll(input))}).exit_code, 0);
  CliResult foreign = RunCli({"inspect", longer, "--tokenizer", kCl100k, "--index", idx});
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_THAT(foreign.err, HasSubstr("covers " + std::to_string(tokens) + " tokens"));
  EXPECT_THAT(foreign.err, HasSubstr("is it this file's index?"));
  // Ids beyond the tokenizer's: an error on stderr naming the first such token (the counts
  // already printed stay on stdout); u16 ids read as u32 get the hint.
  const std::string wide = dir.File("wide.u32");
  const std::string chinese = dir.Write("zh.txt", "the \xe4\xb8\xad\xe6\x96\x87 words\n");
  ASSERT_EQ(Encode(kO200k, {"--output", wide, chinese}).exit_code, 0);
  std::vector<uint32_t> wide_ids = ReadWords(wide, 4);
  const size_t first_beyond = std::find_if(wide_ids.begin(), wide_ids.end(), [](uint32_t id) { return id >= 50257; }) -
                              wide_ids.begin();
  ASSERT_LT(first_beyond, wide_ids.size());
  CliResult beyond = RunCli({"inspect", wide, "--tokenizer", kGpt2});
  EXPECT_EQ(beyond.exit_code, 1);
  EXPECT_THAT(beyond.out, HasSubstr("tokens: " + std::to_string(wide_ids.size()) + "\n"));
  EXPECT_THAT(beyond.err, HasSubstr("tokenmill inspect: error: " + wide + ": token " + std::to_string(first_beyond + 1) +
                                    " is id " + std::to_string(wide_ids[first_beyond]) +
                                    ", beyond this tokenizer's 50257 ids: was the file written with another vocabulary?"));
  // u16 ids 464 717 ("The first" in gpt2), named .u32: one id, 717 << 16 | 464.
  const std::string misnamed = dir.Write("pairs.u32", std::string("\xd0\x01\xcd\x02", 4));
  CliResult pairs = RunCli({"inspect", misnamed, "--tokenizer", kGpt2});
  EXPECT_EQ(pairs.exit_code, 1);
  EXPECT_THAT(pairs.err, HasSubstr("(read as u32: is it a file of u16 ids? then give --input-format u16)\n"));
}

// ---- 10. Errors a user can cause ---------------------------------------------------------

TEST(EncodeCorpusCli, UserErrors) {
  TempDir dir;
  const std::string input = dir.Write("in.txt", "hello\nworld\n");
  auto no_outputs = [&] { return FilesStartingWith(dir.path(), "out"); };

  CliResult eot = Encode(kCl100k, {"--output", dir.File("out.u32"), "--output-format", "u32", "--eot",
                                   "<|no such token|>", input});
  EXPECT_EQ(eot.exit_code, 2);
  EXPECT_THAT(eot.err, HasSubstr("<|no such token|>"));
  EXPECT_EQ(no_outputs(), std::vector<std::string>{});
  // --eot by id when no token's text is that number; a number past the ids is no token.
  CliResult by_name = Encode(kCl100k, {"--eot", "<|endoftext|>", input});
  CliResult by_id = Encode(kCl100k, {"--eot", "100257", input});
  EXPECT_EQ(by_id.exit_code, 0) << by_id.err;
  EXPECT_EQ(by_id.out, by_name.out);
  EXPECT_EQ(Encode(kCl100k, {"--eot", "200000", input}).exit_code, 2);
  // A folder that exists but makes no files (/proc; root may write in it) is not called missing.
  CliResult proc = Encode(kCl100k, {"--output", "/proc/version", "--output-format", "u32", input});
  EXPECT_NE(proc.exit_code, 0);
  EXPECT_THAT(proc.err, HasSubstr("'/proc"));
  EXPECT_THAT(proc.err, ::testing::Not(HasSubstr("does not exist")));
  // xz data is refused, as a file and on stdin, not encoded as text; stdin twice is refused.
  const std::string xz = dir.Write("data.xz", std::string("\xFD" "7zXZ\0\0\x04", 8) + "rest");
  for (const auto& [args, stdin_text] :
       {std::pair<std::vector<std::string>, std::string>{{xz}, ""}, {{"-"}, ReadAll(xz)}}) {
    CliResult r = Encode(kGpt2, args, stdin_text);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.err, HasSubstr("is xz-compressed, which tokenmill does not read"));
    EXPECT_EQ(r.out, "");
  }
  CliResult twice = Encode(kGpt2, {"-", "-"}, "hello\n");
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_THAT(twice.err, HasSubstr("given twice"));
  // stdin (a pipe here) by two names: the second read would be empty (exit 0, its text lost).
  CliResult same = Encode(kGpt2, {"-", "/dev/stdin"}, "hello\n");
  EXPECT_EQ(same.exit_code, 1) << same.out;
  EXPECT_THAT(same.err, HasSubstr("'/dev/stdin' is the same stream as stdin ('-')"));
  same = Encode(kGpt2, {"/dev/stdin", "/proc/self/fd/0"}, "hello\n");
  EXPECT_EQ(same.exit_code, 1) << same.out;
  EXPECT_THAT(same.err, HasSubstr("'/proc/self/fd/0' is the same stream as '/dev/stdin'"));
  // A device that reads the same again is no such stream: /dev/null twice is two empty inputs.
  CliResult nulls = Encode(kGpt2, {"/dev/null", "/dev/null"});
  EXPECT_EQ(nulls.exit_code, 0) << nulls.err;
  EXPECT_EQ(nulls.out, "");
  // A .bin output must say its width: text there would surprise a data loader.
  CliResult bin = Encode(kGpt2, {"--output", dir.File("out.bin"), input});
  EXPECT_EQ(bin.exit_code, 2);
  EXPECT_THAT(bin.err, HasSubstr("give --output-format u16"));
  EXPECT_EQ(no_outputs(), std::vector<std::string>{});

  for (const char* format : {"text", "npy"}) {
    CliResult idx = Encode(kCl100k, {"--output", dir.File("out.bin"), "--output-format", format, "--index",
                                     dir.File("out.idx"), input});
    EXPECT_EQ(idx.exit_code, 2) << format;
    EXPECT_THAT(idx.err, HasSubstr("--index")) << format;
    EXPECT_EQ(no_outputs(), std::vector<std::string>{}) << format;
  }

  const std::string missing = dir.File("no_such_input.txt");
  CliResult gone = Encode(kCl100k, {"--output", dir.File("out.u32"), "--output-format", "u32", input, missing});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.err, HasSubstr("no_such_input.txt"));
  EXPECT_EQ(no_outputs(), std::vector<std::string>{});

  const std::string jsonl = dir.Write("bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": \"fine too\"}\n{\"text\": oops}\n");
  CliResult bad = Encode(kCl100k, {"--output", dir.File("out.u32"), "--output-format", "u32", jsonl});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(jsonl + ":3"));
  EXPECT_EQ(no_outputs(), std::vector<std::string>{});

  // An id beyond cl100k's vocabulary (100277 ids) in a u32 file.
  std::string words;
  for (uint32_t id : {15339u, 1917u, 250000u}) {
    for (int b = 0; b < 4; ++b) words += static_cast<char>((id >> (8 * b)) & 0xFF);
  }
  const std::string beyond = dir.Write("beyond.u32", words);
  CliResult dec = RunCli({"decode", "--tokenizer", kCl100k, "--input-format", "u32", beyond});
  EXPECT_EQ(dec.exit_code, 1);
  EXPECT_THAT(dec.err, HasSubstr("250000"));
  EXPECT_EQ(std::count(dec.err.begin(), dec.err.end(), '\n'), 1) << dec.err;
  // gpt2's ids fit u16, but 60000 is beyond its 50,257.
  const std::string beyond16 = dir.Write("beyond.u16", std::string("\x60\xea", 2));
  CliResult dec16 = RunCli({"decode", "--tokenizer", kGpt2, beyond16});
  EXPECT_EQ(dec16.exit_code, 1);
  EXPECT_THAT(dec16.err, HasSubstr("60000"));
}

// ---- 11. Inputs of every kind together, in input order ------------------------------------

// Compressed files and stdin are read as streams, the others in shards; the output must still
// follow the order the inputs were given in (a reader that handed out streams first wrote the
// .zst and stdin documents before the files given before them).
TEST(EncodeCorpusCli, MixedInputsAreWrittenInInputOrder) {
  TempDir dir;
  const std::string a = RandomUnicode(30000, 11), b = RandomUnicode(20000, 12), c = RandomUnicode(25000, 13),
                    d = "the stdin document\nand its second line\n", e = "a last small file\n";
  const std::string fa = dir.Write("a.txt", a), fb = dir.Write("b.txt.zst", ZstdCompress(b)),
                    fc = dir.Write("c.txt", c), fe = dir.Write("e.txt", e);
  for (const char* threads : {"1", "2", "4"}) {
    SCOPED_TRACE(std::string(threads) + " threads");
    // Line documents, small shards and batches so that every input is several.
    const std::string out = dir.File(std::string("lines") + threads + ".u32");
    CliResult r = Encode(kCl100k, {"--output", out, "--threads", threads, "--shard-bytes", "4096",
                                   "--batch-bytes", "4096", fa, fb, "-", fc, fe},
                         d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    CliResult dec = RunCli({"decode", "--tokenizer", kCl100k, out});
    ASSERT_EQ(dec.exit_code, 0) << dec.err;
    EXPECT_TRUE(dec.out == a + b + d + c + e) << "decoded " << dec.out.size() << " bytes";
    // Each file a document, with separators and an index.
    const std::string docs = dir.File(std::string("docs") + threads + ".u32");
    const std::string idx = dir.File(std::string("docs") + threads + ".idx");
    CliResult f = Encode(kCl100k, {"--output", docs, "--index", idx, "--doc-mode", "file", "--eot", kEot,
                                   "--threads", threads, "--shard-bytes", "4096", "--batch-bytes", "4096",
                                   fb, fa, "-", fe, fc},
                         d);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    CliResult fdec = RunCli({"decode", "--tokenizer", kCl100k, docs});
    ASSERT_EQ(fdec.exit_code, 0) << fdec.err;
    EXPECT_TRUE(fdec.out == WithEot({b, a, d, e, c}));
    const IdxFile index = ParseIdx(idx);
    EXPECT_EQ(index.sizes.size(), 5u);
  }
}

// ---- 12. --doc-mode file with text files and JSON lines together ---------------------------

TEST(EncodeCorpusCli, DocModeFileClosesAFileBeforeJsonRecords) {
  TempDir dir;
  const std::string a = "alpha beta\ngamma", c = "the last file\n";
  const std::string fa = dir.Write("a.txt", a), fc = dir.Write("c.txt", c);
  const std::string fb = dir.Write("b.jsonl", "{\"text\": \"one two\"}\n{\"text\": \"three\\nfour\"}\n");
  const std::vector<std::string> docs = {a, "one two", "three\nfour", c};
  const std::string out = dir.File("docs.u32"), idx = dir.File("docs.idx");
  CliResult r = Encode(kCl100k, {"--output", out, "--index", idx, "--doc-mode", "file", "--eot", kEot, fa, fb, fc});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult dec = RunCli({"decode", "--tokenizer", kCl100k, out});
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_TRUE(dec.out == WithEot(docs)) << dec.out;
  // The index: each document's ids, its separator included, as encoding it alone gives.
  std::vector<int32_t> sizes;
  for (const std::string& doc : docs) {
    CliResult whole = Encode(kCl100k, {"--whole", dir.Write("one.txt", doc)});
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    sizes.push_back(static_cast<int32_t>(ParseTextIds(whole.out).at(0).size() + 1));
  }
  ExpectIndex(idx, 4, 4, sizes);
  // Text output: one line of ids per document.
  CliResult text = Encode(kCl100k, {"--doc-mode", "file", fa, fb, fc});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto lines = ParseTextIds(text.out);
  ASSERT_EQ(lines.size(), 4u) << text.out;
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i].size() + 1, static_cast<size_t>(sizes[i])) << i;
}

// ---- 13. A refused line is named, in any batch of any input --------------------------------

TEST(EncodeCorpusCli, RefusalsNameTheirLineInLaterBatches) {
  TempDir dir;
  std::string text;
  for (int i = 1; i < 3000; ++i) text += "line " + std::to_string(i) + " of plain text before the bad one\n";
  text += "line 3000 holds " + kEot + " here\nline 3001\n";
  const std::string plain = dir.Write("in.txt", text), zst = dir.Write("in.txt.zst", ZstdCompress(text));
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string stdin_text;
    std::string where;
  };
  const std::vector<Case> cases = {
      {"file", {plain}, "", plain + ":3000:"},
      {"zst", {zst}, "", zst + ":3000:"},
      {"stdin", {"-"}, text, "stdin:3000:"},
      {"file, doc-mode file", {"--doc-mode", "file", plain}, "", plain + ":3000:"},
      {"zst, doc-mode file", {"--doc-mode", "file", zst}, "", zst + ":3000:"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args = {"--output", dir.File("out.u32"), "--specials", "disallow",
                                     "--shard-bytes", "4096", "--batch-bytes", "4096"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliResult r = Encode(kCl100k, args, c.stdin_text);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr(c.where + " the text contains the special token '" + kEot + "' at byte 16"));
    EXPECT_EQ(FilesStartingWith(dir.path(), "out"), std::vector<std::string>{});
  }
}

// ---- 14. A second signal leaves at once ---------------------------------------------------

TEST(EncodeCorpusCli, SecondSignalExitsAtOnce) {
  // The first signal's orderly stop cannot finish while the writer is blocked: here the ids go
  // to stdout, a pipe this test never reads (writes retry on EINTR). The second signal exits at
  // once. (That it also unlinks the temporary files being written: StopRequest tests.)
  TempDir dir;
  std::string lines;
  for (int i = 0; i < 20000; ++i) lines += "line " + std::to_string(i) + " of a corpus to encode\n";
  const std::string input = dir.Write("in.txt", lines);
  for (int sig : {SIGINT, SIGHUP}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGHUP");
    int out[2];
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    const std::string err_path = dir.File("err.txt");
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(err, 0);
    const pid_t pid = StartCli({"encode", "--tokenizer", kCl100k, input}, -1, out[1], err);
    ASSERT_GE(pid, 0);
    close(out[1]);
    close(err);
    // Blocked once the pipe is full.
    const int capacity = fcntl(out[0], F_GETPIPE_SZ);
    ASSERT_GT(capacity, 0);
    int queued = 0;
    for (int i = 0; i < 1000 && queued < capacity; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ASSERT_EQ(ioctl(out[0], FIONREAD, &queued), 0);
    }
    ASSERT_GE(queued, capacity) << "stdout never filled up";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(kill(pid, sig), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, WNOHANG), 0) << "the orderly stop finished with stdout full";
    ASSERT_EQ(kill(pid, sig), 0);
    status = WaitUpTo10s(pid);
    close(out[0]);
    ASSERT_NE(status, -1) << "encode did not exit within 10 s of the second signal";
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    EXPECT_THAT(ReadAll(err_path), HasSubstr("second interrupt, exiting at once"));
  }
}

// ---- 14b. A pipe given by its path ----------------------------------------------------------

// A named pipe (or /dev/stdin, <(command)) has no size and can be read once: it is read as a
// stream like stdin, plain or compressed by its first bytes. Before, its size of 0 made it an
// empty input (exit 0, nothing encoded) and a compressed one lost its magic to the format check.
TEST(EncodeCorpusCli, NamedPipesAreReadAsStreams) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "line " + std::to_string(i) + " through a pipe\n";
  const std::string plain = dir.Write("in.txt", text);
  CliResult expected = Encode(kGpt2, {plain});
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  const std::string gz = dir.File("in.txt.gz");
  ASSERT_EQ(RunProgram("/bin/sh", {"-c", "gzip -c '" + plain + "' > '" + gz + "'"}).exit_code, 0);
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"pipe.txt", text},
                                    {"pipe.gz", ReadAll(gz)}}) {
    SCOPED_TRACE(name);
    const std::string fifo = dir.File(name);
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    // The writer gives up after 60 s without a reader or without progress, and the encode
    // runs under `timeout 90`: a reader that closed the pipe early, or never opened it, fails
    // the test instead of hanging it.
    signal(SIGPIPE, SIG_IGN);
    std::thread writer = testing::FeedPipe(fifo, bytes);
    CliResult r = RunProgram("/usr/bin/timeout", {"90", TOKENMILL_CLI_PATH, "encode", "--tokenizer", kGpt2,
                                                  "--batch-bytes", "4096", fifo});
    writer.join();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == expected.out) << r.out.size() << " bytes of ids against " << expected.out.size();
  }
  // A pipe named like a gzip file that carries plain text is refused when read, as such a
  // regular file is (it was encoded as text); the same pipe given twice is refused unread.
  {
    const std::string fifo = dir.File("plain.gz");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([fifo] {
      int fd = -1;
      for (int i = 0; i < 6000 && fd < 0; ++i) {
        fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (fd < 0) return;
      const std::string text = "plain text, not gzip\n";
      [[maybe_unused]] const ssize_t n = write(fd, text.data(), text.size());
      close(fd);
    });
    CliResult r = RunProgram("/usr/bin/timeout", {"90", TOKENMILL_CLI_PATH, "encode", "--tokenizer", kGpt2,
                                                  "--output", dir.File("plain.u32"), fifo});
    writer.join();
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("'" + fifo + "' is named like a gzip file but does not start with the gzip magic bytes"));
    EXPECT_EQ(FilesStartingWith(dir.path(), "plain.u32"), std::vector<std::string>{});
    CliResult twice = RunProgram("/usr/bin/timeout", {"90", TOKENMILL_CLI_PATH, "encode", "--tokenizer", kGpt2, fifo, fifo});
    EXPECT_EQ(twice.exit_code, 1) << twice.err;
    EXPECT_THAT(twice.err, HasSubstr("'" + fifo + "' is the same stream as '" + fifo + "', which can be read once"));
  }
  // A pipe no writer ever opens: Ctrl-C stops the wait (its open() does not wait).
  const std::string lonely = dir.File("lonely.txt");
  ASSERT_EQ(mkfifo(lonely.c_str(), 0600), 0);
  const pid_t pid = StartCli({"encode", "--tokenizer", kGpt2, "--output", dir.File("lonely.u32"), lonely},
                            -1, -1, -1);
  ASSERT_GE(pid, 0);
  // Signalled once it handles SIGINT (its SigCgt mask in /proc), then given time to reach the pipe.
  bool catching = false;
  for (int i = 0; i < 1000 && !catching; ++i) {
    std::ifstream status_file("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status_file, line);) {
      if (line.starts_with("SigCgt:")) catching = (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
    }
    if (!catching) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(catching) << "encode never handled SIGINT";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const int status = WaitUpTo10s(pid);
  ASSERT_NE(status, -1) << "encode of a pipe without a writer did not stop within 10 s of SIGINT";
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_EQ(FilesStartingWith(dir.path(), "lonely.u32"), std::vector<std::string>{});
}

// ---- 15. More errors and guesses -----------------------------------------------------------

// Outputs that would destroy a file the user has, or a pair left half replaced (found by a
// helper probing the CLI): an --output or --index naming an input or the tokenizer (exit 0,
// the corpus or tokenizer replaced by ids), an index that fails to write after the ids had
// replaced the old output (a new .u16 beside the old .idx), an explicit --output-format
// contradicting the output's .u16/.u32/.npy name (an x.npy numpy cannot load).
// One producer writing two named pipes in turn (`(cat a > pA; cat b > pB) &`): the second is
// not read ahead of the first, whose writer would then wait for a reader the run never gets
// to (a hang before the fix: the first pipe's tickets stopped once the second's read held the
// pipeline). With 8 threads and small batches, under `timeout`.
TEST(EncodeCorpusCli, PipesFedInTurnByOneWriterAreNotReadAhead) {
  TempDir dir;
  std::string a, b;
  for (int i = 0; a.size() < (size_t{1} << 20); ++i) a += "first pipe, line " + std::to_string(i) + "\n";
  for (int i = 0; i < 200; ++i) b += "second pipe, line " + std::to_string(i) + "\n";
  const std::string pa = dir.Write("a.txt", a), pb = dir.Write("b.txt", b);
  CliResult expected = Encode(kGpt2, {"--output-format", "u32", "--output", dir.File("expected.u32"), pa, pb});
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  const std::string fa = dir.File("pA"), fb = dir.File("pB"), out = dir.File("out.u32");
  ASSERT_EQ(mkfifo(fa.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(fb.c_str(), 0600), 0);
  const std::string script = "(cat '" + pa + "' > '" + fa + "'; cat '" + pb + "' > '" + fb + "') & " +
                             "timeout 60 '" + TOKENMILL_CLI_PATH + "' encode --tokenizer '" + kGpt2 +
                             "' --threads 8 --batch-bytes 4096 --progress none --output-format u32 --output '" +
                             out + "' '" + fa + "' '" + fb + "'; rc=$?; " +
                             // (a hung run leaves the writer blocked on a pipe: release it)
                             "exec 3<>'" + fa + "' 4<>'" + fb + "'; wait; exit $rc";
  CliResult r = RunProgram("/bin/sh", {"-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(testing::ReadFileOrFail(out) == testing::ReadFileOrFail(dir.File("expected.u32")));
}

// Where no scratch file can be made for the files read ahead ($TMPDIR unusable, the output on
// stdout), nothing is read ahead: the run writes what it wrote before there was reading ahead.
TEST(EncodeCorpusCli, AnUnusableTmpdirOnlyStopsReadingAhead) {
  TempDir dir;
  std::vector<std::string> args = {"--output-format", "u32", "--threads", "8", "--batch-bytes", "4096"};
  for (int f = 0; f < 4; ++f) {
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "file " + std::to_string(f) + " line " + std::to_string(i) + "\n";
    args.push_back(dir.Write("in" + std::to_string(f) + ".txt.zst", ZstdCompress(text)));
  }
  std::vector<std::string> to_file = args;
  to_file.insert(to_file.end(), {"--output", dir.File("expected.u32")});
  CliResult expected = Encode(kGpt2, to_file);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  std::string script = "TMPDIR=/nonexistent/tokenmill '" + std::string(TOKENMILL_CLI_PATH) + "' encode --tokenizer '" +
                       kGpt2 + "' --progress none --output - > '" + dir.File("stdout.u32") + "'";
  for (const std::string& a : args) script += " '" + a + "'";
  CliResult r = RunProgram("/bin/sh", {"-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(testing::ReadFileOrFail(dir.File("stdout.u32")) == testing::ReadFileOrFail(dir.File("expected.u32")));
}

TEST(EncodeCorpusCli, OutputsThatWouldDestroyOrSplitFilesAreRefused) {
  TempDir dir;
  const std::string input = dir.Write("in.txt", "hello world\n");
  const std::string text = ReadAll(input);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--output", input, input},
        {"--output", dir.File("x.u16"), "--index", dir.path() + "/./in.txt", input}}) {
    SCOPED_TRACE(args[1]);
    CliResult r = Encode(kGpt2, args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is also an input: writing it would replace that text"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.u16")));
  // A folder input holding an earlier run's output: refused too (rerunning into the corpus).
  const std::string corpus = dir.path() + "/corpus";
  std::filesystem::create_directories(corpus);
  dir.Write("corpus/a.txt", "hello\n");
  ASSERT_EQ(Encode(kGpt2, {"--output", corpus + "/ids.u16", corpus}).exit_code, 0);
  CliResult again = Encode(kGpt2, {"--output", corpus + "/ids.u16", corpus});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_THAT(again.err, HasSubstr("is also an input"));
  EXPECT_EQ(ReadAll(input), text);
  const std::string tokenizer = dir.File("t.tiktoken"), sidecar = dir.File("t.json");
  std::filesystem::copy_file(kGpt2, tokenizer);
  std::filesystem::copy_file(testing::TestVocabDir() + "gpt2.json", sidecar);
  for (const std::string& target : {tokenizer, sidecar}) {
    // The tokenizer named by its ranks file or by its sidecar.
    for (const std::string& given : {tokenizer, sidecar}) {
      CliResult r = Encode(given, {"--output", target, input});
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_THAT(r.err, HasSubstr("is the tokenizer file '" + target + "'"));
    }
  }
  EXPECT_EQ(ReadAll(tokenizer), ReadAll(kGpt2));
  // A failing index leaves the previous output and index as they were.
  const std::string ids = dir.File("k.u16"), idx = dir.File("k.idx");
  ASSERT_EQ(Encode(kGpt2, {"--output", ids, "--index", idx, dir.Write("big.txt", std::string(5000, 'x') + "\n")}).exit_code, 0);
  const std::string old_ids = ReadAll(ids), old_idx = ReadAll(idx);
  CliResult full = Encode(kGpt2, {"--output", ids, "--index", "/dev/full", input});
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_THAT(full.err, HasSubstr("No space left on device"));
  EXPECT_EQ(ReadAll(ids), old_ids);
  EXPECT_EQ(ReadAll(idx), old_idx);
  EXPECT_EQ(FilesStartingWith(dir.path(), "k.u16.tmp"), std::vector<std::string>{});
  // --output-format against the output's name.
  for (const auto& [name, format] : {std::pair<std::string, std::string>{"x.npy", "u32"}, {"x.u16", "u32"}, {"x.u32", "text"}}) {
    CliResult r = Encode(kGpt2, {"--output", dir.File(name), "--output-format", format, input});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_THAT(r.err, HasSubstr("but --output-format is " + format));
    EXPECT_FALSE(std::filesystem::exists(dir.File(name)));
  }
}

// New outputs get the mode open(O_CREAT, 0666) gives under the umask (they were always 0644,
// a private corpus's ids readable by all); a replaced file keeps its mode.
TEST(EncodeCorpusCli, OutputsFollowTheUmaskAndKeepAReplacedFilesMode) {
  TempDir dir;
  const std::string input = dir.Write("in.txt", "hello world\n");
  const std::string ids = dir.File("p.u16"), idx = dir.File("p.idx");
  CliResult r = RunProgram("/bin/sh", {"-c", "umask 077 && '" + std::string(TOKENMILL_CLI_PATH) + "' encode --tokenizer '" +
                                                  kGpt2 + "' --output '" + ids + "' --index '" + idx + "' '" + input + "'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto mode = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 07777u;
  };
  EXPECT_EQ(mode(ids), 0600u);
  EXPECT_EQ(mode(idx), 0600u);
  ASSERT_EQ(chmod(ids.c_str(), 0640), 0);
  ASSERT_EQ(Encode(kGpt2, {"--output", ids, input}).exit_code, 0);
  EXPECT_EQ(mode(ids), 0640u);
}

// Output that cannot reach stdout fails the command with a message (decode exited 1 without
// one, inspect exited 0).
TEST(EncodeCorpusCli, StdoutThatCannotBeWrittenFailsTheCommand) {
  TempDir dir;
  const std::string ids = dir.File("k.u16");
  ASSERT_EQ(Encode(kGpt2, {"--output", ids, dir.Write("in.txt", "hello world\n")}).exit_code, 0);
  for (const std::string& command : {"decode --tokenizer '" + kGpt2 + "' '" + ids + "'", "inspect '" + ids + "'",
                                     "inspect '" + kGpt2 + "'"}) {
    SCOPED_TRACE(command);
    CliResult r = RunProgram("/bin/sh", {"-c", "'" + std::string(TOKENMILL_CLI_PATH) + "' " + command + " > /dev/full"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("cannot write to stdout"));
  }
}

TEST(EncodeCorpusCli, OutputsIndexesAndFormatsThatDoNotFit) {
  TempDir dir;
  const std::string input = dir.Write("in.txt", "hello world\nsecond line\n");
  // --output *.u16 / *.u32 without --output-format: the extension says the format.
  for (const auto& [name, width] : {std::pair<std::string, size_t>{"ids.u16", 2}, {"ids.u32", 4}}) {
    CliResult r = Encode(kGpt2, {"--output", dir.File(name), input});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    CliResult text = Encode(kGpt2, {input});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(ReadWords(dir.File(name), width), Flatten(ParseTextIds(text.out))) << name;
  }
  // The index cannot be the token file.
  const std::string same = dir.File("same.u32");
  CliResult same_file = Encode(kGpt2, {"--output", same, "--index", dir.path() + "/./same.u32", input});
  EXPECT_EQ(same_file.exit_code, 2);
  EXPECT_THAT(same_file.err, HasSubstr("same file"));
  EXPECT_FALSE(std::filesystem::exists(same));
  // ... also as relative paths, the file not there yet ("q.u32" and "./q.u32").
  CliResult relative = RunProgram("/bin/sh", {"-c", "cd '" + dir.path() + "' && '" + TOKENMILL_CLI_PATH +
                                                        "' encode --tokenizer '" + kGpt2 +
                                                        "' --output q.u32 --index ./q.u32 in.txt"});
  EXPECT_EQ(relative.exit_code, 2) << relative.err;
  EXPECT_THAT(relative.err, HasSubstr("same file"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("q.u32")));
  // An output in a folder that does not exist says so.
  CliResult nowhere = Encode(kGpt2, {"--output", dir.path() + "/no_folder/ids.u32", input});
  EXPECT_EQ(nowhere.exit_code, 1);
  EXPECT_THAT(nowhere.err, HasSubstr("output folder does not exist"));
  // inspect with the index of another token file: refused, nothing read past the ids.
  const std::string small = dir.File("small.u32"), big = dir.File("big.u32"), big_idx = dir.File("big.idx");
  ASSERT_EQ(Encode(kGpt2, {"--output", small, dir.Write("one.txt", "a few words")}).exit_code, 0);
  std::string many;
  for (int i = 0; i < 100; ++i) many += "a longer line of words, number " + std::to_string(i) + "\n";
  ASSERT_EQ(Encode(kGpt2, {"--output", big, "--index", big_idx, dir.Write("many.txt", many)}).exit_code, 0);
  CliResult wrong = RunCli({"inspect", small, "--index", big_idx, "--tokenizer", kGpt2});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_THAT(wrong.err, HasSubstr("does not fit"));
  // A binary token file under a name that does not say its format: decode reads it as text and
  // says how to read it as binary, its bytes shown escaped.
  const std::string bin = dir.Write("ids.bin", ReadAll(dir.File("ids.u32")));
  CliResult guessed = RunCli({"decode", "--tokenizer", kGpt2, bin});
  EXPECT_EQ(guessed.exit_code, 1);
  EXPECT_THAT(guessed.err, HasSubstr("--input-format u16, u32 or npy"));
  EXPECT_THAT(guessed.err, HasSubstr("\\x00"));
  EXPECT_EQ(std::count(guessed.err.begin(), guessed.err.end(), '\n'), 1) << guessed.err;
  // Ids of the wrong width: u32 read as u16 decodes (the ids are valid) but warns, and inspect
  // says so; u16 read as u32 is refused with the hint. Right widths say nothing of the kind.
  const std::string words = "hello world, a few more words to decode\nsecond line again\n";
  const std::string longer = dir.Write("longer.txt", words);
  const std::string ids16 = dir.File("longer.u16"), ids32 = dir.File("longer.u32");
  ASSERT_EQ(Encode(kGpt2, {"--output", ids16, longer}).exit_code, 0);
  ASSERT_EQ(Encode(kGpt2, {"--output", ids32, longer}).exit_code, 0);
  ASSERT_GE(ReadWords(ids16, 2).size(), 8u) << "too few ids to tell";
  ASSERT_EQ(ReadWords(ids16, 2).size() % 2, 0u) << "an odd count is refused as u32 before any id is read";
  CliResult narrow = RunCli({"decode", "--tokenizer", kGpt2, "--input-format", "u16", ids32});
  EXPECT_EQ(narrow.exit_code, 0) << narrow.err;
  EXPECT_THAT(narrow.err, HasSubstr("every second one is 0"));
  EXPECT_THAT(narrow.err, HasSubstr("--input-format u32"));
  CliResult narrow_cl = RunCli({"decode", "--tokenizer", kCl100k, "--input-format", "u16", ids32});
  EXPECT_THAT(narrow_cl.err, HasSubstr("every second one is at most 1"));
  CliResult inspect_narrow = RunCli({"inspect", "--input-format", "u16", ids32});
  EXPECT_EQ(inspect_narrow.exit_code, 0) << inspect_narrow.err;
  EXPECT_THAT(inspect_narrow.out, HasSubstr("is it a file of u32 ids?"));
  CliResult wide = RunCli({"decode", "--tokenizer", kGpt2, "--input-format", "u32", ids16});
  EXPECT_EQ(wide.exit_code, 1);
  EXPECT_THAT(wide.err, HasSubstr("is it a file of u16 ids? then give --input-format u16"));
  for (const std::string& right : {ids16, ids32}) {
    CliResult decoded = RunCli({"decode", "--tokenizer", kGpt2, right});
    EXPECT_EQ(decoded.exit_code, 0) << decoded.err;
    EXPECT_EQ(decoded.out, words);
    EXPECT_EQ(decoded.err, "");
    EXPECT_THAT(RunCli({"inspect", right}).out, ::testing::Not(HasSubstr("is it a file")));
  }
}

// ---- 16. decode reads a token file in parts ------------------------------------------------

// decode maps a binary token file and decodes it 65,536 ids at a time: the parts must give the
// bytes of decoding the whole sequence at once (here: the same ids on one line of a text token
// file), also for decoders with context at the sequence's ends and between tokens (WordPiece's
// space before a word, a metaspace model's first space, an end-of-word suffix's last word), and
// --lossy must not cut a character split between two parts.
TEST(EncodeCorpusCli, DecodingInPartsGivesTheWholeSequencesBytes) {
  TempDir dir;
  const std::string sample = ReadAll(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt").substr(0, 300000);
  const std::string input = dir.Write("sample.txt", sample);
  struct Model {
    std::string name;
    std::vector<std::string> train;
  };
  for (const Model& m : {Model{"wordpiece", {"--algorithm", "wordpiece", "--vocab-size", "4000"}},
                         Model{"metaspace", {"--unit", "char", "--preset", "metaspace", "--vocab-size", "4000"}},
                         Model{"suffix", {"--unit", "char", "--vocab-size", "7000", "--end-of-word-suffix", "</w>"}}}) {
    SCOPED_TRACE(m.name);
    const std::string tokenizer = dir.File(m.name + ".json");
    std::vector<std::string> train = {"train", "--output", tokenizer, "--quiet"};
    train.insert(train.end(), m.train.begin(), m.train.end());
    train.push_back(input);
    CliResult trained = RunCli(train);
    ASSERT_EQ(trained.exit_code, 0) << trained.err;
    // The sample, and a word repeated: each part then starts with a word, its space first.
    std::string words;
    for (int i = 0; i < 70000; ++i) words += " the";
    for (const std::string& corpus : {input, dir.Write("words.txt", words)}) {
      const std::string bin = dir.File(m.name + ".u32");
      CliResult r = Encode(tokenizer, {"--doc-mode", "file", "--output", bin, corpus});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const std::vector<uint32_t> ids = ReadWords(bin, 4);
      ASSERT_GT(ids.size(), 65536u) << "too few ids to cross a part's end";
      std::string line;
      for (uint32_t id : ids) line += std::to_string(id) + " ";
      const std::string text = dir.Write(m.name + ".txt", line + "\n");
      CliResult parts = RunCli({"decode", "--tokenizer", tokenizer, bin});
      CliResult whole = RunCli({"decode", "--tokenizer", tokenizer, text});
      ASSERT_EQ(parts.exit_code, 0) << parts.err;
      ASSERT_EQ(whole.exit_code, 0) << whole.err;
      EXPECT_TRUE(parts.out == whole.out) << corpus << ": " << parts.out.size() << " against "
                                          << whole.out.size() << " bytes";
    }
  }
  // --lossy: "中" (E4 B8 AD) across the first parts' boundary, then a lone 0xFF. gpt2's byte
  // tokens: 'a' 64, E4 160, B8 116, AD 255, FF 187 (checked by decoding them first).
  CliResult bytes = RunCli({"decode", "--tokenizer", kGpt2}, "64 160 116 255 187\n");
  ASSERT_EQ(bytes.exit_code, 0) << bytes.err;
  ASSERT_EQ(bytes.out, "a\xe4\xb8\xad\xff");
  std::vector<uint32_t> split(65535, 64);
  split.insert(split.end(), {160, 116, 255, 187, 64});
  std::string u16;
  for (uint32_t id : split) u16 += std::string{static_cast<char>(id & 0xFF), static_cast<char>(id >> 8)};
  const std::string lossy = dir.Write("split.u16", u16);
  CliResult out = RunCli({"decode", "--tokenizer", kGpt2, "--lossy", lossy});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_TRUE(out.out == std::string(65535, 'a') + "\xe4\xb8\xad" + "\xef\xbf\xbd" + "a")
      << out.out.substr(65530);
}

// ---- 17. Paths that are not plain files, and token files made to mislead (review, 2026-12-07) --

// decode given a pipe by its path reads it once: the format is told by the name, not by peeking
// at bytes that would then be gone (it decoded nothing and exited 0); a named pipe called
// *.u32 is read through the descriptor that opened it.
TEST(EncodeCorpusCli, DecodeReadsAPipeGivenByItsPathOnce) {
  TempDir dir;
  const std::string text = "a pipe's ids,\ndecoded once\n";
  const std::string in = dir.Write("in.txt", text);
  const std::string ids = dir.File("ids.u32");
  ASSERT_EQ(Encode(kGpt2, {"--output", ids, "--output-format", "u32", in}).exit_code, 0);
  CliResult lines = Encode(kGpt2, {in});
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  const std::string lines_file = dir.Write("ids.txt", lines.out);
  // (Under `timeout`: the pipe opened a second time waited for a writer that never came.)
  CliResult piped = RunProgram("/bin/sh", {"-c", std::string("cat '") + lines_file + "' | timeout 60 '" +
                                                     TOKENMILL_CLI_PATH + "' decode --tokenizer '" +
                                                     kGpt2 + "' /dev/stdin"});
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, text);
  const std::string fifo = dir.File("fifo.u32");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // (The writer holds none of RunProgram's pipes, and gives up after 60 s without a reader.)
  CliResult named = RunProgram(
      "/bin/sh", {"-c", std::string("(exec > /dev/null 2>&1 < /dev/null; timeout 60 sh -c \"cat '") + ids +
                            "' > '" + fifo + "'\") & timeout 60 '" + TOKENMILL_CLI_PATH +
                            "' decode --tokenizer '" + kGpt2 + "' '" + fifo + "'"});
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(named.out, text);
}

// An output named /dev/stdout (or /dev/fd/1) is written through the descriptor, never replaced
// by a renamed file (as root that replaced the /dev/stdout link itself, leaving the redirected
// file empty); an output that is a symbolic link gets its target replaced, the link kept.
TEST(EncodeCorpusCli, AnOutputThatIsALinkOrADescriptorIsWrittenThroughIt) {
  TempDir dir;
  const std::string in = dir.Write("in.txt", "through the link\nand the descriptor\n");
  const std::string want = dir.File("want.u32");
  ASSERT_EQ(Encode(kGpt2, {"--output", want, "--output-format", "u32", in}).exit_code, 0);
  struct stat dev_stdout;
  const bool stdout_is_a_link = lstat("/dev/stdout", &dev_stdout) == 0 && S_ISLNK(dev_stdout.st_mode);
  const std::string to_stdout = dir.File("to_stdout.u32");
  ASSERT_EQ(symlink("/dev/stdout", to_stdout.c_str()), 0);
  for (const std::string name : {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", to_stdout.c_str()}) {
    SCOPED_TRACE(name);
    if (name == "/dev/stdout" && !stdout_is_a_link) continue;  // (a machine without the link)
    const std::string redirected = dir.File("redirected.u32");
    CliResult r = RunProgram("/bin/sh", {"-c", std::string("'") + TOKENMILL_CLI_PATH + "' encode --tokenizer '" +
                                                   kGpt2 + "' --output-format u32 --output '" + name + "' '" +
                                                   in + "' > '" + redirected + "'"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(ReadAll(redirected) == ReadAll(want));
    if (stdout_is_a_link) {
      struct stat st;
      ASSERT_EQ(lstat("/dev/stdout", &st), 0);
      if (!S_ISLNK(st.st_mode)) {  // replaced: put the machine's link back for the other tests
        ADD_FAILURE() << "/dev/stdout was replaced by a file";
        unlink("/dev/stdout");
        ASSERT_EQ(symlink("/proc/self/fd/1", "/dev/stdout"), 0);
      }
    }
    struct stat st;
    ASSERT_EQ(lstat(to_stdout.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link to /dev/stdout was replaced";
  }
  const std::string target = dir.File("target.u32"), link = dir.File("link.u32");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);  // dangling: the target is made
  for (int run = 0; run < 2; ++run) {                     // then replaced
    ASSERT_EQ(Encode(kGpt2, {"--output", link, "--output-format", "u32", in}).exit_code, 0);
    struct stat st;
    ASSERT_EQ(lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << "run " << run << ": the link was replaced";
    EXPECT_TRUE(ReadAll(target) == ReadAll(want)) << "run " << run;
  }
  // Links in a loop: an error naming the output, nothing replaced.
  const std::string loop_a = dir.File("loop_a.u32"), loop_b = dir.File("loop_b.u32");
  ASSERT_EQ(symlink(loop_b.c_str(), loop_a.c_str()), 0);
  ASSERT_EQ(symlink(loop_a.c_str(), loop_b.c_str()), 0);
  CliResult loop = Encode(kGpt2, {"--output", loop_a, "--output-format", "u32", in});
  EXPECT_NE(loop.exit_code, 0);
  EXPECT_THAT(loop.err, HasSubstr(loop_a));
  struct stat st;
  ASSERT_EQ(lstat(loop_a.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// Temporaries a killed run left (OUT.tmp.tokenmill- and six letters or digits) are removed
// before a run writes OUT; a user's OUT.tmp.backup is not, nor a temporary a live run holds
// locked.
TEST(EncodeCorpusCli, OnlyStaleTemporariesOfTheOutputAreRemoved) {
  TempDir dir;
  const std::string in = dir.Write("in.txt", "temporaries\n");
  const std::string out = dir.File("out.u32"), idx = dir.File("out.idx");
  const std::string stale = dir.Write("out.u32.tmp.tokenmill-AbC123", "left by a killed run");
  const std::string stale_index = dir.Write("out.idx.tmp.tokenmill-Zz9yY8", "left by a killed run");
  const std::string backup = dir.Write("out.u32.tmp.backup", "the user's");
  const std::string live = dir.Write("out.u32.tmp.tokenmill-XyZ789", "another run's, being written");
  const int fd = open(live.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  CliResult r = Encode(kGpt2, {"--output", out, "--output-format", "u32", "--index", idx, in});
  close(fd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_FALSE(std::filesystem::exists(stale_index));
  EXPECT_TRUE(std::filesystem::exists(backup));
  EXPECT_TRUE(std::filesystem::exists(live));
  // The index goes to a file of its own: `--index -` would follow the ids on stdout.
  CliResult dash = Encode(kGpt2, {"--output", out, "--output-format", "u32", "--index", "-", in});
  EXPECT_EQ(dash.exit_code, 2) << dash.err;
  EXPECT_THAT(dash.err, HasSubstr("index"));
  EXPECT_THAT(dash.err, HasSubstr("not stdout"));
}

// Token files whose headers lie: NumPy refuses these .npy files (checked here), and so does
// decode, instead of reading a wrapped size as 0 or 1 id; a Megatron index whose counts wrap
// its size, or of a dtype no token file has, is refused, not read past its end.
TEST(EncodeCorpusCli, TokenFilesWhoseHeadersLieAreRefused) {
  TempDir dir;
  CliResult made = RunProgram(kPython, {"-c", R"(
import struct, sys, numpy as np
folder = sys.argv[1]
def custom(name, d, data):
    d = d.encode('latin1')
    h = d + b' ' * ((64 - (10 + len(d) + 1) % 64) % 64) + b'\n'
    open(folder + '/' + name, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + data)
    try:
        np.load(folder + '/' + name)
    except Exception:
        return
    raise SystemExit(name + ': numpy loaded it')
custom('not_tuple.npy', "{'descr': '<u4', 'fortran_order': False, 'shape': (2), }", b'\0' * 8)
custom('after.npy', "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), } junk", b'\0' * 8)
custom('wrap16.npy', "{'descr': '<u2', 'fortran_order': False, 'shape': (9223372036854775808,), }", b'')
custom('wrap32.npy', "{'descr': '<u4', 'fortran_order': False, 'shape': (4611686018427387905,), }", b'\0' * 4)
)", dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err << made.out;
  for (const char* name : {"not_tuple.npy", "after.npy", "wrap16.npy", "wrap32.npy"}) {
    CliResult r = RunCli({"decode", "--tokenizer", kGpt2, dir.File(name)});
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr(dir.File(name))) << name;
  }
  // Megatron indexes: 34 bytes of header whose counts wrap the size they imply to 34; a dtype
  // code no token file has. inspect reads X.idx beside X.u16 unasked.
  auto index = [](uint8_t dtype, uint64_t sequences, uint64_t documents) {
    std::string bytes("MMIDIDX\0\0", 9);
    auto le = [&](uint64_t v, int n) {
      for (int i = 0; i < n; ++i) bytes += static_cast<char>(v >> (8 * i));
    };
    le(1, 8);
    bytes += static_cast<char>(dtype);
    le(sequences, 8);
    le(documents, 8);
    return bytes;
  };
  const std::string u16 = dir.Write("ids.u16", std::string("\x40\x00\x41\x00", 4));
  struct Case {
    std::string bytes, error;
  };
  for (const Case& c : {Case{index(8, 0, uint64_t{1} << 61), "0 sequences and 2305843009213693952 document"},
                        Case{index(8, uint64_t{1} << 62, 0), "4611686018427387904 sequences"},
                        Case{index(3, 0, 0), "dtype code 3"}}) {
    SCOPED_TRACE(c.error);
    dir.Write("ids.idx", c.bytes);
    CliResult r = RunCli({"inspect", u16});
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.err, HasSubstr(c.error));
  }
  std::filesystem::remove(dir.File("ids.idx"));
  // The index beside a file without an extension, in a folder with a dot in its name.
  std::filesystem::create_directory(dir.File("v1.0"));
  const std::string plain = dir.File("v1.0/ids");
  ASSERT_EQ(Encode(kGpt2, {"--output", plain, "--output-format", "u32", "--index", plain + ".idx",
                           dir.Write("two.txt", "first\nsecond\n")})
                .exit_code,
            0);
  CliResult beside = RunCli({"inspect", "--input-format", "u32", plain});
  EXPECT_EQ(beside.exit_code, 0) << beside.err;
  EXPECT_THAT(beside.out, HasSubstr("documents: 2"));
  // The largest u32 id: its bound is 2^32, not 0.
  CliResult top = RunCli({"inspect", dir.Write("top.u32", std::string(4, '\xff'))});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("all below 4294967296"));
}

// Runs the CLI with `args` under bash's `ulimit LIMIT`, killed after 60 s (exit 137), so that
// a hang fails the test instead of stalling it.
CliResult RunCliUnderUlimit(const std::string& limit, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"-s", "KILL", "60", "/bin/bash", "-c",
                                   "ulimit " + limit + " && exec \"$@\"", "bash", TOKENMILL_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram("/usr/bin/timeout", argv);
}

// A line of gigabytes that memory cannot hold (here: the process limited to 1 GiB of address
// space), or one whose ids it cannot hold, is an error naming the input, with no output left,
// at any thread count: not a hang (two threads reading one stream: the second waited forever
// for a turn the first, out of memory, never passed on) and not an abort leaving temporaries.
TEST(EncodeCorpusCli, ALineMemoryCannotHoldIsAnErrorNotAHang) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit under an address-space limit";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer)
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit under an address-space limit";
#endif
#endif
  TempDir dir;
  // 3 GiB of 'a' and no newline: 48 zstd frames of 64 MiB each (frames concatenate).
  const std::string frame = ZstdCompress(std::string(size_t{64} << 20, 'a'), 1);
  std::string zst;
  for (int i = 0; i < 48; ++i) zst += frame;
  const std::string big = dir.Write("big.txt.zst", zst);
  const std::string small = dir.Write("small.txt", "a line before it\n");
  // A plain file of 3 GiB, sparse (NUL bytes, no newline), read in shards.
  const std::string sparse = dir.File("sparse.txt");
  {
    std::ofstream(sparse, std::ios::binary).put('x');
    std::filesystem::resize_file(sparse, uint64_t{3} << 30);
  }
  // A line that can be read but not encoded: 200 MiB of " ab", 70 million ids.
  std::string ab;
  ab.reserve(size_t{200} << 20);
  while (ab.size() + 3 <= (size_t{200} << 20)) ab += " ab";
  const std::string encoded_oom = dir.Write("ab.txt.zst", ZstdCompress(ab, 1));
  std::string().swap(ab);
  for (const std::string& input : {big, sparse, encoded_oom}) {
    for (const char* threads : {"1", "2"}) {
      SCOPED_TRACE(input + ", " + threads + " threads");
      const std::string out = dir.File("out.u32");
      CliResult r = RunCliUnderUlimit("-v 1048576",
                                      {"encode", "--tokenizer", kGpt2, "--output", out, "--output-format",
                                       "u32", "--threads", threads, "--progress", "none", small, input});
      EXPECT_EQ(r.exit_code, 1) << r.err;
      if (input == encoded_oom) {
        EXPECT_THAT(r.err, HasSubstr("out of memory encoding '" + input + "' from byte 0"));
      } else {
        EXPECT_THAT(r.err, HasSubstr("out of memory reading '" + input + "' from byte 0 ("));
        EXPECT_THAT(r.err, HasSubstr("with no place where a document ends and it could be cut"));
      }
      EXPECT_FALSE(std::filesystem::exists(out));
      EXPECT_THAT(FilesStartingWith(dir.path(), "out.u32"), ::testing::IsEmpty());
    }
  }
}

// Many compressed inputs read ahead on many threads hold files open: about 6 per thread. A soft
// limit of 48 open files is raised to the hard limit; a hard limit of 48 turns reading ahead
// off. Either way the run succeeds and writes what one thread writes (before: "cannot create a
// scratch file ... Too many open files" in most runs).
TEST(EncodeCorpusCli, FewOpenFilesAllowedStillEncodeManyCompressedInputs) {
  TempDir dir;
  std::vector<std::string> inputs;
  for (int f = 0; f < 100; ++f) {
    std::string text;
    for (int i = 0; i < 2000; ++i) {
      text += "file " + std::to_string(f) + " line " + std::to_string(i) + " of a corpus in many files\n";
    }
    char name[32];
    std::snprintf(name, sizeof(name), "f%03d.txt.zst", f);
    inputs.push_back(dir.Write(name, ZstdCompress(text, 1)));
  }
  std::vector<std::string> args = {"encode", "--tokenizer", kGpt2, "--output-format", "u32",
                                   "--progress", "none", "--output"};
  std::vector<std::string> one = args;
  one.push_back(dir.File("one.u32"));
  one.insert(one.end(), {"--threads", "1"});
  one.insert(one.end(), inputs.begin(), inputs.end());
  CliResult r1 = RunCli(one);
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  const std::string expected = ReadAll(dir.File("one.u32"));
  ASSERT_FALSE(expected.empty());
  for (const char* limit : {"-Sn 48", "-n 48"}) {
    SCOPED_TRACE(limit);
    std::vector<std::string> many = args;
    many.push_back(dir.File("many.u32"));
    many.insert(many.end(), {"--threads", "64"});
    many.insert(many.end(), inputs.begin(), inputs.end());
    CliResult r = RunCliUnderUlimit(limit, many);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(ReadAll(dir.File("many.u32")) == expected);
    std::filesystem::remove(dir.File("many.u32"));
  }
}

}  // namespace
}  // namespace tokenmill
