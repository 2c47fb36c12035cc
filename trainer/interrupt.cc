#include "interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include "common/file_util.h"
#include "common/stop_request.h"

namespace tokenmill::cli {
namespace {

std::atomic<int> g_signal{0};

extern "C" void HandleInterrupt(int sig) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, sig)) {
    RequestStop();  // a read waiting on stdin gives up (common/stop_request.h)
  } else {
    // Second signal: leave now; the last complete checkpoint is on disk (writes are atomic),
    // and the temporary files of outputs being written go with us.
    RemoveTemporariesNow();
    static const char kMessage[] = "\ntokenmill: second interrupt, exiting at once\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
    _exit(128 + sig);
  }
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal.store(0);
  ClearStopRequest();
  struct sigaction action {};
  action.sa_handler = HandleInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed terminal (SIGHUP) stops the run the same way, unless it was started to ignore
  // hangups (nohup): then it keeps ignoring them.
  struct sigaction hangup {};
  sigaction(SIGHUP, nullptr, &hangup);
  handle_hangup_ = hangup.sa_handler != SIG_IGN;
  if (handle_hangup_) sigaction(SIGHUP, &action, nullptr);
}

InterruptGuard::~InterruptGuard() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (handle_hangup_) signal(SIGHUP, SIG_DFL);
}

int InterruptGuard::signal_number() { return g_signal.load(); }

}  // namespace tokenmill::cli
