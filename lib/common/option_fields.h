// Options as data. Each options struct declares its fields once, in a table of OptionField:
// a stable number (tag), the library's name of the option, and whether it changes the result.
// That table drives everything that treats options generically: checkpoints store the fields
// by tag (leveldb's VersionEdit tags are the model: an unknown tag is an error, a removed
// field's tag is never reused), a resumed run compares and replaces them by effect, and
// descriptions show them by name.
//
// Encoding of one struct: for each field, varint tag, then its value as length-prefixed bytes
// (integers and enums as varints, doubles as fixed64 bits, strings as bytes, lists as a count
// and the elements). Fields a reader does not find keep their defaults (a field added later).
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/binary_io.h"
#include "common/strings.h"

namespace tokenmill {

enum class OptionEffect : uint8_t {
  kChangesResult,  // a resumed run must keep it
  kMayGrow,        // vocab_size: a resumed run may ask for more (extending it) or fewer
  kNone,           // never changes the result (threads, progress): a resumed run may change it
};

template <typename Options>
struct OptionField {
  uint32_t tag;
  std::string_view name;
  OptionEffect effect;
  void (*encode)(const Options&, BinaryWriter&);
  bool (*decode)(std::string_view, Options*);
  bool (*equal)(const Options&, const Options&);
  // The value as text, one entry per element of a list (none for an empty list).
  std::vector<std::string> (*values)(const Options&);
  // Sets the value from text (a list gains an element), as checkpoints of formats 1-4 stored
  // it; the error says what was expected.
  absl::Status (*parse)(std::string_view, Options*);
};

// How a value type is encoded and shown. Specialize ValueCodec for other types; enums need
// EnumNames<E>::kNames (pairs of name and value).
template <typename E>
struct EnumNames;

template <typename T, typename = void>
struct ValueCodec;

template <typename T>
struct ValueCodec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static void Encode(const T& v, BinaryWriter& w) { w.Varint(static_cast<uint64_t>(v)); }
  static bool Decode(BinaryReader& r, T* v) {
    uint64_t raw;
    if (!r.Varint(&raw)) return false;
    *v = static_cast<T>(raw);
    return static_cast<uint64_t>(*v) == raw;
  }
  static std::vector<std::string> Values(const T& v) { return {StrCat(v)}; }
  static absl::Status Parse(std::string_view text, T* v) {
    if (ParseInt(text, v)) return absl::OkStatus();
    return absl::InvalidArgumentError(StrCat("'", text, "' is not a whole number"));
  }
};

template <>
struct ValueCodec<bool> {
  static void Encode(const bool& v, BinaryWriter& w) { w.Varint(v ? 1 : 0); }
  static bool Decode(BinaryReader& r, bool* v) {
    uint64_t raw;
    if (!r.Varint(&raw) || raw > 1) return false;
    *v = raw == 1;
    return true;
  }
  static std::vector<std::string> Values(const bool& v) { return {v ? "true" : "false"}; }
  static absl::Status Parse(std::string_view text, bool* v) {
    if (text == "true" || text == "false") {
      *v = text == "true";
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(StrCat("'", text, "' is not true or false"));
  }
};

template <>
struct ValueCodec<double> {
  static void Encode(const double& v, BinaryWriter& w) { w.Fixed64(std::bit_cast<uint64_t>(v)); }
  static bool Decode(BinaryReader& r, double* v) {
    uint64_t raw;
    if (!r.Fixed64(&raw)) return false;
    *v = std::bit_cast<double>(raw);
    return true;
  }
  static std::vector<std::string> Values(const double& v) { return {StrCat(v)}; }
  static absl::Status Parse(std::string_view text, double* v);
};

template <>
struct ValueCodec<std::string> {
  static void Encode(const std::string& v, BinaryWriter& w) { w.Bytes(v); }
  static bool Decode(BinaryReader& r, std::string* v) {
    std::string_view bytes;
    if (!r.Bytes(&bytes)) return false;
    v->assign(bytes);
    return true;
  }
  static std::vector<std::string> Values(const std::string& v) { return {v}; }
  static absl::Status Parse(std::string_view text, std::string* v) {
    v->assign(text);
    return absl::OkStatus();
  }
};

template <>
struct ValueCodec<std::vector<std::string>> {
  static void Encode(const std::vector<std::string>& v, BinaryWriter& w) {
    w.Varint(v.size());
    for (const std::string& s : v) w.Bytes(s);
  }
  static bool Decode(BinaryReader& r, std::vector<std::string>* v) {
    uint64_t n;
    if (!r.Varint(&n) || n > r.remaining()) return false;
    v->clear();
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view s;
      if (!r.Bytes(&s)) return false;
      v->emplace_back(s);
    }
    return true;
  }
  static std::vector<std::string> Values(const std::vector<std::string>& v) { return v; }
  static absl::Status Parse(std::string_view text, std::vector<std::string>* v) {
    v->emplace_back(text);
    return absl::OkStatus();
  }
};

template <typename E>
struct ValueCodec<E, std::enable_if_t<std::is_enum_v<E>>> {
  static void Encode(const E& v, BinaryWriter& w) { w.Varint(static_cast<uint64_t>(v)); }
  static bool Decode(BinaryReader& r, E* v) {
    uint64_t raw;
    if (!r.Varint(&raw)) return false;
    for (const auto& [name, value] : EnumNames<E>::kNames) {
      if (static_cast<uint64_t>(value) == raw) {
        *v = value;
        return true;
      }
    }
    return false;  // a value this version does not know
  }
  static std::vector<std::string> Values(const E& v) {
    for (const auto& [name, value] : EnumNames<E>::kNames) {
      if (value == v) return {std::string(name)};
    }
    return {"?"};
  }
  static absl::Status Parse(std::string_view text, E* v) {
    std::string known;
    for (const auto& [name, value] : EnumNames<E>::kNames) {
      if (name == text) {
        *v = value;
        return absl::OkStatus();
      }
      StrAppend(&known, known.empty() ? "" : ", ", name);
    }
    return absl::InvalidArgumentError(StrCat("'", text, "' is not one of ", known));
  }
};

namespace option_fields_internal {
template <typename M>
struct MemberTraits;
template <typename C, typename T>
struct MemberTraits<T C::*> {
  using Class = C;
  using Type = T;
};
}  // namespace option_fields_internal

// The field of member `Member` (a pointer to a data member), encoded by its ValueCodec.
template <auto Member>
constexpr auto Field(uint32_t tag, std::string_view name, OptionEffect effect) {
  using Traits = option_fields_internal::MemberTraits<decltype(Member)>;
  using C = typename Traits::Class;
  using Codec = ValueCodec<typename Traits::Type>;
  return OptionField<C>{
      tag, name, effect,
      [](const C& o, BinaryWriter& w) { Codec::Encode(o.*Member, w); },
      [](std::string_view bytes, C* o) {
        BinaryReader r(bytes);
        return Codec::Decode(r, &(o->*Member)) && r.done();
      },
      [](const C& a, const C& b) { return a.*Member == b.*Member; },
      [](const C& o) { return Codec::Values(o.*Member); },
      [](std::string_view text, C* o) { return Codec::Parse(text, &(o->*Member)); }};
}

// Every field of `options`, in table order.
template <typename Options>
std::string EncodeFields(const Options& options, std::span<const OptionField<Options>> fields) {
  std::string out;
  BinaryWriter w(&out);
  for (const OptionField<Options>& f : fields) {
    std::string value;
    BinaryWriter v(&value);
    f.encode(options, v);
    w.Varint(f.tag);
    w.Bytes(value);
  }
  return out;
}

// Reads what EncodeFields wrote into `options` (fields absent keep their values). Fails on a
// malformed encoding or an unknown tag; `what` names the struct in the message.
template <typename Options>
absl::Status DecodeFields(std::string_view data, std::span<const OptionField<Options>> fields,
                          std::string_view what, Options* options) {
  BinaryReader r(data);
  while (!r.done()) {
    uint64_t tag;
    std::string_view value;
    if (!r.Varint(&tag) || !r.Bytes(&value)) {
      return absl::DataLossError(StrCat("the ", what, " are malformed"));
    }
    const OptionField<Options>* field = nullptr;
    for (const OptionField<Options>& f : fields) {
      if (f.tag == tag) field = &f;
    }
    if (field == nullptr) {
      return absl::DataLossError(StrCat("the ", what, " hold field ", tag,
                                        ", which this tokenmill does not know (a newer one "
                                        "wrote it)"));
    }
    if (!field->decode(value, options)) {
      return absl::DataLossError(StrCat("the ", what, ": field ", field->name, " is malformed"));
    }
  }
  return absl::OkStatus();
}

// The field named `name`, or null.
template <typename Options>
const OptionField<Options>* FindField(std::span<const OptionField<Options>> fields,
                                      std::string_view name) {
  for (const OptionField<Options>& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace tokenmill
