// Tests of the BPE trainer read the trained model as a BpeModel.
#pragma once

#include <cstdlib>

#include "model/bpe/bpe_model.h"
#include "train/trainer.h"

namespace tokenmill {

// The BpeModel a TrainResult holds (aborts when it holds none: a broken test).
inline const BpeModel& Bpe(const TrainResult& result) {
  const BpeModel* model = result.model == nullptr ? nullptr : AsBpe(*result.model);
  if (model == nullptr) std::abort();
  return *model;
}
inline BpeModel& Bpe(TrainResult& result) {
  return const_cast<BpeModel&>(Bpe(static_cast<const TrainResult&>(result)));
}

}  // namespace tokenmill
