// A tokenmill child process for tests that interrupt training (tests only): run with
// --verbose --log-every 1, its stderr a pipe of one page that the test reads line by line.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tokenmill::testing {

// Forks the CLI with `args`: stdin and stdout /dev/null, stderr the write end of `pipe_fds`
// (closed in the parent afterwards; the read end stays the parent's). Returns its pid.
inline pid_t StartCliWritingStderrTo(const std::vector<std::string>& args, const int pipe_fds[2]) {
  const pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv = {const_cast<char*>(TOKENMILL_CLI_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TOKENMILL_CLI_PATH, argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  return pid;
}

// A tokenmill child run with --verbose --log-every 1, whose stderr is a pipe of one page that
// the test reads line by line. While the test does not read, the child blocks at its next log
// line, a few dozen merges on: it cannot finish behind the test's back, so a signal sent after
// the test saw merge N lands in a run that is still training, however slow the machine.
class TrainingChild {
 public:
  explicit TrainingChild(const std::vector<std::string>& args) {
    int p[2];
    if (pipe(p) != 0) throw std::runtime_error("pipe failed");
    // One page: the slack the child has past the merge the test waits for. A kernel that
    // refuses (or has larger pages) would let it run hundreds of merges on: fail loudly.
    if (fcntl(p[0], F_SETPIPE_SZ, 4096) < 0 || fcntl(p[0], F_GETPIPE_SZ) > 4096) {
      throw std::runtime_error("cannot make the stderr pipe one 4 KiB page");
    }
    pid_ = StartCliWritingStderrTo(args, p);
    fd_ = p[0];
  }
  ~TrainingChild() {
    if (fd_ >= 0) close(fd_);
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  const std::string& err() const { return err_; }

  // Reads stderr until a log line of a merge this run made (not a replayed one) numbered at
  // least `n`; returns that number, or 0 when stderr ended first.
  size_t ReadUntilMerge(size_t n) {
    while (true) {
      size_t eol;
      while ((eol = err_.find('\n', scanned_)) != std::string::npos) {
        std::string line = err_.substr(scanned_, eol - scanned_);
        scanned_ = eol + 1;
        if (line.starts_with("merge ") && !line.ends_with("[resumed]")) {
          size_t done = std::stoul(line.substr(6));
          if (done >= n) return done;
        }
      }
      if (!ReadSome()) return 0;
    }
  }
  // Reads stderr to its end.
  void Drain() {
    while (ReadSome()) {
    }
  }
  // Waits until the child is blocked writing to the full pipe: its main thread sleeps in the
  // kernel's pipe write (pipe_write, anon_pipe_write in newer kernels), or in write(2, ...).
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
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  // Waits until no signal is pending for the process any more (a handler has taken it).
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
  int Wait() {
    Drain();
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    return status;
  }

 private:
  bool ReadSome() {
    char buffer[4096];
    ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n <= 0) return false;
    err_.append(buffer, static_cast<size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  bool waited_ = false;
  std::string err_;
  size_t scanned_ = 0;
};

}  // namespace tokenmill::testing
