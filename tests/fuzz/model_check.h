// What every fuzz target that loads a tokenizer checks about a model it accepted.
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"

namespace tokenmill::fuzz {

// A loaded model must be valid, and when an encoder can be built from it, Decode(Encode(text))
// == text (encoder.h's contract) for `text`; a vocabulary that lacks some bytes (a --hf-compat
// one) may instead refuse text holding one (UnknownBytes::kError, naming the byte) or drop such
// bytes and nothing else (kDrop). Models whose encoding changes the text (character units
// without byte fallback, normalization, the metaspace, whitespace and bert splits,
// word-boundary markers) must encode (or refuse a character they have no token for) and decode what they
// encoded.
inline void CheckLoadedModel(const BpeModel& model, std::string_view text) {
  if (!model.Validate().ok()) Fail("a loaded model does not validate");
  const PreTokenizerConfig& pre = model.pretokenizer;
  const bool lossless = pre.normalizer.identity() && pre.preset != "metaspace" &&
                        pre.preset != "whitespace" && pre.preset != "bert" &&
                        model.subword_prefix.empty() && model.word_suffix.empty() &&
                        (model.unit_kind == UnitKind::kByte || !model.byte_fallback.empty());
  for (UnknownBytes unknown : {UnknownBytes::kError, UnknownBytes::kDrop}) {
    EncoderOptions options;
    options.cache_entries = 16;
    options.unknown_bytes = unknown;
    auto encoder = Encoder::Create(model, options);
    if (!encoder.ok()) return;
    const std::bitset<256>& missing = (*encoder)->unencodable_bytes();
    for (SpecialPolicy policy : {SpecialPolicy::kAsText, SpecialPolicy::kAllow}) {
      auto ids = (*encoder)->Encode(text, policy);
      if (!ids.ok()) {
        const std::string message(ids.status().message());
        if (unknown == UnknownBytes::kError &&
            (missing.any() || model.unit_kind == UnitKind::kChar) &&
            (message.find("is in no token of the vocabulary") != std::string::npos ||
             message.find("is not UTF-8, and the vocabulary has no byte fallback") !=
                 std::string::npos)) {
          continue;
        }
        Fail("Encode failed with an allowed policy", message);
      }
      auto decoded = (*encoder)->Decode(*ids);
      if (!decoded.ok()) Fail("Decode of Encode's ids failed");
      if (*decoded == text || !lossless) continue;
      if (unknown == UnknownBytes::kError || missing.none()) Fail("Decode(Encode(x)) != x");
      // Dropped: the text is the decoded bytes with some unencodable bytes put back in.
      size_t at = 0;
      for (char c : text) {
        if (at < decoded->size() && (*decoded)[at] == c) {
          ++at;
        } else if (!missing.test(static_cast<unsigned char>(c))) {
          Fail("dropping unknown bytes dropped a byte the vocabulary has");
        }
      }
      if (at != decoded->size()) Fail("dropping unknown bytes added bytes");
    }
  }
}

}  // namespace tokenmill::fuzz
