#include "model/vocab_cache.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <isa-l/crc64.h>
#include <link.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <utility>
#include <vector>

#include "common/binary_io.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

constexpr std::string_view kMagic = "TMVCACHE";
// 2: the inputs in the entry; 3: the CRC of the payload alone; 4: the payload aligned
constexpr uint32_t kFormat = 4;
constexpr std::string_view kSuffix = ".tmvocab";
constexpr size_t kKeyChars = 32;  // two CRC-64s in hex
// magic, format, key, the size of the rest (the inputs, the payload), the payload's CRC-64
constexpr size_t kHeaderBytes = kMagic.size() + 4 + kKeyChars + 8 + 8;
// A temporary entry (StreamingFile's KEY.tmvocab.tmp.tokenmill-XXXXXX) untouched this long was
// left by a process that stopped while it stored it (another's, being written, is younger).
constexpr int64_t kStaleSeconds = 600;

uint64_t Crc(uint64_t crc, std::string_view bytes) {
  return crc64_ecma_refl(crc, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// The ELF build id of the object this code is linked into (the tokenmill executable, the
// Python module), or "" when it has none.
std::string ReadBuildId() {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(&ReadBuildId), ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        bool here = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz) {
            here = true;
          }
        }
        if (!here) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const size_t align = ph.p_align == 8 ? 8 : 4;
          auto padded = [&](size_t n) { return (n + align - 1) / align * align; };
          const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = p + ph.p_memsz;
          while (p < end && static_cast<size_t>(end - p) >= sizeof(ElfW(Nhdr))) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const char* name = p + sizeof(ElfW(Nhdr));
            if (padded(note->n_namesz) > static_cast<size_t>(end - name)) break;
            const char* desc = name + padded(note->n_namesz);
            if (note->n_descsz > static_cast<size_t>(end - desc)) break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              s->id.assign(desc, note->n_descsz);
              return 1;
            }
            if (padded(note->n_descsz) >= static_cast<size_t>(end - desc)) break;
            p = desc + padded(note->n_descsz);
          }
        }
        return 1;  // this object, without a build id
      },
      &search);
  return search.id;
}

const std::string& BuildId() {
  static const std::string id = ReadBuildId();
  return id;
}

std::string Hex64(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// Whether `st` is the user's own and only the user may write it: an entry another user could
// write could make this user's encoder wrong (the CRC only catches accidents).
bool OwnedAndPrivate(const struct stat& st) {
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Whether `folder` is a folder (not a link to one) that OwnedAndPrivate.
bool SafeFolder(const std::string& folder) {
  struct stat st;
  return lstat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && OwnedAndPrivate(st);
}

// Makes each missing folder of `folder`, mode 0700, where its parent is the user's own or a
// sticky folder (/tmp): root with another user's $HOME must not leave folders there that the
// user cannot use.
absl::Status MakeFolder(const std::string& folder) {
  for (size_t slash = 1; slash <= folder.size(); ++slash) {
    if (slash < folder.size() && folder[slash] != '/') continue;
    const std::string part = folder.substr(0, slash);
    struct stat st;
    if (lstat(part.c_str(), &st) == 0) continue;
    const std::string parent = part.substr(0, std::max<size_t>(1, part.rfind('/')));
    if (stat(parent.c_str(), &st) != 0 || (st.st_uid != geteuid() && (st.st_mode & S_ISVTX) == 0)) {
      return absl::FailedPreconditionError(StrCat("not making ", part, " in another user's folder"));
    }
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::InternalError(StrCat("cannot create ", part, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

// The inputs as an entry holds them: a count, then each one's length and bytes.
std::string InputsRecord(std::span<const std::string_view> inputs) {
  std::string record;
  BinaryWriter w(&record);
  w.Varint(inputs.size());
  for (std::string_view input : inputs) w.Bytes(input);
  return record;
}

// Whether the open file is on a file system shared over a network, where another machine may
// remove or replace it (the server then drops the file: a page of its mapping read later fails
// with SIGBUS) and whose pages this machine may have to fetch again at any time.
bool OnNetworkFileSystem(int fd) {
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return true;  // unknown: as if it were
  switch (static_cast<uint64_t>(fs.f_type) & 0xFFFFFFFFu) {
    case NFS_SUPER_MAGIC:
    case SMB_SUPER_MAGIC:
    case CIFS_SUPER_MAGIC:
    case SMB2_SUPER_MAGIC:
    case FUSE_SUPER_MAGIC:
    case V9FS_MAGIC:
    case CEPH_SUPER_MAGIC:
    case AFS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<VocabCache> VocabCache::FromEnvironment() {
  if (BuildId().empty()) return std::nullopt;
  if (const char* dir = std::getenv("TOKENMILL_CACHE_DIR")) {
    if (dir[0] != '/') return std::nullopt;  // "off", empty, or any path that is not absolute
    return VocabCache(dir);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return VocabCache(StrCat(xdg, "/tokenmill"));
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return VocabCache(StrCat(home, "/.cache/tokenmill"));
  }
  return std::nullopt;
}

std::string VocabCache::KeyOf(std::span<const std::string_view> inputs) {
  // Two CRC-64s (ECMA and ISO polynomials) of the build id, the format and each input's
  // length and bytes.
  uint64_t ecma = 0, iso = 0;
  auto add = [&](std::string_view bytes) {
    ecma = Crc(ecma, bytes);
    iso = crc64_iso_refl(iso, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  };
  std::string head;
  BinaryWriter w(&head);
  w.Bytes(BuildId());
  w.Fixed32(kFormat);
  add(head);
  for (std::string_view input : inputs) {
    std::string length;
    BinaryWriter(&length).Fixed64(input.size());
    add(length);
    add(input);
  }
  return Hex64(ecma) + Hex64(iso);
}

std::string VocabCache::PathOf(const std::string& key) const {
  return StrCat(folder_, "/", key, kSuffix);
}

std::optional<SharedBytes> VocabCache::Find(std::span<const std::string_view> inputs) const {
  if (!SafeFolder(folder_)) return std::nullopt;
  const std::string key = KeyOf(inputs);
  const std::string path = PathOf(key);
  // A regular file of the user's own only: no link followed, no FIFO waited on.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<SharedBytes> mapped;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && OwnedAndPrivate(st) &&
      static_cast<uint64_t>(st.st_size) >= kHeaderBytes) {
    mapped = MapDescriptor(fd, static_cast<size_t>(st.st_size));
  }
  const bool remote = OnNetworkFileSystem(fd);
  close(fd);
  if (!mapped) return std::nullopt;
  BinaryReader in(mapped->view());
  std::string_view magic, stored_key;
  uint32_t format;
  uint64_t size, crc;
  if (!in.Raw(kMagic.size(), &magic) || magic != kMagic || !in.Fixed32(&format) ||
      format != kFormat || !in.Raw(kKeyChars, &stored_key) || stored_key != key ||
      !in.Fixed64(&size) || !in.Fixed64(&crc) || size != in.remaining()) {
    return std::nullopt;
  }
  // The inputs it was made from, byte for byte (no CRC needed there), then the payload's CRC.
  const SharedBytes rest = mapped->Sub(in.offset(), size);
  BinaryReader stored(rest.view());
  uint64_t count;
  if (!stored.Varint(&count) || count != inputs.size()) return std::nullopt;
  for (std::string_view input : inputs) {
    std::string_view bytes;
    if (!stored.Bytes(&bytes) || bytes != input) return std::nullopt;
  }
  // Zero bytes, then the payload at a multiple of kPayloadAlignment in the file.
  const size_t start = in.offset() + stored.offset();
  std::string_view zeros;
  if (!stored.Raw(PaddingTo(start, kPayloadAlignment), &zeros) ||
      zeros.find_first_not_of('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  SharedBytes payload = rest.Sub(stored.offset(), stored.remaining());
  if (Crc(0, payload.view()) != crc) return std::nullopt;
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now (for the least-recently-used rule)
  // The encoder keeps the payload it reads its tables from (used where they lie): a copy of it
  // where the entry could vanish under the mapping.
  if (remote) return SharedBytes(std::string(payload.view()));
  return payload;
}

bool VocabCache::Writable() const {
  return MakeFolder(folder_).ok() && SafeFolder(folder_) && access(folder_.c_str(), W_OK | X_OK) == 0;
}

absl::Status VocabCache::Store(std::span<const std::string_view> inputs,
                               std::span<const std::string_view> payload) const {
  const std::string key = KeyOf(inputs);
  TM_RETURN_IF_ERROR(MakeFolder(folder_));
  if (!SafeFolder(folder_)) {
    return absl::FailedPreconditionError(
        StrCat(folder_, " is not a folder of this user's that only this user may write"));
  }
  std::string inputs_record = InputsRecord(inputs);
  const size_t start = kHeaderBytes + inputs_record.size();
  inputs_record.append(PaddingTo(start, kPayloadAlignment), '\0');
  uint64_t size = inputs_record.size(), crc = 0;
  for (std::string_view piece : payload) {
    size += piece.size();
    crc = Crc(crc, piece);
  }
  std::string header;
  BinaryWriter w(&header);
  w.Raw(kMagic);
  w.Fixed32(kFormat);
  w.Raw(key);
  w.Fixed64(size);
  w.Fixed64(crc);
  // Something other than a regular file at the entry's path (a link, a FIFO) goes first: the
  // writer would write through or into it. A regular file stays until the rename replaces it,
  // so other processes keep reading it meanwhile.
  const std::string path = PathOf(key);
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    unlink(path.c_str());
    if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(StrCat(path, " is not a regular file"));
    }
  }
  // Mode 0600 from the start, whatever the umask: an entry others may write is not read.
  TM_ASSIGN_OR_RETURN(std::unique_ptr<StreamingFile> file, StreamingFile::Create(path, 0600));
  TM_RETURN_IF_ERROR(file->Write(header));
  TM_RETURN_IF_ERROR(file->Write(inputs_record));
  for (std::string_view piece : payload) TM_RETURN_IF_ERROR(file->Write(piece));
  TM_RETURN_IF_ERROR(file->Close());
  TM_RETURN_IF_ERROR(file->Publish());
  // The least recently used entries past kMaxEntries go.
  DIR* dir = opendir(folder_.c_str());
  if (dir == nullptr) return absl::OkStatus();
  std::vector<std::pair<int64_t, std::string>> entries;  // (modified, ns; path)
  const int64_t now = static_cast<int64_t>(time(nullptr));
  while (const dirent* e = readdir(dir)) {
    const std::string_view name = e->d_name;
    const std::string entry = StrCat(folder_, "/", name);
    struct stat st;
    if (lstat(entry.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.size() == kKeyChars + kSuffix.size() && name.ends_with(kSuffix)) {
      entries.push_back({int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec, entry});
    } else if (name.size() > kKeyChars + kSuffix.size() &&
               name.substr(kKeyChars).starts_with(StrCat(kSuffix, ".tmp.")) &&
               now - st.st_mtim.tv_sec > kStaleSeconds) {
      std::remove(entry.c_str());  // left by a process killed while it stored an entry
    }
  }
  closedir(dir);
  if (entries.size() > kMaxEntries) {
    std::sort(entries.begin(), entries.end(), std::greater<>());  // newest first
    for (size_t i = kMaxEntries; i < entries.size(); ++i) std::remove(entries[i].second.c_str());
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
