// TokenIndex: the non-special tokens of a vocabulary being trained, by their bytes: a set of
// ids hashed and compared through the token strings, 4 bytes a token instead of a second copy
// of every string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/strings.h"
#include "model/model.h"

namespace tokenmill {

class TokenIndex {
 public:
  // `tokens` (the bytes of every id) must outlive the index; it may grow.
  explicit TokenIndex(const std::vector<std::string>& tokens)
      : set_(0, Hash{&tokens}, Eq{&tokens}) {}
  void Add(TokenId id) { set_.insert(id); }
  void Reserve(size_t tokens) { set_.reserve(tokens); }
  std::optional<TokenId> Find(std::string_view bytes) const {
    auto it = set_.find(bytes);
    return it == set_.end() ? std::nullopt : std::optional<TokenId>(*it);
  }

 private:
  struct Hash {
    using is_transparent = void;
    const std::vector<std::string>* tokens;
    size_t operator()(std::string_view s) const { return StringHash{}(s); }
    size_t operator()(TokenId id) const { return StringHash{}((*tokens)[id]); }
  };
  struct Eq {
    using is_transparent = void;
    const std::vector<std::string>* tokens;
    std::string_view View(std::string_view s) const { return s; }
    std::string_view View(TokenId id) const { return (*tokens)[id]; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return View(a) == View(b); }
  };
  absl::flat_hash_set<TokenId, Hash, Eq> set_;
};

}  // namespace tokenmill
