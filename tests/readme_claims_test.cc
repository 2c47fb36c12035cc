// The README's "Bad input" table names, for every row, the tests that show it: each name must
// be a test that exists (TEST/TEST_P/TEST_F in tests/ or tests/large/), a fuzz target that
// exists (tests/fuzz/NAME_fuzz.cc) or a script that exists, and every row must name at least
// one test that runs the real CLI (RunCli or a child process of the binary), so that a row
// cannot claim what only a library test shows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tokenmill {
namespace {

const std::string kRoot = TOKENMILL_SOURCE_DIR;

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The body of test `suite`.`name` in the test sources ("" if there is none): from its TEST
// line to the next TEST line.
std::string FindTestBody(const std::string& suite, const std::string& name) {
  for (const char* folder : {"tests", "tests/large"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/" + folder)) {
      if (entry.path().extension() != ".cc") continue;
      const std::string text = Slurp(entry.path());
      for (const char* macro : {"TEST(", "TEST_P(", "TEST_F("}) {
        const size_t start = text.find(macro + suite + ", " + name + ")");
        if (start == std::string::npos) continue;
        const size_t next = text.find("\nTEST", start + 1);
        return text.substr(start, next == std::string::npos ? std::string::npos : next - start);
      }
    }
  }
  return "";
}

TEST(ReadmeClaims, EveryBadInputRowNamesExistingTestsAndACliLevelOne) {
  const std::string readme = Slurp(kRoot + "/README.md");
  const size_t begin = readme.find("\n## Bad input\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = readme.find("\n## ", begin + 1);
  std::istringstream section(readme.substr(begin, end - begin));
  std::string line;
  int rows = 0;
  const std::regex quoted("`([^`]+)`");
  while (std::getline(section, line)) {
    if (!line.starts_with("| ") || line.starts_with("| Bad input |")) continue;
    const std::string tests = line.substr(line.rfind(" | ") + 3);
    ++rows;
    bool cli_level = false;
    int named = 0;
    for (std::sregex_iterator it(tests.begin(), tests.end(), quoted), done; it != done; ++it) {
      std::string token = (*it)[1];
      ++named;
      if (token.starts_with("scripts/")) {
        EXPECT_TRUE(std::filesystem::exists(kRoot + "/" + token)) << token;
        continue;
      }
      const size_t dot = token.find('.');
      if (dot == std::string::npos) {  // a fuzz target
        EXPECT_TRUE(std::filesystem::exists(kRoot + "/tests/fuzz/" + token + "_fuzz.cc"))
            << "no fuzz target " << token << " (row: " << line.substr(0, 60) << ")";
        continue;
      }
      // Suite.Name, with an optional Prefix/ on the suite and /Param or /* on the name.
      std::string suite = token.substr(0, dot), name = token.substr(dot + 1);
      if (const size_t slash = suite.rfind('/'); slash != std::string::npos) suite = suite.substr(slash + 1);
      if (const size_t slash = name.find('/'); slash != std::string::npos) name = name.substr(0, slash);
      const std::string body = FindTestBody(suite, name);
      EXPECT_FALSE(body.empty()) << "no test " << token << " (row: " << line.substr(0, 60) << ")";
      if (body.find("RunCli(") != std::string::npos || body.find("Child ") != std::string::npos ||
          body.find("RunProgram(") != std::string::npos) {
        cli_level = true;
      }
    }
    EXPECT_GT(named, 0) << "a row names no test: " << line.substr(0, 80);
    EXPECT_TRUE(cli_level) << "no test of this row runs the CLI: " << line.substr(0, 80);
  }
  EXPECT_GE(rows, 15);
}

}  // namespace
}  // namespace tokenmill
