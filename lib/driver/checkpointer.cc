#include "driver/checkpointer.h"

#include <chrono>
#include <ctime>

#include "common/file_util.h"

namespace tokenmill {
namespace {

double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

TrainingCheckpointer::TrainingCheckpointer(std::string path, uint64_t every, double interval,
                                           Checkpoint base, int threads, const WordCounts* words)
    : path_(std::move(path)),
      every_(every),
      interval_(interval),
      base_(std::move(base)),
      words_(words),
      writer_(threads),
      last_write_seconds_(NowSeconds()) {
  if (base_.merges_raw_count != 0) {  // as read from a checkpoint
    merges_raw_ = std::move(base_.merges_raw);
    merge_count_ = base_.merges_raw_count;
  } else {
    merges_raw_ = CheckpointWriter::SerializeMerges(base_.merges, base_.merge_counts);
    merge_count_ = base_.merges.size();
  }
  std::vector<std::pair<std::string, std::string>>().swap(base_.merges);
  std::vector<uint64_t>().swap(base_.merge_counts);
  std::string().swap(base_.merges_raw);
  base_.merges_raw_count = 0;
  if (!base_.words_frame.empty()) {
    // Resumed: the table's compressed frame is the checkpoint's own.
    writer_.AdoptWordTable(std::move(base_.words_frame), base_.word_table_hash,
                           base_.unique_words, base_.total_words, base_.words_file,
                           base_.words_frame_crc);
    base_.words_frame = SharedBytes();
    table_serialized_ = true;
  }
}

TrainingCheckpointer::~TrainingCheckpointer() { CollectPending(); }

TrainingCheckpointer::WriteResult TrainingCheckpointer::WriteSnapshot(
    const Checkpoint& snapshot, std::string_view merges_raw, uint64_t merge_count) {
  double start = NowSeconds();
  RemoveStaleTemporaries(path_);
  RemoveStaleTemporaries(WordTablePath(path_));
  WriteResult result;
  bool serialized;
  {
    std::lock_guard<std::mutex> lock(table_mutex_);
    serialized = table_serialized_;
  }
  if (!serialized) {
    writer_.SerializeWordTable(*words_);
    {
      std::lock_guard<std::mutex> lock(table_mutex_);
      table_serialized_ = true;
    }
    table_done_.notify_all();
  }
  // The writer compresses the table on its first write (here, in the background).
  result.status = writer_.Write(snapshot, merges_raw, merge_count, path_);
  result.seconds = NowSeconds() - start;
  return result;
}

void TrainingCheckpointer::CollectPending() {
  if (!pending_.valid()) return;
  WriteResult result = pending_.get();
  ++writes_;
  write_seconds_ += result.seconds;
  if (!result.status.ok() && status_.ok()) status_ = result.status;
}

absl::Status TrainingCheckpointer::WriteNow(bool finished) {
  if (path_.empty()) return absl::OkStatus();
  CollectPending();
  if (!status_.ok()) return status_;
  base_.finished = finished;
  base_.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  WriteResult result = WriteSnapshot(base_, merges_raw_, merge_count_);
  ++writes_;
  write_seconds_ += result.seconds;
  last_write_seconds_ = NowSeconds();
  deferred_ = false;
  return result.status;
}

void TrainingCheckpointer::ReleaseWordTable() {
  if (path_.empty() || words_ == nullptr) return;
  if (pending_.valid()) {
    // A write in flight copies the table first: wait for that part only, not for zstd or disk.
    std::unique_lock<std::mutex> lock(table_mutex_);
    table_done_.wait(lock, [this] { return table_serialized_; });
  }
  bool serialized;
  {
    std::lock_guard<std::mutex> lock(table_mutex_);
    serialized = table_serialized_;
  }
  if (!serialized) {
    CollectPending();
    writer_.SerializeWordTable(*words_);  // the next write compresses it
    std::lock_guard<std::mutex> lock(table_mutex_);
    table_serialized_ = true;
  }
  words_ = nullptr;
}

bool TrainingCheckpointer::AfterStep(const TrainEvent& event, bool stop) {
  if (!path_.empty() && merge_count_ < event.steps_done && event.merge != nullptr) {
    CheckpointWriter::AppendMerge(&merges_raw_, event.merge->left, event.merge->right,
                                  event.merge->count);
    ++merge_count_;
  }
  if (!path_.empty() && !event.state.empty()) {
    base_.trainer_state.assign(event.state);
    rounds_ = event.steps_done;
  }
  if (stop) {
    absl::Status status = WriteNow(false);
    if (!status.ok() && status_.ok()) status_ = status;
    return false;
  }
  // Replayed merges are in the checkpoint already: no write falls due while they are reported.
  if (path_.empty() || event.replayed) return true;
  bool due = deferred_ || (every_ > 0 && event.steps_done % every_ == 0) ||
             (interval_ > 0 && NowSeconds() - last_write_seconds_ >= interval_);
  if (!due) return true;
  if (pending_.valid() &&
      pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    deferred_ = true;  // the disk is slower than the cadence: write as soon as it is free
    return true;
  }
  StartWrite();
  return status_.ok();
}

absl::Status TrainingCheckpointer::Finish() {
  CollectPending();
  return status_;
}

void TrainingCheckpointer::StartWrite(bool finished) {
  if (path_.empty()) return;
  CollectPending();
  if (!status_.ok()) return;
  deferred_ = false;
  base_.finished = finished;
  base_.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  last_write_seconds_ = NowSeconds();
  // Everything but the word table (the writer holds it, or reads it through words_ first).
  Checkpoint snapshot;
  snapshot.model_type = base_.model_type;
  snapshot.trainer_options = base_.trainer_options;
  snapshot.corpus_options = base_.corpus_options;
  snapshot.run_options = base_.run_options;
  snapshot.corpus_files = base_.corpus_files;
  snapshot.documents = base_.documents;
  snapshot.corpus_bytes = base_.corpus_bytes;
  snapshot.trainer_state = base_.trainer_state;
  snapshot.finished = base_.finished;
  snapshot.created_unix_seconds = base_.created_unix_seconds;
  pending_ = std::async(std::launch::async, [this, snapshot = std::move(snapshot),
                                             merges = merges_raw_, count = merge_count_]() {
    return WriteSnapshot(snapshot, merges, count);
  });
}

}  // namespace tokenmill
