// String helpers that work with std::string_view.
//
// Debian 12's Abseil (20220623) is built with its own absl::string_view type, distinct from
// std::string_view, so absl::StrCat, absl::SimpleAtoi and the heterogeneous lookup of
// absl::flat_hash_map<std::string, V> do not accept std::string_view. tokenmill uses
// std::string_view throughout; these helpers bridge the gap. Use them instead of the absl ones.
#pragma once

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tokenmill {

inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }
inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }

namespace strings_internal {
inline void AppendPiece(std::string& out, std::string_view s) { out.append(s); }
inline void AppendPiece(std::string& out, const char* s) { out.append(s); }
inline void AppendPiece(std::string& out, const std::string& s) { out.append(s); }
inline void AppendPiece(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void AppendPiece(std::string& out, char c) { out.push_back(c); }
inline void AppendPiece(std::string& out, bool b) { out.append(b ? "true" : "false"); }
template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>)
void AppendPiece(std::string& out, T value) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}
template <std::floating_point T>
void AppendPiece(std::string& out, T value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general, 6);
  out.append(buffer, end);
}
}  // namespace strings_internal

// Concatenates strings, string views, characters and numbers.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (strings_internal::AppendPiece(out, args), ...);
  return out;
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (strings_internal::AppendPiece(*out, args), ...);
}

// Parses a whole string as a decimal integer of type T; false on anything else (sign for
// unsigned types, overflow, trailing characters, empty).
template <std::integral T>
bool ParseInt(std::string_view text, T* value) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

// A Status's message as a std::string_view.
inline std::string_view Message(const absl::Status& status) { return ToStd(status.message()); }

// Hash and equality for std::string keys that accept std::string_view lookups.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>{}(ToAbsl(s)); }
};
struct StringEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

template <typename V>
using StringMap = absl::flat_hash_map<std::string, V, StringHash, StringEq>;
using StringSet = absl::flat_hash_set<std::string, StringHash, StringEq>;

}  // namespace tokenmill
