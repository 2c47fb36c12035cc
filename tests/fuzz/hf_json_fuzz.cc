// Fuzzes tokenizer.json loading (FromHfJson) and, for input that is no JSON object, BERT's
// vocab.txt (FromVocabTxt). Any bytes must give a model or an error, never a crash; an accepted
// model must validate, write back to the same model (ToHfJson / ToVocabTxt round trip) and, for
// BPE, encode losslessly (model_check.h); a WordPiece or Unigram model must encode and decode
// without failing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz_util.h"
#include "model/bpe/bpe_hf_json.h"
#include "model/encoder.h"
#include "model/hf_json.h"
#include "model/unigram/unigram_model.h"
#include "model/wordpiece/wordpiece_files.h"
#include "model/wordpiece/wordpiece_model.h"
#include "model_check.h"

namespace {

using namespace tokenmill;

constexpr std::string_view kText = "Hello wörld 123 <|endoftext|> [CLS] 机器  \n\xff";

void CheckWordPiece(const WordPieceModel& model) {
  if (!model.Validate().ok()) return;  // a file may hold an invalid model: Encoder refuses it
  auto encoder = Encoder::Create(model);
  if (!encoder.ok()) return;
  auto ids = (*encoder)->Encode(kText);
  if (!ids.ok()) {
    if (model.unknown().has_value()) fuzz::Fail("a vocabulary with [UNK] refused text:", ids.status().message());
    return;
  }
  if (!(*encoder)->Decode(*ids).ok()) fuzz::Fail("encoded ids do not decode");
}

void CheckUnigram(const UnigramModel& model) {
  if (!model.Validate().ok()) return;  // a file may hold an invalid model: Encoder refuses it
  auto encoder = Encoder::Create(model);
  if (!encoder.ok()) return;
  auto ids = (*encoder)->Encode(kText);
  if (!ids.ok()) {
    if (model.unk_id != kNoUnknownToken || !model.byte_fallback.empty()) {
      fuzz::Fail("a Unigram vocabulary with <unk> or byte fallback refused text:",
                 ids.status().message());
    }
    return;
  }
  if (!(*encoder)->Decode(*ids).ok()) fuzz::Fail("encoded ids do not decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (!input.starts_with("{")) {
    absl::StatusOr<WordPieceModel> vocab = FromVocabTxt(input, "fuzz.txt");
    if (!vocab.ok()) {
      if (vocab.status().message().find("fuzz.txt") == std::string_view::npos) {
        fuzz::Fail("the error does not name the input:", vocab.status().message());
      }
      return 0;
    }
    absl::StatusOr<std::string> text = ToVocabTxt(*vocab);
    if (text.ok()) {
      absl::StatusOr<WordPieceModel> again = FromVocabTxt(*text, "written.txt");
      if (!again.ok()) fuzz::Fail("ToVocabTxt output does not load:", again.status().message());
      if (!(*again == *vocab)) fuzz::Fail("ToVocabTxt/FromVocabTxt round trip changed the model");
    }
    vocab->pretokenizer = PreTokenizerConfig("bert");
    CheckWordPiece(*vocab);
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Model>> loaded = FromHfJson(input, "fuzz.json");
  if (!loaded.ok()) {
    if (loaded.status().message().find("fuzz.json") == std::string_view::npos) {
      fuzz::Fail("the error does not name the input:", loaded.status().message());
    }
    return 0;
  }
  if (const WordPieceModel* wordpiece = AsWordPiece(**loaded)) {
    absl::StatusOr<std::unique_ptr<Model>> again = FromHfJson(ToHfJson(*wordpiece), "written.json");
    if (!again.ok()) fuzz::Fail("ToHfJson output does not load:", again.status().message());
    const WordPieceModel* back = AsWordPiece(**again);
    if (back == nullptr || !(*back == *wordpiece)) {
      fuzz::Fail("ToHfJson/FromHfJson round trip changed the WordPiece model");
    }
    CheckWordPiece(*wordpiece);
    return 0;
  }
  if (const UnigramModel* unigram = AsUnigram(**loaded)) {
    absl::StatusOr<std::unique_ptr<Model>> again = FromHfJson(ToHfJson(*unigram), "written.json");
    if (!again.ok()) fuzz::Fail("ToHfJson output does not load:", again.status().message());
    const UnigramModel* back = AsUnigram(**again);
    if (back == nullptr || !(*back == *unigram)) {
      fuzz::Fail("ToHfJson/FromHfJson round trip changed the Unigram model");
    }
    CheckUnigram(*unigram);
    return 0;
  }
  const BpeModel& model = *AsBpe(**loaded);
  absl::StatusOr<BpeModel> again = BpeModelFromHfJson(ToHfJson(model), "written.json");
  if (!again.ok()) fuzz::Fail("ToHfJson output does not load:", again.status().message());
  if (!(*again == model)) fuzz::Fail("ToHfJson/FromHfJson round trip changed the model");
  fuzz::CheckLoadedModel(model, kText);
  return 0;
}
