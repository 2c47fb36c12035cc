// TrainProgress: reports training progress on a stream, driven by TrainControl::after_step.
//
// Formats (like ProgressFormat in Hugging Face tokenizers' utils/progress.rs):
//  - kBar: one line redrawn in place at most 10 times a second: merges done of planned,
//    merges/s, ETA (from the work the steps do: train_eta.h) and the token just learned; for
//    terminals.
//  - kJson: one JSON object per line at most once a second and at the end, for machines:
//    {"stage":"train","merges":N,"planned":M,"merges_per_s":R,"eta_s":E,"token":"<byte-level>"}
//  - kNone: nothing.
// Independently, log_every > 0 logs every log_every-th merge as
//   merge 100/30000: 'a' + 'b' -> 'ab' (count 1234)
// Round-based trainers (Unigram) are drawn after every round instead: the EM round of about how
// many, the vocabulary's size and the corpus log-likelihood (JSON: "round", "pieces",
// "log_likelihood"); log_every > 0 logs every round.
// with bytes outside printable ASCII escaped (\n, \t, \xHH), one line each.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/progress_format.h"
#include "train/train_eta.h"
#include "train/trainer.h"

namespace tokenmill {

class TrainProgress {
 public:
  // kAuto is resolved here (a bar on a terminal).
  TrainProgress(ProgressFormat format, uint64_t log_every, std::FILE* out)
      : format_(ResolveProgressFormat(format)), log_every_(log_every), out_(out) {}

  // Reports one step; always returns true (never interrupts).
  bool OnStep(const TrainEvent& event);
  // Final report (ends the bar's line).
  void Finish();

 private:
  void Draw(bool final);

  ProgressFormat format_;
  uint64_t log_every_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  size_t done_ = 0, planned_ = 0;
  EtaModel eta_;
  std::string last_token_;
  bool drawn_ = false;
  // Round-based trainers (TrainEvent::pieces): the last round's vocabulary and log-likelihood.
  bool rounds_ = false;
  size_t pieces_ = 0;
  double log_likelihood_ = 0;
};

// Bytes as text for logs: printable ASCII and UTF-8 as is, \n \t \\ and \xHH otherwise.
std::string ShowBytes(std::string_view bytes);

}  // namespace tokenmill
