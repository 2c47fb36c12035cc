// What the CLI tests expect of a tokenmill run, shared by them (gtest assertions).
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reference/cli_runner.h"
#include "reference/training_child.h"

namespace tokenmill::testing {

// The one-line error contract: exit code `code`, one stderr line "tokenmill <command>: error:
// ..." naming each of `names`, nothing on stdout.
inline void ExpectOneErrorLine(const CliResult& r, const std::string& command, int code,
                               const std::vector<std::string>& names) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith("tokenmill " + command + ": error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, ::testing::EndsWith("\n"));
  for (const std::string& name : names) EXPECT_THAT(r.err, ::testing::HasSubstr(name));
  EXPECT_EQ(r.out, "") << "a failed run printed output";
}

// Runs `tokenmill args...` (a training run writing `out`, with checkpoints and --verbose
// progress), sends SIGINT once it reported merge `stop_at`, and checks the orderly stop: exit
// 130, the checkpoint `out`.ckpt named, no tokenizer written.
inline void InterruptAtMerge(const std::vector<std::string>& args, size_t stop_at,
                             const std::string& out) {
  TrainingChild child(args);
  ASSERT_GT(child.ReadUntilMerge(stop_at), 0u) << child.err();
  kill(child.pid(), SIGINT);
  const int status = child.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << child.err();
  EXPECT_EQ(WEXITSTATUS(status), 130) << child.err();
  EXPECT_THAT(child.err(), ::testing::HasSubstr("checkpoint written to " + out + ".ckpt"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace tokenmill::testing
