// The tokenmill commands. Each Run* function parses argv[2..] with its own FlagSet, does the
// work through the library and returns the process exit code:
//   0 success, 1 the work failed (bad input file, I/O error), 2 bad usage (flags, arguments).
#pragma once

namespace tokenmill::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

int RunTrain(int argc, char** argv);
int RunEncode(int argc, char** argv);
int RunDecode(int argc, char** argv);
int RunConvert(int argc, char** argv);
int RunAddSpecialTokens(int argc, char** argv);
int RunExplain(int argc, char** argv);
int RunCount(int argc, char** argv);
int RunInspect(int argc, char** argv);
int RunPretokenize(int argc, char** argv);

}  // namespace tokenmill::cli
