// SIGINT/SIGTERM/SIGHUP for `tokenmill train` and `encode`: the first signal asks the run for
// an orderly stop (training: the current merge finishes, a checkpoint is written, the command
// exits 128 + the signal; encoding: nothing is written); a second one exits at once, leaving the
// last complete checkpoint (writes are atomic) and removing the temporary files of outputs
// being written. SIGHUP is left ignored when the process started ignoring it (nohup).
#pragma once

namespace tokenmill::cli {

// Handles the signals for the life of the object.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // 0 until a signal arrives, then its number.
  static int signal_number();

 private:
  bool handle_hangup_ = false;
};

}  // namespace tokenmill::cli
