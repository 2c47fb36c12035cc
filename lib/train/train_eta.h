// EtaModel: the time training has left, estimated from the work its steps do rather than from
// the average rate of the steps so far.
//
// Why: the first merges of BPE rewrite far more words than the last (on poetry the first
// thousand of 29,744 merges take about half the merge loop), so "steps left / steps per
// second so far" overestimated the time left many times over (ETA 2:41 with 8 s to go). The
// model fits, as the run goes and over the recent half of its windows of 16 steps, two
// straight lines in log-log by least squares:
//   - how the work per step falls with the step: work = C1 * step^-alpha;
//   - how a step's time grows with its work: seconds = C2 * work^beta (beta < 1: a merge of
//     few words has fixed costs; one of many runs in parallel);
// and sums the time they give over the steps left. Until enough steps were seen (or when a
// fit is degenerate) it falls back to the plain rate. On a recorded poetry run
// (tests/large/train_eta_test.cc) it is within 0.56x-1.16x of the time left from merge 3000
// on, and 5.8x at merge 1000, where the plain rate was 20x; live runs vary with the machine's
// noise (0.86x-1.92x at merge 10000 in three quiet runs, 2.7x once in CI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokenmill {

class EtaModel {
 public:
  // Step `step` (1-based, increasing; replayed steps are not observed) did `work` units of
  // work and ended at `seconds` on some clock. The first observed step only sets the clock
  // (what came before it, counting and all, is not training's pace).
  void Observe(size_t step, uint64_t work, double seconds);
  // Seconds until step `planned` is done; -1 when nothing was observed yet.
  double RemainingSeconds(size_t planned) const;

 private:
  struct Window {
    size_t first_step = 0, steps = 0;
    uint64_t work = 0;
    double seconds = 0;
  };
  static constexpr size_t kWindowSteps = 16;
  std::vector<Window> windows_;  // closed windows, then the open one
  double first_seconds_ = 0, last_seconds_ = 0;
  size_t first_step_ = 0, last_step_ = 0;
};

}  // namespace tokenmill
