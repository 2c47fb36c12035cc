// The README's "Bad input" table, row by row, through the real `tokenmill` binary: for each
// kind of bad input the exact exit code (2 bad usage, 1 the work failed), exactly one stderr
// line `tokenmill <command>: error: ...` naming what the row says (the file, the line, the
// field, the compressed offset and the bytes decompressed), and nothing written: no file
// appears at the output path (nor a checkpoint or temporary file next to it), and an earlier
// file there is left as it was. The lossless kinds (NUL bytes, invalid UTF-8, whitespace)
// train, encode and decode back, and train reports them in its summary as count does.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_expect.h"
#include "reference/cli_runner.h"
#include "reference/compress.h"

namespace tokenmill {
namespace {

using testing::GzipCompress;
using testing::ZstdCompress;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::CliResult;
using testing::ExpectOneErrorLine;
using testing::RunCli;
using testing::ReadAll;
using testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::set<std::string> Listing(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

// Runs `args` twice, each "@OUT" in them replaced by a path in a folder of its own: once with
// nothing there (nothing may appear in that folder: no output, checkpoint or temporary file),
// once with an earlier file at that path (it must be left as it was). Both runs must fail with
// the one-line error (ExpectOneErrorLine).
void ExpectFailsWritingNothing(const TempDir& dir, const std::vector<std::string>& args,
                               const std::string& command, int code,
                               const std::vector<std::string>& names, const std::string& stdin_text = "") {
  static int runs = 0;
  const std::string folder = dir.File("out" + std::to_string(++runs));
  std::filesystem::create_directory(folder);
  const std::string out = folder + "/result.out";
  std::vector<std::string> full = args;
  for (std::string& a : full) {
    if (a == "@OUT") a = out;
  }
  {
    SCOPED_TRACE("no earlier output");
    ExpectOneErrorLine(RunCli(full, stdin_text), command, code, names);
    EXPECT_EQ(Listing(folder), std::set<std::string>{}) << "a failed run wrote something";
  }
  {
    SCOPED_TRACE("an earlier output at the path");
    const std::string earlier = "an earlier output, to be left alone\n";
    std::ofstream(out, std::ios::binary) << earlier;
    ExpectOneErrorLine(RunCli(full, stdin_text), command, code, names);
    EXPECT_EQ(Listing(folder), std::set<std::string>{"result.out"});
    EXPECT_EQ(ReadAll(out), earlier) << "a failed run changed the earlier output";
  }
}

std::string Corpus() {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox " + std::to_string(i % 17) + " jumps\n";
  return text;
}

std::string TrainTokenizer(const TempDir& dir, const std::string& name = "tok.json") {
  std::string corpus = dir.Write("train_corpus.txt", Corpus());
  std::string tokenizer = dir.File(name);
  CliResult r = RunCli({"train", "--vocab-size", "290", "--quiet", "--checkpoint=none",
                        "--output", tokenizer, corpus});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return tokenizer;
}



// The offset just past the JSON array or object that starts at `open` (npos if it does not end).
size_t EndOfJsonValue(const std::string& json, size_t open) {
  int depth = 0;
  for (size_t i = open; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      for (++i; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

// ---- missing inputs ----------------------------------------------------------------------------

TEST(BadInputCli, MissingInputIsNamedByEveryCommand) {
  TempDir dir;
  const std::string tokenizer = TrainTokenizer(dir);
  const std::string missing = dir.File("missing.txt");
  ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", "--output", "@OUT", missing},
                            "train", 1, {missing});
  ExpectFailsWritingNothing(dir, {"count", "--output", "@OUT", missing}, "count", 1, {missing});
  ExpectOneErrorLine(RunCli({"encode", "--tokenizer", tokenizer, missing}), "encode", 1, {missing});
  ExpectOneErrorLine(RunCli({"encode", "--whole", "--tokenizer", tokenizer, missing}), "encode", 1,
                     {missing});
  ExpectOneErrorLine(RunCli({"decode", "--tokenizer", tokenizer, missing}), "decode", 1, {missing});
  ExpectOneErrorLine(RunCli({"pretokenize", missing}), "pretokenize", 1, {missing});
  ExpectOneErrorLine(RunCli({"explain", "--tokenizer", tokenizer, "--file", missing}), "explain", 1,
                     {missing});
  ExpectOneErrorLine(RunCli({"inspect", missing}), "inspect", 1, {missing});
  ExpectFailsWritingNothing(dir, {"convert", dir.File("missing.json"), "@OUT.tiktoken"}, "convert",
                            1, {dir.File("missing.json")});
  ExpectFailsWritingNothing(dir, {"add-special-tokens", dir.File("missing.json"), "--special-token",
                                 "<|x|>", "--force", "--output", "@OUT"},
                            "add-special-tokens", 1, {dir.File("missing.json")});
  // A missing tokenizer.
  for (const char* command : {"encode", "decode", "explain"}) {
    ExpectOneErrorLine(RunCli({command, "--tokenizer", dir.File("missing.json"), "x"}, "1\n"),
                       command, 1, {dir.File("missing.json")});
  }
  // A folder without files, and a glob that matches nothing.
  const std::string empty_folder = dir.File("no_files");
  std::filesystem::create_directory(empty_folder);
  const std::string glob = dir.File("nothing_*.txt");
  for (const std::string& input : {empty_folder, glob}) {
    SCOPED_TRACE(input);
    ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", "--output", "@OUT", input},
                              "train", 1, {input});
    ExpectFailsWritingNothing(dir, {"count", "--output", "@OUT", input}, "count", 1, {input});
  }
}

// ---- unreadable files ----------------------------------------------------------------------------

// Root reads every file, so as root (CI runs the tests as root) the commands run as 'nobody'
// through setpriv, which makes the permission check real; the test never skips as root unless
// setpriv is missing.
TEST(BadInputCli, UnreadableFileIsNamed) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  const std::string tokenizer = TrainTokenizer(dir);
  ASSERT_EQ(::chmod(tokenizer.c_str(), 0644), 0);
  const std::string secret = dir.Write("secret.txt", "hello world\n");
  ASSERT_EQ(::chmod(secret.c_str(), 0), 0);
  const bool root = ::geteuid() == 0;
  if (root && !Exists("/usr/bin/setpriv")) {
    GTEST_SKIP() << "running as root, and /usr/bin/setpriv (util-linux), which the test needs to "
                    "drop to an unprivileged user, is missing: root could read the file";
  }
  auto run = [&](std::vector<std::string> args) {
    if (!root) return RunCli(args);
    std::vector<std::string> full = {"--reuid=65534", "--regid=65534", "--clear-groups",
                                     TOKENMILL_CLI_PATH};
    full.insert(full.end(), args.begin(), args.end());
    return testing::RunProgram("/usr/bin/setpriv", full);
  };
  const std::string folder = dir.File("outputs");
  std::filesystem::create_directory(folder);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  ExpectOneErrorLine(run({"train", "--vocab-size", "300", "--output", folder + "/t.json", secret}),
                     "train", 1, {"cannot read '" + secret + "'"});
  ExpectOneErrorLine(run({"count", "--output", folder + "/c.tmc", secret}), "count", 1,
                     {"cannot read '" + secret + "'"});
  ExpectOneErrorLine(run({"encode", "--tokenizer", tokenizer, secret}), "encode", 1, {secret});
  ExpectOneErrorLine(run({"pretokenize", secret}), "pretokenize", 1, {secret});
  ExpectOneErrorLine(run({"inspect", secret}), "inspect", 1, {secret});
  ExpectOneErrorLine(run({"encode", "--tokenizer", secret}), "encode", 1, {secret});
  EXPECT_EQ(Listing(folder), std::set<std::string>{});
}

// ---- empty corpora ---------------------------------------------------------------------------------

// Training and counting need text: an empty corpus (or one of only special tokens) is an error.
// encode, decode and pretokenize turn an empty input into an empty output, as `cat` would.
TEST(BadInputCli, EmptyCorpusFailsTrainAndCountAndEncodesToNothing) {
  TempDir dir;
  const std::string empty = dir.Write("empty.txt", "");
  // No newline: a newline would be a document of its own.
  const std::string specials = dir.Write("specials.txt", "<s><s><s>");
  for (const std::string& input : {empty, specials}) {
    SCOPED_TRACE(input);
    ExpectFailsWritingNothing(
        dir, {"train", "--vocab-size", "300", "--special-token", "<s>", "--output", "@OUT", input},
        "train", 1, {"the corpus is empty"});
    ExpectFailsWritingNothing(dir, {"count", "--special-token", "<s>", "--output", "@OUT", input},
                              "count", 1, {"the corpus is empty"});
  }
  ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", "--output", "@OUT", "-"}, "train",
                            1, {"the corpus is empty"});
  // Text without a pair to merge (every word one byte) counts, but cannot train: neither the
  // tokenizer nor the checkpoint of the counts is left.
  ExpectFailsWritingNothing(
      dir, {"train", "--vocab-size", "300", "--output", "@OUT", dir.Write("bytes.txt", "a\nb\n\n")},
      "train", 1, {"no pair to merge"});
  const std::string tokenizer = TrainTokenizer(dir);
  const std::vector<std::vector<std::string>> kCommands = {
      {"encode", "--tokenizer", tokenizer},
      {"encode", "--whole", "--tokenizer", tokenizer},
      {"decode", "--tokenizer", tokenizer},
      {"pretokenize"},
  };
  for (const std::vector<std::string>& command : kCommands) {
    const bool whole = std::find(command.begin(), command.end(), "--whole") != command.end();
    SCOPED_TRACE(command[0] + (whole ? " --whole" : ""));
    for (bool from_file : {true, false}) {
      std::vector<std::string> args = command;
      if (from_file) args.push_back(empty);
      CliResult r = RunCli(args);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.err, "");
      // --whole encodes the whole (empty) input as one text: one line, no ids.
      EXPECT_EQ(r.out, whole ? "\n" : "");
    }
  }
}

// ---- whitespace ------------------------------------------------------------------------------------

TEST(BadInputCli, WhitespaceOnlyCorpusTrainsEncodesAndDecodesBack) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 300; ++i) text += std::string(i % 9, ' ') + (i % 3 ? "\t\n" : "\r\n") + "\n";
  const std::string corpus = dir.Write("spaces.txt", text);
  const std::string tokenizer = dir.File("ws.json");
  CliResult train = RunCli({"train", "--vocab-size", "270", "--output", tokenizer, corpus});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.err, HasSubstr("corpus: 600 documents, " + std::to_string(text.size()) + " bytes"));
  EXPECT_THAT(train.err, Not(HasSubstr("error")));
  // Whitespace is text: it was merged (more tokens than the 256 bytes).
  CliResult inspect = RunCli({"inspect", tokenizer});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, Not(HasSubstr("vocabulary:    256 tokens")));
  for (bool whole : {false, true}) {
    std::vector<std::string> args = {"encode", "--tokenizer", tokenizer};
    if (whole) args.push_back("--whole");
    args.push_back(corpus);
    CliResult encode = RunCli(args);
    ASSERT_EQ(encode.exit_code, 0) << encode.err;
    CliResult decode = RunCli({"decode", "--tokenizer", tokenizer}, encode.out);
    ASSERT_EQ(decode.exit_code, 0) << decode.err;
    EXPECT_TRUE(decode.out == text) << "whitespace did not decode back, whole=" << whole;
  }
}

// ---- invalid UTF-8 and NUL bytes ---------------------------------------------------------------------

// Each line holds one invalid byte (0xFF, invalid wherever it stands) and one NUL byte, so the
// totals are known without the code under test: 120 of each.
TEST(BadInputCli, InvalidUtf8AndNulBytesAreTrainedOnAndReportedByTrainAndCount) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 120; ++i) {
    text += "word" + std::to_string(i % 7) + " \xff" + " caf\xc3\xa9 ";
    text += '\0';
    text += " more text\n";
  }
  const std::string corpus = dir.Write("binary.txt", text);
  const std::string note =
      "note: the text holds 120 invalid UTF-8 sequences and 120 NUL bytes; they are counted as "
      "bytes like any other\n";
  const std::string tokenizer = dir.File("bin.json");
  CliResult train = RunCli({"train", "--vocab-size", "300", "--output", tokenizer, corpus});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.err, HasSubstr(note));
  CliResult count = RunCli({"count", "--output", dir.File("bin.tmc"), corpus});
  ASSERT_EQ(count.exit_code, 0) << count.err;
  EXPECT_THAT(count.err, HasSubstr(note));
  // Training from the counts file carries the totals over.
  CliResult from_counts = RunCli({"train", "--vocab-size", "300", "--output", dir.File("c.json"),
                                  "--counts", dir.File("bin.tmc")});
  ASSERT_EQ(from_counts.exit_code, 0) << from_counts.err;
  EXPECT_THAT(from_counts.err, HasSubstr(note));
  EXPECT_EQ(ReadAll(dir.File("c.json")), ReadAll(tokenizer));
  // A clean corpus has no note.
  CliResult clean = RunCli({"train", "--vocab-size", "300", "--output", dir.File("clean.json"),
                            dir.Write("clean.txt", Corpus())});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_THAT(clean.err, Not(HasSubstr("note: the text holds")));
  // Lossless: the corpus encodes and decodes back byte for byte.
  CliResult encode = RunCli({"encode", "--tokenizer", tokenizer, corpus});
  ASSERT_EQ(encode.exit_code, 0) << encode.err;
  CliResult decode = RunCli({"decode", "--tokenizer", tokenizer}, encode.out);
  ASSERT_EQ(decode.exit_code, 0) << decode.err;
  EXPECT_TRUE(decode.out == text);
}

// ---- compressed inputs --------------------------------------------------------------------------------

// The inputs are built so that the figures the message must give are known without a decoder:
// complete frames (members) of known text, then a frame cut off or damaged. The bytes
// decompressed are exactly those of the complete frames; the compressed offset of a cut-off
// file is its size, that of damage lies inside the damaged frame's header.
TEST(BadInputCli, TruncatedOrCorruptCompressionNamesFileOffsetAndBytesDecompressed) {
  TempDir dir;
  const std::string a = Corpus(), b = "second frame\nof text\n", c = Corpus() + "third\n";
  struct Case {
    std::string name, bytes;
    std::string what;      // words of the message
    uint64_t offset_min, offset_max;
    uint64_t decompressed;
  };
  std::vector<Case> cases;
  {
    const std::string z = ZstdCompress(a) + ZstdCompress(b);
    const std::string cut = z + ZstdCompress(c).substr(0, 9);  // header and part of a block
    cases.push_back({"cut.txt.zst", cut, "is truncated", cut.size(), cut.size(), a.size() + b.size()});
    // A frame header whose reserved bit is set: corrupt at once.
    const std::string bad = z + std::string("\x28\xb5\x2f\xfd\x08\x00\x00\x00", 8);
    cases.push_back({"corrupt.txt.zst", bad, "holds corrupt zstd data near compressed byte", z.size(),
                     z.size() + 8, a.size() + b.size()});
  }
  {
    const std::string g = GzipCompress(a) + GzipCompress(b);
    const std::string cut = g + GzipCompress(c).substr(0, 20);
    cases.push_back({"cut.txt.gz", cut, "is truncated", cut.size(), cut.size(), a.size() + b.size()});
    // A member whose header names compression method 9 (only 8, deflate, exists).
    const std::string bad = g + std::string("\x1f\x8b\x09\x00\x00\x00\x00\x00\x00\x03", 10) + "xyz";
    cases.push_back({"corrupt.txt.gz", bad, "holds corrupt gzip data near compressed byte",
                     g.size(), g.size() + 10, a.size() + b.size()});
    // Zero padding after a member is passed over (as Python's gzip module does), but not what
    // follows it.
    const std::string padded = g + std::string(100, '\0') + bad.substr(g.size());
    cases.push_back({"padded_corrupt.txt.gz", padded, "holds corrupt gzip data near compressed byte",
                     g.size() + 100, g.size() + 110, a.size() + b.size()});
  }
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string path = dir.Write(k.name, k.bytes);
    for (const std::string command : {"train", "count"}) {
      std::vector<std::string> args = {command, "--output", "@OUT", path};
      if (command == "train") args.insert(args.begin() + 1, {"--vocab-size", "300"});
      ExpectFailsWritingNothing(dir, args, command, 1,
                                {"'" + path + "' " + k.what,
                                 " (" + std::to_string(k.decompressed) + " bytes decompressed)"});
      for (std::string& arg : args) {
        if (arg == "@OUT") arg = dir.File("offset.out");
      }
      CliResult r = RunCli(args);
      // The offset: "... compressed byte N (".
      const std::string marker = "compressed byte ";
      const size_t at = r.err.find(marker);
      ASSERT_NE(at, std::string::npos) << r.err;
      const uint64_t offset = std::stoull(r.err.substr(at + marker.size()));
      EXPECT_GE(offset, k.offset_min) << r.err;
      EXPECT_LE(offset, k.offset_max) << r.err;
    }
  }
  // An extension that promises compression the bytes lack.
  for (const std::string name : {"plain.txt.zst", "plain.txt.gz"}) {
    const std::string path = dir.Write(name, "plain text, not compressed\n");
    ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", "--output", "@OUT", path},
                              "train", 1, {"'" + path + "' is named like a", "does not start with the", "magic bytes"});
    ExpectFailsWritingNothing(dir, {"count", "--output", "@OUT", path}, "count", 1,
                              {"'" + path + "' is named like a", "does not start with the", "magic bytes"});
  }
}

// ---- JSON lines -------------------------------------------------------------------------------------

TEST(BadInputCli, MalformedJsonLineNamesFileAndLineOrIsSkippedAndReported) {
  TempDir dir;
  std::string good;
  for (int i = 0; i < 50; ++i) good += "{\"text\": \"the quick brown fox " + std::to_string(i) + "\"}\n";
  struct Case {
    std::string name, line, what;
  };
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  const std::vector<Case> cases = {
      {"malformed.jsonl", "{\"text\": \"unterminated", ""},
      {"no_field.jsonl", "{\"body\": \"b\"}", "no field \"text\""},
      {"not_string.jsonl", "{\"text\": 17}", "\"text\""},
      {"deep.jsonl", "{\"text\": \"x\", \"n\": " + deep + "}", ""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    // The bad record is on line 3.
    const std::string path = dir.Write(k.name, good.substr(0, good.find('\n') * 2 + 2) + k.line +
                                                   "\n" + good);
    const std::string where = path + ":3: ";
    std::vector<std::string> names = {where, "--skip-bad-records"};
    if (!k.what.empty()) names.push_back(k.what);
    ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", "--output", "@OUT", path},
                              "train", 1, names);
    ExpectFailsWritingNothing(dir, {"count", "--output", "@OUT", path}, "count", 1, names);
    // Skipped: counted, reported with the first one, and the rest trained on.
    const std::string skipped = "skipped 1 bad records; the first: " + where;
    CliResult train = RunCli({"train", "--vocab-size", "300", "--skip-bad-records", "--output",
                              dir.File(k.name + ".json"), path});
    EXPECT_EQ(train.exit_code, 0) << train.err;
    EXPECT_THAT(train.err, HasSubstr(skipped));
    EXPECT_THAT(train.err, HasSubstr("corpus: 52 documents"));
    CliResult count = RunCli({"count", "--skip-bad-records", "--output", dir.File(k.name + ".tmc"), path});
    EXPECT_EQ(count.exit_code, 0) << count.err;
    EXPECT_THAT(count.err, HasSubstr(skipped));
  }
}

// ---- tokenizer files ----------------------------------------------------------------------------------

// Every command that reads a tokenizer names the file, and the field where one is at fault.
TEST(BadInputCli, BadTokenizerJsonNamesTheFileAndFieldInEveryCommand) {
  TempDir dir;
  const std::string json = ReadAll(TrainTokenizer(dir));
  // "merges": 7 in place of the list.
  const size_t merges_at = json.find("\"merges\": [");
  ASSERT_NE(merges_at, std::string::npos);
  const size_t merges_end = EndOfJsonValue(json, json.find('[', merges_at));
  ASSERT_NE(merges_end, std::string::npos);
  const std::string merges_not_list =
      json.substr(0, merges_at) + "\"merges\": 7" + json.substr(merges_end);
  std::string wrong_type = json;
  const size_t bpe_at = json.find("\"BPE\"");
  ASSERT_NE(bpe_at, std::string::npos);
  wrong_type.replace(bpe_at, 5, "\"WordPiece\"");
  struct Case {
    std::string name, contents, field;
  };
  const std::vector<Case> cases = {
      {"truncated.json", json.substr(0, json.size() / 2), ""},
      {"merges_not_list.json", merges_not_list, "merges"},
      {"wrong_type.json", wrong_type, "WordPiece"},
      {"deep.json", "{\"model\": " + std::string(100000, '[') + "}", ""},
      {"nul.json", std::string("{\"model\"\0: 1}", 13), ""},
      {"huge_id.json", R"({"model": {"type": "BPE", "vocab": {"a": 4294967295}, "merges": []}})", ""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string path = dir.Write(k.name, k.contents);
    std::vector<std::string> names = {path};
    if (!k.field.empty()) names.push_back(k.field);
    ExpectOneErrorLine(RunCli({"encode", "--tokenizer", path}, "hello\n"), "encode", 1, names);
    ExpectOneErrorLine(RunCli({"decode", "--tokenizer", path}, "1 2\n"), "decode", 1, names);
    ExpectOneErrorLine(RunCli({"explain", "--tokenizer", path, "hello"}), "explain", 1, names);
    ExpectOneErrorLine(RunCli({"inspect", path}), "inspect", 1, names);
    ExpectFailsWritingNothing(dir, {"convert", path, "@OUT.tiktoken"}, "convert", 1, names);
  }
}

TEST(BadInputCli, BadTiktokenFileNamesTheFileAndLineInEveryCommand) {
  TempDir dir;
  const std::string sidecar =
      R"({"name": "t", "pattern": "\\s+|\\S+", "special_tokens": {}, "n_ranks": null, "explicit_n_vocab": null})";
  std::string ranks;
  // Every byte, base64-encoded, with its rank: a valid file to spoil one line of.
  static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int b = 0; b < 256; ++b) {
    ranks += std::string{kB64[b >> 2], kB64[(b & 3) << 4], '=', '='} + " " + std::to_string(b) + "\n";
  }
  auto with_line = [&](int line, const std::string& replacement) {
    std::string out;
    size_t at = 0;
    for (int i = 1; i < line; ++i) at = ranks.find('\n', at) + 1;
    return ranks.substr(0, at) + replacement + ranks.substr(ranks.find('\n', at));
  };
  // The file is good as it is.
  dir.Write("good.json", sidecar);
  const std::string good = dir.Write("good.tiktoken", ranks);
  ASSERT_EQ(RunCli({"encode", "--tokenizer", good}, "a b\n").exit_code, 0);
  struct Case {
    std::string name, ranks, where;
  };
  const std::vector<Case> cases = {
      {"bad_base64", with_line(5, "@@@@ 4"), ":5:"},
      {"bad_rank", with_line(7, "Bg== six"), ":7:"},
      {"missing_byte", with_line(66, ""), ""},  // byte 65 ('A') has no token
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    dir.Write(k.name + ".json", sidecar);
    const std::string path = dir.Write(k.name + ".tiktoken", k.ranks);
    const std::vector<std::string> names = {path + k.where};
    ExpectOneErrorLine(RunCli({"encode", "--tokenizer", path}, "a\n"), "encode", 1, names);
    ExpectOneErrorLine(RunCli({"decode", "--tokenizer", path}, "1\n"), "decode", 1, names);
    ExpectOneErrorLine(RunCli({"explain", "--tokenizer", path, "a"}), "explain", 1, names);
    ExpectOneErrorLine(RunCli({"inspect", path}), "inspect", 1, names);
    ExpectFailsWritingNothing(dir, {"convert", path, "@OUT.json"}, "convert", 1, names);
  }
  // The sidecar: missing, or a field of the wrong type (named).
  const std::string lonely = dir.Write("lonely.tiktoken", ranks);
  ExpectOneErrorLine(RunCli({"encode", "--tokenizer", lonely}, "a\n"), "encode", 1,
                     {dir.File("lonely.json")});
  dir.Write("bad_sidecar.json",
            R"({"name": "t", "pattern": 5, "special_tokens": {}, "n_ranks": null, "explicit_n_vocab": null})");
  const std::string bad_sidecar = dir.Write("bad_sidecar.tiktoken", ranks);
  for (const char* command : {"encode", "inspect"}) {
    std::vector<std::string> args = {command};
    if (std::string(command) == "encode") args.push_back("--tokenizer");
    args.push_back(bad_sidecar);
    ExpectOneErrorLine(RunCli(args, "a\n"), command, 1, {dir.File("bad_sidecar.json"), "pattern"});
  }
}

// ---- word-count files -----------------------------------------------------------------------------------

TEST(BadInputCli, BadCountsFileIsNamedByTrainAndInspect) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.txt", Corpus());
  ASSERT_EQ(RunCli({"count", "--quiet", "--output", dir.File("good.tmc"), corpus}).exit_code, 0);
  const std::string good = ReadAll(dir.File("good.tmc"));
  ASSERT_GT(good.size(), 40u);
  std::string newer = good;
  newer[8] = 99;  // the format version (little-endian fixed32 after the 8-byte magic)
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;
  struct Case {
    std::string name, contents, what;
  };
  const std::vector<Case> cases = {
      {"wrong_magic.tmc", "TMCOUNTX" + good.substr(8), "not a tokenmill word-count file"},
      {"newer.tmc", newer, "format version 99"},
      {"truncated.tmc", good.substr(0, good.size() - 7), "not a valid word-count file"},
      {"flipped.tmc", flipped, "not a valid word-count file"},
      {"magic_only.tmc", good.substr(0, 8), "not a valid word-count file"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string path = dir.Write(k.name, k.contents);
    ExpectFailsWritingNothing(
        dir, {"train", "--vocab-size", "300", "--output", "@OUT", "--counts", path}, "train", 1,
        {"'" + path + "'", k.what});
    ExpectOneErrorLine(RunCli({"inspect", path}), "inspect", 1, {"'" + path + "'", k.what});
  }
}

// ---- checkpoints ------------------------------------------------------------------------------------------

TEST(BadInputCli, BadCheckpointIsNamedByResumeAndInspect) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.txt", Corpus());
  ASSERT_EQ(RunCli({"train", "--vocab-size", "280", "--quiet", "--output", dir.File("t.json"), corpus})
                .exit_code,
            0);
  const std::string good = ReadAll(dir.File("t.json.ckpt"));
  const std::string table = ReadAll(dir.File("t.json.ckpt.words"));
  ASSERT_FALSE(good.empty());
  ASSERT_FALSE(table.empty());
  // Another run's checkpoint: its table is not t.json.ckpt's.
  ASSERT_EQ(RunCli({"train", "--vocab-size", "280", "--quiet", "--output", dir.File("u.json"),
                    dir.Write("other.txt", "other words entirely\nand more of them\n")})
                .exit_code,
            0);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  std::string newer = good;
  newer[8] = 99;  // the format version (fixed32 after the 8-byte magic)
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated.ckpt", good.substr(0, good.size() / 2)},
      {"flipped.ckpt", flipped},
      {"foreign.ckpt", ReadAll(dir.File("t.json"))},
      {"empty.ckpt", ""},
      {"newer.ckpt", newer},
  };
  for (const auto& [name, contents] : cases) {
    SCOPED_TRACE(name);
    const std::string path = dir.Write(name, contents);
    ExpectFailsWritingNothing(dir, {"train", "--resume", path, "--output", "@OUT"}, "train", 1, {path});
    ExpectFailsWritingNothing(dir, {"train", "--resume", path, "--vocab-size", "300", "--output", "@OUT"},
                              "train", 1, {path});
    ExpectOneErrorLine(RunCli({"inspect", path}), "inspect", 1, {path});
  }
  // The word table, CKPT.words beside CKPT: missing, cut, or another run's. It is read when
  // training goes on (a larger --vocab-size); each case in a folder of its own.
  const std::vector<std::pair<std::string, std::string>> tables = {
      {"no_table", ""},
      {"cut_table", table.substr(0, table.size() - 7)},
      {"other_table", ReadAll(dir.File("u.json.ckpt.words"))},
  };
  for (const auto& [name, contents] : tables) {
    SCOPED_TRACE(name);
    std::filesystem::create_directory(dir.File(name));
    const std::string path = dir.Write(name + "/t.json.ckpt", good);
    if (!contents.empty()) dir.Write(name + "/t.json.ckpt.words", contents);
    // A missing table is named by its path; a damaged one by its name and its checkpoint's path.
    ExpectFailsWritingNothing(
        dir, {"train", "--resume", path, "--vocab-size", "300", "--output", "@OUT"}, "train", 1,
        {contents.empty() ? path + ".words" : "t.json.ckpt.words: not the word table of checkpoint " + path});
  }
}

// ---- flags --------------------------------------------------------------------------------------------------

// A missing required flag or argument is a usage error (exit 2) in every command.
TEST(BadInputCli, MissingRequiredFlagOrArgumentIsAUsageErrorInEveryCommand) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.txt", Corpus());
  const std::string tokenizer = TrainTokenizer(dir);
  ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", corpus}, "train", 2, {"--output"});
  ExpectFailsWritingNothing(dir, {"train", "--vocab-size", "300", "--output", "@OUT"}, "train", 2,
                            {"no input files"});
  ExpectFailsWritingNothing(dir, {"count", corpus}, "count", 2, {"--output"});
  ExpectFailsWritingNothing(dir, {"count", "--output", "@OUT"}, "count", 2, {"no inputs"});
  for (const char* command : {"encode", "decode"}) {
    ExpectOneErrorLine(RunCli({command}, "hello\n"), command, 2, {"--tokenizer is required"});
    ExpectOneErrorLine(RunCli({command, corpus}), command, 2, {"--tokenizer is required"});
    ExpectOneErrorLine(RunCli({command, "--tokenizer="}, "1\n"), command, 2, {"--tokenizer is required"});
  }
  ExpectOneErrorLine(RunCli({"explain", "hello"}), "explain", 2, {"--tokenizer is required"});
  ExpectOneErrorLine(RunCli({"explain", "--tokenizer", tokenizer}), "explain", 2, {"--file"});
  ExpectOneErrorLine(RunCli({"inspect"}), "inspect", 2, {"exactly one file"});
  ExpectOneErrorLine(RunCli({"convert", tokenizer}), "convert", 2, {"IN OUT"});
  ExpectOneErrorLine(RunCli({"convert"}), "convert", 2, {"IN OUT"});
  // A flag given without its value.
  ExpectOneErrorLine(RunCli({"pretokenize", "--preset"}), "pretokenize", 2, {"--preset needs a value"});
  // No command at all, or an unknown one.
  CliResult none = RunCli({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, StartsWith("tokenmill: fast"));
  CliResult unknown = RunCli({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "tokenmill: error: unknown command 'frobnicate' (see tokenmill --help)\n");
}

// Unknown flags, unparsable or out-of-range values and unknown presets are usage errors (exit 2)
// naming the flag, in every command, before anything is read or written.
TEST(BadInputCli, BadFlagsAreUsageErrorsInEveryCommand) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.txt", Corpus());
  const std::string tokenizer = TrainTokenizer(dir);
  const std::vector<std::vector<std::string>> kCommands = {
      {"train", "--vocab-size", "300", "--output", "@OUT", corpus},
      {"count", "--output", "@OUT", corpus},
      {"encode", "--tokenizer", tokenizer, corpus},
      {"decode", "--tokenizer", tokenizer},
      {"explain", "--tokenizer", tokenizer, "text"},
      {"pretokenize", corpus},
      {"inspect", tokenizer},
      {"convert", tokenizer, "@OUT.tiktoken"},
      {"add-special-tokens", tokenizer, "--special-token", "<|x|>", "--output", "@OUT"},
  };
  for (const std::vector<std::string>& command : kCommands) {
    SCOPED_TRACE(command[0]);
    std::vector<std::string> args = command;
    args.push_back("--bogus");
    ExpectFailsWritingNothing(dir, args, command[0], 2, {"unknown flag '--bogus'"});
    args.back() = "-x";
    ExpectFailsWritingNothing(dir, args, command[0], 2, {"unknown flag '-x'"});
  }
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases = {
      {{"train", "--vocab-size", "lots", "--output", "@OUT", corpus}, "--vocab-size"},
      {{"train", "--vocab-size", "-5", "--output", "@OUT", corpus}, "--vocab-size"},
      {{"train", "--vocab-size", "100", "--output", "@OUT", corpus}, "--vocab-size 100"},
      {{"train", "--preset", "gpt5", "--output", "@OUT", corpus}, "--preset"},
      {{"train", "--threads", "-1", "--output", "@OUT", corpus}, "--threads"},
      {{"train", "--hf-compat=maybe", "--output", "@OUT", corpus}, "--hf-compat"},
      {{"train", "--checkpoint-interval", "soon", "--output", "@OUT", corpus}, "--checkpoint-interval"},
      {{"train", "--format", "xml", "--output", "@OUT", corpus}, "--format"},
      {{"count", "--doc-mode", "page", "--output", "@OUT", corpus}, "--doc-mode"},
      {{"count", "--threads", "-1", "--output", "@OUT", corpus}, "--threads"},
      {{"count", "--preset", "gpt5", "--output", "@OUT", corpus}, "--preset"},
      {{"count", "--shard-bytes", "big", "--output", "@OUT", corpus}, "--shard-bytes"},
      {{"encode", "--tokenizer", tokenizer, "--specials", "maybe"}, "--specials"},
      {{"encode", "--tokenizer", tokenizer, "--threads", "-1"}, "--threads"},
      {{"explain", "--tokenizer", tokenizer, "--specials", "maybe", "x"}, "--specials"},
      {{"pretokenize", "--preset", "gpt5"}, "--preset"},
      {{"pretokenize", "--pattern", "(unclosed"}, "--pattern"},
      {{"inspect", "--top", "many", tokenizer}, "--top"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.args[0] + " " + k.args[1] + " " + k.args[2]);
    ExpectFailsWritingNothing(dir, k.args, k.args[0], 2, {k.flag}, "x\n");
  }
}

}  // namespace
}  // namespace tokenmill
