// The training ETA (train/train_eta.h) on a recorded run: poetry is trained for 30000 tokens
// with every step's work and end time recorded, then the run is replayed into an EtaModel; at
// several points the estimate of the time left is compared with the time that was actually
// left. The old estimate (steps left / average rate so far) is printed beside it: on poetry it
// said 2:41 at merge 1000 with about 8 s to go. The model sees the same clock it is judged by,
// so a noisy machine moves both; the bounds are wide (see below). TOKENMILL_ETA_TRACE=PREFIX
// writes each recorded run to PREFIX.CORPUS ("step work seconds" per line).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "count/count_corpus.h"
#include "train/train_eta.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

struct Step {
  size_t step;
  uint64_t work;
  double seconds;
};

class TrainEta : public ::testing::TestWithParam<const char*> {};

TEST_P(TrainEta, EstimatesTheTimeLeftFromTheWorkOfTheSteps) {
  const std::string path = std::string(TOKENMILL_SHARED_DIR) + "/corpora/" + GetParam() + ".txt.zst";
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "shared corpus " << path << " not found";
  }
  CountCorpusOptions count_options;
  count_options.inputs = {path};
  absl::StatusOr<CorpusCounts> counts = CountCorpus(count_options);
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::vector<Step> steps;
  const auto start = std::chrono::steady_clock::now();
  TrainControl control;
  control.after_step = [&](const TrainEvent& e) {
    steps.push_back({e.steps_done, e.work,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    return true;
  };
  TrainerOptions options;
  options.vocab_size = 30000;
  absl::StatusOr<TrainResult> result = MakeTrainer(options).value()->Train(
      WordSource::Borrow(counts->words), control);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_GT(steps.size(), 20000u);
  if (const char* trace = std::getenv("TOKENMILL_ETA_TRACE")) {
    std::FILE* f = std::fopen((std::string(trace) + "." + GetParam()).c_str(), "w");
    for (const Step& s : steps) std::fprintf(f, "%zu %llu %.6f\n", s.step, (unsigned long long)s.work, s.seconds);
    std::fclose(f);
  }
  const size_t planned = steps.back().step;
  const double end = steps.back().seconds;
  EtaModel model;
  size_t next = 0;
  std::printf("%s: %zu merges in %.2f s\n", GetParam(), planned, end - steps.front().seconds);
  for (size_t at : {size_t{1000}, size_t{3000}, size_t{10000}, size_t{20000}}) {
    for (; next < steps.size() && steps[next].step <= at; ++next) {
      model.Observe(steps[next].step, steps[next].work, steps[next].seconds);
    }
    const Step& now = steps[next - 1];
    const double actual = end - now.seconds;
    const double estimate = model.RemainingSeconds(planned);
    const double old = (now.seconds - steps.front().seconds) / static_cast<double>(now.step - 1) *
                       static_cast<double>(planned - now.step);
    std::printf("  after %5zu merges: %6.2f s left; estimate %6.2f s (%.2fx), old estimate %6.2f s (%.2fx)\n",
                now.step, actual, estimate, estimate / actual, old, old / actual);
    // Closer than the old estimate everywhere; within 2.5x from merge 3000 on (measured 0.6x-
    // 1.6x at merge 3000 and 1.1x-1.4x at 10000 on 2026-12-04; the test runs alone under ctest,
    // RUN_SERIAL in CMakeLists.txt, and the slack is for the machine's own noise). At merge 1000
    // (measured 3.0x-3.8x) the parallel first merges (less time per word) still weigh in the
    // fit, so only "closer" is asserted there.
    EXPECT_LT(std::abs(std::log(estimate / actual)), std::abs(std::log(old / actual)))
        << "no better than the old estimate after " << now.step << " merges";
    if (at >= 3000) {
      EXPECT_GT(estimate, actual / 2.5) << "after " << now.step << " merges";
      EXPECT_LT(estimate, actual * 2.5) << "after " << now.step << " merges";
    }
  }
}

// poetry: a run long enough for an ETA to matter (linux_docs' whole merge loop takes 0.3 s,
// too little for its timings to mean anything at this scale).
INSTANTIATE_TEST_SUITE_P(Corpora, TrainEta, ::testing::Values("poetry"));

}  // namespace
}  // namespace tokenmill
