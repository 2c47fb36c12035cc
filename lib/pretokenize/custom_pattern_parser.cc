// The custom-pattern parser: the supported PCRE subset (pretokenizer.h) into a syntax tree.
#include <string>

#include "common/strings.h"
#include "pretokenize/custom_pattern_ast.h"

namespace tokenmill::custom_pattern {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  absl::StatusOr<Ast> Parse(std::vector<CharSet>* sets) {
    sets_ = sets;
    Ast ast = ParseAlt(false);
    if (error_.ok() && i_ < p_.size()) Fail("unmatched ')'");
    if (!error_.ok()) return error_;
    return ast;
  }

 private:
  void Fail(std::string_view what) {
    if (error_.ok()) {
      error_ = absl::InvalidArgumentError(StrCat("pattern offset ", i_, ": ", what));
    }
  }
  bool More() const { return error_.ok() && i_ < p_.size(); }

  Ast ParseAlt(bool caseless) {
    Ast alt{Ast::kAlt};
    alt.kids.push_back(ParseSeq(caseless));
    while (More() && p_[i_] == '|') {
      ++i_;
      alt.kids.push_back(ParseSeq(caseless));
    }
    return alt.kids.size() == 1 ? std::move(alt.kids[0]) : alt;
  }

  Ast ParseSeq(bool caseless) {
    Ast seq{Ast::kSeq};
    while (More() && p_[i_] != '|' && p_[i_] != ')') {
      Ast atom = ParseAtom(caseless);
      if (!error_.ok()) break;
      ParseQuantifier(atom);
      seq.kids.push_back(std::move(atom));
    }
    return seq;
  }

  void ParseQuantifier(Ast& atom) {
    if (!More()) return;
    int min, max;
    const char c = p_[i_];
    const size_t at = i_;
    if (c == '*') {
      min = 0, max = -1, ++i_;
    } else if (c == '+') {
      min = 1, max = -1, ++i_;
    } else if (c == '?') {
      min = 0, max = 1, ++i_;
    } else if (c == '{') {
      ++i_;
      min = ParseNumber();
      max = min;
      if (More() && p_[i_] == ',') {
        ++i_;
        max = More() && p_[i_] == '}' ? -1 : ParseNumber();
      }
      if (!More() || p_[i_] != '}' || min < 0 || (max >= 0 && max < min)) {
        i_ = at;
        return Fail("'{' is supported only as a quantifier {n}, {n,} or {n,m}");
      }
      ++i_;
    } else {
      return;
    }
    bool greedy = true;
    if (More() && p_[i_] == '?') {
      greedy = false;
      ++i_;
    } else if (More() && p_[i_] == '+') {
      return Fail("possessive quantifiers are not supported");
    }
    if (atom.kind == Ast::kLookahead) return Fail("a quantifier on a look-ahead is not supported");
    if (atom.kind != Ast::kSet && !(min == 0 && max == 1)) {
      i_ = at;
      return Fail("on a group only the quantifier '?' is supported");
    }
    if (More() && (p_[i_] == '*' || p_[i_] == '+' || p_[i_] == '?' || p_[i_] == '{')) {
      return Fail("a quantifier may not follow a quantifier");
    }
    Ast repeat{Ast::kRepeat};
    repeat.min = min, repeat.max = max, repeat.greedy = greedy;
    repeat.kids.push_back(std::move(atom));
    atom = std::move(repeat);
  }

  int ParseNumber() {
    int n = 0;
    bool any = false;
    while (More() && p_[i_] >= '0' && p_[i_] <= '9' && n < 100000) {
      n = n * 10 + (p_[i_++] - '0');
      any = true;
    }
    return any ? n : -1;
  }

  Ast SetAst(CharSet set) {
    sets_->push_back(std::move(set));
    Ast a{Ast::kSet};
    a.set = static_cast<int>(sets_->size()) - 1;
    return a;
  }

  Ast ParseAtom(bool caseless) {
    const char c = p_[i_];
    if (c == '(') return ParseGroup(caseless);
    if (c == '[') return SetAst(ParseClass(caseless));
    if (c == '.') {
      ++i_;
      CharSet set;
      set.negated = true;
      set.ranges.push_back({'\n', '\n'});
      return SetAst(std::move(set));
    }
    if (c == '^' || c == '$') {
      Fail("anchors (^, $) are not supported");
      return Ast();
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') {
      Fail("a quantifier with nothing to repeat");
      return Ast();
    }
    CharSet set;
    if (c == '\\' && i_ + 1 < p_.size() && p_[i_ + 1] == 'p') {
      ++i_;
      AddGcBits(ParseProperty(), caseless, set);
    } else if (uint32_t cp; ParseChar(caseless, set, &cp)) {
      AddLiteral(cp, caseless, set);
    }
    return SetAst(std::move(set));
  }

  Ast ParseGroup(bool caseless) {
    ++i_;  // (
    Ast group;
    if (p_.substr(i_).starts_with("?:")) {
      i_ += 2;
      group = ParseAlt(caseless);
    } else if (p_.substr(i_).starts_with("?i:")) {
      i_ += 3;
      group = ParseAlt(true);
    } else if (p_.substr(i_).starts_with("?=") || p_.substr(i_).starts_with("?!")) {
      const bool negated = p_[i_ + 1] == '!';
      i_ += 2;
      group = Ast{Ast::kLookahead};
      group.negated = negated;
      group.kids.push_back(ParseAlt(caseless));
    } else if (i_ < p_.size() && p_[i_] == '?') {
      Fail("only the groups (...), (?:...), (?i:...), (?=...) and (?!...) are supported "
           "(no look-behind, atomic or named groups, or inline flags other than (?i:...))");
      return Ast();
    } else {
      group = ParseAlt(caseless);  // a capturing group: captures do not matter for splitting
    }
    if (!More() || p_[i_] != ')') {
      Fail("missing ')'");
      return Ast();
    }
    ++i_;
    return group;
  }

  CharSet ParseClass(bool caseless) {
    const size_t start = i_++;
    CharSet set;
    if (More() && p_[i_] == '^') {
      set.negated = true;
      ++i_;
    }
    unsigned gc_bits = 0;  // positive \p items of the class, checked together at the end
    bool first = true;
    while (More() && (p_[i_] != ']' || first)) {
      first = false;
      if (p_.substr(i_).starts_with("[:")) return Fail("POSIX classes [:...:] are not supported"), set;
      if (p_[i_] == '\\' && i_ + 1 < p_.size() && p_[i_ + 1] == 'p') {
        ++i_;
        gc_bits |= ParseProperty();
        continue;
      }
      uint32_t lo;
      if (!ParseChar(caseless, set, &lo)) continue;  // \s, \S or \P{..}: added to the set
      if (i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
        ++i_;
        uint32_t hi;
        if (!ParseChar(caseless, set, &hi)) return Fail("a class escape cannot end a range"), set;
        if (hi < lo) return Fail("range out of order in class"), set;
        AddRange(lo, hi, caseless, set);
      } else {
        AddLiteral(lo, caseless, set);
      }
    }
    if (!More()) {
      i_ = start;
      Fail("missing ']'");
      return set;
    }
    ++i_;
    AddGcBits(gc_bits, caseless, set);
    return set;
  }

  // After the 'p' of \p: {Name} or a one-letter name. Returns the category bits.
  unsigned ParseProperty() {
    ++i_;
    std::string name;
    if (More() && p_[i_] == '{') {
      const size_t close = p_.find('}', i_);
      if (close == std::string_view::npos) return Fail("missing '}' after \\p{"), 0;
      name = std::string(p_.substr(i_ + 1, close - i_ - 1));
      i_ = close + 1;
    } else if (More()) {
      name = std::string(1, p_[i_++]);
    }
    if (name == "L") return kGcLuLt | kGcLl | kGcLmLo;
    if (name == "Lu" || name == "Lt") return kGcLuLt | (name == "Lu" ? 0x100 : 0x200);
    if (name == "Ll") return kGcLl;
    if (name == "Lm" || name == "Lo") return kGcLmLo | (name == "Lm" ? 0x400 : 0x800);
    if (name == "M") return kGcM;
    if (name == "N") return kGcN;
    Fail(StrCat("\\p{", name, "} is not supported (supported: L, Lu, Ll, Lt, Lm, Lo, M, N)"));
    return 0;
  }

  // Adds the characters of the categories in `bits` (from ParseProperty) to `set`.
  void AddGcBits(unsigned bits, bool caseless, CharSet& set) {
    if (bits == 0) return;
    // Lu and Lt, and Lm and Lo, share a table class: each pair must be given together.
    const unsigned lu_lt = bits & 0x300, lm_lo = bits & 0xC00;
    if ((lu_lt != 0 && lu_lt != 0x300) || (lm_lo != 0 && lm_lo != 0xC00)) {
      return Fail("\\p{Lu} and \\p{Lt}, and \\p{Lm} and \\p{Lo}, are supported only together "
                  "in one class (as in o200k), or as part of \\p{L}");
    }
    bits &= 0xFF;
    if (caseless && ((bits & kGcLuLt) != 0) != ((bits & kGcLl) != 0)) {
      return Fail("cased properties (\\p{Lu}, \\p{Ll}, \\p{Lt}) inside (?i:...) are not supported");
    }
    for (int cls = 0; cls < 256; ++cls) {
      if (GcAtomOfClass(static_cast<uint8_t>(cls)) & bits) set.by_class[cls] = true;
    }
  }

  uint32_t ParseLiteralChar() {
    const auto* s = reinterpret_cast<const unsigned char*>(p_.data());
    const DecodedChar c = DecodeAt(s, p_.size(), i_);
    if (c.cls & kClassInvalid) return Fail("the pattern is not valid UTF-8"), 0;
    uint32_t cp = s[i_];
    if (c.len == 2) cp = ((s[i_] & 0x1F) << 6) | (s[i_ + 1] & 0x3F);
    if (c.len == 3) cp = ((s[i_] & 0x0F) << 12) | ((s[i_ + 1] & 0x3F) << 6) | (s[i_ + 2] & 0x3F);
    if (c.len == 4) {
      cp = ((s[i_] & 0x07) << 18) | ((s[i_ + 1] & 0x3F) << 12) | ((s[i_ + 2] & 0x3F) << 6) |
           (s[i_ + 3] & 0x3F);
    }
    i_ += c.len;
    return cp;
  }

  void AddLiteral(uint32_t cp, bool caseless, CharSet& set) { AddRange(cp, cp, caseless, set); }

  // Adds [lo, hi]; under (?i:...) also the other case of ASCII letters, and U+017F for s and
  // U+212A for k, as PCRE2 and Rust's regex fold them. Other cased letters are refused.
  void AddRange(uint32_t lo, uint32_t hi, bool caseless, CharSet& set) {
    set.ranges.push_back({lo, hi});
    if (!caseless) return;
    for (uint32_t cp = lo; cp <= hi && cp < 0x80; ++cp) {
      const uint32_t lower = cp | 0x20;
      if (lower >= 'a' && lower <= 'z') {
        set.ranges.push_back({lower, lower});
        set.ranges.push_back({lower - 0x20, lower - 0x20});
        if (lower == 's') set.ranges.push_back({0x17F, 0x17F});
        if (lower == 'k') set.ranges.push_back({0x212A, 0x212A});
      }
    }
    if (hi >= 0x80) {
      for (uint32_t cp = std::max<uint32_t>(lo, 0x80); cp <= hi; ++cp) {
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) continue;
        const unsigned atom = GcAtomOfClass(CodePointClass(cp));
        if (atom == kGcLuLt || atom == kGcLl || cp == 0x17F || cp == 0x212A) {
          return Fail("non-ASCII cased letters inside (?i:...) are not supported");
        }
      }
    }
  }

  // One character of the pattern at i_, a literal or an escape. Returns true with *cp for a
  // single character; false after adding a class escape (\s, \S, \P{..}) to `set` (or an
  // error).
  bool ParseChar(bool caseless, CharSet& set, uint32_t* cp) {
    if (p_[i_] != '\\') {
      *cp = ParseLiteralChar();
      return error_.ok();
    }
    ++i_;
    if (!More()) return Fail("pattern ends with a backslash"), false;
    const char c = p_[i_];
    if (c == 's' || c == 'S') {
      ++i_;
      for (int cls = 0; cls < 256; ++cls) {
        if (cls & kClassInvalid) continue;
        if (((cls & kClassSpace) != 0) != (c == 'S')) set.by_class[cls] = true;
      }
      return false;
    }
    if (c == 'P') {
      CharSet positive;
      AddGcBits(ParseProperty(), caseless, positive);
      for (int cls = 0; cls < 256; ++cls) {
        if (!(cls & kClassInvalid) && !positive.by_class[cls]) set.by_class[cls] = true;
      }
      return false;
    }
    const char* kSimple = "nrtfae";
    const uint32_t kSimpleValue[] = {'\n', '\r', '\t', '\f', 7, 27};
    for (int k = 0; kSimple[k]; ++k) {
      if (c == kSimple[k]) {
        ++i_;
        *cp = kSimpleValue[k];
        return true;
      }
    }
    if (c == 'x') {
      ++i_;
      uint32_t value = 0;
      size_t digits = 0;
      const bool braced = More() && p_[i_] == '{';
      if (braced) ++i_;
      while (More() && digits < (braced ? 6u : 2u) &&
             isxdigit(static_cast<unsigned char>(p_[i_]))) {
        const char h = p_[i_++];
        value = value * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        ++digits;
      }
      if (braced && (!More() || p_[i_++] != '}')) return Fail("missing '}' after \\x{"), false;
      if (digits == 0 || value > 0x10FFFF || (value >= 0xD800 && value < 0xE000)) {
        return Fail("bad \\x escape"), false;
      }
      *cp = value;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x80 && !isalnum(static_cast<unsigned char>(c))) {
      ++i_;
      *cp = static_cast<unsigned char>(c);
      return true;
    }
    Fail(StrCat("the escape \\", std::string(1, c),
                " is not supported (supported: \\s \\S \\p{..} \\P{..} \\n \\r \\t \\f \\a \\e "
                "\\xHH \\x{..} and escaped punctuation; \\d and \\w differ between PCRE2 and "
                "Rust's regex: use \\p{N} or \\p{L})"));
    return false;
  }

  std::string_view p_;
  size_t i_ = 0;
  absl::Status error_;
  std::vector<CharSet>* sets_ = nullptr;
};

}  // namespace

absl::StatusOr<Ast> ParsePattern(std::string_view pattern, std::vector<CharSet>* sets) {
  Parser parser(pattern);
  return parser.Parse(sets);
}

bool Nullable(const Ast& a) {
  switch (a.kind) {
    case Ast::kSet:
      return false;
    case Ast::kSeq:
      for (const Ast& k : a.kids) {
        if (!Nullable(k)) return false;
      }
      return true;
    case Ast::kAlt:
      for (const Ast& k : a.kids) {
        if (Nullable(k)) return true;
      }
      return false;
    case Ast::kRepeat:
      return a.min == 0 || Nullable(a.kids[0]);
    case Ast::kLookahead:
      return true;
  }
  return true;
}

}  // namespace tokenmill::custom_pattern
