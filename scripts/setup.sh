#!/usr/bin/env bash
# Installs what tokenmill needs to build, test and benchmark on Debian 12, as root.
# Idempotent: when every package is already present it only checks (well under a second).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git zstd time
  libtbb-dev libabsl-dev libhyperscan-dev libzstd-dev zlib1g-dev libsimdjson-dev
  libisal-dev  # ISA-L: inflates .gz inputs at 2.6x zlib's speed (lib/corpus/byte_stream.cc)
  libjemalloc-dev  # the executables' allocator (huge pages: CMakeLists.txt, TOKENMILL_JEMALLOC)
  libgtest-dev libgmock-dev libbenchmark-dev libpcre2-dev
  libicu-dev libutf8proc-dev  # normalization (ICU); utf8proc: its test reference and benchmark peer
  clang libclang-rt-14-dev
  curl dpkg-dev  # scripts/build_tsan_deps.sh fetches and unpacks Debian's oneTBB/Abseil sources
  # The Python package (python/): built with pybind11 for Debian's Python 3.11, installed by
  # pip with Debian's setuptools, tested with pytest.
  python3 python3-dev pybind11-dev python3-pytest python3-setuptools python3-pip python3-wheel
  python3-numpy  # reads the .npy token files of `tokenmill encode` in the tests (an independent reader)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

# Node.js and npm run the peers (npm tokenizers, tiktoken) of scripts/ci_parity.sh and
# compare.sh. Checked as commands, not packages: a Node.js from elsewhere (NodeSource's nodejs
# carries its own npm, which Debian's npm package conflicts with) is fine.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
