// VocabCache: vocabularies kept as the tables loading them builds, so that a later command
// loading the same vocabulary reads those tables instead of building them again.
//
// Why: loading a large .tiktoken is most of a short command. An empty `tokenmill encode` with
// o200k_base took 31-36 ms at 2 threads, of which 20-26 ms went to decoding its 200,000 base64
// ranks, building the token table, the first pair lookups and the character segments; a
// corpus of 24 MB (linux_docs) encodes in about 0.15 s.
//
// An entry is named by a 128-bit digest (two CRC-64s) of what its tables depend on: the
// vocabulary files' bytes, the encoder options that change the tables, and this build (the ELF
// build id of the code reading it, so that a rebuilt tokenmill, whose tables or hashes may
// differ, never reads another build's entries; no build id: no cache). A CRC is no defence
// against a file made to collide (a downloaded vocabulary could be made to share
// o200k_base's name), so an entry also holds those inputs themselves, and Find compares them
// byte for byte (o200k_base: 3.6 MB, well under a millisecond). An entry is a header (magic,
// format, the name, the size of the rest, the payload's CRC-64), the inputs, zero bytes up to
// a multiple of kPayloadAlignment from the file's start, then the payload: mapped, its tables
// can be used where they lie (the encoder keeps the mapping for its lifetime; entries are
// replaced by rename and removed by unlink, never rewritten in place, so a mapping stays valid;
// an entry must not be truncated or edited in place while a process uses it). On a network
// file system (NFS, SMB, FUSE, 9p, Ceph, AFS), where another machine could remove the file
// under the mapping, Find returns a copy of the payload instead.
// An entry that fails a check is ignored (and replaced by the next store). Entries are written to a temporary file and
// renamed, so processes sharing the folder see a whole entry or none; not fsynced (a torn
// entry fails its CRC). At most kMaxEntries are kept: storing removes the least recently
// used (by modification time, which Find renews), and temporary files left by a process that
// stopped while it stored one.
//
// The CRC catches accidents, not edits: an entry is trusted as the user's own program files
// are. So the folder must be the user's own and writable by no one else, and an entry a regular
// file of the user's (no link followed); otherwise nothing is read or written.
//
// Where: $TOKENMILL_CACHE_DIR; else $XDG_CACHE_HOME/tokenmill; else $HOME/.cache/tokenmill.
// TOKENMILL_CACHE_DIR=off (or empty, or any path that is not absolute) turns the cache off.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/file_util.h"

namespace tokenmill {

class VocabCache {
 public:
  static constexpr size_t kMaxEntries = 16;
  // Where the payload starts in an entry's file: a multiple of this many bytes.
  static constexpr size_t kPayloadAlignment = 64;

  // The cache the environment names (above); none when it is turned off, no folder can be
  // named, or this build has no build id.
  static std::optional<VocabCache> FromEnvironment();
  explicit VocabCache(std::string folder) : folder_(std::move(folder)) {}

  const std::string& folder() const { return folder_; }
  // The name of the entry for these inputs (in order; each one's length counts) and this build.
  static std::string KeyOf(std::span<const std::string_view> inputs);
  std::string PathOf(const std::string& key) const;

  // The payload of the entry for `inputs` when there is one, it passes its checks and it holds
  // exactly these inputs (its modification time then renewed); none otherwise.
  std::optional<SharedBytes> Find(std::span<const std::string_view> inputs) const;
  // Whether Store may write: the folder is there (made, mode 0700, if missing and its parent is
  // the user's or a sticky folder such as /tmp; never in another user's folder), the user's own
  // and writable by no one else. For a caller to skip making a payload that cannot be stored.
  bool Writable() const;
  // Writes the entry for `inputs` (a regular file of mode 0600, replacing a non-regular file at
  // its path), then removes the least recently used entries past kMaxEntries and stale
  // temporary files. The cache only saves time: callers may ignore a failure.
  absl::Status Store(std::span<const std::string_view> inputs,
                     std::span<const std::string_view> payload) const;

 private:
  std::string folder_;
};

}  // namespace tokenmill
