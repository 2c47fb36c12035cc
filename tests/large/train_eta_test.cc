// The training ETA (train/train_eta.h) judged on real runs of poetry trained for 30000 tokens,
// with every step's work and end time recorded, replayed into an EtaModel; at several points
// the estimate of the time left is compared with the time that was actually left, and with the
// old estimate (steps left / average rate so far: on poetry it said 2:41 at merge 1000 with
// about 8 s to go).
//
// Two tests:
//  - RecordedRun replays a run recorded once (tests/data/eta/poetry_steps.txt.zst, see
//    tests/data/README.md): deterministic, so it holds the model to bounds (within 2x from
//    merge 3000 on).
//  - LiveRun trains poetry now and asserts only that the model beats the old estimate, by a
//    wide margin everywhere (4x-20x in log terms on this machine). It does not hold the
//    live run to the 2x bounds: the model sees the same clock it is judged by, and on a
//    quiet 2-core machine alone it measured 0.86x-1.92x at merge 10000 in three runs
//    (2026-12-06), and 2.71x in a CI run; a unit test that fails on the machine's noise is
//    a timing test, which belongs in a benchmark. TOKENMILL_ETA_TRACE=PREFIX writes the live
//    run to PREFIX.CORPUS ("step work seconds" per line, the recorded file's format).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "corpus/byte_stream.h"
#include "corpus/input_files.h"
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

struct Point {
  size_t step;
  double actual, estimate, old;
};

// Replays `steps` into an EtaModel and returns, after each of `at`, the time actually left, the
// model's estimate and the old estimate.
std::vector<Point> Replay(const std::vector<Step>& steps, const std::vector<size_t>& at) {
  const size_t planned = steps.back().step;
  const double end = steps.back().seconds;
  EtaModel model;
  size_t next = 0;
  std::vector<Point> points;
  for (size_t a : at) {
    for (; next < steps.size() && steps[next].step <= a; ++next) {
      model.Observe(steps[next].step, steps[next].work, steps[next].seconds);
    }
    const Step& now = steps[next - 1];
    Point p{now.step, end - now.seconds, model.RemainingSeconds(planned),
            (now.seconds - steps.front().seconds) / static_cast<double>(now.step - 1) *
                static_cast<double>(planned - now.step)};
    std::printf("  after %5zu merges: %6.2f s left; estimate %6.2f s (%.2fx), old estimate %6.2f s (%.2fx)\n",
                p.step, p.actual, p.estimate, p.estimate / p.actual, p.old, p.old / p.actual);
    points.push_back(p);
  }
  return points;
}

void ExpectCloserThanTheOldEstimate(const std::vector<Point>& points) {
  for (const Point& p : points) {
    EXPECT_LT(std::abs(std::log(p.estimate / p.actual)), std::abs(std::log(p.old / p.actual)))
        << "no better than the old estimate after " << p.step << " merges";
  }
}

TEST(TrainEta, RecordedRun) {
  // Recorded at e093a14 on a quiet 2-core machine: the first of three runs, taken as it came.
  auto inputs = ResolveInputs({std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/eta/poetry_steps.txt.zst"},
                              InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  auto stream = ByteStream::Open(inputs->front());
  ASSERT_TRUE(stream.ok()) << stream.status();
  std::string text, chunk(1 << 16, '\0');
  while (true) {
    absl::StatusOr<size_t> got = (*stream)->Read(chunk.data(), chunk.size());
    ASSERT_TRUE(got.ok()) << got.status();
    if (*got == 0) break;
    text.append(chunk, 0, *got);
  }
  std::vector<Step> steps;
  std::istringstream lines(text);
  Step s;
  unsigned long long work;
  while (lines >> s.step >> work >> s.seconds) {
    s.work = work;
    ASSERT_TRUE(steps.empty() || (s.step == steps.back().step + 1 && s.seconds >= steps.back().seconds))
        << "line " << steps.size() + 1;
    steps.push_back(s);
  }
  ASSERT_TRUE(lines.eof()) << "unreadable line " << steps.size() + 1;
  ASSERT_EQ(steps.size(), 29744u);
  std::vector<size_t> at;
  for (size_t a = 1000; a < 29000; a += 1000) at.push_back(a);
  const std::vector<Point> points = Replay(steps, at);
  ExpectCloserThanTheOldEstimate(points);
  // From merge 3000 on, within 2x of the time that was left. At merge 1000 the parallel first
  // merges (less time per word) still weigh in the fit (5.8x on this recording; the old
  // estimate 19.8x), so only "closer" holds there.
  for (const Point& p : points) {
    if (p.step < 3000) continue;
    EXPECT_GT(p.estimate, p.actual / 2) << "after " << p.step << " merges";
    EXPECT_LT(p.estimate, p.actual * 2) << "after " << p.step << " merges";
  }
}

TEST(TrainEta, LiveRun) {
  const std::string path = std::string(TOKENMILL_SHARED_DIR) + "/corpora/poetry.txt.zst";
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
    std::FILE* f = std::fopen((std::string(trace) + ".poetry").c_str(), "w");
    for (const Step& s : steps) std::fprintf(f, "%zu %llu %.6f\n", s.step, (unsigned long long)s.work, s.seconds);
    std::fclose(f);
  }
  std::printf("poetry: %zu merges in %.2f s\n", steps.back().step, steps.back().seconds - steps.front().seconds);
  ExpectCloserThanTheOldEstimate(Replay(steps, {1000, 3000, 10000, 20000}));
}

}  // namespace
}  // namespace tokenmill
