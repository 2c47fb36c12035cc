// Pathological inputs through the real CLI (count and train), each with a bound on wall time and
// peak memory (the child process's maximum RSS from wait4), printed so the figures can be
// quoted (needs /usr/bin/time): 10 MB of one character with no spaces (the case that makes other BPE trainers run for
// hours), a 500 MB file without a newline (generated in a temp folder, never committed), a
// million distinct tiny documents, 10^5 special tokens, deeply nested JSON lines, a corpus of
// only whitespace. The bounds are generous (a loaded 2-core machine): they catch quadratic
// time and memory that grows with the input where it should not, not small regressions.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "count/count_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_runner.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

extern char** environ;

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

struct Measured {
  int exit_code = -1;
  double seconds = 0;
  long peak_rss_mb = 0;
  std::string err;
};

// Runs the CLI with `args` (stderr to a file), measuring wall time and the child's peak RSS.
Measured RunMeasured(const TempDir& dir, const std::vector<std::string>& args) {
  // Through GNU time: a child's ru_maxrss from wait4 would include this (possibly large) test
  // process's own high-water mark, inherited across fork/exec.
  std::string rss_path = dir.File("rss.txt");
  std::vector<std::string> full = {"/usr/bin/time", "-f", "%M", "-o", rss_path, TOKENMILL_CLI_PATH};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string err_path = dir.File("stderr.txt");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  auto start = std::chrono::steady_clock::now();
  pid_t pid;
  Measured m;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) return m;
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  struct rusage usage;
  wait4(pid, &status, 0, &usage);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  long rss_kb = 0;  // the last line (GNU time first notes a non-zero exit status)
  std::ifstream rss_in(rss_path);
  for (std::string word; rss_in >> word;) rss_kb = std::atol(word.c_str());
  m.peak_rss_mb = rss_kb / 1024;
  std::ifstream in(err_path);
  m.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::printf("    [%s] exit %d, %.2f s, peak RSS %ld MB\n", args[0].c_str(), m.exit_code,
              m.seconds, m.peak_rss_mb);
  return m;
}

// Writes `size` bytes made by repeating `unit` (the last copy cut short) to dir/name.
std::string WriteRepeated(const TempDir& dir, const std::string& name, const std::string& unit,
                          size_t size) {
  std::string path = dir.File(name);
  std::ofstream out(path, std::ios::binary);
  std::string block;
  while (block.size() < (size_t{1} << 20)) block += unit;
  block.resize((size_t{1} << 20) / unit.size() * unit.size());
  size_t left = size;
  while (left > 0) {
    size_t n = std::min(left, block.size());
    out.write(block.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
  return path;
}

// Counts `corpus` to a .tmc, then trains from it, each within the bounds.
void CountAndTrain(const TempDir& dir, const std::string& corpus, const std::string& vocab,
                   double max_seconds, long max_rss_mb, const std::vector<std::string>& extra = {}) {
  std::string counts = dir.File("corpus.tmc");
  std::vector<std::string> count_args = {"count", "--quiet", "--output", counts};
  count_args.insert(count_args.end(), extra.begin(), extra.end());
  count_args.push_back(corpus);
  Measured count = RunMeasured(dir, count_args);
  ASSERT_EQ(count.exit_code, 0) << count.err;
  EXPECT_LT(count.seconds, max_seconds);
  EXPECT_LT(count.peak_rss_mb, max_rss_mb);
  std::string tokenizer = dir.File("tok.json");
  std::vector<std::string> train_args = {"train", "--quiet", "--vocab-size", vocab, "--output", tokenizer};
  train_args.insert(train_args.end(), extra.begin(), extra.end());
  train_args.push_back(counts);
  Measured train = RunMeasured(dir, train_args);
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_LT(train.seconds, max_seconds);
  EXPECT_LT(train.peak_rss_mb, max_rss_mb);
}

TEST(Pathological, TenMegabytesOfOneCharacterWithoutSpaces) {
  TempDir dir;
  std::string corpus = WriteRepeated(dir, "aaaa.txt", "a", size_t{10} << 20);
  // One 10 MB word: every merge rewrites it; 1000 merges must not be 1000 passes of O(n) each
  // over a quadratic structure.
  CountAndTrain(dir, corpus, "1256", 120, 2048);
}

TEST(Pathological, FiveHundredMegabytesWithoutANewline) {
  TempDir dir;
  std::string corpus = WriteRepeated(dir, "one_line.txt", "lorem ipsum dolor sit amet ", size_t{500} << 20);
  // Line mode: the whole file is one document and must be held once, not copied per batch.
  Measured line = RunMeasured(dir, {"count", "--quiet", "--output", dir.File("l.tmc"), corpus});
  ASSERT_EQ(line.exit_code, 0) << line.err;
  EXPECT_LT(line.seconds, 300);
  EXPECT_LT(line.peak_rss_mb, 1600);
  // File mode cuts between words: memory is bounded by the shards, not the file.
  Measured file = RunMeasured(dir, {"count", "--quiet", "--doc-mode", "file", "--output",
                                    dir.File("f.tmc"), corpus});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_LT(file.seconds, 300);
  EXPECT_LT(file.peak_rss_mb, 400);
}

TEST(Pathological, AMillionDistinctTinyDocuments) {
  TempDir dir;
  std::string path = dir.File("tiny.txt");
  {
    std::ofstream out(path, std::ios::binary);
    std::string doc;
    for (int i = 0; i < 1000000; ++i) {
      // Base-36 numbers written with letters and digits: all distinct, 1-4 bytes.
      doc.clear();
      int v = i;
      do {
        doc += "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
        v /= 36;
      } while (v > 0);
      out << doc << '\n';
    }
  }
  CountAndTrain(dir, path, "2000", 120, 1024);
}

TEST(Pathological, HundredThousandSpecialTokens) {
  TempDir dir;
  std::vector<std::string> specials;
  std::string text;
  for (int i = 0; i < 100000; ++i) {
    specials.push_back("<|special_" + std::to_string(i) + "|>");
    if (i % 10 == 0) text += "some text " + specials.back() + " more text\n";
  }
  std::string corpus = dir.File("specials.txt");
  std::ofstream(corpus, std::ios::binary) << text;

  auto start = std::chrono::steady_clock::now();
  CountCorpusOptions options;
  options.inputs = {corpus};
  options.special_tokens = specials;
  options.progress = ProgressFormat::kNone;
  absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
  ASSERT_TRUE(counts.ok()) << counts.status();
  // The specials are cut out: only the ordinary words are counted.
  EXPECT_EQ(counts->words.Get("<|"), 0u);
  EXPECT_EQ(counts->words.Get(" some"), 0u);
  EXPECT_EQ(counts->words.Get(" more"), 10000u);
  TrainerOptions train;
  train.vocab_size = 256 + 100000 + 50;
  train.special_tokens = specials;
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(counts->words), train);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Bpe(*result).specials.size(), 100000u);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("    [10^5 specials, count + train in process] %.2f s, peak RSS %ld MB\n", seconds,
              usage.ru_maxrss / 1024);
  EXPECT_LT(seconds, 120);
  EXPECT_LT(usage.ru_maxrss / 1024, 2048);
}

TEST(Pathological, DeeplyNestedJsonLines) {
  TempDir dir;
  std::string deep_array = std::string(100000, '[') + std::string(100000, ']');
  std::string deep_object;
  for (int i = 0; i < 100000; ++i) deep_object += "{\"a\":";
  deep_object += "1" + std::string(100000, '}');
  std::string text = "{\"text\": \"fine record\"}\n" + deep_array + "\n" +
                     "{\"text\": \"x\", \"meta\": " + deep_object + "}\n" + deep_object + "\n";
  std::string corpus = dir.File("deep.jsonl");
  std::ofstream(corpus, std::ios::binary) << text;
  Measured strict = RunMeasured(dir, {"count", "--quiet", "--output", dir.File("d.tmc"), corpus});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_THAT(strict.err, HasSubstr("deep.jsonl:2"));
  Measured skipping = RunMeasured(dir, {"count", "--quiet", "--skip-bad-records", "--output",
                                        dir.File("d.tmc"), corpus});
  EXPECT_EQ(skipping.exit_code, 0) << skipping.err;
  EXPECT_LT(skipping.seconds, 30);
}

TEST(Pathological, OnlyWhitespace) {
  TempDir dir;
  // Runs of spaces, tabs, newlines and U+3000: \s+(?!\S) must not backtrack quadratically.
  std::string corpus = WriteRepeated(dir, "space.txt",
                                     std::string(3000, ' ') + "\t\t\xe3\x80\x80 \r\n" + std::string(50, '\n'),
                                     size_t{10} << 20);
  CountAndTrain(dir, corpus, "300", 120, 1024);
  std::string whole = WriteRepeated(dir, "spaces_no_newline.txt", " ", size_t{10} << 20);
  CountAndTrain(dir, whole, "300", 120, 1024);
}

}  // namespace
}  // namespace tokenmill
