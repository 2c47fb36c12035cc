// The tokenmill CLI end to end: train -> encode -> decode, and the errors a user can cause.
// Each bad input must give one clear line on stderr, exit 2 (bad usage) or 1 (the work failed),
// and no output file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>
#include <fstream>
#include <sstream>

#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::RunCli;
using testing::TempDir;

std::string SampleText(size_t bytes) {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<size_t>(in.gcount()));
  return text.substr(0, text.rfind('\n') + 1);
}

size_t Lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(Cli, TrainEncodeDecodeRoundTripsAFile) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", SampleText(60000));
  std::string tokenizer = dir.File("tokenizer.json");
  auto train = RunCli({"train", "--vocab-size", "400", "--special-token", "<|endoftext|>",
                       "--output", tokenizer, corpus});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  ASSERT_TRUE(std::filesystem::exists(tokenizer));
  EXPECT_THAT(train.err, HasSubstr("vocab size 400"));

  std::string text = SampleText(60000) + "no newline at the end <|endoftext|> \xff\xfe";
  auto encoded = RunCli({"encode", "--tokenizer", tokenizer}, text);
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  EXPECT_EQ(Lines(encoded.out), Lines(text) + 1);  // one line of ids per input line
  auto decoded = RunCli({"decode", "--tokenizer", tokenizer}, encoded.out);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, text);

  auto whole = RunCli({"encode", "--tokenizer", tokenizer, "--whole"}, text);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(Lines(whole.out), 1u);
  EXPECT_EQ(RunCli({"decode", "--tokenizer", tokenizer}, whole.out).out, text);
}

std::string SourceFile(const std::string& name) {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/trainer/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The flags a piece of trainer source adds: flags.Add*("name", ...) and, through helpers such
// as AddCorpusFlags(flags, ...), those the helper adds (found in any trainer/*.cc).
void CollectFlags(const std::string& code, const std::vector<std::string>& sources,
                  std::set<std::string>& flags, int depth = 0) {
  static const std::regex kAdd(R"re(\.Add[A-Za-z]*\(\s*"([a-z0-9-]+)")re");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kAdd); it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[1]);
  }
  static const std::regex kHelper(R"(\b([A-Z][A-Za-z]*Flags)\(\s*flags\b)");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kHelper); it != std::sregex_iterator(); ++it) {
    const std::string definition = "void " + (*it)[1].str() + "(FlagSet& flags";
    for (const std::string& source : sources) {
      const size_t at = source.find(definition);
      if (at == std::string::npos || depth > 3) continue;
      CollectFlags(source.substr(at, source.find("\n}\n", at) - at), sources, flags, depth + 1);
    }
  }
}

// Every command's --help lists every flag the command accepts, each with its default. The
// commands and their flags are read from the trainer's source (main.cc's command table, each
// command's FlagSet and the Add* calls up to its Parse), not from the help text, so a flag added
// without its help entry fails here.
TEST(Cli, HelpListsEveryFlagOfEveryCommandWithItsDefault) {
  std::vector<std::string> sources;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TOKENMILL_SOURCE_DIR) + "/trainer")) {
    if (entry.path().extension() == ".cc") sources.push_back(SourceFile(entry.path().filename()));
  }
  const std::string main_cc = SourceFile("main.cc");
  const std::string table = main_cc.substr(main_cc.find("kCommands[]"));
  static const std::regex kCommand(R"re(\{"([a-z-]+)", ")re");
  std::vector<std::string> commands;
  for (auto it = std::sregex_iterator(table.begin(), table.begin() + static_cast<long>(table.find("};")), kCommand);
       it != std::sregex_iterator(); ++it) {
    commands.push_back((*it)[1]);
  }
  ASSERT_GE(commands.size(), 8u);
  auto top = RunCli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    EXPECT_THAT(top.out, HasSubstr("  " + command + " "));
    std::set<std::string> flags;
    for (const std::string& source : sources) {
      const size_t at = source.find("FlagSet flags(\"" + command + "\"");
      if (at == std::string::npos) continue;
      size_t end = std::min(source.find("flags.Parse(", at), source.find("ParseOneInput(", at));
      CollectFlags(source.substr(at, end - at), sources, flags);
    }
    ASSERT_FALSE(flags.empty()) << "no FlagSet found for " << command;
    auto help = RunCli({command, "--help"});
    ASSERT_EQ(help.exit_code, 0) << help.err;
    EXPECT_THAT(help.out, StartsWith("Usage: tokenmill " + command + " "));
    EXPECT_THAT(help.out, HasSubstr("\n  --help "));
    for (const std::string& flag : flags) {
      SCOPED_TRACE("--" + flag);
      // The entry: from its line ("  --flag" then '=' or spaces) to the next flag's.
      const std::regex line("\n  --" + flag + "[= ]");
      std::smatch m;
      ASSERT_TRUE(std::regex_search(help.out, m, line)) << "--" << flag << " is not in the help";
      const size_t start = static_cast<size_t>(m.position(0)) + 1;
      const std::string entry = help.out.substr(start, help.out.find("\n  --", start) - start);
      static const std::regex kDefault(R"(\[default: ([^\]]+)\]$)");
      std::smatch d;
      ASSERT_TRUE(std::regex_search(entry, d, kDefault)) << entry;
      // A choice's default is one of its choices.
      static const std::regex kChoices(R"(^  --[a-z0-9-]+=([a-z0-9]+(\|[a-z0-9]+)+) )");
      std::smatch c;
      if (std::regex_search(entry, c, kChoices)) {
        EXPECT_THAT("|" + c[1].str() + "|", HasSubstr("|" + d[1].str() + "|")) << entry;
      }
    }
  }
}

// Runs a train command expected to fail: exit `exit_code`, one line on stderr naming
// `expected`, no output file.
void ExpectTrainFails(const TempDir& dir, std::vector<std::string> args, int exit_code,
                      const std::string& expected) {
  std::string output = dir.File("out.json");
  std::vector<std::string> full = {"train", "--output", output};
  full.insert(full.end(), args.begin(), args.end());
  auto result = RunCli(full);
  EXPECT_EQ(result.exit_code, exit_code) << result.err;
  EXPECT_EQ(Lines(result.err), 1u) << result.err;
  EXPECT_THAT(result.err, ::testing::StartsWith("tokenmill train: error: "));
  EXPECT_THAT(result.err, HasSubstr(expected));
  EXPECT_FALSE(std::filesystem::exists(output)) << "a failed run left " << output;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
  }
}

TEST(Cli, TrainRejectsBadInputWithOneClearLine) {
  TempDir dir;
  std::string corpus = dir.Write("corpus.txt", "hello world\n");
  ExpectTrainFails(dir, {"--vocab-size", "300", dir.File("missing.txt")}, 1, dir.File("missing.txt"));
  // Folders are corpus inputs (read recursively); one without files is an error.
  std::filesystem::create_directory(dir.File("no_files"));
  ExpectTrainFails(dir, {"--vocab-size", "300", dir.File("no_files")}, 1,
                   "folder '" + dir.File("no_files") + "' holds no files");
  ExpectTrainFails(dir, {"--vocab-size", "100", corpus}, 2, "--vocab-size 100");
  ExpectTrainFails(dir, {"--vocab-size", "lots", corpus}, 2, "--vocab-size");
  ExpectTrainFails(dir, {"--vocab-size", "-5", corpus}, 2, "--vocab-size");
  ExpectTrainFails(dir, {"--vocab-size", "300", "--bogus", corpus}, 2, "--bogus");
  ExpectTrainFails(dir, {"--vocab-size", "300", dir.Write("empty.txt", "")}, 1, "the corpus is empty");
  ExpectTrainFails(dir, {"--vocab-size", "300"}, 2, "no input");
}

TEST(Cli, TrainRejectsAnUnreadableFile) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  std::string corpus = dir.Write("secret.txt", "hello world\n");
  ASSERT_EQ(chmod(corpus.c_str(), 0), 0);
  std::string output = dir.File("out.json");
  std::vector<std::string> args = {"train", "--vocab-size", "300", "--output", output, corpus};
  testing::CliResult result;
  if (geteuid() == 0) {
    // root reads every file; drop to 'nobody' so the permission check is real. CI runs the
    // tests as root, so this branch is the one CI takes; it skips only without setpriv.
    if (!std::filesystem::exists("/usr/bin/setpriv")) {
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
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(Lines(result.err), 1u) << result.err;
  EXPECT_THAT(result.err, ::testing::StartsWith("tokenmill train: error: cannot read '" + corpus + "'"));
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(Cli, UnknownCommandAndMissingTokenizerAreUsageErrors) {
  auto unknown = RunCli({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown command 'frobnicate'"));
  auto no_tokenizer = RunCli({"encode"}, "text\n");
  EXPECT_EQ(no_tokenizer.exit_code, 2);
  EXPECT_EQ(no_tokenizer.err, "tokenmill encode: error: --tokenizer is required\n");
}

}  // namespace
}  // namespace tokenmill
