// Fuzzes `tokenmill decode`'s input: a line of token ids as text (id_text.h), decoded with a small
// BPE model (the 256 bytes, three merges, one special token). Properties: a line either parses or
// is refused naming the field; parsed ids printed back in decimal parse to the same ids; decoding
// either fails naming the id out of range, or gives bytes that encode and decode back to
// themselves.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/id_text.h"

namespace tokenmill {
namespace {

const Encoder& SmallEncoder() {
  static const Encoder* encoder = [] {
    BpeModel model;
    for (int b = 0; b < 256; ++b) model.tokens.push_back(std::string(1, static_cast<char>(b)));
    auto merge = [&](TokenId left, TokenId right) {
      const TokenId id = static_cast<TokenId>(model.tokens.size());
      model.tokens.push_back(model.tokens[left] + model.tokens[right]);
      model.merges.push_back({left, right, id});
      return id;
    };
    const TokenId th = merge('t', 'h');
    merge(th, 'e');
    merge(' ', 'a');
    model.specials.push_back({"<|end|>", static_cast<TokenId>(model.tokens.size())});
    model.tokens.push_back("<|end|>");
    // No piece cache: it lives in TBB's per-thread storage, which LeakSanitizer cannot scan,
    // so the heap it holds would be reported as leaked by this encoder kept until exit.
    EncoderOptions options;
    options.cache_entries = 0;
    auto created = Encoder::Create(std::move(model), options);
    if (!created.ok()) fuzz::Fail("cannot build the encoder", created.status().message());
    return created->release();
  }();
  return *encoder;
}

}  // namespace
}  // namespace tokenmill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::vector<TokenId> ids;
  absl::Status parsed = ParseIdLine(line, &ids);
  if (!parsed.ok()) {
    const std::string message(parsed.message());
    if (message.find("is not a token id") == std::string::npos) {
      fuzz::Fail("a refused line's message does not say why", message);
    }
    return 0;
  }
  std::string printed;
  for (TokenId id : ids) printed += std::to_string(id) + " ";
  std::vector<TokenId> again;
  if (!ParseIdLine(printed, &again).ok() || again != ids) fuzz::Fail("ids do not print back");
  const Encoder& encoder = SmallEncoder();
  absl::StatusOr<std::string> text = encoder.Decode(ids);
  if (!text.ok()) return 0;
  absl::StatusOr<std::vector<TokenId>> encoded = encoder.Encode(*text, SpecialPolicy::kAllow);
  if (!encoded.ok()) fuzz::Fail("decoded text does not encode", encoded.status().message());
  absl::StatusOr<std::string> back = encoder.Decode(*encoded);
  if (!back.ok() || *back != *text) fuzz::Fail("Decode(Encode(Decode(ids))) != Decode(ids)");
  return 0;
}
