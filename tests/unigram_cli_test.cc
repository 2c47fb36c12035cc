// `tokenmill train --algorithm unigram` end to end through the real binary: the tokenizer.json
// it writes (SentencePiece's defaults: characters, byte fallback, the metaspace, NFKC, <unk> at
// 0) encodes and decodes every line back exactly, sampled segmentations too; inspect says
// Unigram, explain shows the best segmentation with its score and the runner-up; bad flags
// (Unigram's own, BPE's with --algorithm unigram, Unigram's without it, encode's sampling
// flags) are one-line usage errors naming the flag; a run interrupted after an EM round resumes
// to the uninterrupted run's file byte for byte, a resume that changes --vocab-size is refused;
// --threads 1 and 2 write the same file.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_expect.h"
#include "reference/cli_runner.h"
#include "reference/training_child.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::CliResult;
using testing::ExpectOneErrorLine;
using testing::ReadAll;
using testing::RunCli;
using testing::SplitWords;
using testing::TempDir;

// Lines of 2-10 words, each of 1-4 syllables (Latin, a few Chinese characters), some with
// punctuation: NFKC leaves them as they are, and no line starts with a space, so the metaspace
// decoder gives them back exactly.
std::string Corpus(size_t lines, uint32_t seed) {
  static const std::vector<std::string> syllables = {
      "ka", "to", "ri", "men", "sa", "lo", "ne", "vi", "der", "qu", "the", "and", "ing", "ion",
      "est", "pre", "con", "\xe6\x9c\xba", "\xe5\x99\xa8", "\xe5\xad\xa6", "\xe4\xb9\xa0"};
  static const char* kEnds[] = {".", "", ",", ""};
  std::mt19937 rng(seed);
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    for (size_t w = 2 + rng() % 9; w > 0; --w) {
      for (size_t s = 1 + rng() % 4; s > 0; --s) text += syllables[rng() % syllables.size()];
      text += w > 1 ? " " : "";
    }
    text += kEnds[rng() % 4];
    text += "\n";
  }
  return text;
}

// `tokenmill train --algorithm unigram` with `flags`, quiet, without checkpoints.
CliResult Train(const std::string& corpus, const std::string& out,
                const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"train", "--algorithm", "unigram", "--output", out, "--quiet",
                                   "--checkpoint=none"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(corpus);
  return RunCli(args);
}

// ---- train, encode, decode, inspect, explain --------------------------------------------------

class UnigramCliTrained : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    corpus_ = new std::string(Corpus(400, 31));
    const std::string path = dir_->Write("corpus.txt", *corpus_);
    CliResult r = Train(path, dir_->File("u.json"), {"--vocab-size", "600"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete corpus_;
  }
  static std::string Tokenizer() { return dir_->File("u.json"); }
  static TempDir* dir_;
  static std::string* corpus_;
};
TempDir* UnigramCliTrained::dir_ = nullptr;
std::string* UnigramCliTrained::corpus_ = nullptr;

TEST_F(UnigramCliTrained, TokenizerJsonHasSentencePiecesDefaults) {
  const std::string json = ReadAll(Tokenizer());
  EXPECT_THAT(json, HasSubstr("\"type\": \"Unigram\""));
  EXPECT_THAT(json, HasSubstr("\"unk_id\": 0,"));
  EXPECT_THAT(json, HasSubstr("\"byte_fallback\": true"));
  EXPECT_THAT(json, HasSubstr("[\"<0xFF>\", -10000.0]"));
  EXPECT_THAT(json, HasSubstr("NFKC"));
  EXPECT_THAT(json, HasSubstr("Metaspace"));
}

// Every line with its newline, plus lines holding characters the corpus never had (an emoji, 龘,
// a Latin capital) and bytes that are no UTF-8: encode, then decode, gives the text back.
TEST_F(UnigramCliTrained, EncodeThenDecodeGivesEveryLineBack) {
  std::string text = corpus_->substr(0, corpus_->find('\n', 4000) + 1);
  text += "kato \xf0\x9f\xa6\x84 rimen\n\xe9\xbe\x98\xe6\x9c\xba Zebra\n\xff\xfe kaqu \xc3\n";
  text += "end without newline";
  const std::string input = dir_->Write("text.txt", text);
  CliResult e = RunCli({"encode", "--tokenizer", Tokenizer(), input});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(testing::Lines(e.out).size(), testing::Lines(text).size());
  CliResult d = RunCli({"decode", "--tokenizer", Tokenizer()}, e.out);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(d.out == text) << "decoded:\n" << d.out;
  // The emoji was never seen: its four bytes' fallback tokens, <0xF0> at id 1 + 0xF0.
  CliResult emoji = RunCli({"encode", "--whole", "--tokenizer", Tokenizer()}, "\xf0\x9f\xa6\x84");
  ASSERT_EQ(emoji.exit_code, 0) << emoji.err;
  const std::vector<std::string> ids = SplitWords(emoji.out);
  ASSERT_EQ(ids.size(), 5u) << emoji.out;  // "▁" first (the metaspace prefix), then the bytes
  EXPECT_EQ(ids[1], std::to_string(1 + 0xF0));
  EXPECT_EQ(ids[4], std::to_string(1 + 0x84));

  // Sampled segmentations (subword regularization) decode to the same text, repeat for the same
  // seed on one thread, and differ from the best one; --nbest 1 is the best one.
  auto sampled = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"encode", "--tokenizer", Tokenizer(), "--threads", "1"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(input);
    CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string a = sampled({"--alpha", "0.5", "--seed", "3"});
  EXPECT_EQ(sampled({"--alpha", "0.5", "--seed", "3"}), a);
  EXPECT_NE(a, e.out);
  EXPECT_NE(sampled({"--alpha", "0.5", "--seed", "4"}), a);
  EXPECT_EQ(sampled({"--alpha", "0.5", "--nbest", "1"}), e.out);
  for (const std::string& ids_text : {a, sampled({"--alpha", "0.2", "--nbest", "3"})}) {
    CliResult back = RunCli({"decode", "--tokenizer", Tokenizer()}, ids_text);
    ASSERT_EQ(back.exit_code, 0) << back.err;
    EXPECT_TRUE(back.out == text) << "decoded a sampled encoding as:\n" << back.out;
  }
}

TEST_F(UnigramCliTrained, InspectSaysUnigram) {
  CliResult r = RunCli({"inspect", Tokenizer()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("model:         Unigram\n"));
  EXPECT_THAT(r.out, HasSubstr("vocabulary:    600 tokens"));
  EXPECT_THAT(r.out, HasSubstr(" scored (log-probabilities "));
  EXPECT_THAT(r.out, HasSubstr("unknown:       '<unk>' = 0 (characters no piece covers become "
                               "byte-fallback tokens)"));
  EXPECT_THAT(r.out, HasSubstr("normalizer:    nfkc\n"));
  EXPECT_THAT(r.out, HasSubstr("pre-tokenizer: metaspace"));
}

// Each piece: the best segmentation as token@byte with its score, the runner-up with its score
// and how much lower it is (or none), and the tokens, which together are encode's ids.
TEST_F(UnigramCliTrained, ExplainShowsTheBestSegmentationItsScoreAndTheRunnerUp) {
  const std::string text = "kato rimenqu \xe6\x9c\xba\xe5\x99\xa8 a \xf0\x9f\xa6\x84";
  CliResult r = RunCli({"explain", "--tokenizer", Tokenizer(), text});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex best(R"(  best \(Viterbi\): (.*)   score (-?[0-9.]+)\n)");
  const std::regex runner_up(
      R"(  runner-up:      (?:none \(one segmentation only\)|(.*)   score (-?[0-9.]+) \(([0-9.]+) lower\))\n)");
  const std::regex tokens(R"(  tokens: ([0-9 ]+)\n)");
  std::vector<std::string> ids;
  int pieces = 0, with_runner_up = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), best);
       it != std::sregex_iterator(); ++it) {
    ++pieces;
    EXPECT_THAT((*it)[1].str(), HasSubstr("@0"));  // the first token starts at byte 0
    const std::string rest = r.out.substr(static_cast<size_t>(it->position() + it->length()));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(rest, m, runner_up)) << rest;
    ASSERT_EQ(m.position(), 0) << "no runner-up line after the best one:\n" << rest;
    if (m[1].matched) {
      ++with_runner_up;
      const double best_score = std::stod((*it)[2].str()), second = std::stod(m[2].str());
      EXPECT_LE(second, best_score);
      EXPECT_NEAR(best_score - second, std::stod(m[3].str()), 2e-6);
      EXPECT_NE(m[1].str(), (*it)[1].str()) << "the runner-up is the best path again";
    }
    std::smatch t;
    const std::string after = m.suffix().str();
    ASSERT_TRUE(std::regex_search(after, t, tokens));
    ASSERT_EQ(t.position(), 0) << after;
    for (const std::string& id : SplitWords(t[1].str())) ids.push_back(id);
  }
  EXPECT_EQ(pieces, 5) << r.out;  // ▁kato ▁rimenqu ▁机器 ▁a ▁🦄
  EXPECT_GE(with_runner_up, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("<0xF0>@"));  // the emoji's bytes, by name
  CliResult e = RunCli({"encode", "--whole", "--tokenizer", Tokenizer()}, text);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(ids, SplitWords(e.out));
}

// ---- bad flags ----------------------------------------------------------------------------------

struct BadFlags {
  std::vector<std::string> flags;
  std::vector<std::string> names;  // what the one error line must hold
};

// Each a one-line usage error (exit 2) naming the flag, no tokenizer written.
TEST(UnigramCli, BadTrainFlagsAreOneLineUsageErrorsNamingTheFlag) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus(50, 32));
  const std::string tiny = dir.Write("tiny.txt", "hello world\nhello there\n");
  const std::vector<std::string> unigram = {"--algorithm", "unigram", "--vocab-size", "400"};
  auto with = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), unigram.begin(), unigram.end());
    return flags;
  };
  const std::vector<BadFlags> cases = {
      {with({"--shrinking-factor", "0"}), {"--shrinking-factor", "(0, 1)"}},
      {with({"--shrinking-factor", "1"}), {"--shrinking-factor", "(0, 1)"}},
      {with({"--shrinking-factor", "1.5"}), {"--shrinking-factor", "(0, 1)"}},
      {with({"--sub-iterations", "0"}), {"--sub-iterations"}},
      {with({"--max-piece-length", "0"}), {"--max-piece-length"}},
      {with({"--seed-size", "0"}), {"--seed-size"}},
      // BPE's options.
      {with({"--min-frequency", "5"}), {"--min-frequency", "--algorithm"}},
      {with({"--max-token-length", "8"}), {"--max-token-length", "--max-piece-length"}},
      {with({"--hf-compat"}), {"--hf-compat", "--algorithm"}},
      {with({"--continuing-subword-prefix", "##"}), {"--continuing-subword-prefix"}},
      {with({"--end-of-word-suffix", "</w>"}), {"--end-of-word-suffix"}},
      {with({"--unit", "byte"}), {"--unit", "--algorithm"}},
      // Unigram's options without --algorithm unigram.
      {{"--vocab-size", "400", "--seed-size", "10"}, {"--seed-size", "--algorithm"}},
      {{"--vocab-size", "400", "--shrinking-factor", "0.5"}, {"--shrinking-factor", "--algorithm"}},
      {{"--vocab-size", "400", "--sub-iterations", "3"}, {"--sub-iterations", "--algorithm"}},
      {{"--vocab-size", "400", "--max-piece-length", "4"}, {"--max-piece-length", "--algorithm"}},
      {{"--vocab-size", "400", "--split-by-script=false"}, {"--split-by-script", "--algorithm"}},
      {{"--algorithm", "wordpiece", "--seed-size", "10"}, {"--seed-size", "--algorithm"}},
  };
  for (const BadFlags& c : cases) {
    std::string shown;
    for (const std::string& f : c.flags) shown += f + " ";
    SCOPED_TRACE(shown);
    const std::string out = dir.File("out.json");
    std::vector<std::string> args = {"train", "--output", out};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    args.push_back(corpus);
    ExpectOneErrorLine(RunCli(args), "train", 2, c.names);
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".ckpt"));
  }
  // Found only once the corpus is read: a --vocab-size beyond the seed vocabulary (tiny.txt
  // has 10 characters and 6 substrings), a usage error all the same.
  const std::string out = dir.File("tiny.json");
  CliResult big = RunCli({"train", "--algorithm", "unigram", "--vocab-size", "5000", "--output", out,
                          tiny});
  ExpectOneErrorLine(big, "train", 2, {"--vocab-size 5000", "larger than the seed vocabulary"});
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(UnigramCli, EncodeSamplingFlagsAreOneLineUsageErrors) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus(100, 33));
  const std::string unigram = dir.File("u.json"), bpe = dir.File("b.json");
  ASSERT_EQ(Train(corpus, unigram, {"--vocab-size", "400"}).exit_code, 0);
  ASSERT_EQ(RunCli({"train", "--vocab-size", "300", "--quiet", "--checkpoint=none", "--output", bpe,
                    corpus})
                .exit_code,
            0);
  const std::string text = dir.Write("t.txt", "kato rimen\n");
  // Sampling is for Unigram models only.
  ExpectOneErrorLine(RunCli({"encode", "--tokenizer", bpe, "--alpha", "0.5", text}), "encode", 2,
                     {"--alpha", "BPE"});
  // --nbest and --seed shape sampling: without --alpha they would do nothing.
  ExpectOneErrorLine(RunCli({"encode", "--tokenizer", unigram, "--nbest", "2", text}), "encode", 2,
                     {"--nbest", "--alpha"});
  ExpectOneErrorLine(RunCli({"encode", "--tokenizer", unigram, "--seed", "5", text}), "encode", 2,
                     {"--seed", "--alpha"});
  ExpectOneErrorLine(RunCli({"encode", "--tokenizer", unigram, "--alpha=-1", text}), "encode", 2,
                     {"--alpha"});
  ExpectOneErrorLine(
      RunCli({"encode", "--tokenizer", unigram, "--alpha", "0.5", "--nbest=-2", text}), "encode",
      2, {"--nbest"});
}

// ---- checkpoints and resume ---------------------------------------------------------------------

// A `tokenmill train --verbose` child whose stderr is a pipe in packet mode (O_DIRECT: every
// write is a packet of its own, never merged with the next) of one slot: it holds one log line
// at a time, and the child blocks writing the next until the test reads it. A filler packet
// put in first makes the child block at its very first line. So the child is always blocked at
// a known line ("round k/N: ..."), however fast or slow the machine, and a SIGINT sent then
// lands before the check that follows that round (the trainer asks whether to stop right after
// it logs the round): the run stops after that very round. (TrainingChild, training_child.h,
// counts on BPE logging far more lines than a page holds; Unigram logs a handful of rounds.)
class RoundChild {
 public:
  explicit RoundChild(const std::vector<std::string>& args) {
    int p[2];
    if (pipe2(p, O_DIRECT) != 0) throw std::runtime_error("pipe2(O_DIRECT) failed");
    if (fcntl(p[0], F_SETPIPE_SZ, 4096) < 0 || fcntl(p[0], F_GETPIPE_SZ) > 4096) {
      throw std::runtime_error("cannot make the stderr pipe one slot");
    }
    if (write(p[1], "", 1) != 1) throw std::runtime_error("cannot write the filler packet");
    pid_ = testing::StartCliWritingStderrTo(args, p);
    read_fd_ = p[0];
  }
  ~RoundChild() {
    if (read_fd_ >= 0) close(read_fd_);
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // Everything the child wrote to stderr that the test has read.
  const std::string& err() const { return err_; }

  // Once the child is blocked at a line, takes the packet before it out of the pipe, and waits
  // until that line is in: the child has left that write and runs on to block at its next
  // line (a thread just woken from the write may still show it as its wait channel, so the
  // next WaitUntilBlocked would be wrong without this). False when the child ended.
  bool Advance() {
    if (!WaitUntilBlocked() || !ReadPacket()) return false;
    pollfd in{read_fd_, POLLIN, 0};
    return poll(&in, 1, 30000) == 1 && (in.revents & POLLIN) != 0;
  }
  // Once the child is blocked at a line, SIGINT; then reads its stderr to the end and returns
  // its wait status.
  int Interrupt() {
    if (!WaitUntilBlocked()) ADD_FAILURE() << "the child ended before the signal: " << err_;
    kill(pid_, SIGINT);
    WaitUntilDelivered(SIGINT);
    while (ReadPacket()) {
    }
    if (!waited_) waitpid(pid_, &status_, 0);
    waited_ = true;
    return status_;
  }

 private:
  // One packet (a line, or the filler NUL), blocking; false at the end.
  bool ReadPacket() {
    char buffer[8192];
    const ssize_t n = read(read_fd_, buffer, sizeof(buffer));
    if (n <= 0) return false;
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] != '\0') err_.push_back(buffer[i]);
    }
    return true;
  }
  // The child's main thread asleep in a pipe write (as TrainingChild::WaitUntilBlocked sees it).
  bool WaitUntilBlocked() {
    for (int i = 0; i < 30000; ++i) {
      std::ifstream wchan("/proc/" + std::to_string(pid_) + "/wchan");
      std::string where;
      wchan >> where;
      if (where.find("pipe_write") != std::string::npos) return true;
      std::ifstream syscall("/proc/" + std::to_string(pid_) + "/syscall");
      std::string number, fd;
      syscall >> number >> fd;
      if (where == "0" && number == std::to_string(SYS_write) && fd == "0x2") return true;
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {  // ended: it will never block
        waited_ = true;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  // Waits until no signal is pending for the process any more (its handler has taken it).
  void WaitUntilDelivered(int sig) {
    for (int i = 0; i < 30000; ++i) {
      std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
      std::string line;
      bool pending = false;
      while (std::getline(status, line)) {
        if (line.starts_with("ShdPnd:") || line.starts_with("SigPnd:")) {
          pending |= (std::stoull(line.substr(8), nullptr, 16) >> (sig - 1)) & 1;
        }
      }
      if (!pending) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool waited_ = false;
  int status_ = 0;
  std::string err_;
};

// The corpus and options of the checkpoint tests: without byte fallback a small --vocab-size
// takes nine EM rounds on this corpus.
const std::vector<std::string> kRoundOptions = {"--algorithm", "unigram", "--byte-fallback=false",
                                                "--vocab-size", "60"};

// The number k of "round k/N" in `line` (0 when it is none).
size_t RoundOf(const std::string& line) {
  std::smatch m;
  static const std::regex round(R"(^round ([0-9]+)/[0-9]+: )");
  return std::regex_search(line, m, round) ? std::stoul(m[1].str()) : 0;
}

// Runs `args`, lets its first `pass` log lines through, and sends SIGINT while it is blocked at
// the next one; checks the orderly stop (exit 130, the checkpoint named, no tokenizer) and
// returns the EM rounds the checkpoint holds, as the child says. `err`: its stderr.
size_t InterruptAfter(const std::vector<std::string>& args, size_t pass, const std::string& out,
                      std::string* err = nullptr) {
  RoundChild child(args);
  for (size_t i = 0; i < pass; ++i) EXPECT_TRUE(child.Advance()) << "ended early: " << child.err();
  const int status = child.Interrupt();
  if (err != nullptr) *err = child.err();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status << " " << child.err();
  EXPECT_THAT(child.err(), HasSubstr("checkpoint written to " + out + ".ckpt"));
  EXPECT_FALSE(std::filesystem::exists(out));
  std::smatch m;
  static const std::regex rounds(R"(interrupted after ([0-9]+) EM rounds)");
  if (!std::regex_search(child.err(), m, rounds)) {
    ADD_FAILURE() << "no 'interrupted after N EM rounds' in: " << child.err();
    return 0;
  }
  return std::stoul(m[1].str());
}

TEST(UnigramCli, InterruptedRunResumesToTheUninterruptedRunsFile) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus(400, 34));
  // The uninterrupted run, and how many rounds it takes.
  std::vector<std::string> direct = {"train", "--output", dir.File("direct.json"), "--quiet",
                                     "--checkpoint=none", "--verbose"};
  direct.insert(direct.end(), kRoundOptions.begin(), kRoundOptions.end());
  direct.push_back(corpus);
  CliResult d = RunCli(direct);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string expected = ReadAll(dir.File("direct.json"));
  ASSERT_THAT(expected, HasSubstr("\"type\": \"Unigram\""));
  const size_t total = RoundOf(testing::Lines(d.err).back());
  ASSERT_GE(total, 6u) << d.err;

  // Stopped at its second round's line (round 1 let through): the checkpoint holds 2 rounds.
  const std::string out = dir.File("out.json");
  std::vector<std::string> first = {"train", "--output", out, "--checkpoint-every", "1",
                                    "--quiet", "--verbose"};
  first.insert(first.end(), kRoundOptions.begin(), kRoundOptions.end());
  first.push_back(corpus);
  EXPECT_EQ(InterruptAfter(first, 1, out), 2u);
  if (::testing::Test::HasFailure()) return;

  // A resume may not change --vocab-size: the rounds done pruned towards the old one. The
  // checkpoint stays as it was.
  const std::string checkpoint = ReadAll(out + ".ckpt");
  for (const char* vocab : {"80", "40"}) {
    SCOPED_TRACE(std::string("--vocab-size ") + vocab);
    CliResult changed = RunCli({"train", "--resume", out + ".ckpt", "--vocab-size", vocab, "--quiet"});
    ExpectOneErrorLine(changed, "train", 2, {"--vocab-size 60", "resume cannot change it"});
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_TRUE(ReadAll(out + ".ckpt") == checkpoint) << "the refused resume changed the checkpoint";
  }

  // Resumed (the replayed round 2 logged first), and stopped again two rounds on; then
  // resumed to the end: the uninterrupted run's file, byte for byte.
  const std::vector<std::string> resume = {"train", "--resume", out + ".ckpt", "--checkpoint-every",
                                           "1", "--quiet", "--verbose"};
  std::string err;
  EXPECT_EQ(InterruptAfter(resume, 2, out, &err), 4u);
  const std::vector<std::string> lines = testing::Lines(err);
  ASSERT_GE(lines.size(), 2u) << err;
  EXPECT_THAT(lines[0], ::testing::MatchesRegex("round 2/[0-9]+: .* \\[resumed\\]"));
  EXPECT_EQ(RoundOf(lines[1]), 3u) << err;
  ASSERT_LT(4u, total);
  CliResult finished = RunCli({"train", "--resume", out + ".ckpt", "--quiet", "--verbose"});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_THAT(finished.err, HasSubstr("round 4/"));
  EXPECT_THAT(finished.err, HasSubstr("round " + std::to_string(total) + "/"));
  EXPECT_THAT(finished.err, Not(HasSubstr("round 3/")));  // not done again
  EXPECT_TRUE(ReadAll(out) == expected) << "the resumed run wrote another tokenizer.json";

  // The finished run's checkpoint: resumed as it is, the same file again; with another
  // --vocab-size, refused (a Unigram run cannot be extended as a BPE run can).
  const std::string again = dir.File("again.json");
  CliResult same = RunCli({"train", "--resume", out + ".ckpt", "--output", again, "--quiet"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_TRUE(ReadAll(again) == expected);
  ExpectOneErrorLine(RunCli({"train", "--resume", out + ".ckpt", "--vocab-size", "100",
                             "--output", dir.File("bigger.json"), "--quiet"}),
                     "train", 2, {"--vocab-size"});
  EXPECT_FALSE(std::filesystem::exists(dir.File("bigger.json")));
}

// The E-step runs in parallel with fixed-point sums: one thread or two, the same file.
TEST(UnigramCli, OneAndTwoThreadsWriteTheSameFile) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus(3000, 35));
  std::string first;
  for (const std::vector<std::string>& options :
       {kRoundOptions, std::vector<std::string>{"--vocab-size", "1000"}}) {
    for (const char* threads : {"1", "2"}) {
      const std::string out = dir.File(std::string("t") + threads + ".json");
      std::vector<std::string> flags = options;
      flags.insert(flags.end(), {"--threads", threads});
      CliResult r = Train(corpus, out, flags);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const std::string bytes = ReadAll(out);
      if (threads == std::string("1")) {
        first = bytes;
      } else {
        EXPECT_TRUE(bytes == first) << "--threads 2 wrote another file than --threads 1";
      }
    }
  }
}

// inspect on a Unigram checkpoint speaks of EM rounds (the state's), not of merges.
TEST(UnigramCli, InspectOfACheckpointShowsTheRoundsDone) {
  TempDir dir;
  const std::string corpus = dir.Write("c.txt", Corpus(3000, 12));
  const std::string out = dir.File("t.json");
  CliResult r = RunCli({"train", "--algorithm", "unigram", "--vocab-size", "1000", "--quiet",
                        "--output", out, corpus});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult inspect = RunCli({"inspect", out + ".ckpt"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, ::testing::ContainsRegex("EM rounds done: [1-9][0-9]*, [0-9]+ pieces, "
                                                    "log-likelihood -[0-9.e+]+, of a target "
                                                    "vocabulary of 1000 \\(training had finished\\)"));
  EXPECT_THAT(inspect.out, ::testing::Not(::testing::HasSubstr("merges done")));
}

// A corpus where "<0x41>" is by far the most frequent substring: without the script rule it
// would be a piece, whose name is the byte-fallback token's (the file would not read back:
// "model.vocab[...] repeats <0x41>"). No piece may spell a byte token's name.
TEST(UnigramCli, NoPieceSpellsAByteFallbackTokensName) {
  TempDir dir;
  std::string text;
  std::mt19937 rng(7);
  for (int line = 0; line < 800; ++line) {
    for (int k = 0; k < 8; ++k) text += "<0x41>";
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
      text += static_cast<char>('a' + rng() % 26);
    }
    text += "\n";
  }
  const std::string corpus = dir.Write("c.txt", text);
  const std::string out = dir.File("t.json");
  CliResult r = Train(corpus, out, {"--vocab-size", "400", "--split-by-script=false",
                                    "--preset", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult inspect = RunCli({"inspect", out});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  // "<0x41>" encodes through its characters' pieces, and decodes back.
  const std::string line = dir.Write("l.txt", "<0x41><0x41>z\n");
  CliResult ids = RunCli({"encode", "--tokenizer", out, line});
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  const std::string id_file = dir.Write("ids.txt", ids.out);
  CliResult back = RunCli({"decode", "--tokenizer", out, id_file});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "<0x41><0x41>z\n");
}

}  // namespace
}  // namespace tokenmill
