// Where the oracles get the presets' patterns (tests only): from the vocabularies' own sidecar
// files, never from lib/pretokenize/presets.h, so that a wrong preset pattern in the product
// cannot also be the pattern its oracle runs.
//  - gpt2, cl100k, o200k: the "pattern" field of gpt2.json, cl100k_base.json, o200k_base.json,
//    the sidecars shipped with OpenAI's vocabularies in tests/data/vocab.tar.zst (extracted into
//    the build tree at configure time: TestVocabDir()).
//  - qwen2: tests/data/qwen2.json, the pre-tokenizer regex of Qwen2's tokenizer.json
//    (tests/data/README.md says where it comes from).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill::testing {

// The folder holding {gpt2,cl100k_base,o200k_base}.tiktoken and their .json sidecars, with a
// trailing slash.
std::string TestVocabDir();

// The sidecar file whose "pattern" field is preset `preset`'s pattern; an error for a name
// that has none.
absl::StatusOr<std::string> SidecarPath(std::string_view preset);

// The "pattern" field of preset `preset`'s sidecar, JSON escapes decoded.
absl::StatusOr<std::string> SidecarPattern(std::string_view preset);

// The PCRE2 oracle (pcre2_splitter.h) running SidecarPattern(preset).
absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePcre2PresetPreTokenizer(std::string_view preset);

}  // namespace tokenmill::testing
