// EtaModel (train/train_eta.h) on synthetic runs whose time left is known exactly; the recorded
// poetry run is tests/large/train_eta_test.cc.
#include "train/train_eta.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tokenmill {
namespace {

TEST(EtaModel, NothingObservedIsUnknownAndOneStepOnlySetsTheClock) {
  EtaModel model;
  EXPECT_EQ(model.RemainingSeconds(100), -1);
  model.Observe(1, 50, 3.0);
  EXPECT_EQ(model.RemainingSeconds(100), -1);
  model.Observe(2, 50, 3.5);
  EXPECT_DOUBLE_EQ(model.RemainingSeconds(100), 0.5 * 98);  // the plain rate, few steps yet
  EXPECT_EQ(model.RemainingSeconds(2), 0);
}

// Steps whose work falls as a power of the step and whose time grows as a power of the work,
// as BPE's do: the estimate after a tenth of the run is the true time left within 2%.
TEST(EtaModel, APowerLawRunIsEstimatedAlmostExactly) {
  EtaModel model;
  auto work = [](size_t step) { return 1e5 * std::pow(static_cast<double>(step), -1.2); };
  auto seconds = [](double w) { return 2e-6 * std::pow(w, 0.7); };
  double clock = 0;
  const size_t planned = 30000;
  for (size_t step = 1; step <= 3000; ++step) {
    clock += seconds(work(step));
    model.Observe(step, static_cast<uint64_t>(std::llround(work(step) * 1000)) , clock);
  }
  double left = 0;
  for (size_t step = 3001; step <= planned; ++step) left += seconds(work(step));
  const double estimate = model.RemainingSeconds(planned);
  // The model saw work in thousandths (integers): the same power law, scaled.
  EXPECT_NEAR(estimate / left, 1.0, 0.02) << estimate << " vs " << left;
}

}  // namespace
}  // namespace tokenmill
