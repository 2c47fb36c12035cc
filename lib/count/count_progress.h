// CountProgress: progress of a counting run on stderr, in one of three formats (the
// ProgressFormat idea of Hugging Face tokenizers): a one-line bar redrawn in place on a
// terminal, JSON lines for machines, or nothing. Workers bump atomic counters; a reporter
// thread prints twice a second (bar) or once a second (JSON) and a last line at Finish().
//
// Contract: Add*() are thread-safe and cheap (relaxed atomics). kAuto is a bar when stderr is
// a terminal and nothing otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "common/progress_format.h"

namespace tokenmill {

class CountProgress {
 public:
  // kEncode: the same report for encoding a corpus (encode_corpus.h), its third number the
  // tokens written instead of the unique words.
  enum class Stage { kCount, kEncode };
  CountProgress(ProgressFormat format, uint64_t total_disk_bytes, Stage stage = Stage::kCount);
  ~CountProgress();  // stops the reporter (without a final line unless Finish was called)
  CountProgress(const CountProgress&) = delete;
  CountProgress& operator=(const CountProgress&) = delete;

  void AddBatch(uint64_t disk_bytes, uint64_t documents, int64_t new_unique_words) {
    disk_bytes_.fetch_add(disk_bytes, std::memory_order_relaxed);
    documents_.fetch_add(documents, std::memory_order_relaxed);
    unique_.fetch_add(new_unique_words, std::memory_order_relaxed);
  }

  // Prints the final state (exact unique count) and stops the reporter.
  void Finish(uint64_t unique_words);

 private:
  void Run();
  void Print(bool final, uint64_t unique);

  ProgressFormat format_;
  uint64_t total_;
  Stage stage_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<uint64_t> disk_bytes_{0};
  std::atomic<uint64_t> documents_{0};
  std::atomic<int64_t> unique_{0};  // sum over threads' tables: an upper bound until merged
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool finished_ = false;
  std::thread reporter_;
};

}  // namespace tokenmill
