#include "train/wordpiece/wordpiece_trainer.h"

#include "common/status_macros.h"
#include "model/bpe/bpe_model.h"
#include "model/wordpiece/wordpiece_model.h"
#include "train/bpe/bpe_trainer.h"

namespace tokenmill {

absl::StatusOr<TrainResult> WordPieceTrainer::Train(WordSource words,
                                                    const TrainControl& control) {
  // The BPE trainer runs the WordPiece options as they are: its state picks the likelihood
  // queue from algorithm and wordpiece_score (bpe_state.h).
  BpeTrainer phases(options_);
  TM_ASSIGN_OR_RETURN(TrainResult result, phases.Train(std::move(words), control));
  const BpeModel* bpe = AsBpe(*result.model);
  auto model = std::make_unique<WordPieceModel>();
  model->tokens = bpe->tokens;
  model->specials = bpe->specials;
  model->pretokenizer = bpe->pretokenizer;
  model->unk_token = options_.unknown_token;
  model->prefix = options_.continuing_subword_prefix;
  model->max_input_chars_per_word = options_.max_input_chars_per_word;
  result.model = std::move(model);
  return result;
}

}  // namespace tokenmill
