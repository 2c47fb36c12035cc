// tokenmill count / train --counts / inspect through the CLI: training from summed word-count
// files gives the same tokenizer as training on the text; stdin; errors are one line, exit 1,
// and leave no output behind; an unwritable output is reported before any input is read.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <string>

#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::CliResult;
using testing::RunCli;
using testing::TempDir;

std::string Text(int seed) {
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += "the quick brown fox " + std::to_string((i * 13 + seed) % 97) +
            (i % 4 ? " jumps over the lazy dog\n" : " 山水诗歌 again and again\n");
  }
  return text;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TEST(CountCli, TrainFromSummedCountsEqualsTrainFromText) {
  TempDir dir;
  std::string a = dir.Write("a.txt", Text(1)), b = dir.Write("b.txt", Text(2));
  for (const char* name : {"a", "b"}) {
    CliResult r = RunCli({"count", "--output", dir.File(std::string(name) + ".tmc"),
                          dir.File(std::string(name) + ".txt"), "--threads", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("wrote " + dir.File(std::string(name) + ".tmc")));
  }
  CliResult text = RunCli({"train", "--vocab-size", "300", "--output", dir.File("text.json"), a, b});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // `--counts a.tmc b.tmc`: the second file is a positional input, recognised by its magic.
  CliResult counts = RunCli({"train", "--vocab-size", "300", "--output", dir.File("counts.json"),
                             "--counts", dir.File("a.tmc"), dir.File("b.tmc")});
  ASSERT_EQ(counts.exit_code, 0) << counts.err;
  CliResult repeated = RunCli({"train", "--vocab-size", "300", "--output", dir.File("repeated.json"),
                               "--counts", dir.File("a.tmc"), "--counts", dir.File("b.tmc")});
  ASSERT_EQ(repeated.exit_code, 0) << repeated.err;
  std::string expected = ReadFile(dir.File("text.json")).value();
  EXPECT_EQ(ReadFile(dir.File("counts.json")).value(), expected);
  EXPECT_EQ(ReadFile(dir.File("repeated.json")).value(), expected);

  CliResult mismatch = RunCli({"train", "--vocab-size", "300", "--preset", "cl100k", "--output",
                               dir.File("bad.json"), "--counts", dir.File("a.tmc")});
  EXPECT_EQ(mismatch.exit_code, 1);
  EXPECT_THAT(mismatch.err, StartsWith("tokenmill train: error: '" + dir.File("a.tmc") +
                                       "' was counted with pre-tokenizer 'gpt2'"));
  EXPECT_FALSE(Exists(dir.File("bad.json")));

  CliResult inspect = RunCli({"inspect", "--top", "2", dir.File("a.tmc")});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("documents:               400\n"));
  EXPECT_THAT(inspect.out, HasSubstr("top 2 words:"));
}

TEST(CountCli, StdinFoldersAndProgress) {
  TempDir dir;
  std::string text = Text(3);
  std::string file = dir.Write("t.txt", text);
  CliResult from_file = RunCli({"count", "--output", dir.File("file.tmc"), file});
  CliResult from_stdin = RunCli({"count", "--output", dir.File("stdin.tmc"), "-"}, text);
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(ReadFile(dir.File("file.tmc")).value(), ReadFile(dir.File("stdin.tmc")).value());
  EXPECT_EQ(from_file.err.find("counting:"), std::string::npos);  // not a terminal: no bar

  CliResult json = RunCli({"count", "--progress=json", "--output", dir.File("j.tmc"), dir.path(),
                           "--include", "*.txt"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.err, HasSubstr("{\"stage\":\"count\",\"final\":true,"));
  EXPECT_THAT(json.err, HasSubstr("\"documents\":400,"));

  CliResult help = RunCli({"count", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--doc-mode=line|file"));
  EXPECT_THAT(help.out, HasSubstr("[default: \"text\"]"));
}

TEST(CountCli, ErrorsAreOneLineAndLeaveNoOutput) {
  TempDir dir;
  std::string out = dir.File("out.tmc");
  CliResult missing = RunCli({"count", "--output", out, dir.File("nope.txt")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, StartsWith("tokenmill count: error: "));
  EXPECT_THAT(missing.err, HasSubstr(dir.File("nope.txt")));
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1);
  EXPECT_FALSE(Exists(out));

  // The output folder is checked before any input is read: the input here is broken too, yet
  // the error is about the output.
  std::string broken = dir.Write("broken.txt.zst", "\x28\xb5\x2f\xfd\x00");
  CliResult unwritable = RunCli({"count", "--output", dir.File("no/such/folder/x.tmc"), broken});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_THAT(unwritable.err, HasSubstr("no/such/folder"));

  CliResult truncated = RunCli({"count", "--output", out, broken});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_THAT(truncated.err, HasSubstr("'" + broken + "' is truncated"));
  EXPECT_FALSE(Exists(out));

  CliResult empty = RunCli({"count", "--output", out, dir.Write("empty.txt", "")});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("the corpus is empty"));
  EXPECT_FALSE(Exists(out));

  CliResult usage = RunCli({"count", dir.File("empty.txt")});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("--output is required"));
}

// Library messages name options (`include`, `text_field`); the CLI shows them as its flags,
// and only those: a path or a value that happens to hold an option's name stays as it is.
TEST(CountCli, OptionNamesBecomeFlagsButPathsStayAsTheyAre) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("include"));
  dir.Write("include/text_field.txt", "x\n");
  CliResult empty = RunCli({"count", "--output", dir.File("o.tmc"), "--include", "*.c",
                            "--exclude", "text_field.*", dir.File("include")});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("folder '" + dir.File("include") +
                                   "' holds no files matching --include *.c not matching "
                                   "--exclude text_field.*"));
  dir.Write("include/bad_records.jsonl", "{\"text\": \"a\"}\n{\"body\": \"b\"}\n");
  CliResult record = RunCli({"count", "--output", dir.File("o.tmc"),
                             dir.File("include/bad_records.jsonl")});
  EXPECT_EQ(record.exit_code, 1);
  EXPECT_THAT(record.err, HasSubstr(dir.File("include/bad_records.jsonl") + ":2: the record has "
                                    "no field \"text\" (see --text-field) (--skip-bad-records "
                                    "skips such records)"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("o.tmc")));
}

TEST(CountCli, UnreadableFileIsNamed) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  std::string secret = dir.Write("secret.txt", "hello world\n");
  ASSERT_EQ(::chmod(secret.c_str(), 0), 0);
  std::vector<std::string> args = {"count", "--output", dir.File("out.tmc"), secret};
  CliResult result;
  if (::geteuid() == 0) {
    // root reads every file; drop to 'nobody' so the permission check is real. CI runs the
    // tests as root, so this branch is the one CI takes; it skips only without setpriv.
    if (!Exists("/usr/bin/setpriv")) {
      GTEST_SKIP() << "running as root, and /usr/bin/setpriv (util-linux), needed to drop to an "
                      "unprivileged user, is missing: root could read the file";
    }
    std::vector<std::string> full = {"--reuid=65534", "--regid=65534", "--clear-groups",
                                     TOKENMILL_CLI_PATH};
    full.insert(full.end(), args.begin(), args.end());
    result = testing::RunProgram("/usr/bin/setpriv", full);
  } else {
    result = RunCli(args);
  }
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, StartsWith("tokenmill count: error: cannot read '" + secret + "'"));
  EXPECT_FALSE(Exists(dir.File("out.tmc")));
}

}  // namespace
}  // namespace tokenmill
