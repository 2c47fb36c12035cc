// tiktoken's vocabulary format, both directions.
//
// A `.tiktoken` file has one line per regular token: `<base64 of its bytes> <rank>`; the rank
// is the token's id and its merge priority. It does not say how to pre-tokenize or which
// special tokens exist, so a JSON sidecar next to it (`X.tiktoken` -> `X.json`, as OpenAI's
// vocabularies in ../shared/vocab come) holds them:
//   {"name": "...", "pattern": "<regex>", "special_tokens": {"<|endoftext|>": 100257, ...},
//    "n_ranks": 100256, "explicit_n_vocab": null}
// Reading gives a model with MergePriority::kTokenRank, ignore_merges (tiktoken's whole-piece
// rule) and rank_merges_implied (the merges DeriveRankMerges() lists, left unlisted), so it
// encodes exactly as tiktoken does.
// Ranks need not be in byte order (OpenAI's are not), and ids may have gaps between the ranks
// and the specials (cl100k_base does), but the ranks themselves run 0..N-1 except where a
// special token sits. Errors name the file and line (ranks) or field (sidecar).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/bpe/bpe_model.h"

namespace tokenmill {

struct TiktokenText {
  std::string ranks;    // the .tiktoken file
  std::string sidecar;  // the JSON sidecar
};

class TokenTable;

// Parses the two files; `ranks_source` and `sidecar_source` name them in errors. Reading
// builds the table of the ranks by their bytes to find a repeated token; when `index` is
// given it receives that table, which is the one the model's BpeEncoder builds
// (TokenTable::Build(model.tokens, SpecialIds(model))), for BpeEncoder::Create to take over.
absl::StatusOr<BpeModel> FromTiktoken(std::string_view ranks, std::string_view ranks_source,
                                      std::string_view sidecar, std::string_view sidecar_source,
                                      TokenTable* index = nullptr);

// The model FromTiktoken(ranks, ..., sidecar, sidecar_source) gave, from the tokens it gave
// (`tokens`: its model.tokens, the specials at their ids) and the sidecar: for a cache of loaded
// vocabularies (vocab_cache.h) keyed by both files' bytes. Fails when the sidecar's special
// tokens are not at their ids in `tokens`.
absl::StatusOr<BpeModel> TiktokenModelOf(std::vector<std::string> tokens, std::string_view sidecar,
                                         std::string_view sidecar_source);

// Writes `model`; `name` goes into the sidecar. Fails when the model cannot be said in this
// format: not byte-level BPE, or regular ids with a gap no special token fills.
absl::StatusOr<TiktokenText> ToTiktoken(const Model& model, std::string_view name);

// `X.tiktoken` -> `X.json`; any other path -> path + ".json".
std::string TiktokenSidecarPath(const std::string& ranks_path);
// `X.json` -> `X.tiktoken`.
std::string TiktokenRanksPath(const std::string& sidecar_path);

// File helpers. SaveTiktoken writes both files atomically (the ranks file, then the sidecar).
absl::StatusOr<BpeModel> LoadTiktoken(const std::string& ranks_path);
// The same with the ranks file's text already read (LoadModel reads a file to tell its format);
// `index` as in FromTiktoken.
absl::StatusOr<BpeModel> LoadTiktoken(const std::string& ranks_path, std::string_view ranks,
                                      TokenTable* index = nullptr);
// The JSON sidecar of the ranks file at `ranks_path`; the error says the ranks file needs it.
absl::StatusOr<std::string> ReadTiktokenSidecar(const std::string& ranks_path);
absl::Status SaveTiktoken(const Model& model, const std::string& ranks_path);

}  // namespace tokenmill
