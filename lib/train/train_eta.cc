#include "train/train_eta.h"

#include <algorithm>
#include <cmath>

namespace tokenmill {

void EtaModel::Observe(size_t step, uint64_t work, double seconds) {
  if (last_step_ == 0) {
    first_step_ = last_step_ = step;
    first_seconds_ = last_seconds_ = seconds;
    return;
  }
  if (windows_.empty() || windows_.back().steps >= kWindowSteps) {
    windows_.push_back(Window{.first_step = step});
  }
  Window& w = windows_.back();
  ++w.steps;
  w.work += work;
  w.seconds += std::max(0.0, seconds - last_seconds_);
  last_seconds_ = seconds;
  last_step_ = step;
}

double EtaModel::RemainingSeconds(size_t planned) const {
  if (last_step_ == 0) return -1;
  if (planned <= last_step_) return 0;
  const double left = static_cast<double>(planned - last_step_);
  const double plain = last_step_ > first_step_ ? (last_seconds_ - first_seconds_) /
                                                       static_cast<double>(last_step_ - first_step_) * left
                                                 : -1;
  // The recent half of the closed windows (at least 8), whose steps resemble those to come more
  // than the first ones do.
  if (windows_.empty()) return plain;
  const size_t closed = windows_.size() - (windows_.back().steps < kWindowSteps ? 1 : 0);
  if (closed < 8) return plain;
  // Two straight lines in log-log, by least squares: how the work per step falls with the
  // step (log w = c1 - alpha log step), and how a step's time grows with its work
  // (log t = c2 + beta log w).
  struct Line {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    void Add(double x, double y) { n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y; }
    bool Fit(double* intercept, double* slope) const {
      const double var = n * sxx - sx * sx;
      if (n < 4 || !(var > 0)) return false;
      *slope = (n * sxy - sx * sy) / var;
      *intercept = (sy - *slope * sx) / n;
      return std::isfinite(*slope) && std::isfinite(*intercept);
    }
  } decay, cost;
  for (size_t i = closed / 2; i < closed; ++i) {
    const Window& w = windows_[i];
    if (w.work == 0 || !(w.seconds > 0)) continue;
    const double steps = static_cast<double>(w.steps);
    const double work = std::log(static_cast<double>(w.work) / steps);
    decay.Add(std::log(static_cast<double>(w.first_step) + (steps - 1) / 2), work);
    cost.Add(work, std::log(w.seconds / steps));
  }
  double c1, s1, c2, beta;
  if (!decay.Fit(&c1, &s1) || !cost.Fit(&c2, &beta)) return plain;
  // A step's time as a power of the step: t = e^c x^-g, summed over the steps left as the
  // integral from last_step + 1/2 to planned + 1/2.
  const double g = -s1 * beta, c = c2 + beta * c1;
  const double lo = static_cast<double>(last_step_) + 0.5, hi = static_cast<double>(planned) + 0.5;
  const double integral = std::abs(g - 1) < 1e-9
                              ? std::log(hi / lo)
                              : (std::pow(hi, 1 - g) - std::pow(lo, 1 - g)) / (1 - g);
  const double estimate = std::exp(c) * integral;
  return std::isfinite(estimate) && estimate >= 0 ? estimate : plain;
}

}  // namespace tokenmill
