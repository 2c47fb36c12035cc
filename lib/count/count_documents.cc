// CountDocuments (count_corpus.h): the caller's thread fills batches of documents (calling the
// source, which runs the caller's code: a Python iterator, under the GIL) and queues them;
// counting threads of their own (std::threads, so that no task scheduler ever runs the
// counting on the caller's thread or the source on another) count them into a table each,
// merged at the end as CountCorpus merges its threads' tables.
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"
#include "count/count_corpus.h"
#include "count/count_progress.h"
#include "count/count_state.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/task_arena.h"

namespace tokenmill {
namespace {

// The batches between the caller's thread, which fills them, and the counting threads: a
// bounded queue of filled batches, and the emptied ones, kept to be filled again.
class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}

  // An emptied batch to fill, or a new one.
  std::unique_ptr<DocumentBatch> TakeEmpty() {
    std::lock_guard<std::mutex> lock(mu_);
    if (emptied_.empty()) return std::make_unique<DocumentBatch>();
    std::unique_ptr<DocumentBatch> batch = std::move(emptied_.back());
    emptied_.pop_back();
    return batch;
  }
  void GiveEmpty(std::unique_ptr<DocumentBatch> batch) {
    batch->clear();
    std::lock_guard<std::mutex> lock(mu_);
    emptied_.push_back(std::move(batch));
  }

  // Queues a filled batch, waiting while the queue is full; false (the batch dropped) once the
  // queue is stopped.
  bool Push(std::unique_ptr<DocumentBatch> batch) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] { return filled_.size() < capacity_ || stopped_; });
    if (stopped_) return false;
    filled_.push_back(std::move(batch));
    ready_.notify_one();
    return true;
  }
  // The next filled batch, waiting for one; null once the queue is closed and empty, or stopped.
  std::unique_ptr<DocumentBatch> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return !filled_.empty() || closed_ || stopped_; });
    if (stopped_ || filled_.empty()) return nullptr;
    std::unique_ptr<DocumentBatch> batch = std::move(filled_.front());
    filled_.pop_front();
    room_.notify_one();
    return batch;
  }

  // No more batches come: Pop hands out the queued ones, then null.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    ready_.notify_all();
  }
  // Counting stops: the queued batches are dropped, Push and Pop return at once.
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    filled_.clear();
    ready_.notify_all();
    room_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_;  // a batch is queued, or the queue closed or stopped
  std::condition_variable room_;   // a batch left the queue, or the queue stopped
  std::deque<std::unique_ptr<DocumentBatch>> filled_;
  std::vector<std::unique_ptr<DocumentBatch>> emptied_;
  bool closed_ = false;
  bool stopped_ = false;
};

// A batch's ends must cut its text into documents, the last ending where the text does.
absl::Status CheckBatch(const DocumentBatch& batch) {
  size_t start = 0;
  for (size_t i = 0; i < batch.ends.size(); ++i) {
    if (batch.ends[i] < start || batch.ends[i] > batch.text.size()) {
      return absl::InvalidArgumentError(
          StrCat("a batch of ", batch.ends.size(), " documents in ", batch.text.size(),
                 " bytes ends document ", i, " at ", batch.ends[i], ", after one ending at ", start));
    }
    start = batch.ends[i];
  }
  if (start != batch.text.size()) {
    return absl::InvalidArgumentError(StrCat("a batch of ", batch.ends.size(), " documents holds ",
                                             batch.text.size() - start,
                                             " bytes after its last document's end"));
  }
  return absl::OkStatus();
}

// The counting threads and their queue. The destructor stops and joins them, so that no
// path out of CountDocuments (an error of the source, an exception) leaves one running.
class DocumentCounter {
 public:
  DocumentCounter(const CountTools& tools, int threads, CountProgress& progress,
                  const std::function<void(const DocumentBatch&)>& counted)
      : tools_(tools), progress_(progress), counted_(counted),
        queue_(2 * static_cast<size_t>(threads)) {
    for (int i = 0; i < threads; ++i) states_.push_back(std::make_unique<CountState>());
    try {
      for (int i = 0; i < threads; ++i) threads_.emplace_back([this, i] { Work(*states_[i]); });
    } catch (...) {  // no destructor runs for a constructor that throws
      queue_.Stop();
      Join();
      throw;
    }
  }
  ~DocumentCounter() {
    queue_.Stop();
    Join();
  }
  DocumentCounter(const DocumentCounter&) = delete;
  DocumentCounter& operator=(const DocumentCounter&) = delete;

  // Hands the source's batches to the counting threads until its end, and waits until they
  // are counted; the source's error as it is.
  absl::Status Run(const DocumentSource& source) {
    for (bool more = true; more;) {
      std::unique_ptr<DocumentBatch> batch = queue_.TakeEmpty();
      TM_ASSIGN_OR_RETURN(more, source(*batch));
      TM_RETURN_IF_ERROR(CheckBatch(*batch));
      if (batch->ends.empty()) {
        queue_.GiveEmpty(std::move(batch));
      } else if (!queue_.Push(std::move(batch))) {
        break;  // a counting thread failed
      }
    }
    queue_.Close();
    Join();
    if (failure_) std::rethrow_exception(failure_);
    return absl::OkStatus();
  }

  // The threads' tables and totals (once Run has returned OK).
  std::vector<CountState*> states() const {
    std::vector<CountState*> states;
    for (const std::unique_ptr<CountState>& s : states_) states.push_back(s.get());
    return states;
  }

 private:
  void Work(CountState& state) {
    try {
      while (std::unique_ptr<DocumentBatch> batch = queue_.Pop()) {
        const size_t unique_before = state.words.unique_words();
        const std::string_view text = batch->text;
        size_t start = 0;
        for (size_t end : batch->ends) {
          state.CountWholeDocument(tools_, text.substr(start, end - start));
          start = end;
        }
        progress_.AddBatch(text.size(), batch->ends.size(),
                           static_cast<int64_t>(state.words.unique_words() - unique_before));
        if (counted_) counted_(*batch);
        queue_.GiveEmpty(std::move(batch));
      }
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(failure_mu_);
        if (!failure_) failure_ = std::current_exception();
      }
      queue_.Stop();
    }
  }
  void Join() {
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  const CountTools& tools_;
  CountProgress& progress_;
  const std::function<void(const DocumentBatch&)>& counted_;
  BatchQueue queue_;
  std::vector<std::unique_ptr<CountState>> states_;
  std::mutex failure_mu_;
  std::exception_ptr failure_;  // the first exception a counting thread threw
  std::vector<std::thread> threads_;  // last: started once everything above exists
};

}  // namespace

absl::StatusOr<CorpusCounts> CountDocuments(const DocumentSource& source,
                                            const CountCorpusOptions& options) {
  TM_ASSIGN_OR_RETURN(CorpusPlan plan, PlanDocuments(options));
  return CountDocuments(source, std::move(plan));
}

absl::StatusOr<CorpusCounts> CountDocuments(
    const DocumentSource& source, CorpusPlan plan,
    const std::function<void(const DocumentBatch&)>& counted) {
  const CountCorpusOptions& options = plan.options;
  TM_ASSIGN_OR_RETURN(CountTools tools, CountTools::Create(options));
  const int threads = ThreadCount(options.threads);
  // The merge runs on `threads` TBB threads, more than cores when asked for (as CountCorpus).
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads));
  CountProgress progress(options.progress, /*total_disk_bytes=*/0);
  CorpusCounts result;
  {
    DocumentCounter counter(tools, threads, progress, counted);
    TM_RETURN_IF_ERROR(counter.Run(source));
    tbb::task_arena arena(threads);
    MergeCountStates(counter.states(), arena, result);
  }
  progress.Finish(result.words.unique_words());
  TM_RETURN_IF_ERROR(FinishCount(plan.counts_files, result));
  return result;
}

}  // namespace tokenmill
