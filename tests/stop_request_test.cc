// What a second signal and a first one rely on below the CLI: RemoveTemporariesNow() unlinks
// the temporary files being written (a process about to _exit from a signal handler), and a
// read that waits on a pipe gives up with a Cancelled error once a stop is requested
// (common/stop_request.h) and no bytes come for a second, while bytes that come are read.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "common/file_util.h"
#include "common/stop_request.h"
#include "corpus/byte_stream.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(StopRequest, RemoveTemporariesNowUnlinksTheFilesBeingWritten) {
  testing::TempDir dir;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A child that writes two outputs, each to its temporary file, and leaves as a second
    // signal makes it leave: without committing or destroying anything.
    auto a = StreamingFile::Create(dir.File("a.u32"));
    auto b = StreamingFile::Create(dir.File("b.u32"));
    if (!a.ok() || !b.ok() || !(*a)->Write("ids").ok() || !(*b)->Write("ids").ok()) _exit(2);
    if (Names(dir.path()).size() != 2) _exit(3);  // both temporaries exist
    RemoveTemporariesNow();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{});
}

TEST(StopRequest, AReadWaitingOnAnIdlePipeGivesUp) {
  testing::TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Held open for writing (O_RDWR does not wait for a reader), and never closed while read.
  const int writer = open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);
  ClearStopRequest();
  InputFile input;
  input.path = fifo;
  auto stream = ByteStream::Open(input);
  ASSERT_TRUE(stream.ok()) << stream.status();
  char buffer[64];
  // Bytes that are there are read.
  ASSERT_EQ(write(writer, "abc", 3), 3);
  auto got = (*stream)->Read(buffer, sizeof buffer);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 3u);
  // No bytes and the pipe still open: the read waits. A stop request does not end it while
  // bytes still come (here 300 ms after the request): they are read.
  std::atomic<bool> returned{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    RequestStop();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(write(writer, "ef", 2), 2);
    // (Should the next read not give up, a byte after 5 s ends its wait, and the test fails.)
    for (int i = 0; i < 500 && !returned.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!returned.load()) {
      EXPECT_EQ(write(writer, "g", 1), 1);
    }
  });
  got = (*stream)->Read(buffer, sizeof buffer);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(std::string(buffer, *got), "ef");
  // Then no bytes for a second after the request: the read gives up.
  const auto start = std::chrono::steady_clock::now();
  got = (*stream)->Read(buffer, sizeof buffer);
  const auto waited = std::chrono::steady_clock::now() - start;
  returned = true;
  stopper.join();
  ClearStopRequest();
  ASSERT_FALSE(got.ok()) << "read " << *got << " bytes";
  EXPECT_TRUE(absl::IsCancelled(got.status())) << got.status();
  EXPECT_NE(std::string(got.status().message()).find("stopped while waiting for input on '" + fifo + "'"),
            std::string::npos)
      << got.status();
  EXPECT_GE(waited, std::chrono::milliseconds(900));  // it waited for more bytes first
  close(writer);
}

}  // namespace
}  // namespace tokenmill
