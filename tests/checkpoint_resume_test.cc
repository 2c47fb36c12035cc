// Interrupted training resumes to the identical tokenizer: runs of `tokenmill train` are
// stopped at random moments with SIGINT (checkpoint written, exit 130) or SIGKILL (nothing
// written: the last complete checkpoint counts), resumed until they finish, and the result is
// compared byte for byte with an uninterrupted run. Also: extending a finished run, and every
// refusal a resume can give.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "checkpoint/checkpoint.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::RunCli;
using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string kSample = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt";

// Starts tokenmill with stdout/stderr sent to files; returns the pid.
pid_t Spawn(const std::vector<std::string>& args, const std::string& err_path) {
  pid_t pid = fork();
  if (pid == 0) {
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err, 2);
    std::vector<char*> argv = {const_cast<char*>(TOKENMILL_CLI_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TOKENMILL_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

class InterruptedTraining : public ::testing::TestWithParam<int> {};

TEST_P(InterruptedTraining, ResumesToTheIdenticalTokenizer) {
  TempDir dir;
  const std::vector<std::string> options = {"--vocab-size", "6000", "--special-token", "<|s|>",
                                            "--quiet"};
  std::vector<std::string> reference_args = {"train", "--output", dir.File("reference.json"),
                                             "--checkpoint=none"};
  reference_args.insert(reference_args.end(), options.begin(), options.end());
  reference_args.push_back(kSample);
  auto reference = RunCli(reference_args);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  std::mt19937 rng(GetParam());
  std::string output = dir.File("out.json");
  std::string checkpoint = output + ".ckpt";
  int sigints = 0, sigkills = 0;
  bool finished = false;
  constexpr int kInterruptedRounds = 8;  // then one more round runs to the end
  for (int round = 0; round <= kInterruptedRounds && !finished; ++round) {
    std::vector<std::string> args = {"train", "--output", output, "--checkpoint-every", "100"};
    if (std::filesystem::exists(checkpoint)) {
      args.insert(args.end(), {"--resume", checkpoint});
    } else {
      args.insert(args.end(), options.begin(), options.end());
      args.push_back(kSample);
    }
    std::string err_path = dir.File("err.txt");
    pid_t pid = Spawn(args, err_path);
    int status = 0;
    if (round < kInterruptedRounds) {
      int delay_ms = static_cast<int>(rng() % 400);
      int sig = rng() % 2 == 0 ? SIGINT : SIGKILL;
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, sig);
        waitpid(pid, &status, 0);
      }
    } else {
      waitpid(pid, &status, 0);
    }
    std::string err = ReadAll(err_path);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      finished = true;
    } else if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 130) << err;
      EXPECT_THAT(err, HasSubstr("resume with: tokenmill train --resume " + checkpoint));
      ++sigints;
    } else {
      ASSERT_TRUE(WIFSIGNALED(status));
      // SIGINT can also kill the process outright when it lands in the few milliseconds of
      // start-up before the train command installs its handler (nothing was done yet).
      ASSERT_TRUE(WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGINT) << WTERMSIG(status);
      ++sigkills;
    }
    // Whatever happened, a checkpoint that exists is complete and loadable.
    if (std::filesystem::exists(checkpoint)) {
      auto loaded = ReadCheckpoint(checkpoint);
      ASSERT_TRUE(loaded.ok()) << "round " << round << ": " << loaded.status();
    }
  }
  ASSERT_TRUE(finished) << "the last, uninterrupted round did not finish";
  EXPECT_EQ(ReadAll(output), ReadAll(dir.File("reference.json")))
      << "after " << sigints << " SIGINTs and " << sigkills << " SIGKILLs";
  RecordProperty("sigints", sigints);
  RecordProperty("sigkills", sigkills);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".tmp.")));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, InterruptedTraining, ::testing::Values(1, 2, 3));

TEST(Resume, ALargerVocabSizeExtendsAFinishedRun) {
  TempDir dir;
  auto small = RunCli({"train", "--vocab-size", "700", "--output", dir.File("small.json"), "--quiet", kSample});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  auto extended = RunCli({"train", "--resume", dir.File("small.json.ckpt"), "--vocab-size", "1200",
                          "--output", dir.File("extended.json"), "--quiet"});
  ASSERT_EQ(extended.exit_code, 0) << extended.err;
  auto direct = RunCli({"train", "--vocab-size", "1200", "--output", dir.File("direct.json"),
                        "--checkpoint=none", "--quiet", kSample});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(ReadAll(dir.File("extended.json")), ReadAll(dir.File("direct.json")));
}

TEST(Resume, RefusesOptionsThatChangeTheResult) {
  TempDir dir;
  ASSERT_EQ(RunCli({"train", "--vocab-size", "400", "--output", dir.File("t.json"), "--quiet", kSample}).exit_code, 0);
  std::string ckpt = dir.File("t.json.ckpt");
  for (std::vector<std::string> extra : std::vector<std::vector<std::string>>{
           {"--preset", "cl100k"}, {"--special-token", "<|x|>"}, {"--hf-compat"},
           {"--max-token-length", "4"}, {"--min-frequency", "3"}}) {
    std::vector<std::string> args = {"train", "--resume", ckpt};
    args.insert(args.end(), extra.begin(), extra.end());
    auto result = RunCli(args);
    EXPECT_EQ(result.exit_code, 2) << extra[0];
    EXPECT_THAT(result.err, HasSubstr(extra[0])) << result.err;
    EXPECT_THAT(result.err, HasSubstr("changes the result"));
  }
  // Harmless ones may change.
  auto harmless = RunCli({"train", "--resume", ckpt, "--threads", "1", "--checkpoint-every", "7",
                          "--output", dir.File("u.json"), "--quiet"});
  EXPECT_EQ(harmless.exit_code, 0) << harmless.err;
  EXPECT_EQ(ReadAll(dir.File("u.json")), ReadAll(dir.File("t.json")));
  // Input files with --resume are refused: the checkpoint holds the corpus.
  auto with_input = RunCli({"train", "--resume", ckpt, kSample});
  EXPECT_EQ(with_input.exit_code, 2);
  EXPECT_EQ(with_input.err, "tokenmill train: error: with --resume, give no input files: the "
                            "checkpoint holds the counted corpus (got '" + kSample + "')\n");
}

// Options that change the result may be given again on resume with the checkpoint's own
// values (repeated ones too), as a script that reruns its command with --resume does.
TEST(Resume, AcceptsTheCheckpointsOwnValues) {
  TempDir dir;
  ASSERT_EQ(RunCli({"train", "--vocab-size", "400", "--output", dir.File("t.json"), "--preset",
                    "cl100k", "--special-token", "<|a|>", "--special-token", "<|b|>", "--hf-compat",
                    "--max-token-length", "6", "--quiet", "--checkpoint-every", "50", kSample})
                .exit_code,
            0);
  auto again = RunCli({"train", "--resume", dir.File("t.json.ckpt"), "--vocab-size", "450",
                       "--preset", "cl100k", "--special-token", "<|a|>", "--special-token",
                       "<|b|>", "--hf-compat", "--max-token-length", "6", "--output",
                       dir.File("u.json"), "--quiet"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  auto direct = RunCli({"train", "--vocab-size", "450", "--output", dir.File("d.json"), "--preset",
                        "cl100k", "--special-token", "<|a|>", "--special-token", "<|b|>",
                        "--hf-compat", "--max-token-length", "6", "--checkpoint=none", "--quiet",
                        kSample});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(ReadAll(dir.File("u.json")), ReadAll(dir.File("d.json")));
  // The same tokens in another order are another vocabulary.
  auto swapped = RunCli({"train", "--resume", dir.File("t.json.ckpt"), "--special-token", "<|b|>",
                         "--special-token", "<|a|>", "--output", dir.File("v.json")});
  EXPECT_EQ(swapped.exit_code, 2);
  EXPECT_THAT(swapped.err, HasSubstr("--special-token is '<|b|>', '<|a|>' but the checkpoint was "
                                     "trained with '<|a|>', '<|b|>'"));
}

TEST(Resume, RefusesAChangedCorpusUnlessAskedTo) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", ReadAll(kSample).substr(0, 50000));
  ASSERT_EQ(RunCli({"train", "--vocab-size", "400", "--output", dir.File("t.json"), "--quiet", corpus}).exit_code, 0);
  std::ofstream(corpus, std::ios::app) << "one more line\n";
  auto refused = RunCli({"train", "--resume", dir.File("t.json.ckpt"), "--vocab-size", "500"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("corpus.txt"));
  EXPECT_THAT(refused.err, HasSubstr("--ignore-corpus-change"));
  auto forced = RunCli({"train", "--resume", dir.File("t.json.ckpt"), "--vocab-size", "500",
                        "--ignore-corpus-change", "--quiet"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_THAT(forced.err, HasSubstr("warning"));
}

TEST(Resume, DamagedOrForeignCheckpointsAreClearErrors) {
  TempDir dir;
  ASSERT_EQ(RunCli({"train", "--vocab-size", "300", "--output", dir.File("t.json"), "--quiet", kSample}).exit_code, 0);
  std::string good = ReadAll(dir.File("t.json.ckpt"));
  std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"tokenizer", ReadAll(dir.File("t.json"))},
      {"empty", ""},
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  cases.emplace_back("flipped", flipped);
  for (const auto& [name, contents] : cases) {
    std::string path = dir.Write(name + ".ckpt", contents);
    auto result = RunCli({"train", "--resume", path});
    EXPECT_EQ(result.exit_code, 1) << name;
    EXPECT_THAT(result.err, HasSubstr(path)) << name;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
  // A damaged or cut word table (CKPT.words, read while the trainer starts): the same kind of
  // error, naming the table, and no tokenizer written.
  const std::string table = ReadAll(dir.File("t.json.ckpt.words"));
  std::string flipped_table = table;
  flipped_table[table.size() / 2] ^= 0x10;
  const std::pair<std::string, std::string> tables[] = {
      {"flipped table", flipped_table}, {"cut table", table.substr(0, table.size() - 7)}};
  for (const auto& [name, contents] : tables) {
    TempDir other;
    std::string path = other.Write("t.json.ckpt", good);
    other.Write("t.json.ckpt.words", contents);
    auto result = RunCli({"train", "--resume", path, "--output", other.File("out.json")});
    EXPECT_EQ(result.exit_code, 1) << name;
    EXPECT_THAT(result.err, HasSubstr("t.json.ckpt.words: not the word table of checkpoint " + path))
        << name;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_FALSE(std::filesystem::exists(other.File("out.json"))) << name;
  }
}

}  // namespace
}  // namespace tokenmill
