// SIGINT/SIGTERM for `tokenmill train`: the first signal asks the training run for an orderly
// stop (the current merge finishes, a checkpoint is written, the command exits 130 / 143); a
// second one exits at once, leaving the last complete checkpoint (writes are atomic).
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
};

}  // namespace tokenmill::cli
