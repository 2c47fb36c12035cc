#!/usr/bin/env bash
# Builds the libraries that synchronize threads for us - oneTBB and Abseil - with
# ThreadSanitizer, for the TSan job (scripts/ci_hardening.sh tsan).
#
# Why: TSan only sees synchronization done in instrumented code or through the pthread calls it
# intercepts. Debian's libtbb and libabsl_* are not built with -fsanitize=thread, so TSan
# cannot see oneTBB's task hand-offs (the serial stages of parallel_pipeline run by different
# workers in turn) nor absl::Mutex (its own atomics and futex calls inside
# libabsl_synchronization.so) and reports false races wherever our data crosses threads through
# them. Instrumented builds of the SAME versions as the installed -dev packages (same headers,
# same ABI, Debian's patches) remove those reports without hiding anything of ours.
# (The other libraries we link - Hyperscan, simdjson, zstd, zlib - do no synchronization.)
#
# How: for each, fetches the Debian source package of the installed version from the Debian
# archive (the .dsc and the files it lists; dpkg-source -x checks their sizes and checksums
# against the .dsc and applies Debian's patches), builds it with -fsanitize=thread
# (RelWithDebInfo, shared libraries, no tests) and installs it under CACHE_DIR/install.
# A finished build is reused: CACHE_DIR/install/.built-<package>-<version> marks it.
#
# Usage: scripts/build_tsan_deps.sh [CACHE_DIR]  (default: build-tsan-deps/ in the repo, git-ignored)
# Prints the install prefix on stdout; progress goes to stderr. Needs curl and dpkg-dev.
# Env: DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:-"$root/build-tsan-deps"}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
prefix="$cache/install"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

# build_one DEV_PACKAGE CHECK_LIBRARY CMAKE_ARGS...: builds the source package that the
# installed DEV_PACKAGE comes from, unless already built; CHECK_LIBRARY (under lib/) must come
# out instrumented.
build_one() {
  local dev_pkg=$1 check_lib=$2
  shift 2
  local src_pkg version
  src_pkg=$(dpkg-query -W -f='${source:Package}' "$dev_pkg")
  version=$(dpkg-query -W -f='${source:Version}' "$dev_pkg")
  version=${version#*:}  # file names carry no epoch
  local stamp="$prefix/.built-$src_pkg-$version"
  if [[ -f $stamp ]]; then return 0; fi

  local start src_dir dl dsc pool
  start=$(date +%s)
  echo "build_tsan_deps: building $src_pkg $version with -fsanitize=thread" >&2
  src_dir="$cache/$src_pkg-$version"
  if [[ ! -f "$src_dir/CMakeLists.txt" ]]; then
    dl="$cache/download"
    mkdir -p "$dl"
    pool="${DEBIAN_MIRROR:-http://deb.debian.org/debian}/pool/main/${src_pkg:0:1}/$src_pkg"
    dsc="${src_pkg}_$version.dsc"
    curl -fsSL --retry 3 -o "$dl/$dsc" "$pool/$dsc"
    local file
    for file in $(awk '/^Files:/ {f = 1; next} /^[^ ]/ {f = 0} f && NF == 3 {print $3}' "$dl/$dsc"); do
      [[ -f "$dl/$file" ]] || curl -fsSL --retry 3 -o "$dl/$file" "$pool/$file"
    done
    rm -rf "$src_dir"
    # dpkg-source fails on a size or checksum mismatch. It cannot check the .dsc's own
    # signature without debian-keyring (not installed), so its warning about that is dropped.
    (cd "$dl" && dpkg-source --no-copy -x "$dsc" "$src_dir") >"$cache/$src_pkg-unpack.log" 2>&1 ||
      { cat "$cache/$src_pkg-unpack.log" >&2; exit 1; }
  fi
  local obj="$cache/obj-$src_pkg"
  rm -rf "$obj"
  cmake -S "$src_dir" -B "$obj" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib "$@" \
    >"$cache/$src_pkg-configure.log" 2>&1 || { cat "$cache/$src_pkg-configure.log" >&2; exit 1; }
  cmake --build "$obj" -j "$(nproc)" >"$cache/$src_pkg-build.log" 2>&1 ||
    { tail -50 "$cache/$src_pkg-build.log" >&2; exit 1; }
  cmake --install "$obj" >"$cache/$src_pkg-install.log" 2>&1 ||
    { cat "$cache/$src_pkg-install.log" >&2; exit 1; }
  # The library must really carry TSan's instrumentation (calls into __tsan_*).
  if (( $(nm -D "$prefix/lib/$check_lib" | grep -c ' U __tsan_') == 0 )); then
    echo "build_tsan_deps: $prefix/lib/$check_lib has no TSan instrumentation" >&2
    exit 1
  fi
  rm -rf "$obj"
  touch "$stamp"
  echo "build_tsan_deps: $src_pkg built in $(( $(date +%s) - start )) s" >&2
}

# oneTBB: its own TBB_SANITIZE option; only libtbb (no tbbmalloc, no hwloc-based tbbbind).
build_one libtbb-dev libtbb.so -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF \
  -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON -DTBB4PY_BUILD=OFF
# Abseil: shared libraries in C++17, as Debian builds them (debian/rules).
build_one libabsl-dev libabsl_synchronization.so -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON \
  -DBUILD_TESTING=OFF -DABSL_PROPAGATE_CXX_STD=ON \
  -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread \
  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
echo "$prefix"
