#include "corpus/input_files.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>
#include <system_error>

#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/option_error.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool HasGlobCharacters(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

std::vector<std::string> Components(std::string_view path) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// Whether the path components `path` match the glob's components `glob`, a `**` component
// matching zero or more components. With `explicit_dots` (a `**` input glob: as bash's globstar
// and Python's glob(recursive=True) match), neither `**` nor a `*` matches a hidden name (one
// starting with '.'); only a component that starts with '.' does.
bool MatchComponents(std::span<const std::string> glob, std::span<const std::string> path,
                     bool explicit_dots) {
  if (glob.empty()) return path.empty();
  if (glob[0] == "**") {
    for (size_t skip = 0; skip <= path.size(); ++skip) {
      if (MatchComponents(glob.subspan(1), path.subspan(skip), explicit_dots)) return true;
      if (skip < path.size() && explicit_dots && path[skip].starts_with('.')) return false;
    }
    return false;
  }
  return !path.empty() && ::fnmatch(glob[0].c_str(), path[0].c_str(), explicit_dots ? FNM_PERIOD : 0) == 0 &&
         MatchComponents(glob.subspan(1), path.subspan(1), explicit_dots);
}

// Whether some path below the folder `path` may match `glob` (with explicit dots): whether the
// walk goes into it.
bool MayMatchBelow(std::span<const std::string> glob, std::span<const std::string> path) {
  if (path.empty()) return true;
  if (glob.empty()) return false;
  if (glob[0] == "**") {
    return MayMatchBelow(glob.subspan(1), path) ||
           (!path[0].starts_with('.') && MayMatchBelow(glob, path.subspan(1)));
  }
  return ::fnmatch(glob[0].c_str(), path[0].c_str(), FNM_PERIOD) == 0 &&
         MayMatchBelow(glob.subspan(1), path.subspan(1));
}

// Whether `relative` (a path below a folder) matches `glob`, component by component.
bool MatchesPath(std::string_view glob, std::string_view relative) {
  return MatchComponents(Components(glob), Components(relative), false);
}

// A glob's components: empty ones (from "//" or a trailing '/') left out but a first one (an
// absolute path's), a run of `**` as one.
std::vector<std::string> GlobComponents(std::string_view glob) {
  std::vector<std::string> parts;
  for (std::string& part : Components(glob)) {
    if (part.empty() && !parts.empty()) continue;
    if (part == "**" && !parts.empty() && parts.back() == "**") continue;
    parts.push_back(std::move(part));
  }
  return parts;
}

bool HasDoubleStar(std::string_view glob) {
  const std::vector<std::string> parts = Components(glob);
  return std::find(parts.begin(), parts.end(), "**") != parts.end();
}

// The part of a `**` input glob below the folder it walks (from its first `**` on), and the
// glob as given, for messages.
struct GlobBelow {
  std::vector<std::string> parts;  // ends with `**`: a folder the glob names is read whole
  std::string argument;
};

// A path a glob gave, as an input's path: a file named "-" is not stdin.
std::string GlobbedPath(std::string_view path) { return path == "-" ? "./-" : std::string(path); }

bool MatchesAny(const std::vector<std::string>& globs, const std::string& name,
                const std::string& relative) {
  for (const std::string& g : globs) {
    // A glob with a '/' matches the path below the folder; otherwise the file name.
    if (g.find('/') != std::string::npos ? MatchesPath(g, relative) : ::fnmatch(g.c_str(), name.c_str(), 0) == 0) {
      return true;
    }
  }
  return false;
}

absl::Status ReadMagic(const std::string& path, unsigned char* magic, size_t* got) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  *got = 0;
  while (*got < 4) {
    ssize_t n = ::read(fd, magic + *got, 4 - *got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return absl::FailedPreconditionError(StrCat("cannot read '", path, "': ", std::strerror(err)));
    }
    if (n == 0) break;
    *got += static_cast<size_t>(n);
  }
  ::close(fd);
  return absl::OkStatus();
}

// Fills in format and compression of a readable file (a pipe's compression when read).
absl::StatusOr<InputFile> DescribeFile(const std::string& path, const InputSelection& selection) {
  TM_RETURN_IF_ERROR(CheckReadableFile(path));
  InputFile file;
  file.path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  std::string name = Lowercase(std::filesystem::path(path).filename().string());
  Compression by_extension = Compression::kNone;
  if (EndsWith(name, ".zst") || EndsWith(name, ".zstd")) by_extension = Compression::kZstd;
  if (EndsWith(name, ".gz")) by_extension = Compression::kGzip;
  if (!S_ISREG(st.st_mode)) {
    // A named pipe, /dev/stdin, <(command): its size says nothing (0) and its bytes can be read
    // only once, so it is read as stdin is, as a stream whose first bytes tell the compression
    // (peeking here would eat them, and a size of 0 read it as empty).
    file.size = 0;
    file.compression = Compression::kDetectWhenRead;
    file.read_once = true;
  } else {
    file.size = static_cast<uint64_t>(st.st_size);
    unsigned char magic[4] = {0, 0, 0, 0};
    size_t got = 0;
    TM_RETURN_IF_ERROR(ReadMagic(path, magic, &got));
    TM_ASSIGN_OR_RETURN(file.compression, CompressionOfInput(path, by_extension, magic, got));
  }
  file.named = by_extension;
  if (by_extension != Compression::kNone) name = name.substr(0, name.rfind('.'));

  if (selection.format == "jsonl") {
    file.format = RecordFormat::kJsonLines;
  } else if (selection.format == "text") {
    file.format = RecordFormat::kText;
  } else {
    bool json = EndsWith(name, ".jsonl") || EndsWith(name, ".json") || EndsWith(name, ".ndjson");
    file.format = json ? RecordFormat::kJsonLines : RecordFormat::kText;
  }
  return file;
}

// The files of `folder` and its subfolders, hidden ones left out, in path order. With `below`,
// only those it matches (and hidden ones where it names them).
absl::Status AddFolder(const std::string& folder, const InputSelection& selection,
                       std::vector<InputFile>& out, const GlobBelow* below = nullptr) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::none, ec), end;
  if (ec) return absl::FailedPreconditionError(StrCat("cannot read folder '", folder, "': ", ec.message()));
  // A subfolder that cannot be read fails the walk, naming it: increment(ec) leaves the iterator
  // at its end when it cannot enter one, so a loop that tested only `it != end` ended there
  // quietly, and every file after it was left out.
  size_t hidden = 0;
  std::vector<std::string> dot_includes;  // `include` globs whose file name part starts with '.'
  for (const std::string& g : selection.include) {
    const size_t slash = g.rfind('/');
    if (g.compare(slash == std::string::npos ? 0 : slash + 1, 1, ".") == 0) dot_includes.push_back(g);
  }
  while (it != end) {
    const fs::path entry = it->path();
    std::error_code type_ec;
    const bool is_folder = it->is_directory(type_ec);
    const std::string name = entry.filename().string();
    const std::string relative = entry.lexically_relative(folder).string();
    if (below != nullptr) {
      // A `**` glob's walk: into the folders it may match below, the files it matches.
      const std::vector<std::string> path = Components(relative);
      if (is_folder) {
        if (!MayMatchBelow(below->parts, path) || MatchesAny(selection.exclude, name, relative)) {
          it.disable_recursion_pending();
        }
      } else if (it->is_regular_file(type_ec) &&
                 (MatchComponents(below->parts, path, true) ||
                  // A hidden file an `include` glob starting with '.' matches, as in a folder.
                  (name.starts_with('.') && MatchesAny(dot_includes, name, relative) &&
                   MatchComponents(below->parts, path, false))) &&
                 (selection.include.empty() || MatchesAny(selection.include, name, relative)) &&
                 !MatchesAny(selection.exclude, name, relative)) {
        found.push_back(entry.string());
      }
    } else if (name.starts_with('.') && !(!is_folder && MatchesAny(dot_includes, name, relative))) {
      // Hidden files and folders (.git, .DS_Store, an editor's swap file) are left out, as a
      // glob's `*` leaves them out: a .git's packed objects are no corpus. Named as an input,
      // or (a file) matched by an `include` glob that starts with a '.', one is read.
      ++hidden;
      if (is_folder) it.disable_recursion_pending();
    } else if (it->is_regular_file(type_ec)) {
      if ((selection.include.empty() || MatchesAny(selection.include, name, relative)) &&
          !MatchesAny(selection.exclude, name, relative)) {
        found.push_back(entry.string());
      }
    } else if (is_folder && MatchesAny(selection.exclude, name, relative)) {
      it.disable_recursion_pending();  // an excluded folder is not walked (nor need it be readable)
    }
    it.increment(ec);
    if (ec) {
      return MentioningOptions(
          absl::FailedPreconditionError(StrCat("cannot read folder '", is_folder ? entry.string() : folder,
                                               "': ", ec.message(),
                                               is_folder ? " (`exclude` it to leave it out)" : "")),
          {"exclude"});
    }
  }
  if (found.empty()) {
    std::string filters;
    if (!selection.include.empty()) {
      StrAppend(&filters, " matching `include` ", absl::StrJoin(selection.include, ","));
    }
    if (!selection.exclude.empty()) {
      StrAppend(&filters, " not matching `exclude` ", absl::StrJoin(selection.exclude, ","));
    }
    if (hidden > 0) {
      StrAppend(&filters, " (", hidden, " hidden file", hidden == 1 ? "" : "s", " or folder",
                hidden == 1 ? "" : "s", " left out: name one to read it)");
    }
    if (below != nullptr) {
      return MentioningOptions(absl::NotFoundError(StrCat("no files match '", below->argument, "'", filters)),
                               {"include", "exclude"});
    }
    return MentioningOptions(absl::NotFoundError(StrCat("folder '", folder, "' holds no files", filters)),
                             {"include", "exclude"});
  }
  std::sort(found.begin(), found.end());
  for (const std::string& path : found) {
    TM_ASSIGN_OR_RETURN(InputFile file, DescribeFile(path, selection));
    out.push_back(std::move(file));
  }
  return absl::OkStatus();
}

// Whether the input is a pipe, a socket or a terminal: a stream whose bytes one reading takes
// (a regular file, or a device such as /dev/null, reads the same again).
bool IsConsumedByReading(const InputFile& input, const struct stat& st) {
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return true;
  if (!S_ISCHR(st.st_mode)) return false;
  if (input.is_stdin()) return ::isatty(STDIN_FILENO) == 1;
  const int fd = ::open(input.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool terminal = ::isatty(fd) == 1;
  ::close(fd);
  return terminal;
}

// A stream reached by two names ('-' and /dev/stdin when stdin is a pipe or a terminal, a
// named pipe's path twice) would be read by the first and be empty for the second: refused,
// naming both. (A regular file, or stdin redirected from one, given twice is read twice.)
absl::Status CheckStreamsGivenOnce(const std::vector<InputFile>& inputs) {
  std::vector<std::pair<std::pair<dev_t, ino_t>, const InputFile*>> seen;
  auto name = [](const InputFile& input) {
    return input.is_stdin() ? std::string("stdin ('-')") : StrCat("'", input.path, "'");
  };
  for (const InputFile& input : inputs) {
    if (!input.read_once) continue;
    struct stat st;
    const int rc = input.is_stdin() ? ::fstat(STDIN_FILENO, &st) : ::stat(input.path.c_str(), &st);
    if (rc != 0 || !IsConsumedByReading(input, st)) continue;
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    for (const auto& [other_id, other] : seen) {
      if (other_id != id) continue;
      return absl::InvalidArgumentError(StrCat(name(input), " is the same stream as ", name(*other),
                                               ", which can be read once: give it once"));
    }
    seen.push_back({id, &input});
  }
  return absl::OkStatus();
}

// A glob with a `**` component: the folders its components before the first `**` name (a
// glob too; "." when it starts with `**`), each walked for the files the rest matches.
absl::Status AddRecursiveGlob(const std::string& glob, const InputSelection& selection,
                              std::vector<InputFile>& out) {
  const std::vector<std::string> parts = GlobComponents(glob);
  const auto star = std::find(parts.begin(), parts.end(), "**");
  std::string base = absl::StrJoin(parts.begin(), star, "/");
  if (base.empty()) base.assign(1, star == parts.begin() ? '.' : '/');  // "**/x", or "/**/x"
  GlobBelow below{std::vector<std::string>(star, parts.end()), glob};
  // What the glob names is read whole: a file, or a folder's files at any depth. A glob ending
  // in '/' or `**` names folders only: a file matches with one component at least below.
  const std::string_view last = std::string_view(glob).substr(glob.rfind('/') + 1);
  if (last == "**") {
    below.parts.back().resize(1);  // "**" -> "*", and "**" after it: one component or more
  } else if (last.empty()) {
    below.parts.push_back("*");
  }
  below.parts.push_back("**");
  std::vector<std::string> folders;
  if (HasGlobCharacters(base)) {
    glob_t matches;
    if (::glob(base.c_str(), GLOB_ONLYDIR, nullptr, &matches) == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) {
        const std::string_view path = matches.gl_pathv[i];
        const std::string_view last = path.substr(path.rfind('/') + 1);
        struct stat st;  // (GLOB_ONLYDIR may also give files)
        if (last != "." && last != ".." && ::stat(matches.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
          folders.emplace_back(path);
        }
      }
    }
    ::globfree(&matches);
  } else {
    struct stat st;
    if (::stat(base.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) folders.push_back(base);
  }
  if (folders.empty()) return absl::NotFoundError(StrCat("no files match '", glob, "'"));
  // Folders where nothing matches are passed over, as a glob passes them over, unless all are.
  absl::Status none;
  const size_t before = out.size();
  for (const std::string& folder : folders) {
    absl::Status added = AddFolder(folder, selection, out, &below);
    if (absl::IsNotFound(added)) {
      none = added;
    } else if (!added.ok()) {
      return added;
    }
  }
  return out.size() == before ? none : absl::OkStatus();
}

absl::Status AddPath(const std::string& path, const InputSelection& selection,
                     std::vector<InputFile>& out) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return AddFolder(path, selection, out);
  TM_ASSIGN_OR_RETURN(InputFile file, DescribeFile(path, selection));
  out.push_back(std::move(file));
  return absl::OkStatus();
}

}  // namespace

std::string_view UnreadCompressionFromMagic(const unsigned char* bytes, size_t size) {
  if (size >= 4 && bytes[0] == 0xFD && bytes[1] == '7' && bytes[2] == 'z' && bytes[3] == 'X') return "xz";
  if (size >= 4 && bytes[0] == 'B' && bytes[1] == 'Z' && bytes[2] == 'h' && bytes[3] >= '1' && bytes[3] <= '9') {
    return "bzip2";
  }
  if (size >= 4 && bytes[0] == 0x04 && bytes[1] == 0x22 && bytes[2] == 0x4D && bytes[3] == 0x18) return "lz4";
  return "";
}

absl::StatusOr<Compression> CompressionOfInput(const std::string& path, Compression named,
                                               const unsigned char* bytes, size_t size) {
  if (std::string_view other = UnreadCompressionFromMagic(bytes, size); !other.empty()) {
    const std::string name = path == "-" ? "stdin" : StrCat("'", path, "'");
    return absl::InvalidArgumentError(StrCat(
        name, " is ", other, "-compressed, which tokenmill does not read (only zstd and gzip): "
        "decompress it first, e.g. into stdin: ", other, " -dc FILE | tokenmill ... -"));
  }
  const Compression compression = CompressionFromMagic(bytes, size);
  if (named != Compression::kNone && compression != named) {
    return absl::InvalidArgumentError(
        StrCat("'", path, "' is named like a ", CompressionName(named),
               " file but does not start with the ", CompressionName(named), " magic bytes",
               size < 4 ? " (it is shorter than 4 bytes: truncated?)" : ""));
  }
  return compression;
}

Compression CompressionFromMagic(const unsigned char* bytes, size_t size) {
  if (size >= 4 && bytes[0] == 0x28 && bytes[1] == 0xB5 && bytes[2] == 0x2F && bytes[3] == 0xFD) {
    return Compression::kZstd;
  }
  // A zstd skippable frame, 0x184D2A50-0x184D2A5F little-endian: pzstd starts every file with
  // one (the frames' sizes), and the decoder skips it.
  if (size >= 4 && (bytes[0] & 0xF0) == 0x50 && bytes[1] == 0x2A && bytes[2] == 0x4D && bytes[3] == 0x18) {
    return Compression::kZstd;
  }
  if (size >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B) return Compression::kGzip;
  return Compression::kNone;
}

const char* CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kZstd: return "zstd";
    case Compression::kGzip: return "gzip";
    case Compression::kNone: return "none";
    case Compression::kDetectWhenRead: return "detected when read";
  }
  return "unknown";
}

absl::StatusOr<std::vector<InputFile>> ResolveInputs(const std::vector<std::string>& arguments,
                                                     const InputSelection& selection) {
  if (selection.format != "auto" && selection.format != "text" && selection.format != "jsonl") {
    return absl::InvalidArgumentError(
        StrCat("input format must be auto, text or jsonl, not '", selection.format, "'"));
  }
  std::vector<InputFile> out;
  bool stdin_given = false;
  for (const std::string& argument : arguments) {
    if (argument == "-") {
      // stdin can be read once: a second "-" would be an empty input.
      if (stdin_given) return absl::InvalidArgumentError("stdin ('-') is given twice; it can be read once");
      stdin_given = true;
      InputFile file;
      file.path = "-";
      file.compression = Compression::kDetectWhenRead;
      file.read_once = true;
      file.format = selection.format == "jsonl" ? RecordFormat::kJsonLines : RecordFormat::kText;
      out.push_back(std::move(file));
      continue;
    }
    struct stat st;
    if (::stat(argument.c_str(), &st) != 0 && HasDoubleStar(argument)) {
      TM_RETURN_IF_ERROR(AddRecursiveGlob(argument, selection, out));
      continue;
    }
    if (::stat(argument.c_str(), &st) != 0 && HasGlobCharacters(argument)) {
      glob_t matches;
      int rc = ::glob(argument.c_str(), 0, nullptr, &matches);
      if (rc == GLOB_NOMATCH || (rc == 0 && matches.gl_pathc == 0)) {
        ::globfree(&matches);
        return absl::NotFoundError(StrCat("no files match '", argument, "'"));
      }
      if (rc != 0) {
        ::globfree(&matches);
        return absl::FailedPreconditionError(StrCat("cannot expand '", argument, "'"));
      }
      std::vector<std::string> paths;
      for (size_t i = 0; i < matches.gl_pathc; ++i) {
        // `.*` matches the folder itself and its parent too ("x/." and "x/.."): not inputs.
        const std::string_view path = matches.gl_pathv[i];
        const std::string_view last = path.substr(path.rfind('/') + 1);
        if (last != "." && last != "..") paths.push_back(GlobbedPath(path));
      }
      ::globfree(&matches);
      if (paths.empty()) return absl::NotFoundError(StrCat("no files match '", argument, "'"));
      for (const std::string& path : paths) TM_RETURN_IF_ERROR(AddPath(path, selection, out));
      continue;
    }
    TM_RETURN_IF_ERROR(AddPath(argument, selection, out));
  }
  TM_RETURN_IF_ERROR(CheckStreamsGivenOnce(out));
  return out;
}

}  // namespace tokenmill
