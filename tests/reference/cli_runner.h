// Runs the built tokenmill binary (TOKENMILL_CLI_PATH) in tests, capturing its exit code,
// stdout and stderr. Test-only.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace tokenmill::testing {

struct CliResult {
  int exit_code = -1;  // the process's exit status, or 128 + signal number
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs `binary args...` with `input` on stdin, without a shell (arguments are passed as is).
CliResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                     const std::string& input = "");

// Runs the tokenmill CLI.
CliResult RunCli(const std::vector<std::string>& args, const std::string& input = "");

// The names of the files in folder `dir` that start with `prefix`.
std::vector<std::string> FilesStartingWith(const std::string& dir, const std::string& prefix);

// The contents of the file at `path` ("" when it cannot be read).
std::string ReadAll(const std::string& path);
// The lines of `text` without their "\n" (a last line without one is a line; a final "\n"
// starts none).
std::vector<std::string> Lines(const std::string& text);
// `text` split at whitespace: a line of ids into the ids.
std::vector<std::string> SplitWords(const std::string& text);

// A thread that writes `bytes` into the named pipe `fifo` for the reader that opens it, once
// `ready()` holds (none: at once) or, after two minutes without, anyway, setting `*gave_up`.
// It gives up on a reader that does not come within 60 s or stops reading for 60 s, so that a
// test fails instead of hanging. SIGPIPE must be ignored (a reader that closes early).
std::thread FeedPipe(const std::string& fifo, const std::string& bytes,
                     std::function<bool()> ready = {}, std::atomic<bool>* gave_up = nullptr);

// A fresh empty folder under the system temp folder, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `contents` to File(name) and returns its path.
  std::string Write(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

}  // namespace tokenmill::testing
