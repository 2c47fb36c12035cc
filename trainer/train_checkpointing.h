// Checkpointing for `tokenmill train`: the flags, the interrupt handling, and the writer that
// TrainControl::after_merge drives.
//
// Contract:
//  - A checkpoint is written right after counting, every --checkpoint-every merges and/or
//    --checkpoint-interval seconds, when training ends, and on SIGINT/SIGTERM: the current
//    merge finishes, the checkpoint is written, and training stops (exit 130 / 143 follows).
//    A second signal exits at once; the last complete checkpoint stays valid.
//  - Resuming replays the checkpoint's merges over its word table (never re-reading the corpus)
//    and continues to the output an uninterrupted run gives.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint.h"
#include "flags.h"
#include "train/trainer.h"

namespace tokenmill::cli {

struct CheckpointCommandOptions {
  // Where checkpoints go: "" means OUTPUT.ckpt beside the output; "none" turns them off.
  std::string checkpoint;
  // Also checkpoint every this many merges (0: only after counting, at the end and on signals).
  uint64_t checkpoint_every = 0;
  // Also checkpoint when this many seconds have passed since the last one (0: never).
  double checkpoint_interval = 0;
  // Continue from this checkpoint instead of reading a corpus.
  std::string resume;
  // Resume even if the corpus files changed since the checkpoint was written.
  bool ignore_corpus_change = false;
};

void AddCheckpointFlags(FlagSet& flags, CheckpointCommandOptions* options);

// The flags that never change the trained tokenizer, so they may differ on resume.
bool IsHarmlessSetting(std::string_view flag_name);

// The checkpoint path these options give for `output` ("" when checkpoints are off, or when
// `output` is an existing non-regular file such as /dev/stdout and --checkpoint is not given).
std::string CheckpointPath(const CheckpointCommandOptions& options, const std::string& output);

// Resuming. `register_flags` adds the train command's flags to a FlagSet bound to a fresh
// options struct; it is called on fresh FlagSets to rebuild the checkpoint's settings.
//
// ResumeSettings checks the command line (argv[first..]) against the checkpoint: a flag given
// there that changes the result (IsHarmlessSetting is false; --vocab-size excepted) must
// have the checkpoint's value(s), else the error names the flag and both values. Positional
// inputs are not allowed (the checkpoint holds the corpus). It then applies, on `flags` (bound
// to the options the run will use): the checkpoint's settings, then the command line's harmless
// flags and --vocab-size.
absl::Status ResumeSettings(const Checkpoint& checkpoint, int argc, char** argv, int first,
                            const std::function<void(FlagSet&)>& register_flags, FlagSet& flags);

// Compares the corpus files' sizes and modification times with the checkpoint's fingerprint.
// A change is an error naming the file, unless `ignore_change` (then a warning on stderr).
absl::Status CheckCorpusUnchanged(const Checkpoint& checkpoint, bool ignore_change);

// A run killed (SIGKILL, power loss) while writing PATH atomically leaves its temporary file
// PATH.tmp.XXXXXX behind; this removes such files. Call it before writing PATH again.
void RemoveStaleTemporaries(const std::string& path);

// SIGINT/SIGTERM handling for the life of the object: the first signal is recorded (see
// signal_number()); a second one ends the process at once with 128 + signal.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // 0 until a signal arrives, then its number.
  static int signal_number();
};

// Writes checkpoints for one training run. `base` holds the settings, corpus fingerprint and
// the merges learned before this run (in their stored form when merges_raw_count is nonzero,
// else from `merges`; when resuming, also the stored word-table frame, which is reused); `words` is the word table being trained on: it must stay alive until
// ReleaseWordTable() returns, after which the checkpoints need only its compressed copy. It may
// be null when `base` holds the stored table (a resumed run).
// Merges are recorded from the after_merge events (not when checkpoints are off).
class TrainingCheckpointer {
 public:
  TrainingCheckpointer(std::string path, const CheckpointCommandOptions& options, Checkpoint base,
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

  // For TrainControl::before_counts_freed: waits until a write in flight has copied the word
  // table (not for its compression or the disk), copies it if no write has, and lets go of
  // `words`.
  void ReleaseWordTable();

  // For TrainControl::after_step: records the merge, starts a checkpoint write in the
  // background when one is due (training does not wait for the disk; if the previous write is
  // still in flight, the due write follows as soon as it is done), and on a signal writes one
  // synchronously and returns false (stop). A failed write is remembered in status() and
  // stops training.
  bool AfterStep(const TrainEvent& event);

  const absl::Status& status() const { return status_; }
  const std::string& path() const { return path_; }
  size_t merges_done() const { return merge_count_; }
  // Checkpoints written by this object and the seconds spent writing them.
  size_t writes() const { return writes_; }
  double write_seconds() const { return write_seconds_; }

 private:
  std::string path_;
  uint64_t every_;
  double interval_;
  Checkpoint base_;
  const WordCounts* words_;
  CheckpointWriter writer_;
  // The merges so far, serialized (CheckpointWriter::AppendMerge), and how many.
  std::string merges_raw_;
  uint64_t merge_count_ = 0;
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
  struct WriteResult {
    absl::Status status;
    double seconds = 0;
  };
  std::future<WriteResult> pending_;  // the background write in flight, if any
  bool deferred_ = false;             // a write fell due while another was in flight
  // Waits for the background write and records its result.
  void CollectPending();
  WriteResult WriteSnapshot(const Checkpoint& snapshot, std::string_view merges_raw,
                            uint64_t merge_count);
};

}  // namespace tokenmill::cli
