// The tokenmill commands. Each Run* function parses argv[2..] with its own FlagSet, does the
// work through the library and returns the process exit code:
//   0 success, 1 the work failed (bad input file, I/O error), 2 bad usage (flags, arguments).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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

// For an id of a token file read as u32 that is no token of a vocabulary of `id_bound` ids: a
// hint (starting with a space) when it reads as two u16 ids below the bound, else "".
std::string U16ReadAsU32Hint(uint32_t id, size_t id_bound);

}  // namespace tokenmill::cli
