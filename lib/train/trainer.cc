#include "train/trainer.h"

#include "absl/strings/cord.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "train/bpe/bpe_trainer.h"
#include "train/unigram/unigram_trainer.h"
#include "train/wordpiece/wordpiece_trainer.h"

namespace tokenmill {

absl::StatusOr<std::unique_ptr<Trainer>> MakeTrainer(const TrainerOptions& options) {
  TM_RETURN_IF_ERROR(options.Validate());
  switch (options.algorithm) {
    case Algorithm::kBpe:
      return std::unique_ptr<Trainer>(std::make_unique<BpeTrainer>(options));
    case Algorithm::kWordPiece:
      return std::unique_ptr<Trainer>(std::make_unique<WordPieceTrainer>(options));
    case Algorithm::kUnigram:
      return std::unique_ptr<Trainer>(std::make_unique<UnigramTrainer>(options));
  }
  return absl::InvalidArgumentError(
      StrCat("algorithm ", static_cast<int>(options.algorithm), " is unknown"));
}

absl::StatusOr<TrainResult> Train(WordSource words, const TrainerOptions& options,
                                  const TrainControl& control) {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, MakeTrainer(options));
  return trainer->Train(std::move(words), control);
}

namespace {
constexpr std::string_view kNothingToLearn = "tokenmill/nothing-to-learn";
}  // namespace

absl::Status NothingToLearnError(std::string_view message) {
  absl::Status status = absl::FailedPreconditionError(ToAbsl(message));
  status.SetPayload(ToAbsl(kNothingToLearn), absl::Cord("1"));
  return status;
}

bool IsNothingToLearn(const absl::Status& status) {
  return status.GetPayload(ToAbsl(kNothingToLearn)).has_value();
}

}  // namespace tokenmill
