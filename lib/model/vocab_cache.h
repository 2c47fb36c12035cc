// VocabCache: vocabularies kept as the tables loading them builds, so that a later command
// loading the same vocabulary reads those tables instead of building them again.
//
// Why: loading a large .tiktoken is most of a short command. An empty `tokenmill encode` with
// o200k_base took 31-36 ms at 2 threads, of which 20-26 ms went to decoding its 200,000 base64
// ranks, building the token table, the first pair lookups and the character segments; a
// corpus of 24 MB (linux_docs) encodes in about 0.15 s.
//
// An entry is named by a 128-bit digest of what its tables depend on: the vocabulary files'
// bytes, the encoder options that change the tables, and this build (the ELF build id of the
// code reading it, so that a rebuilt tokenmill, whose tables or hashes may differ, never
// reads another build's entries; no build id: no cache). It holds a header (magic, format,
// the digest, the payload's size and CRC-64) and the payload. An entry that fails a check is
// ignored (and replaced by the next store). Entries are written to a temporary file and
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

  // The cache the environment names (above); none when it is turned off, no folder can be
  // named, or this build has no build id.
  static std::optional<VocabCache> FromEnvironment();
  explicit VocabCache(std::string folder) : folder_(std::move(folder)) {}

  const std::string& folder() const { return folder_; }
  // The name of the entry for these inputs (in order; each one's length counts) and this build.
  static std::string KeyOf(std::span<const std::string_view> inputs);
  std::string PathOf(const std::string& key) const;

  // The payload of `key`'s entry when there is one and it passes its checks (its modification
  // time then renewed); none otherwise.
  std::optional<SharedBytes> Find(const std::string& key) const;
  // Writes `key`'s entry (creating the folder, mode 0700, if needed; whatever was at its path
  // replaced), then removes the least recently used entries past kMaxEntries and stale
  // temporary files. The cache only saves time: callers may ignore a failure.
  absl::Status Store(const std::string& key, std::span<const std::string_view> payload) const;

 private:
  std::string folder_;
};

}  // namespace tokenmill
