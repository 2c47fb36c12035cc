// TrainingCheckpointer: writes the checkpoints of one training run, driven by the trainer's
// steps (TrainControl::after_step): merges are appended one by one, a round-based trainer's
// state (TrainEvent::state) replaces the last one.
//
// Contract:
//  - A checkpoint is written right after counting (StartWrite), every `every` steps and/or
//    `interval` seconds, when training ends (StartWrite(finished)), and when a stop is asked
//    for (AfterStep's `stop`): the current step has finished, the checkpoint is written, and
//    training stops.
//  - Writes due during training happen in the background (training does not wait for the
//    disk; if the previous write is still in flight, the due write follows as soon as it is
//    done); a failed write is remembered in status() and stops training.
//  - `base` holds the options, corpus fingerprint and the merges learned before this run (in
//    their stored form when merges_raw_count is nonzero, else from `merges`; when resuming,
//    also the stored word-table frame, which is reused). `words` is the word table being
//    trained on: it must stay alive until ReleaseWordTable() returns, after which the
//    checkpoints need only its compressed copy; it may be null when `base` holds the stored
//    table (a resumed run). Merges are recorded from the steps' events (not when checkpoints
//    are off: an empty path).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <future>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "checkpoint/checkpoint.h"
#include "train/trainer.h"

namespace tokenmill {

class TrainingCheckpointer {
 public:
  TrainingCheckpointer(std::string path, uint64_t every, double interval, Checkpoint base,
                       int threads, const WordCounts* words);
  ~TrainingCheckpointer();

  // Writes the checkpoint with the merges recorded so far, after any write in flight.
  absl::Status WriteNow(bool finished);
  // Starts writing the checkpoint with the merges recorded so far in the background (after any
  // write in flight); its result shows in status() by the next write or the destructor.
  // `finished`: training has ended (the last checkpoint of a run).
  void StartWrite(bool finished = false);
  // Waits for the write in flight; the first failure of any write, or OK.
  absl::Status Finish();

  // For WordSource::BeforeRelease: waits until a write in flight has copied the word table
  // (not for its compression or the disk), copies it if no write has, and lets go of `words`.
  void ReleaseWordTable();

  // For TrainControl::after_step: records the step's merge, and writes a checkpoint when one
  // is due, or at once (synchronously) when `stop` is set. Returns false to stop training (a
  // stop, or a failed write).
  bool AfterStep(const TrainEvent& event, bool stop);

  const absl::Status& status() const { return status_; }
  const std::string& path() const { return path_; }
  size_t merges_done() const { return merge_count_; }
  // Round-based trainers (Unigram): the rounds the last recorded state is after.
  size_t rounds_done() const { return rounds_; }
  // Checkpoints written by this object and the seconds spent writing them.
  size_t writes() const { return writes_; }
  double write_seconds() const { return write_seconds_; }

 private:
  struct WriteResult {
    absl::Status status;
    double seconds = 0;
  };
  // Waits for the background write and records its result.
  void CollectPending();
  WriteResult WriteSnapshot(const Checkpoint& snapshot, std::string_view merges_raw,
                            uint64_t merge_count);

  std::string path_;
  uint64_t every_;
  double interval_;
  Checkpoint base_;
  const WordCounts* words_;
  CheckpointWriter writer_;
  // The merges so far, serialized (CheckpointWriter::AppendMerge), and how many.
  std::string merges_raw_;
  uint64_t merge_count_ = 0;
  size_t rounds_ = 0;
  // writer_ holds the word table serialized. The first write (in the background) serializes
  // it, signals, then compresses it as it writes; ReleaseWordTable waits for the serialization
  // only, so the trainer does not wait for zstd.
  bool table_serialized_ = false;  // guarded by table_mutex_
  std::mutex table_mutex_;
  std::condition_variable table_done_;
  double last_write_seconds_;
  size_t writes_ = 0;
  double write_seconds_ = 0;
  absl::Status status_;
  std::future<WriteResult> pending_;  // the background write in flight, if any
  bool deferred_ = false;             // a write fell due while another was in flight
};

}  // namespace tokenmill
