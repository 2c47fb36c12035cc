#include "tokens/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "common/binary_io.h"
#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/id_text.h"

namespace tokenmill {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyHeaderBytes = 128;  // magic, version, length, dict, padding, '\n'
constexpr char kIndexMagic[] = "MMIDIDX\0\0";

// NumPy's format 1.0 header for a 1-D array of `count` elements of `descr`, padded with
// spaces to kNpyHeaderBytes.
std::string NpyHeader(std::string_view descr, uint64_t count) {
  std::string dict = StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", count, ",), }");
  std::string header(kNpyMagic, 6);
  header.push_back('\x01');
  header.push_back('\x00');
  const size_t length = kNpyHeaderBytes - 10;
  header.push_back(static_cast<char>(length & 0xff));
  header.push_back(static_cast<char>(length >> 8));
  header += dict;
  header.resize(kNpyHeaderBytes - 1, ' ');
  header.push_back('\n');
  return header;
}

std::string_view NpyDescr(size_t id_bound) { return id_bound <= 65536 ? "<u2" : "<u4"; }

void PutLe(std::string& out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetLe(const char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

}  // namespace

std::string_view TokenFileFormatName(TokenFileFormat format) {
  switch (format) {
    case TokenFileFormat::kText: return "text";
    case TokenFileFormat::kU16: return "u16";
    case TokenFileFormat::kU32: return "u32";
    case TokenFileFormat::kNpy: return "npy";
  }
  return "?";
}

absl::StatusOr<TokenFileFormat> ParseTokenFileFormat(std::string_view name) {
  for (TokenFileFormat f : {TokenFileFormat::kText, TokenFileFormat::kU16, TokenFileFormat::kU32,
                            TokenFileFormat::kNpy}) {
    if (TokenFileFormatName(f) == name) return f;
  }
  return absl::InvalidArgumentError(StrCat("'", name, "' is not a token file format (text, u16, u32, npy)"));
}

size_t IdWidth(TokenFileFormat format, size_t id_bound) {
  switch (format) {
    case TokenFileFormat::kText: return 0;
    case TokenFileFormat::kU16: return 2;
    case TokenFileFormat::kU32: return 4;
    case TokenFileFormat::kNpy: return id_bound <= 65536 ? 2 : 4;
  }
  return 4;
}

absl::Status CheckTokenFileFormat(TokenFileFormat format, size_t id_bound, bool with_index) {
  if (format == TokenFileFormat::kU16 && id_bound > 65536) {
    return OptionError(StrCat("u16 holds ids below 65,536; this vocabulary has ids up to ",
                              id_bound - 1, " (", id_bound, " ids): write u32 or npy"),
                       {});
  }
  if (with_index && format != TokenFileFormat::kU16 && format != TokenFileFormat::kU32) {
    return OptionError(StrCat("an index (Megatron's .idx) goes with a raw token file, u16 or "
                              "u32, not ",
                              TokenFileFormatName(format)),
                       {});
  }
  return absl::OkStatus();
}

void AppendIdBytes(TokenFileFormat format, size_t id_bound, std::span<const TokenId> ids,
                   std::string& out) {
  const size_t width = IdWidth(format, id_bound);
  if (width == 0) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) out.push_back(' ');
      StrAppend(&out, ids[i]);
    }
    out.push_back('\n');
    return;
  }
  const size_t at = out.size();
  out.resize(at + width * ids.size());
  char* p = out.data() + at;
  if (width == 2) {
    for (TokenId id : ids) {
      p[0] = static_cast<char>(id & 0xff);
      p[1] = static_cast<char>((id >> 8) & 0xff);
      p += 2;
    }
  } else {
    // x86 and every platform Debian builds this for are little-endian.
    static_assert(std::endian::native == std::endian::little);
    if (!ids.empty()) std::memcpy(p, ids.data(), 4 * ids.size());  // an empty span's data() may be null
  }
}

absl::StatusOr<TokenFileWriter> TokenFileWriter::Create(const std::string& path,
                                                        TokenFileFormat format, size_t id_bound) {
  TokenFileWriter w;
  w.format_ = format;
  w.id_bound_ = id_bound;
  TM_ASSIGN_OR_RETURN(w.file_, StreamingFile::Create(path));
  if (format == TokenFileFormat::kNpy) {
    if (!w.file_->seekable()) {
      return absl::InvalidArgumentError(StrCat(
          "an npy file's header is completed at the end: '", path,
          "' must be a regular file (not stdout or a pipe); write u16 or u32 there"));
    }
    TM_RETURN_IF_ERROR(w.file_->Write(NpyHeader(NpyDescr(id_bound), 0)));
  }
  return w;
}

absl::Status TokenFileWriter::Write(std::string_view bytes, uint64_t ids) {
  ids_ += ids;
  return file_->Write(bytes);
}

absl::Status TokenFileWriter::Close() {
  if (format_ == TokenFileFormat::kNpy) {
    TM_RETURN_IF_ERROR(file_->WriteAt(0, NpyHeader(NpyDescr(id_bound_), ids_)));
  }
  return file_->Close();
}

absl::Status MegatronIndexWriter::Publish() {
  if (file_ == nullptr) return absl::FailedPreconditionError(StrCat(path_, ": not closed"));
  return file_->Publish();
}

absl::Status MegatronIndexWriter::Close() {
  std::string out(kIndexMagic, 9);
  PutLe(out, 1, 8);
  out.push_back(static_cast<char>(width_ == 2 ? 8 : 4));
  PutLe(out, sizes_.size(), 8);
  PutLe(out, sizes_.size() + 1, 8);
  for (uint64_t s : sizes_) {
    if (s > INT32_MAX) {
      return absl::InvalidArgumentError(StrCat(
          "a document of ", s, " tokens does not fit Megatron's index (int32 sizes)"));
    }
    PutLe(out, s, 4);
  }
  uint64_t offset = 0;
  for (uint64_t s : sizes_) {
    PutLe(out, offset, 8);
    offset += s * width_;
  }
  for (uint64_t d = 0; d <= sizes_.size(); ++d) PutLe(out, d, 8);
  TM_ASSIGN_OR_RETURN(file_, StreamingFile::Create(path_));
  TM_RETURN_IF_ERROR(file_->Write(out));
  return file_->Close();
}

bool LooksLikeU32ReadAsU16(const MappedTokenFile& file, TokenId high_bound) {
  const size_t seen = std::min<size_t>(file.size(), size_t{1} << 16);
  if (file.size() % 2 != 0 || seen < 16) return false;
  for (size_t i = 1; i < seen; i += 2) {
    if (file[i] > high_bound) return false;
  }
  return true;
}

absl::StatusOr<TokenFileFormat> DetectTokenFileFormat(const std::string& path,
                                                      std::optional<TokenFileFormat> given) {
  if (given) return *given;
  if (path != "-") {
    TM_RETURN_IF_ERROR(CheckReadableFile(path));
    // Only a regular file's first bytes are looked at (not even opened otherwise): a pipe's
    // would be gone for the reader after this (`decode /dev/stdin` decoded nothing, exit 0),
    // so a pipe goes by its name.
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        return absl::FailedPreconditionError(StrCat("cannot open '", path, "': ", std::strerror(errno)));
      }
      char head[6];
      const bool npy = ::pread(fd, head, sizeof(head), 0) == static_cast<ssize_t>(sizeof(head)) &&
                       std::string_view(head, sizeof(head)) == std::string_view(kNpyMagic, 6);
      ::close(fd);
      if (npy) return TokenFileFormat::kNpy;
    }
  }
  // An .npy name without the header is read as npy, whose error says so.
  if (path.ends_with(".npy")) return TokenFileFormat::kNpy;
  if (path.ends_with(".u16")) return TokenFileFormat::kU16;
  if (path.ends_with(".u32")) return TokenFileFormat::kU32;
  if (path.ends_with(".txt")) return TokenFileFormat::kText;
  return absl::InvalidArgumentError(StrCat(
      "cannot tell the format of token file '", path,
      "' (no .npy header, no .u16/.u32/.txt extension): give --input-format u16|u32|text|npy"));
}

absl::StatusOr<TokenFileContents> ReadTokenFile(const std::string& path, TokenFileFormat format) {
  TokenFileContents out;
  out.format = format;
  if (format != TokenFileFormat::kText) {
    TM_ASSIGN_OR_RETURN(MappedTokenFile file, MappedTokenFile::Open(path, format));
    file.AppendIds(0, file.size(), out.ids);
    return out;
  }
  TM_ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  std::string_view body = data;
  size_t line = 0;
  for (size_t start = 0; start < body.size();) {
    size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    ++line;
    absl::Status s = ParseIdLine(body.substr(start, end - start), &out.ids);
    if (!s.ok()) return absl::InvalidArgumentError(StrCat(path, ":", line, ": ", s.message()));
    out.line_ends.push_back(out.ids.size());
    start = end + 1;
  }
  return out;
}

namespace {

// The .npy header's dict, a Python literal: {'descr': '<u4', 'fortran_order': False,
// 'shape': (N,), } as numpy writes it, read as Python would (either quote, any spacing, keys in
// any order), so that a file numpy loads is not refused for its spelling.
// (fortran_order must be there, but either value is the same bytes for the 1-D arrays read.)
struct NpyDict {
  std::string descr;
  std::vector<uint64_t> shape;
};

// Bytes shown on one line of an error: control and non-ASCII bytes escaped.
std::string Escaped(std::string_view bytes) {
  return absl::CEscape(absl::string_view(bytes.data(), bytes.size()));
}

absl::StatusOr<NpyDict> ParseNpyDict(const std::string& path, std::string_view dict) {
  size_t at = 0;
  auto fail = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        StrCat(path, ": bad .npy header (", Escaped(what), " at byte ", at, " of its dict",
               "): ", Escaped(dict.substr(0, dict.find_last_not_of(" \n") + 1))));
  };
  auto skip_spaces = [&] {
    while (at < dict.size() && (dict[at] == ' ' || dict[at] == '\t' || dict[at] == '\n')) ++at;
  };
  auto take = [&](char c) {
    skip_spaces();
    if (at < dict.size() && dict[at] == c) return ++at, true;
    return false;
  };
  auto quoted = [&](std::string* out) {
    skip_spaces();
    if (at >= dict.size() || (dict[at] != '\'' && dict[at] != '"')) return false;
    const char quote = dict[at];
    const size_t end = dict.find(quote, at + 1);
    if (end == std::string_view::npos) return false;
    *out = std::string(dict.substr(at + 1, end - at - 1));
    at = end + 1;
    return true;
  };
  NpyDict header;
  bool has_descr = false, has_order = false, has_shape = false;
  if (!take('{')) return fail("no '{'");
  while (!take('}')) {
    std::string key;
    if (!quoted(&key)) return fail("no key");
    if (!take(':')) return fail("no ':'");
    skip_spaces();
    if (key == "descr") {
      if (!quoted(&header.descr)) return fail("descr is not a string");
      has_descr = true;
    } else if (key == "fortran_order") {
      if (dict.substr(at).starts_with("True")) {
        at += 4;
      } else if (dict.substr(at).starts_with("False")) {
        at += 5;
      } else {
        return fail("fortran_order is not True or False");
      }
      has_order = true;
    } else if (key == "shape") {
      if (!take('(')) return fail("shape is not a tuple");
      bool comma = false;  // after the last number
      while (!take(')')) {
        skip_spaces();
        const size_t digits = dict.find_first_not_of("0123456789", at);
        uint64_t n = 0;
        if (digits == at || digits == std::string_view::npos ||
            !ParseInt(dict.substr(at, digits - at), &n)) {
          return fail("bad shape");
        }
        header.shape.push_back(n);
        at = digits;
        comma = take(',');
        if (!comma && !(skip_spaces(), at < dict.size() && dict[at] == ')')) return fail("bad shape");
      }
      // Python's (5) is the number 5, not a tuple: NumPy refuses it.
      if (header.shape.size() == 1 && !comma) return fail("shape is not a tuple (one element needs a ',')");
      has_shape = true;
    } else {
      return fail(StrCat("unknown key '", key, "'"));
    }
    if (!take(',') && !(skip_spaces(), at < dict.size() && dict[at] == '}')) return fail("no ','");
  }
  if (!has_descr || !has_order || !has_shape) return fail("descr, fortran_order or shape missing");
  skip_spaces();  // the padding, then '\n'
  if (at != dict.size()) return fail("bytes after the dict");
  return header;
}

}  // namespace

absl::StatusOr<MappedTokenFile> MappedTokenFile::Open(const std::string& path, TokenFileFormat format) {
  MappedTokenFile file;
  TM_ASSIGN_OR_RETURN(file.bytes_, MapFile(path));
  std::string_view body = file.bytes_.view();
  size_t width = format == TokenFileFormat::kU16 ? 2 : 4;
  if (format != TokenFileFormat::kNpy && body.starts_with(std::string_view(kNpyMagic, 6))) {
    // Its header would be read as ids (u16: all in range for most vocabularies).
    return absl::InvalidArgumentError(StrCat(path, ": it is an .npy file, not raw ",
                                             TokenFileFormatName(format),
                                             " ids: give --input-format npy (or none)"));
  }
  if (format == TokenFileFormat::kNpy) {
    if (body.size() < 10 || !body.starts_with(std::string_view(kNpyMagic, 6))) {
      return absl::InvalidArgumentError(StrCat(path, ": not an .npy file (no \\x93NUMPY magic)"));
    }
    const int major = static_cast<unsigned char>(body[6]);
    size_t header_len, prefix;
    if (major == 1) {
      header_len = GetLe(body.data() + 8, 2), prefix = 10;
    } else if (major == 2 || major == 3) {
      if (body.size() < 12) return absl::InvalidArgumentError(StrCat(path, ": truncated .npy header"));
      header_len = GetLe(body.data() + 8, 4), prefix = 12;
    } else {
      return absl::InvalidArgumentError(StrCat(path, ": .npy format version ", major, " is not known"));
    }
    if (body.size() < prefix + header_len) {
      return absl::InvalidArgumentError(StrCat(path, ": truncated .npy header"));
    }
    const std::string_view dict = body.substr(prefix, header_len);
    TM_ASSIGN_OR_RETURN(const NpyDict header, ParseNpyDict(path, dict));
    if (header.descr == "<u2") {
      width = 2;
    } else if (header.descr == "<u4") {
      width = 4;
    } else {
      return absl::InvalidArgumentError(StrCat(
          path, ": the array's dtype is '", Escaped(header.descr), "', not '<u2' or '<u4' (uint16 or uint32 ids; "
          "numpy: np.save(path, ids.astype(np.uint32)))"));
    }
    if (header.shape.size() != 1) {
      return absl::InvalidArgumentError(StrCat(path, ": not a 1-D array: shape (",
                                               absl::StrJoin(header.shape, ", "), ")"));
    }
    // (A 1-D array is the same bytes in either order.)
    const uint64_t count = header.shape[0];
    body.remove_prefix(prefix + header_len);
    if (count > body.size() / width || body.size() != count * width) {  // (the product may wrap)
      return absl::InvalidArgumentError(StrCat(path, ": the header says ", count, " ids, the file holds ",
                                               body.size(), " bytes of them"));
    }
  }
  if (body.size() % width != 0) {
    return absl::InvalidArgumentError(StrCat(path, ": ", body.size(), " bytes are not a whole number of ",
                                             width, "-byte ids (is it ", width == 2 ? "u32" : "u16", "?)"));
  }
  file.ids_ = body.data();
  file.count_ = body.size() / width;
  file.width_ = width;
  return file;
}

TokenId MappedTokenFile::operator[](size_t i) const {
  return static_cast<TokenId>(GetLe(ids_ + i * width_, width_));
}

void MappedTokenFile::AppendIds(size_t begin, size_t end, std::vector<TokenId>& out) const {
  const size_t at = out.size();
  out.resize(at + (end - begin));
  for (size_t i = begin; i < end; ++i) out[at + (i - begin)] = (*this)[i];
}

absl::StatusOr<MegatronIndex> ReadMegatronIndex(const std::string& path) {
  TM_ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  MegatronIndex index;
  if (data.size() < 9 || std::string_view(data).substr(0, 9) != std::string_view(kIndexMagic, 9)) {
    return absl::InvalidArgumentError(StrCat(path, ": not a Megatron index (no MMIDIDX header)"));
  }
  if (data.size() < 34) {
    return absl::InvalidArgumentError(
        StrCat(path, ": truncated Megatron index (", data.size(), " bytes; its header alone is 34)"));
  }
  const char* p = data.data() + 9;
  if (GetLe(p, 8) != 1) return absl::InvalidArgumentError(StrCat(path, ": index version is not 1"));
  index.dtype_code = static_cast<uint8_t>(p[8]);
  if (index.dtype_code != 4 && index.dtype_code != 8) {
    return absl::InvalidArgumentError(StrCat(path, ": index dtype code ", index.dtype_code,
                                             "; token files have 8 (uint16) or 4 (int32)"));
  }
  const uint64_t n = GetLe(p + 9, 8), docs = GetLe(p + 17, 8);
  // The counts are checked against the bytes there are before any product of them is made: a
  // header's counts can be anything (2^61 documents made the size wrap to the header's 34).
  const uint64_t room = data.size() - 34;
  if (n > room / 12 || docs > (room - 12 * n) / 8 || 12 * n + 8 * docs != room) {
    return absl::InvalidArgumentError(StrCat(path, ": ", data.size(), " bytes, but its header says ",
                                             n, " sequences and ", docs, " document starts"));
  }
  const char* q = data.data() + 34;
  for (uint64_t i = 0; i < n; ++i) index.sizes.push_back(static_cast<int32_t>(GetLe(q + 4 * i, 4)));
  q += 4 * n;
  for (uint64_t i = 0; i < n; ++i) index.pointers.push_back(static_cast<int64_t>(GetLe(q + 8 * i, 8)));
  q += 8 * n;
  for (uint64_t i = 0; i < docs; ++i) index.doc_idx.push_back(static_cast<int64_t>(GetLe(q + 8 * i, 8)));
  return index;
}

}  // namespace tokenmill
