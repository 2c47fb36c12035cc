#include "count/count_progress.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_format.h"
#include "common/strings.h"

namespace tokenmill {

CountProgress::CountProgress(ProgressFormat format, uint64_t total_disk_bytes, Stage stage)
    : format_(ResolveProgressFormat(format)),
      total_(total_disk_bytes),
      stage_(stage),
      start_(std::chrono::steady_clock::now()) {
  if (format_ != ProgressFormat::kNone) reporter_ = std::thread([this] { Run(); });
}

CountProgress::~CountProgress() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (reporter_.joinable()) reporter_.join();
  if (format_ == ProgressFormat::kBar && !finished_) std::fputs("\n", stderr);
}

void CountProgress::Finish(uint64_t unique_words) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (reporter_.joinable()) reporter_.join();
  if (format_ != ProgressFormat::kNone && !finished_) {
    Print(true, unique_words);
    if (format_ == ProgressFormat::kBar) std::fputs("\n", stderr);
  }
  finished_ = true;
}

void CountProgress::Run() {
  auto period = std::chrono::milliseconds(format_ == ProgressFormat::kBar ? 500 : 1000);
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    Print(false, static_cast<uint64_t>(std::max<int64_t>(0, unique_.load(std::memory_order_relaxed))));
  }
}

void CountProgress::Print(bool final, uint64_t unique) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  uint64_t bytes = disk_bytes_.load(std::memory_order_relaxed);
  uint64_t documents = documents_.load(std::memory_order_relaxed);
  double mb_per_s = seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0.0;
  double eta = -1;
  if (!final && total_ > 0 && bytes > 0 && bytes < total_) {
    eta = seconds * static_cast<double>(total_ - bytes) / static_cast<double>(bytes);
  }
  std::string line;
  // The two stages differ only in their names and in the third number (an upper bound on the
  // unique words until counting ends; exact tokens).
  const bool encoding = stage_ == Stage::kEncode;
  const char* stage = encoding ? "encode" : "count";
  const char* third = encoding ? "tokens" : "unique_words";
  if (format_ == ProgressFormat::kJson) {
    line = absl::StrFormat(
        "{\"stage\":\"%s\",\"final\":%s,\"seconds\":%.2f,\"bytes_read\":%u,\"bytes_total\":%u,"
        "\"mb_per_s\":%.1f,\"documents\":%u,\"%s\":%u%s}\n",
        stage, final ? "true" : "false", seconds, bytes, total_, mb_per_s, documents, third, unique,
        eta >= 0 ? absl::StrFormat(",\"eta_seconds\":%.1f", eta) : std::string());
  } else {
    std::string of_total =
        total_ > 0 ? absl::StrFormat(" / %.1f MB (%3.0f%%)", static_cast<double>(total_) / 1e6,
                                     100.0 * static_cast<double>(bytes) / static_cast<double>(total_))
                   : std::string();
    line = absl::StrFormat("\r%s: %.1f MB%s, %.1f MB/s, %u documents, %s%u %s%s\033[K",
                           encoding ? "encoding" : "counting", static_cast<double>(bytes) / 1e6,
                           of_total, mb_per_s, documents, final || encoding ? "" : "<= ", unique,
                           encoding ? "tokens" : "unique words",
                           eta >= 0 ? absl::StrFormat(", ETA %.0f s", eta) : std::string());
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace tokenmill
