#include "reference/cli_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace tokenmill::testing {

CliResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                     const std::string& input) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    throw std::runtime_error("pipe failed");
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  signal(SIGPIPE, SIG_IGN);
  CliResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  char buffer[65536];
  while (out_open || err_open) {
    pollfd fds[3];
    int n = 0;
    int out_idx = -1, err_idx = -1, in_idx = -1;
    if (out_open) { fds[n] = {out_pipe[0], POLLIN, 0}; out_idx = n++; }
    if (err_open) { fds[n] = {err_pipe[0], POLLIN, 0}; err_idx = n++; }
    if (in_fd >= 0) { fds[n] = {in_fd, POLLOUT, 0}; in_idx = n++; }
    if (poll(fds, n, -1) < 0) continue;
    auto drain = [&](int idx, int fd, std::string& sink, bool& open) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t r = read(fd, buffer, sizeof(buffer));
      if (r <= 0) open = false;
      else sink.append(buffer, static_cast<size_t>(r));
    };
    drain(out_idx, out_pipe[0], result.out, out_open);
    drain(err_idx, err_pipe[0], result.err, err_open);
    if (in_idx >= 0 && (fds[in_idx].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(in_fd, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 || written == input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) close(in_fd);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CliResult RunCli(const std::vector<std::string>& args, const std::string& input) {
  return RunProgram(TOKENMILL_CLI_PATH, args, input);
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tokenmill_test_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& contents) const {
  std::string path = File(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> SplitWords(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> FilesStartingWith(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) found.push_back(name);
  }
  return found;
}

std::thread FeedPipe(const std::string& fifo, const std::string& bytes, std::function<bool()> ready,
                     std::atomic<bool>* gave_up) {
  return std::thread([fifo, bytes, ready = std::move(ready), gave_up] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (ready && !ready()) {
      if (std::chrono::steady_clock::now() > deadline) {
        if (gave_up != nullptr) *gave_up = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    int fd = -1;
    for (int i = 0; i < 6000 && fd < 0; ++i) {
      fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO until the reader opens it
      if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fd < 0) return;
    for (size_t done = 0, idle = 0; done < bytes.size() && idle < 6000;) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
        idle = 0;
      } else if (n < 0 && errno == EAGAIN) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ++idle;
      } else {
        break;
      }
    }
    ::close(fd);
  });
}

}  // namespace tokenmill::testing
