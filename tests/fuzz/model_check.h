// What every fuzz target that loads a tokenizer checks about a model it accepted.
#pragma once

#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"

namespace tokenmill::fuzz {

// A loaded model must be valid, and when an encoder can be built from it,
// Decode(Encode(text)) == text (encoder.h's contract) for `text`.
inline void CheckLoadedModel(const BpeModel& model, std::string_view text) {
  if (!model.Validate().ok()) Fail("a loaded model does not validate");
  EncoderOptions options;
  options.cache_entries = 16;
  auto encoder = Encoder::Create(model, options);
  if (!encoder.ok()) return;
  for (SpecialPolicy policy : {SpecialPolicy::kAsText, SpecialPolicy::kAllow}) {
    auto ids = (*encoder)->Encode(text, policy);
    if (!ids.ok()) Fail("Encode failed with an allowed policy");
    auto decoded = (*encoder)->Decode(*ids);
    if (!decoded.ok() || *decoded != text) Fail("Decode(Encode(x)) != x");
  }
}

}  // namespace tokenmill::fuzz
